"""Public facts about numeric and not-yet-known columns: bounds, integer values, bin counts, keys to discover.

A column declared with ``bounds=`` alone (no ``bins=``) or with ``discover=`` has no states yet: it is
*unresolved* until public bin edges or states are declared, equal-width public bins are taken from its
bounds ([`equal_width_edges`][pgmpy_dp.privacy.declarations.equal_width_edges]), or a charged mechanism
chooses them. [`bin_ranges`][pgmpy_dp.privacy.declarations.bin_ranges] gives, for each bin, the values a
decoded record may take. The functions here check plain values and return the problems they find as text;
[`Domain`][pgmpy_dp.privacy.domain.Domain] raises them, all at once.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping

import numpy as np


def _names(value, name: str, problems: list[str]) -> tuple[str, ...]:
    """``integer=`` or ``discover=`` as a tuple of column names."""
    if value is None:
        return ()
    if isinstance(value, (str, bytes)) or isinstance(value, Mapping) or not isinstance(value, Iterable):
        problems.append(f"{name}= must be a list of column names, e.g. {name}=['age'], got {value!r}")
        return ()
    out = tuple(value)
    bad = [v for v in out if not isinstance(v, str)]
    if bad:
        problems.append(f"{name}= lists {bad[:5]}, which are not column names (str)")
    return tuple(dict.fromkeys(v for v in out if isinstance(v, str)))


def _real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _bounds(bounds: Mapping, states: Mapping, problems: list[str]) -> dict[str, tuple[float, float]]:
    out = {}
    for attr, pair in bounds.items():
        if attr in states:
            problems.append(f"column {attr!r} is declared with states and with bounds; bounds are for numeric columns")
            continue
        if isinstance(pair, (str, bytes)) or not isinstance(pair, Iterable):
            problems.append(f"bounds[{attr!r}] must be a pair (low, high) of public numbers, got {pair!r}")
            continue
        pair = tuple(pair)
        if len(pair) != 2 or not all(_real(v) and math.isfinite(v) for v in pair):
            problems.append(f"bounds[{attr!r}] must be two finite numbers (low, high), got {list(pair)!r}")
        elif not pair[0] < pair[1]:
            problems.append(f"bounds[{attr!r}] must have low < high, got {list(pair)!r}")
        else:
            out[attr] = (float(pair[0]), float(pair[1]))
    return out


def _n_bins(n_bins, open_columns: tuple[str, ...], problems: list[str]) -> dict[str, int]:
    """``n_bins=`` (one count for every bounds-only column, or ``{column: count}``) as a mapping."""
    if n_bins is None:
        return {}
    if not isinstance(n_bins, Mapping):
        if not open_columns:
            problems.append("n_bins= is for columns with bounds= and no bins=, and there are none")
        n_bins = dict.fromkeys(open_columns, n_bins)
    out = {}
    for attr, n in n_bins.items():
        if attr not in open_columns:
            problems.append(f"n_bins names {attr!r}, which is not a column with bounds= and no bins=")
        elif isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral) or n < 1:
            problems.append(f"n_bins[{attr!r}] must be a positive integer number of bins, got {n!r}")
        else:
            out[attr] = int(n)
    return out


def parse_declarations(bounds, integer, discover, n_bins, states: Mapping, bins: Mapping) -> tuple[dict, tuple, tuple, dict, list]:
    """Check ``bounds=``, ``integer=``, ``discover=`` and ``n_bins=`` against the declared states and bins.

    Returns ``(bounds, integer, discover, n_bins, problems)``: the checked declarations and the text of
    every problem found (empty when all is well).
    """
    problems: list[str] = []
    bounds = _bounds(bounds or {}, states, problems)
    integer = _names(integer, "integer", problems)
    discover = _names(discover, "discover", problems)
    numeric = set(bins) | set(bounds)
    for attr in integer:
        if attr not in numeric:
            problems.append(f"integer= names {attr!r}, which is not a numeric column (declare its bounds= or bins=)")
    for attr in discover:
        if attr in states or attr in numeric:
            problems.append(
                f"discover= names {attr!r}, which already has {'states' if attr in states else 'bounds or bins'}; "
                "declare it once"
            )
    open_columns = tuple(a for a in bounds if a not in bins)
    counts = _n_bins(n_bins, open_columns, problems)
    for attr in bounds:
        if attr in bins:
            problems += check_bins_in_bounds(attr, bins[attr], bounds[attr], attr in integer)
    for attr in integer:
        if attr in bins and attr not in bounds:
            problems += check_bins_in_bounds(attr, bins[attr], None, True)
    return bounds, integer, discover, counts, problems


def bin_ranges(edges, bounds: tuple[float, float] | None, integer: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per bin, the range a decoded value is drawn from: ``[low, high)`` for reals, ``[low, high]`` for integers.

    Each bin ``[e_i, e_{i+1})`` is cut to the ``bounds`` (inclusive). An outer infinite edge without bounds
    gives way to the finite edge: ``[a, inf)`` holds only ``a``; ``[-inf, b)`` only the largest value below
    ``b`` (``b - 1`` for integers, the float just below ``b`` for reals). A bin with two infinite edges and
    no bounds has no value (``nan``). For reals, ``low == high`` means the single value ``low``.

    Examples
    --------
    >>> low, high = bin_ranges([17, 30, 91], (17, 90), integer=True)
    >>> low.tolist(), high.tolist()
    ([17.0, 30.0], [29.0, 90.0])
    >>> low, high = bin_ranges([-float("inf"), 0, 10, float("inf")], None, integer=True)
    >>> low.tolist(), high.tolist()
    ([-1.0, 0.0, 10.0], [-1.0, 9.0, 10.0])
    """
    edges = np.asarray(edges, dtype=np.float64)
    a, b = edges[:-1], edges[1:]
    if bounds is not None:
        a, b = np.maximum(a, bounds[0]), np.minimum(b, bounds[1])
        # bounds are inclusive: an integer bin ends at the last integer below its edge or at the bound
        return (np.ceil(a), np.minimum(np.ceil(edges[1:]) - 1, np.floor(bounds[1]))) if integer else (a, b)
    with np.errstate(invalid="ignore"):
        if integer:
            low = np.where(np.isinf(a), np.ceil(b) - 1, np.ceil(a))
            high = np.where(np.isinf(b), low, np.ceil(b) - 1)
        else:
            low = np.where(np.isinf(a), np.nextafter(b, -np.inf), a)
            high = np.where(np.isinf(a) | np.isinf(b), low, b)
    both = np.isinf(a) & np.isinf(b)
    return np.where(both, np.nan, low), np.where(both, np.nan, high)


