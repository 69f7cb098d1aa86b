"""The private table the synthesizer takes: a pandas DataFrame, counted in memory, or a Dask DataFrame, counted on its cluster.

[`frame_domain`][pgmpy_dp.synthesis.frames.frame_domain] reads the public domain (declared states and dtypes only)
and refuses any other input with its module's name and the conversion to make;
[`frame_counter`][pgmpy_dp.synthesis.frames.frame_counter] gives the methods the
[`Counter`][pgmpy_dp.tables.counter.Counter] they count through. Dask stays an optional extra: it is imported only
when the table is a Dask DataFrame.
"""

from __future__ import annotations

import pandas as pd

from ..privacy.domain import Domain
from ..tables.counter import CodesCounter, Counter

#: The fix offered for a table of another library, by the library's top-level module.
_CONVERSIONS = {
    "polars": "convert it with df.to_pandas()",
    "pyarrow": "convert it with table.to_pandas()",
    "numpy": "wrap it as pandas.DataFrame(array, columns=[...]) with the public column names",
    "modin": "convert it with df._to_pandas() or use a pandas DataFrame",
    "pyspark": "convert it with df.toPandas() (it collects the rows), or write it out and read it with dask",
}


def is_dask_frame(df) -> bool:
    """Whether ``df`` is a ``dask.dataframe.DataFrame`` (Dask is imported only for an object of a Dask module)."""
    if type(df).__module__.split(".")[0] not in ("dask", "dask_expr"):
        return False
    import dask.dataframe as dd

    return isinstance(df, dd.DataFrame)


def _refusal(df) -> TypeError:
    kind = type(df)
    top = kind.__module__.split(".")[0]
    name = f"{top}.{kind.__name__}"
    if isinstance(df, pd.Series):
        fix = "give a DataFrame: series.to_frame()"
    elif top in ("dask", "dask_expr"):
        fix = "give a dask.dataframe.DataFrame (e.g. series.to_frame())"
    else:
        fix = _CONVERSIONS.get(top, "convert it to a pandas.DataFrame (most frame libraries have .to_pandas())")
    return TypeError(f"df must be a pandas.DataFrame or a dask.dataframe.DataFrame, got {name}; {fix}")


def frame_domain(df, domain=None, columns=None) -> Domain:
    """The public domain of ``df``'s columns from its dtypes and ``domain``; nothing is read from the rows.

    Examples
    --------
    >>> frame_domain(pd.DataFrame({"a": [0, 1]}), {"a": [0, 1, 2]})
    Domain(a: 3)
    >>> frame_domain([[0, 1]])
    Traceback (most recent call last):
    ...
    TypeError: df must be a pandas.DataFrame or a dask.dataframe.DataFrame, got builtins.list; convert it to a pandas.DataFrame (most frame libraries have .to_pandas())
    """
    if isinstance(df, pd.DataFrame):
        if len(df) == 0 or df.shape[1] == 0:
            raise ValueError("df is empty; the synthesizer needs at least one record and one column")
        return Domain.from_dataframe(df, columns, domain)
    if is_dask_frame(df):
        if len(df.columns) == 0:
            raise ValueError("df has no columns; the synthesizer needs at least one")
        from ..tables.dask_release import dask_domain

        return dask_domain(df, columns, domain)
    raise _refusal(df)


def frame_counter(df, domain: Domain, show_progress: bool = False) -> Counter:
    """The counter of ``df``'s rows over ``domain``: encoded in memory (pandas) or counted in the partitions (Dask).

    A Dask DataFrame is read once here (every column checked, the 1-way tables counted), so that bad data
    fails before anything is charged, as the pandas table's encoding does.

    Examples
    --------
    >>> counter = frame_counter(pd.DataFrame({"a": [0, 1, 1]}), Domain({"a": [0, 1]}))
    >>> counter.n_rows, counter.table(("a",)).tolist()
    (3, [1.0, 2.0])
    """
    if isinstance(df, pd.DataFrame):
        return CodesCounter(domain.encode(df, show_progress=show_progress), domain)
    from ..tables.dask_release import DaskCounter

    counter = DaskCounter(df, domain)
    if counter.n_rows == 0:
        raise ValueError("df has no rows; the synthesizer needs at least one record")
    return counter
