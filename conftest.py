"""Root pytest configuration.

* The Dask modules' doctests are skipped when Dask's DataFrame support is absent.
* Doctests too expensive for the default run (a Frank-Wolfe fit) are marked ``slow``, named in
  ``SLOW_DOCTESTS`` by module and object (not by path, so that a module can move).
* pgmpy parses a bnlearn network's BIF file on every ``get_example_model`` call (1.5-3 CPU seconds
  each, for asia as for alarm), and the tests and doctests load the same few networks hundreds of
  times: here each network is parsed once per process and every call gets its own copy (an equal,
  independent model: same nodes, edges, CPDs and state names, in the same order).
"""

import functools
import importlib.util
import warnings

import pytest


def _has_dask_dataframe() -> bool:
    if importlib.util.find_spec("dask") is None:
        return False
    try:
        import dask.dataframe  # noqa: F401
    except ImportError:  # dask without its DataFrame extra
        return False
    return True


collect_ignore = [] if _has_dask_dataframe() else ["pgmpy_dp/dask_accessor.py", "pgmpy_dp/tables/dask_release.py"]


def _parse_networks_once() -> None:
    import pgmpy_dp  # noqa: F401  (imports pgmpy quietly first)
    import pgmpy.utils

    parse = pgmpy.utils.get_example_model

    @functools.lru_cache(maxsize=None)
    def parsed(model):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return parse(model)

    @functools.wraps(parse)
    def get_example_model(model):
        return parsed(model).copy()

    pgmpy.utils.get_example_model = get_example_model


#: "module.object" of the doctests that run under ``-m slow`` only
SLOW_DOCTESTS = {"pairwise.PrivatePairwiseEstimator"}


@pytest.hookimpl(tryfirst=True)  # before -m "not slow" deselects
def pytest_collection_modifyitems(config, items):
    for item in items:
        if isinstance(item, pytest.DoctestItem) and ".".join(item.name.split(".")[-2:]) in SLOW_DOCTESTS:
            item.add_marker(pytest.mark.slow)


def pytest_configure(config):
    _parse_networks_once()