def check_bins_in_bounds(attr: str, edges, bounds, integer: bool) -> list[str]:
    """Problems with decoding ``attr``'s bins: one that misses the bounds, or (integers) holds no integer."""
    problems = []
    if bounds is not None and not (bounds[0] < edges[1] and bounds[1] >= edges[-2]):
        problems.append(
            f"bounds[{attr!r}] = {list(bounds)} leave a bin of bins[{attr!r}] = {list(edges)} empty; "
            "every bin must meet the bounds (low below the second edge, high at least the second last)"
        )
    elif integer:
        low, high = bin_ranges(edges, bounds, True)
        empty = [i for i in range(len(low)) if not (np.isfinite(low[i]) and low[i] <= high[i])]
        if empty:
            pairs = [f"[{edges[i]:g}, {edges[i + 1]:g})" for i in empty[:5]]
            problems.append(f"the integer column {attr!r} has bins holding no integer{' within its bounds' if bounds else ''}: "
                            f"{pairs}; widen or merge them")
    return problems


def equal_width_edges(bounds: tuple[float, float], n_bins: int, integer: bool = False) -> tuple[float, ...]:
    """Public edges of ``n_bins`` equal-width bins over ``bounds`` (no data read, so no budget spent).

    For an integer column the edges are integers and the last is ``high + 1``, so each bin ``[a, b)`` holds
    the integers ``a .. b - 1``; when there are fewer integers than ``n_bins``, each integer gets a bin.

    Examples
    --------
    >>> equal_width_edges((0, 10), 4)
    (0.0, 2.5, 5.0, 7.5, 10.0)
    >>> equal_width_edges((17, 90), 4, integer=True)
    (17.0, 36.0, 54.0, 72.0, 91.0)
    >>> equal_width_edges((1, 3), 8, integer=True)
    (1.0, 2.0, 3.0, 4.0)
    """
    low, high = bounds
    if not integer:
        return tuple(float(e) for e in np.linspace(low, high, n_bins + 1))
    low, high = math.ceil(low), math.floor(high) + 1
    return tuple(float(e) for e in np.unique(np.round(np.linspace(low, high, min(n_bins, high - low) + 1))))


def unresolved_message(columns: Iterable[str], bounds: Mapping, discover: Iterable[str]) -> str:
    """How to resolve ``columns``: bin edges for the bounded ones, states for the discovered ones."""
    columns, discover = list(columns), set(discover)
    binned = [c for c in columns if c not in discover]
    keyed = [c for c in columns if c in discover]
    parts = []
    if binned:
        parts.append(
            f"{binned} have public bounds but no bin edges: declare bins={{{binned[0]!r}: [...]}}, take equal-width "
            "public bins with domain.with_public_bins(n_bins) (free), or let PrivateSynthesizer choose the edges "
            "privately with a share of its budget (schema_share=)"
        )
    if keyed:
        parts.append(
            f"{keyed} are marked discover (their states are unknown): declare their states, e.g. "
            f"Domain({{{keyed[0]!r}: [...]}}), or let PrivateSynthesizer find them privately with a share of its budget (schema_share=)"
        )
    return (f"column(s) {columns} have no states yet, so they cannot be encoded (nothing was spent); "
            + "; ".join(parts))
