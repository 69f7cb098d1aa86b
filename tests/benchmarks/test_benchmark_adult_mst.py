"""benchmarks/adult_mst.py: the quick run fits every contender on both measurement sets, and its core path with
both changes switched on is the estimator's own fit."""

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.append(str(_BENCHMARKS))  # for the shared harness; appended, so no script shadows an installed package
_spec = importlib.util.spec_from_file_location("bench_adult_mst", _BENCHMARKS / "adult_mst.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)

ADULT = Path(os.environ.get("PGMPY_DP_ADULT", "/work/shared/data"))
pytestmark = pytest.mark.skipif(
    not (ADULT / "adult.csv").exists() or not (ADULT / "adult-domain.json").exists(),
    reason=f"the Adult census extract is not at {ADULT} (set PGMPY_DP_ADULT to the folder holding "
           "adult.csv and adult-domain.json)",
)


@pytest.mark.slow  # two measurement sets of Adult fitted by every contender: a minute of CPU
def test_quick_run_fits_every_contender_on_both_measurement_sets(tmp_path, monkeypatch):
    monkeypatch.setattr(bench.harness, "RESULTS", tmp_path)
    bench.main(["--quick", "--rows", "2000", "--columns", "5", "--data", str(ADULT)])
    runs = pd.read_csv(tmp_path / "adult_mst_quick.csv")
    assert list(runs.contender) == ["default", "pooled-weight", "before"] * 2  # --quick needs no mbi
    assert list(runs.measurements) == ["mst"] * 3 + ["aim-like"] * 3
    assert runs.l1_3way.between(0, 2).all() and (runs.l1_2way < runs.l1_3way).all()
    by = runs.set_index(["measurements", "contender"]).cliques
    assert by["mst", "before"] == 4 and by["mst", "default"] == 4 + 5  # the tree's edges, then the 1-ways too


def test_core_path_with_both_changes_is_the_estimator():
    codes, sizes = bench.harness.load_adult(ADULT, rows=1000, columns=4)
    rho = bench.epsilon_delta_to_rho(1.0, 1e-9)
    releases, cliques = bench.mst_measurements(codes, sizes, 0, rho)
    with bench.harness.quiet():
        est_cliques, est_theta = bench.fit_default(releases, cliques, sizes)
        core_cliques, core_theta = bench.fit_core(releases, cliques, sizes, own_potentials=True, per_clique=True)
        before_cliques, _ = bench.fit_core(releases, cliques, sizes, own_potentials=False, per_clique=False)
    assert [tuple(c) for c in est_cliques] == core_cliques and len(core_cliques) > len(before_cliques)
    for a, b in zip(est_theta, core_theta):
        np.testing.assert_array_equal(a, b)


@pytest.mark.slow  # two measurement sets of Adult fitted by every contender: a minute of CPU
def test_mbi_rows_are_skipped_with_a_note_when_mbi_is_absent(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench.harness, "RESULTS", tmp_path)
    monkeypatch.setattr(bench, "have_mbi", lambda: False)
    bench.main(["--quick", "--rows", "1000", "--columns", "4", "--measurements", "mst",
                "--contenders", "default", "mbi-1000", "--data", str(ADULT)])
    assert "mbi is not installed" in capsys.readouterr().out
    assert list(pd.read_csv(tmp_path / "adult_mst_quick.csv").contender) == ["default"]
