"""mkdocs hook: publish the benchmark plots of ``benchmarks/results`` under ``benchmarks/`` in the site.

The plots are written by the benchmark scripts next to their CSVs; copying them into ``docs/``
would leave stale duplicates, so the site build takes them from where they are.
"""

from pathlib import Path

from mkdocs.structure.files import File

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def on_files(files, config):
    """Add every ``benchmarks/results/*.png`` as the site file ``benchmarks/<name>.png``."""
    for png in sorted(RESULTS.glob("*.png")):
        files.append(File.generated(config, f"benchmarks/{png.name}", abs_src_path=str(png)))
    return files
