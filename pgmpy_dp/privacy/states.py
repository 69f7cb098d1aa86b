"""A column's declared states: checking states, bin edges and names, and the labels of bins.

[`Domain`][pgmpy_dp.privacy.domain.Domain] declares its states through these checks: each raises a
[`DomainError`][pgmpy_dp.privacy.errors.DomainError] (or a ``TypeError``) naming the column and the bad value,
which is a declared, public one (never a value of the data).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .errors import DomainError


def _format_edge(edge: float) -> str:
    """An edge as text: integral values without a decimal point (``17``, not ``17.0``)."""
    if math.isinf(edge):
        return "inf" if edge > 0 else "-inf"
    return str(int(edge)) if float(edge).is_integer() else repr(float(edge))


def bin_labels(edges: Sequence[float]) -> tuple[str, ...]:
    """String labels of the bins between consecutive public ``edges``: ``"[lo, hi)"``.

    Examples
    --------
    >>> bin_labels([17, 25, 35, 91])
    ('[17, 25)', '[25, 35)', '[35, 91)')
    >>> bin_labels([0, 0.5, float("inf")])
    ('[0, 0.5)', '[0.5, inf)')
    """
    text = [_format_edge(e) for e in edges]
    return tuple(f"[{lo}, {hi})" for lo, hi in zip(text[:-1], text[1:]))


def check_edges(attr, edges) -> tuple[float, ...]:
    """The public bin edges of ``attr`` as floats, or a DomainError unless they are two or more increasing numbers."""
    if isinstance(edges, (str, bytes)) or not isinstance(edges, Iterable):
        raise DomainError(f"bins[{attr!r}] must be a list of public bin edges, got {edges!r}")
    try:
        parsed = tuple(float(e) for e in edges)
    except (TypeError, ValueError):
        raise DomainError(f"bins[{attr!r}] must hold numbers (bin edges), got {list(edges)!r}") from None
    if len(parsed) < 2:
        raise DomainError(f"bins[{attr!r}] needs at least two edges (one bin), got {list(parsed)}")
    if any(math.isnan(e) for e in parsed) or any(b <= a for a, b in zip(parsed, parsed[1:])):
        raise DomainError(f"bins[{attr!r}] must be strictly increasing numbers, got {list(parsed)}")
    return parsed


def check_state(value, what: str):
    """Raise a DomainError unless ``value`` (described by ``what``) can be a state: hashable and not NaN."""
    if isinstance(value, float) and math.isnan(value):
        raise DomainError(f"{what} is NaN; NaN is not a public state (use missing= to name one)")
    try:
        hash(value)
    except TypeError:
        raise DomainError(f"{what} must be a hashable scalar such as a str or int, got {value!r}") from None


def parse_states(attr: str, values) -> tuple:
    """The declared states of ``attr`` as a tuple of distinct hashable scalars, or a DomainError naming the bad one."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise DomainError(
            f"states of attribute {attr!r} must be a list of values, got {values!r}"
        )
    values = tuple(as_python(v) for v in values)
    if len(values) == 0:
        raise DomainError(f"attribute {attr!r} has an empty domain; declare at least one state")
    if any(isinstance(v, float) and math.isnan(v) for v in values):
        raise DomainError(
            f"attribute {attr!r} lists NaN as a state; NaN is not a public state "
            "(name one with missing=, e.g. Domain(..., missing='Missing'))"
        )
    for v in values:
        try:
            hash(v)
        except TypeError:
            raise DomainError(
                f"attribute {attr!r} lists the state {v!r}, a {type(v).__name__}; a state must be a hashable "
                f"scalar such as a str or int: list each state on its own (e.g. {{{attr!r}: [1, 2, 3]}}), "
                "or make a compound state a tuple or a str"
            ) from None
    if len(set(values)) != len(values):
        dup = pd.Series(values)[pd.Series(values).duplicated()].tolist()
        raise DomainError(f"attribute {attr!r} lists a state twice: {dup}")
    return values


def parse_bins(bins, parsed: dict) -> dict[str, tuple[float, ...]]:
    """Checked edges of each binned attribute; their labels become its states in ``parsed``."""
    out = {}
    for attr, edges in (bins or {}).items():
        check_name(attr, "bins")
        if attr in parsed:
            raise DomainError(
                f"attribute {attr!r} is declared both with states and with bins; declare it once"
            )
        out[attr] = check_edges(attr, edges)
        parsed[attr] = bin_labels(out[attr])
    return out


def as_python(value):
    """Return a JSON- and hash-friendly Python scalar for numpy scalars."""
    return value.item() if isinstance(value, np.generic) else value


def check_name(attr, where: str) -> None:
    """Raise a TypeError unless the attribute name ``attr`` (declared in ``where``) is a str."""
    if not isinstance(attr, str):
        raise TypeError(
            f"{where} names attribute {attr!r} of type {type(attr).__name__}; attribute names must be "
            "str (pgmpy node names): rename the columns, e.g. df.columns = df.columns.map(str)"
        )


def json_state(v) -> bool:
    """Whether JSON holds the state losslessly (a tuple is written as a list and read back as a tuple)."""
    if type(v) is tuple:
        return all(json_state(x) for x in v)
    if type(v) is str:
        return json.loads(json.dumps(v)) == v
    return type(v) in (int, bool) or (type(v) is float and math.isfinite(v))
