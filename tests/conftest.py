"""Shared pytest configuration.

Everything under ``tests/statistical/`` (seeded privacy audits and accuracy checks) is marked
``slow``, like any test marked ``@pytest.mark.slow`` by hand. The default run (``setup.cfg``'s
``-m "not slow"``) leaves them out; ``python -m pytest -m slow`` runs them, as CI does after the
README's test command.
"""

from pathlib import Path

import pytest

_STATISTICAL = Path(__file__).parent / "statistical"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if _STATISTICAL in Path(item.fspath).parents:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _close_abandoned_progress_bars():
    """Close the bars a test left open (a loop ended by an expected exception keeps its bar alive in the traceback).

    tqdm places each new bar below the ones still open; past its 20 rows it prints "... (more hidden) ..." instead
    of the bar, so bars leaked by earlier tests in the same worker would hide a later test's bar.
    """
    yield
    from tqdm import tqdm

    for bar in list(tqdm._instances):
        bar.close()
