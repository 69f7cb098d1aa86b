"""benchmarks/wide_fallback.py: the quick comparison fits every route it names, and the tree table reads the graph."""

import importlib.util
import sys
from pathlib import Path

import pandas as pd

from pgmpy_dp.estimators import likelihood

_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.append(str(_BENCHMARKS))  # for the shared harness; appended, so no script shadows an installed package
_spec = importlib.util.spec_from_file_location("bench_wide_fallback", _BENCHMARKS / "wide_fallback.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)


def test_quick_run_fits_each_route_and_restores_the_limits(tmp_path, monkeypatch):
    monkeypatch.setattr(bench.harness, "RESULTS", tmp_path)
    limits = likelihood.MAX_CLIQUE_CELLS, likelihood.MAX_EXACT_CELLS
    bench.main(["--quick", "--n", "500"])
    runs = pd.read_csv(tmp_path / "wide_fallback_quick.csv")
    assert dict(zip(runs.method, runs.used)) == {"exact": "likelihood", "local": "local-likelihood",
                                                 "projection": "projection"}
    assert (runs.joint_kl > 0).all() and runs.kl_exact.all()
    assert (likelihood.MAX_CLIQUE_CELLS, likelihood.MAX_EXACT_CELLS) == limits


def test_tree_table_reads_the_route_off_the_graph(tmp_path, monkeypatch):
    monkeypatch.setattr(bench.harness, "RESULTS", tmp_path)
    trees = bench.main(["--quick", "--trees", "--networks", "asia"])
    assert trees.to_dict("records") == [{"network": "asia", "nodes": 8, "cpd_cells": 36, "largest_clique": 8,
                                         "tree_cells": 40, "route": "likelihood"}]
