"""Every runnable example, the README quick start and the code of the user guide's runnable pages
finish without error, and the quick start and those pages print no warnings."""

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
# user guide pages whose python blocks, run in order, make one complete script
RUNNABLE_PAGES = ["docs/inference.md", "docs/getting-started.md", "docs/release.md", "docs/structure.md"]


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


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, tmp_path, monkeypatch, capsys):
    cwd, out = tmp_path / "cwd", tmp_path / "out"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("PGMPY_DP_EXAMPLES_OUT", str(out))
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()
    assert list(cwd.iterdir()) == [], "examples write into their output folder, not the current directory"


def test_readme_quick_start_runs_quietly(tmp_path):
    # both blocks of the quick start (the second, the zCDP graph-then-parameters path, reuses the first's df)
    code = python_blocks(ROOT / "README.md", start="## Quick start")
    result = run_script(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", f"the quick start printed warnings or progress bars:\n{result.stderr}"
    assert "phi(lung)" in result.stdout
    assert (tmp_path / "release.json").exists()
    assert "learned edges" in result.stdout


@pytest.mark.parametrize("page", RUNNABLE_PAGES)
def test_user_guide_page_runs_quietly(page, tmp_path):
    result = run_script(python_blocks(ROOT / page), tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", f"{page} printed warnings or progress bars:\n{result.stderr}"
    assert result.stdout.strip()


ADULT = Path(os.environ.get("PGMPY_DP_ADULT", "/work/shared/data"))


@pytest.mark.skipif(
    not (ADULT / "adult.csv").exists(),
    reason=f"the Adult census extract is not at {ADULT} (set PGMPY_DP_ADULT to the folder holding "
    "adult.csv and adult-domain.json; it is not bundled with the package)",
)
def test_adult_guide_runs_quietly(tmp_path):
    out = tmp_path / "out"
    result = run_script(python_blocks(ROOT / "docs" / "adult.md"), tmp_path,
                        env={"PGMPY_DP_ADULT": str(ADULT), "PGMPY_DP_OUT": str(out)})
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", f"the Adult guide printed warnings or progress bars:\n{result.stderr}"
    assert "P(income | bachelor's)" in result.stdout and "mean two-way TVD" in result.stdout
    written = {p.name for p in out.iterdir()}
    assert {"adult_release.json", "adult_privacy_utility.csv", "adult_privacy_utility.png"} <= written
    assert [p.name for p in tmp_path.iterdir() if p.name != "snippet.py"] == ["out"]
    # the published artifact loads back, and the utility numbers are finite and in [0, 1]
    import pandas as pd

    import pgmpy_dp

    assert len(pgmpy_dp.MarginalRelease.from_json(out / "adult_release.json")) == 28
    utility = pd.read_csv(out / "adult_privacy_utility.csv", index_col=0)
    assert ((utility >= 0) & (utility <= 1)).all().all()
