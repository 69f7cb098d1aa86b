"""Raw values back from states: [`decode`][pgmpy_dp.privacy.decode.decode] turns sampled states into numbers and categories.

A binned column's state becomes a number drawn uniformly within its bin
([`bin_ranges`][pgmpy_dp.privacy.declarations.bin_ranges]: cut to the declared bounds, integers for integer
columns), the missing state becomes NaN, a categorical column takes the dtype it had when the model was fitted
(recorded by [`public_dtypes`][pgmpy_dp.privacy.decode.public_dtypes] from dtypes, never from values) or the
one its declared states call for. Decoding is post-processing of the sampled states: it spends nothing.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np
import pandas as pd

from .declarations import bin_ranges
from .domain import Domain
from .random_state import check_random_state


def public_dtypes(df: pd.DataFrame, domain: Domain) -> dict[str, object]:
    """The categorical and string dtypes of ``df``'s declared categorical columns, for decoding later.

    Only dtypes are read (a column's dtype is the custodian's choice of how to load it), never values.
    Other columns decode to the dtype their declared states call for.

    Examples
    --------
    >>> df = pd.DataFrame({"sex": pd.Categorical(["F"], categories=["F", "M"]), "age": [30]})
    >>> list(public_dtypes(df, Domain({"sex": ["F", "M"]}, bins={"age": [0, 50, 100]})))
    ['sex']
    """
    dtypes = df.dtypes
    return {a: dtypes[a] for a in domain.attrs
            if a in df.columns and a not in domain.bins and isinstance(dtypes[a], (pd.CategoricalDtype, pd.StringDtype))}


def _numbers(codes: np.ndarray, attr: str, domain: Domain, rng: np.random.Generator) -> np.ndarray:
    """Numbers drawn uniformly within the bin of each code; the missing state's code gives NaN."""
    edges = domain.bins[attr]
    integer = attr in domain.integer
    low, high = bin_ranges(edges, domain.bounds.get(attr), integer)
    u = rng.random(len(codes))  # drawn for every row, so the stream does not depend on which rows are missing
    binned = codes < len(low)
    c = np.where(binned, codes, 0)
    lo, hi = low[c], high[c]
    if np.isnan(lo[binned]).any():
        raise ValueError(
            f"column {attr!r} has the single bin (-inf, inf) and no bounds, so no value to draw; declare "
            f"bounds={{{attr!r}: (low, high)}} in the domain, or keep the labels (decode=False)"
        )
    if integer:
        x = np.minimum(lo + np.floor(u * (hi - lo + 1)), hi)
    else:
        x = lo + u * (hi - lo)
        x = np.where(hi > lo, np.minimum(x, np.nextafter(hi, -np.inf)), lo)  # stay below a half-open edge
    x = np.where(binned, x, np.nan)
    if integer and attr not in domain.missing:
        return x.astype(np.int64)
    return x


def _kind(states: list) -> str:
    if states and all(isinstance(s, (bool, np.bool_)) for s in states):
        return "bool"
    if states and all(isinstance(s, numbers.Integral) and not isinstance(s, (bool, np.bool_)) for s in states):
        return "int"
    if states and all(isinstance(s, numbers.Real) and not isinstance(s, (bool, np.bool_)) for s in states):
        return "float"
    return "object"


def _categories(codes: np.ndarray, attr: str, domain: Domain, dtype) -> object:
    """The states of ``codes`` in ``dtype`` (or the dtype the states call for); the missing state as NaN."""
    states = list(domain[attr])
    has_missing = attr in domain.missing
    plain = [s for i, s in enumerate(states) if not (has_missing and s == domain.missing[attr])]
    # position among the plain states, -1 for the missing state
    where = np.array([plain.index(s) if s in plain else -1 for s in states], dtype=np.intp)[codes]
    if isinstance(dtype, pd.CategoricalDtype):
        return pd.Categorical.from_codes(where, categories=pd.Index(plain, tupleize_cols=False))
    kind = _kind(plain)
    if kind in ("int", "float") and not (kind == "int" and has_missing):
        table = np.array(plain, dtype=np.int64 if kind == "int" else np.float64)
        return table[where]
    if kind in ("int", "float"):
        table = np.array([*plain, np.nan], dtype=np.float64)
    elif kind == "bool" and not has_missing:
        table = np.array(plain, dtype=bool)
    else:
        table = np.empty(len(plain) + 1, dtype=object)
        table[:-1] = plain
        table[-1] = np.nan
    values = table[where]
    if isinstance(dtype, pd.StringDtype):
        return pd.array(values, dtype=dtype)
    return values


def decode(sample: pd.DataFrame, domain: Domain, random_state=None, dtypes: Mapping | None = None) -> pd.DataFrame:
    """Raw values for a frame of sampled states (one categorical column per attribute of ``domain``).

    A binned column becomes numbers drawn uniformly within each record's bin: cut to ``domain.bounds``
    (an outer ``inf`` edge too), integers (drawn among the integers of the bin) for ``domain.integer``
    columns. Without bounds an infinite edge gives way to the finite one: ``[a, inf)`` decodes to ``a``,
    ``[-inf, b)`` to the largest value below ``b``. The missing state is NaN (so an integer column with
    a missing state is float64). A categorical column keeps the categorical or string dtype given in
    ``dtypes`` (see [`public_dtypes`][pgmpy_dp.privacy.decode.public_dtypes]), else gets the dtype its
    states call for (int64, float64, bool or object). Columns not in ``domain`` are left as they are.

    Parameters
    ----------
    sample : pandas.DataFrame
        Sampled states, each column categorical with (a permutation of) the declared states.
    domain : Domain
        The public domain the states come from.
    random_state : int or numpy.random.Generator, optional
        Seed or generator of the draws within bins (the same seed gives the same values).
    dtypes : mapping of str to dtype, optional
        Categorical or string dtypes to restore.

    Examples
    --------
    >>> d = Domain({"sex": ["F", "M"]}, bins={"age": [17, 30, 91]}, bounds={"age": (17, 90)},
    ...            integer=["age"], missing="?")
    >>> states = pd.DataFrame({"sex": pd.Categorical(["M", "?", "F"], categories=d["sex"]),
    ...                        "age": pd.Categorical(["[17, 30)", "[30, 91)", "?"], categories=d["age"])})
    >>> out = decode(states, d, random_state=0)
    >>> out["sex"].tolist(), out["age"].isna().tolist(), bool(17 <= out["age"][0] < 30 <= out["age"][1] <= 90)
    (['M', nan, 'F'], [False, False, True], True)
    """
    rng = check_random_state(random_state)
    rng = np.random.default_rng() if rng is None else rng
    dtypes = dict(dtypes or {})
    out = {}
    for col in sample.columns:
        if col not in domain:
            out[col] = sample[col]
            continue
        values = sample[col]
        states = domain[col]
        if isinstance(values.dtype, pd.CategoricalDtype):
            order = pd.Index(states, dtype=object, tupleize_cols=False).get_indexer(list(values.cat.categories))
            codes = np.append(order, -1)[values.cat.codes.to_numpy()]
        else:
            codes = pd.Index(states, dtype=object, tupleize_cols=False).get_indexer(values)
        if (codes < 0).any():
            raise ValueError(f"column {col!r} holds values that are not states of the domain ({list(states)[:20]}); "
                             "decode takes sampled states")
        if col in domain.bins:
            out[col] = _numbers(codes, col, domain, rng)
        else:
            out[col] = _categories(codes, col, domain, dtypes.get(col))
    return pd.DataFrame(out, index=sample.index)
