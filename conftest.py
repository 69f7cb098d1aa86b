"""Root pytest configuration.

* The Dask modules' doctests are skipped when Dask's DataFrame support is absent.
* pgmpy parses a bnlearn network's BIF file on every ``get_example_model`` call (1.5-3 CPU seconds
  each, for asia as for alarm), and the tests and doctests load the same few networks hundreds of
  times: here each network is parsed once per process and every call gets its own copy (an equal,
  independent model: same nodes, edges, CPDs and state names, in the same order).
"""

import functools
import importlib.util
import warnings


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


def pytest_configure(config):
    _parse_networks_once()
