"""benchmarks/structure_edge_rule.py: every variant fits the same release, and the route's constants are restored."""

import importlib.util
import sys
from pathlib import Path

import pandas as pd

from pgmpy_dp.structure import tables_route

_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.append(str(_BENCHMARKS))  # for the shared harness; appended, so no script shadows an installed package
_spec = importlib.util.spec_from_file_location("bench_structure_edge_rule", _BENCHMARKS / "structure_edge_rule.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)


def test_quick_run_fits_every_variant_beyond_the_exact_limit(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench.harness, "RESULTS", tmp_path)
    saved = tables_route.SCREEN_ALPHA, tables_route._confirm_on_refit
    bench.main(["--quick", "--p", "9", "--k", "3"])  # 3^9 cells: beyond the exact MLE, so the screens run
    runs = pd.read_csv(tmp_path / "structure_edge_rule_quick_p9k3.csv")
    assert list(runs.variant) == ["old", "alpha-n", "screen1", "screen4", "screen10"]
    assert ((runs.fp >= 0) & (runs.fn >= 0)).all() and set(runs.exact) <= {0, 1}
    assert (tables_route.SCREEN_ALPHA, tables_route._confirm_on_refit) == saved
    assert "| 9 | 3 | 1 | screen4 | 1 |" in capsys.readouterr().out
