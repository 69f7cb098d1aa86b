"""benchmarks/aim_rounds.py: the quick run refits AIM's published model on the same releases, and the
module names it swaps for the run are restored."""

import importlib.util
import os
import sys
from pathlib import Path

import pandas as pd
import pytest

from pgmpy_dp.synthesis import aim

_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.append(str(_BENCHMARKS))  # for the shared harness; appended, so no script shadows an installed package
_spec = importlib.util.spec_from_file_location("bench_aim_rounds", _BENCHMARKS / "aim_rounds.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)

ADULT = Path(os.environ.get("PGMPY_DP_ADULT", "/work/shared/data"))
pytestmark = pytest.mark.skipif(
    not (ADULT / "adult.csv").exists() or not (ADULT / "adult-domain.json").exists(),
    reason=f"the Adult census extract is not at {ADULT} (set PGMPY_DP_ADULT to the folder holding "
           "adult.csv and adult-domain.json)",
)


def test_quick_run_refits_the_published_model_and_restores_aim(tmp_path, monkeypatch):
    monkeypatch.setattr(bench.harness, "RESULTS", tmp_path)
    saved = aim.fit_final_model, aim.ROUNDS_PER_ATTRIBUTE
    bench.main(["--quick", "--rows", "2000", "--columns", "5", "--data", str(ADULT)])
    assert (aim.fit_final_model, aim.ROUNDS_PER_ATTRIBUTE) == saved
    runs = pd.read_csv(tmp_path / "aim_rounds_quick.csv")
    assert list(runs.contender) == ["default", "floored", "last-round"]  # --quick needs no mbi
    assert (runs.per_attr == 2).all() and (runs.epsilon == 1.0).all() and (runs.rounds >= 1).all()
    assert runs.l1_3.between(0, 2).all() and runs.l1_3.nunique() == 3  # three different fits of one release


def test_mbi_rows_are_skipped_with_a_note_when_mbi_is_absent(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench.harness, "RESULTS", tmp_path)
    monkeypatch.setattr(bench, "have_mbi", lambda: False)
    bench.main(["--quick", "--rows", "1000", "--contenders", "default", "mbi-md",
                "--data", str(ADULT)])
    assert "mbi is not installed" in capsys.readouterr().out
    assert list(pd.read_csv(tmp_path / "aim_rounds_quick.csv").contender) == ["default"]
