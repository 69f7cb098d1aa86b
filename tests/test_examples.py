"""Every runnable example finishes without error and prints its results (the README and the guide
pages are run by tests/test_docs.py; ``python_blocks`` and ``run_script`` serve other tests too)."""

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def python_blocks(path: Path, start: str | None = None, first_only: bool = False) -> str:
    """The ```python blocks of a markdown file (after the heading ``start``), joined into one script."""
    text = path.read_text()
    if start is not None:
        text = text[text.index(start) :]
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, f"no python code blocks in {path}"
    return blocks[0] if first_only else "\n".join(blocks)


def run_script(code: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter, as a user pasting it into a file would, with default
    warning filters (pytest's own filters do not reach the child process)."""
    script = cwd / "snippet.py"
    script.write_text(code)
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=cwd, timeout=600,
        env=None if env is None else {**os.environ, **env},
    )


#: examples that take more than a few seconds run with the slow tests
SLOW_EXAMPLES = {"private_bn_alarm.py"}


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
