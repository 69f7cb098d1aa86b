"""Encoding data frame columns to integer codes: the position of each value's state in the public domain.

[`Domain.encode`][pgmpy_dp.privacy.domain.Domain.encode] checks the request and encodes each column with
[`encode_column`][pgmpy_dp.privacy.encoding.encode_column]: categorical dtypes recode their categories once,
binned columns are cut at their public edges, missing values take the declared missing state. An error
names the column, never its values (``PGMPY_DP_SHOW_VALUES=1`` shows them while debugging), and the
warning about states a dtype may have taken from the data reads the dtypes only.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import DomainError
from .states import as_python


class DataDerivedDomainWarning(UserWarning):
    """A column's states come from a categorical dtype that may have been read from the private data.

    Raised when a column's states come from an unordered categorical dtype with sorted categories (what
    ``astype("category")`` makes from the observed values) that nothing declares public. Only the dtype,
    the declared domain and ``df.attrs`` are read, never the values. Silenced by passing the states in
    ``domain=``, or by listing the column in ``df.attrs["pgmpy_dp_public_columns"]`` (as
    [`pgmpy_dp.datasets.sample_network`][pgmpy_dp.datasets.sample_network] does). See docs/privacy.md.
    """


#: ``df.attrs`` key listing columns whose categorical dtypes are declared public.
PUBLIC_COLUMNS_ATTR = "pgmpy_dp_public_columns"

#: Environment variable that, set to ``1``, lets out-of-domain errors quote the offending values.
SHOW_VALUES_ENV = "PGMPY_DP_SHOW_VALUES"


def check_columns_exist(df: pd.DataFrame, columns: Iterable[str]) -> None:
    """Raise unless ``df`` is a DataFrame with distinct str column names that include ``columns``."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame, got {type(df).__name__}")
    if isinstance(df.columns, pd.MultiIndex):
        raise TypeError(
            "the DataFrame has MultiIndex columns; flatten them to str names first, "
            "e.g. df.columns = ['_'.join(map(str, c)) for c in df.columns]"
        )
    columns = list(columns)
    bad = [c for c in columns if not isinstance(c, str)]
    if bad:
        raise TypeError(
            f"column name(s) {bad[:5]} are not str; pgmpy node names must be str: "
            "rename them, e.g. df.columns = df.columns.map(str)"
        )
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise DomainError(
            f"column(s) {missing} are not in the DataFrame (columns: {list(df.columns)})"
        )
    if df.columns.duplicated().any():
        dup = df.columns[df.columns.duplicated()].unique().tolist()
        raise DomainError(f"the DataFrame has duplicated column names {dup}; rename them first")


def warn_data_derived(df: pd.DataFrame, columns: Iterable[str]) -> None:
    """Warn about those of ``columns`` (states taken from their dtype) whose dtype ``astype("category")`` could have made.

    The rule is [`DataDerivedDomainWarning`][pgmpy_dp.privacy.encoding.DataDerivedDomainWarning]'s; only the
    dtypes of ``df`` are read, never its values.
    """
    suspects = [a for a in columns if _sorted_unordered(df.dtypes[a])]
    if suspects:
        warnings.warn(
            f"column(s) {suspects} take their states from an unordered categorical dtype with sorted "
            "categories, which is what astype('category') makes from the private data; a private release "
            "must use a public domain. Declare the public states with domain={column: [...]}, or, if the "
            "dtype's categories already are the public states, list the columns in "
            f"df.attrs[{PUBLIC_COLUMNS_ATTR!r}]; either silences this warning",
            DataDerivedDomainWarning,
            stacklevel=_caller_stacklevel(),
        )


