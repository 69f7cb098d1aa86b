"""benchmarks/structure_k3.py: the quick run writes one row per fit and the default is the true-graph MLE."""

import importlib.util
import sys
from pathlib import Path

import pandas as pd

_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.append(str(_BENCHMARKS))  # for the shared harness; appended, so no script shadows an installed package
_spec = importlib.util.spec_from_file_location("bench_structure_k3", _BENCHMARKS / "structure_k3.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)


def test_quick_run_compares_the_default_with_the_non_private_fits(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bench.harness, "RESULTS", tmp_path)
    bench.main(["--quick"])
    runs = pd.read_csv(tmp_path / "structure_k3_quick.csv")
    assert list(runs.fit) == ["default", "mle-true", "mle-complete", "sklearn"]  # --quick skips Frank-Wolfe
    assert runs.max_err.between(0, 1).all() and (runs.p == 4).all() and (runs.n == 1_000).all()
    assert "| default |" in capsys.readouterr().out
