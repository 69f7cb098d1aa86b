"""Every runnable example finishes without error and prints its results (the README and the guide
pages are run by tests/test_docs.py)."""

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
#: examples that take more than a few seconds run with the slow tests
SLOW_EXAMPLES = {"private_bn_alarm.py"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=pytest.mark.slow) if p.name in SLOW_EXAMPLES else p for p in EXAMPLES],
    ids=[p.name for p in EXAMPLES],
)
def test_example_runs(path, tmp_path, monkeypatch, capsys):
    cwd, out = tmp_path / "cwd", tmp_path / "out"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("PGMPY_DP_EXAMPLES_OUT", str(out))
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()
    assert list(cwd.iterdir()) == [], "examples write into their output folder, not the current directory"
