"""benchmarks/harness.py: result rows land under their own column names whatever their keys."""

import importlib.util
from pathlib import Path

import pandas as pd

_HARNESS = Path(__file__).resolve().parents[2] / "benchmarks" / "harness.py"
_spec = importlib.util.spec_from_file_location("bench_harness", _HARNESS)
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)


def test_append_rows_aligns_values_by_column_name(tmp_path):
    path = tmp_path / "runs.csv"
    harness.append_rows([{"a": 1, "b": 2}], path)
    harness.append_rows([{"b": 3}], path)  # fewer columns, as a sample-only peer's row
    harness.append_rows([{"c": 5, "a": 4}], path)  # a new column, keys in another order
    got = pd.read_csv(path)
    assert list(got.columns) == ["a", "b", "c"]
    assert got["a"].tolist()[::2] == [1, 4] and got["a"].isna().tolist() == [False, True, False]
    assert got["b"].tolist()[:2] == [2, 3] and got["b"].isna().tolist() == [False, False, True]
    assert got["c"].isna().tolist() == [True, True, False] and got["c"].iloc[2] == 5


def test_append_rows_of_nothing_writes_nothing(tmp_path):
    harness.append_rows([], tmp_path / "none.csv")
    assert not (tmp_path / "none.csv").exists()
