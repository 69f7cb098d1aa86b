"""benchmarks/private_bins.py: values drawn within bins lie in their bins, and the quick run restores the
mechanism's uniform weight after measuring the plain-quantile variant."""

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pgmpy_dp.privacy import discovery

_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.append(str(_BENCHMARKS))
_spec = importlib.util.spec_from_file_location("bench_private_bins", _BENCHMARKS / "private_bins.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)

ADULT = Path(os.environ.get("PGMPY_DP_ADULT", "/work/shared/data"))


@pytest.mark.parametrize("edges", [(0, 7, 12, 85), (0, 8.5, 17.0, 25.5, 34)])
def test_a_value_drawn_in_its_bin_lies_in_it(edges):
    rng = np.random.default_rng(0)
    x = rng.integers(0, int(np.ceil(edges[-1])), 5000).astype(float)
    drawn = bench.drawn_within_bins(x, edges, rng)
    e = np.asarray(edges, dtype=float)
    assert np.array_equal(np.searchsorted(e, x, side="right"), np.searchsorted(e, drawn, side="right"))
    assert np.all(drawn == np.round(drawn))


@pytest.mark.slow
@pytest.mark.skipif(not (ADULT / "adult.csv").exists(), reason=f"the Adult extract is not at {ADULT}")
def test_quick_run_writes_both_results_and_restores_the_weight(tmp_path, monkeypatch):
    monkeypatch.setattr(bench.harness, "RESULTS", tmp_path)
    bench.main(["--quick"])
    assert discovery.UNIFORM_WEIGHT == 0.5
    runs = pd.read_csv(tmp_path / "private_bins_quick.csv")
    assert set(runs["edges"]) == {"private mixed quantiles", "plain quantiles", "equal width"}
    assert (tmp_path / "private_bins_quick_synth.csv").exists()
