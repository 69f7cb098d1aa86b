"""Root pytest configuration: skip the Dask modules' doctests when Dask's DataFrame support is absent."""

import importlib.util


def _has_dask_dataframe() -> bool:
    if importlib.util.find_spec("dask") is None:
        return False
    try:
        import dask.dataframe  # noqa: F401
    except ImportError:  # dask without its DataFrame extra
        return False
    return True


collect_ignore = [] if _has_dask_dataframe() else ["pgmpy_dp/dask_accessor.py", "pgmpy_dp/tables/dask_release.py"]