def encode_column(col: pd.Series, attr: str, states: tuple, bins: Mapping, missing: Mapping) -> np.ndarray:
    """The codes of ``col``, the data of attribute ``attr``, whose declared ``states`` are in code order.

    ``bins`` and ``missing`` are the domain's ``{attr: edges}`` and ``{attr: missing state}``. Values outside
    the states, and missing values without a missing state, raise a
    [`DomainError`][pgmpy_dp.privacy.errors.DomainError] naming the column, not the values.

    Examples
    --------
    >>> encode_column(pd.Series(["z", None]), "a", ("x", "z", "?"), {}, {"a": "?"})
    array([1, 2])
    """
    if attr in bins:
        return _encode_binned(col, attr, bins[attr], states, missing)
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cat_codes = col.array.codes  # the ndarray itself, without building a Series
        if tuple(as_python(c) for c in dtype.categories) == states:
            codes = cat_codes
        else:
            # recode the (few) categories once, then gather: no per-row hashing
            mapping = np.append(pd.Index(states, dtype=object).get_indexer(dtype.categories), -1)
            codes = mapping[cat_codes]
    else:
        try:
            codes = pd.Index(states, dtype=object).get_indexer(col)
        except TypeError as exc:  # e.g. lists or dicts stored in an object column
            raise TypeError(
                f"column {attr!r} holds values that are not scalar states ({exc}); "
                "each cell must be one hashable state such as a str or int"
            ) from None
    bad = codes < 0
    if bad.any():
        na = col.isna().to_numpy()
        if na.any():
            codes = _fill_missing(codes, na, attr, states, missing)
            bad = codes < 0
        if bad.any():
            raise DomainError(_outside_message(attr, states, col.to_numpy()[bad]))
    return codes.astype(np.intp, copy=False)


def _fill_missing(codes: np.ndarray, na: np.ndarray, attr: str, states: tuple, missing: Mapping) -> np.ndarray:
    if attr not in missing:
        # no count here: the number of missing values is a private statistic
        raise DomainError(
            f"column {attr!r} has missing values (NaN or None); declare a missing state, e.g. "
            f"domain=pgmpy_dp.Domain({{...}}, missing='Missing'), or drop or impute them "
            "before a private release"
        )
    codes = np.array(codes, dtype=np.intp)
    codes[na] = states.index(missing[attr])
    return codes


def _encode_binned(col: pd.Series, attr: str, edges, states: tuple, missing: Mapping) -> np.ndarray:
    edges = np.asarray(edges)
    try:
        x = np.asarray(col.to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"column {attr!r} is binned by bins={{{attr!r}: [...]}} but holds non-numeric values; "
            "bin only numeric columns"
        ) from None
    # clamp: below the first edge -> first bin, at or above the last -> last bin (documented)
    codes = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2).astype(np.intp)
    na = np.isnan(x)
    if na.any():
        codes = _fill_missing(codes, na, attr, states, missing)
    return codes


def _sorted_unordered(dtype) -> bool:
    """Whether ``dtype`` is an unordered categorical with at least two sorted categories (dtype only)."""
    if not isinstance(dtype, pd.CategoricalDtype) or dtype.ordered or len(dtype.categories) < 2:
        return False
    cats = list(dtype.categories)
    try:
        return cats == sorted(cats)
    except TypeError:  # mixed types: astype('category') would have sorted them, so not its work
        return False


def _outside_message(attr: str, states: Sequence, offending: np.ndarray) -> str:
    """The error for values outside the declared states: the values (and how many) are private, so withheld."""
    shown = list(states)[:20]
    text = (
        f"column {attr!r} has values outside its declared domain {shown}"
        f"{' ...' if len(states) > 20 else ''}; add them to the declared states, map them to a declared "
        "state (e.g. with missing= or bins=), or remove those rows. "
    )
    if os.environ.get(SHOW_VALUES_ENV) == "1":
        values = [as_python(v) for v in pd.unique(offending)[:5]]
        return text + f"Offending values (shown because {SHOW_VALUES_ENV}=1): {values}"
    return text + (
        f"The values are private and withheld; to see them while debugging, set {SHOW_VALUES_ENV}=1"
    )


def _caller_stacklevel() -> int:
    """``stacklevel`` that points a warning at the user's line, past pgmpy_dp's and pgmpy's frames."""
    import sys

    import importlib.util

    inside = [str(Path(__file__).resolve().parents[1])]
    spec = importlib.util.find_spec("pgmpy")  # locates pgmpy's estimator frames without importing it
    inside += list(spec.submodule_search_locations or []) if spec else []
    frame, level = sys._getframe(2), 2  # level 1 is the function that calls warnings.warn
    while frame is not None and any(frame.f_code.co_filename.startswith(d) for d in inside):
        frame, level = frame.f_back, level + 1
    return level
