"""The documentation: the site builds without a single warning and every python block of the README and
the guide compiles; under the slow mark, the README quick start and every guide page run as scripts in
fresh interpreters (20-60 s each on a loaded 2-core machine)."""

import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GUIDE = sorted((ROOT / "docs").glob("*.md"))
# pages that need data not bundled with the package run in their own test below
NEEDS_DATA = {"adult.md", "synthesis.md"}
# blocks that show code for an environment the tests do not have (a Dask cluster, a user's DAG)
NOT_RUNNABLE = {"dask.md", "index.md", "decisions.md", "benchmarks.md", "cli.md"}  # cli.md: shell, run by tests/test_cli.py
ADULT = Path(os.environ.get("PGMPY_DP_ADULT", "/work/shared/data"))


def python_blocks(path: Path, start: str | None = None) -> list[str]:
    """The ```python blocks of a markdown file (those after the heading ``start``), in order."""
    text = path.read_text()
    if start is not None:
        text = text[text.index(start) :]
    return re.findall(r"```python\n(.*?)```", text, re.S)


def run_script(code: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter, as a user pasting it into a file would, with default
    warning filters (pytest's own filters do not reach the child process)."""
    script = cwd / "snippet.py"
    script.write_text(code)
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=cwd, timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


@pytest.mark.slow
def test_docs_build_strict(tmp_path):
    """Any mkdocs warning (a broken link, an unresolved cross-reference in a docstring) fails."""
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
         "-d", str(tmp_path / "site")],
        capture_output=True, text=True, cwd=ROOT,
    )
    warnings = [line for line in result.stderr.splitlines() if line.startswith("WARNING")]
    assert result.returncode == 0 and not warnings, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").exists()


def api_entries(page: str) -> list[str]:
    return re.findall(r"^::: ([\w.]+)", (ROOT / "docs" / "api" / page).read_text(), re.M)


def test_api_reference_renders_the_public_names_and_the_extension_points_only():
    """``docs/api/index.md`` renders exactly ``pgmpy_dp.__all__``; ``extending.md`` names modules that exist;
    there is no other API page (the internal modules are not published)."""
    import pgmpy_dp

    assert sorted(p.name for p in (ROOT / "docs" / "api").glob("*.md")) == ["extending.md", "index.md"]
    assert sorted(api_entries("index.md")) == sorted(f"pgmpy_dp.{name}" for name in pgmpy_dp.__all__)
    extension_points = api_entries("extending.md")
    assert extension_points and all(importlib.import_module(m).__name__ == m for m in extension_points)


def test_api_hook_hides_internal_links_and_keeps_broken_ones():
    """A docstring link to a real internal name becomes optional (plain text); one to a missing name stays,
    so the strict build still fails on it."""
    spec = importlib.util.spec_from_file_location("api_hooks", ROOT / "docs" / "api" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    html = ('<autoref identifier="pgmpy_dp.estimators.local.fit_families_locally"><code>f</code></autoref>'
            '<autoref identifier="pgmpy_dp.estimators.local.no_such_function"><code>g</code></autoref>')
    out = hooks.on_page_content(html, None, None, None)
    assert 'identifier="pgmpy_dp.estimators.local.fit_families_locally" optional>' in out
    assert '<autoref identifier="pgmpy_dp.estimators.local.no_such_function">' in out


@pytest.mark.parametrize("path", [README, *GUIDE], ids=lambda p: p.name)
def test_code_blocks_compile(path):
    """Every python block is valid Python (fast: catches syntax rot without running anything)."""
    for i, block in enumerate(python_blocks(path)):
        compile(block, f"{path.name}, python block {i + 1}", "exec")


@pytest.mark.slow
def test_readme_quick_start_runs_quietly(tmp_path):
    result = run_script("\n".join(python_blocks(README, start="## Quick start")), tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", f"the quick start printed warnings or progress bars:\n{result.stderr}"
    assert "phi(lung)" in result.stdout and "learned edges" in result.stdout
    assert (tmp_path / "release.json").exists()


RUNNABLE = [p for p in GUIDE if p.name not in NEEDS_DATA | NOT_RUNNABLE]


@pytest.mark.slow
@pytest.mark.parametrize("page", RUNNABLE, ids=lambda p: p.name)
def test_guide_page_runs_quietly(page, tmp_path):
    """A guide page's blocks, run in order as one script, finish without warnings or progress bars."""
    blocks = python_blocks(page)
    assert blocks, f"{page.name} has no python blocks: list it in NOT_RUNNABLE"
    result = run_script("\n".join(blocks), tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", f"{page.name} printed warnings or progress bars:\n{result.stderr}"


@pytest.mark.slow
@pytest.mark.skipif(
    not (ADULT / "adult.csv").exists(),
    reason=f"the Adult census extract is not at {ADULT} (set PGMPY_DP_ADULT to the folder holding "
    "adult.csv and adult-domain.json; it is not bundled with the package)",
)
def test_adult_guide_runs_quietly(tmp_path):
    out = tmp_path / "out"
    result = run_script("\n".join(python_blocks(ROOT / "docs" / "adult.md")), tmp_path,
                        env={"PGMPY_DP_ADULT": str(ADULT), "PGMPY_DP_OUT": str(out)})
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", f"the Adult guide printed warnings or progress bars:\n{result.stderr}"
    assert "P(income | bachelor's)" in result.stdout and "mean two-way TVD" in result.stdout
    assert {"adult_release.json", "adult_privacy_utility.csv"} <= {p.name for p in out.iterdir()}
    assert [p.name for p in tmp_path.iterdir() if p.name != "snippet.py"] == ["out"]



@pytest.mark.slow
@pytest.mark.skipif(not (ADULT / "adult.csv").exists(), reason=f"the Adult census extract is not at {ADULT}")
def test_synthesis_guide_runs_quietly(tmp_path):
    result = run_script("\n".join(python_blocks(ROOT / "docs" / "synthesis.md")), tmp_path,
                        env={"PGMPY_DP_ADULT": str(ADULT)})
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", f"the synthesis guide printed warnings or progress bars:\n{result.stderr}"
    assert "rho spent" in result.stdout and "mean three-way TVD" in result.stdout
