"""Consistent clique tables from noisy ones: the targets of a warm start with an attainable optimum.

Noisy tables over overlapping cliques disagree on their shared sub-marginals, and a fit to such
targets creeps along a ridge instead of reaching a fixed point (docs/markov.md). This module
makes them agree first, per separator ``S`` (an intersection of two cliques; ``()`` for the totals):

1. additive sweeps move each table onto the inverse-variance weighted mean of the tables'
   ``S``-marginals, spreading the difference evenly over the cells behind each separator cell;
2. the negative cells left are set to zero and proportional (IPF-like) sweeps make the
   tables agree again, keeping them non-negative.

Tables that already agree and are non-negative come back unchanged.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from .factor import align, marginal


def separators(attrs: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
    """The empty set and every non-empty intersection of two scopes, smallest first.

    Examples
    --------
    >>> separators([("a", "b"), ("b", "c"), ("c", "d", "b")])
    [(), ('b',), ('b', 'c')]
    """
    # each separator in one orientation (attributes in order of first appearance), so it is listed once
    order = {x: i for i, x in enumerate(dict.fromkeys(x for a in attrs for x in a))}
    seps = {()}
    for a, b in itertools.combinations(attrs, 2):
        s = tuple(sorted(set(a) & set(b), key=order.__getitem__))
        if s:
            seps.add(s)
    return sorted(seps, key=lambda s: (len(s), s))


def max_disagreement(attrs: Sequence[Sequence[str]], tables: Sequence[np.ndarray]) -> float:
    """Largest difference between two tables' marginals on a shared separator (the totals included).

    Examples
    --------
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])        # axes (x, y)
    >>> b = np.array([[4.0, 0.0], [6.0, 0.0]])        # axes (y, z): y-marginal (4, 6), a's is (4, 6)
    >>> max_disagreement([("x", "y"), ("y", "z")], [a, b])
    0.0
    """
    attrs = [tuple(a) for a in attrs]
    worst = 0.0
    for s in separators(attrs):
        ms = [marginal(t, a, s) for a, t in zip(attrs, tables) if set(s) <= set(a)]
        for m in ms[1:]:
            worst = max(worst, float(np.max(np.abs(m - ms[0]))))
    return worst


def _weights(variances: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """Inverse-variance weights of the tables' separator marginals; exact tables (variance 0) outweigh the rest."""
    var = variances * spread  # variance of one separator cell: the table's cell variance times the cells summed
    if np.any(var <= 0):
        return (var <= 0).astype(float)
    return 1.0 / var


def reconcile_tables(
    attrs: Sequence[Sequence[str]],
    tables: Sequence[np.ndarray],
    variances: Sequence[float],
    max_sweeps: int = 200,
    tol: float = 1e-12,
) -> list[np.ndarray]:
    """Non-negative tables that agree on every shared sub-marginal, close to noisy ``tables``.

    Parameters
    ----------
    attrs : sequence of tuple of str
        Scope of each table (the axes of its array, in order).
    tables : sequence of numpy.ndarray
        Noisy counts (or probabilities), one array per scope; may be negative.
    variances : sequence of float
        Noise variance of one cell of each table (0 for an exact table, which then wins).
    max_sweeps : int
        Largest number of passes over the separators, per stage.
    tol : float
        Stop a stage once no separator marginal moves by more than ``tol`` times the largest total.

    Returns
    -------
    list of numpy.ndarray, non-negative tables consistent on every separator (to ``tol``).

    Examples
    --------
    The more precise second table moves less:

    >>> a = np.array([[4.0, 5.0], [5.0, 6.0]])
    >>> b = np.array([[5.0, 5.0], [5.0, 5.0]])
    >>> ra, rb = reconcile_tables([("x", "y"), ("y", "z")], [a, b], variances=[4.0, 1.0])
    >>> ra.sum(axis=0).tolist(), rb.sum(axis=1).tolist()
    ([9.8, 10.2], [9.8, 10.2])
    >>> max_disagreement([("x", "y"), ("y", "z")], [ra, rb]) < 1e-9
    True
    """
    attrs, y, var = _checked(attrs, tables, variances)
    plan = _separator_plan(attrs, y, var)
    limit = tol * max(1.0, max(abs(float(t.sum())) for t in y))
    _sweeps(plan, attrs, y, _additive, max_sweeps, limit)
    if any(np.any(t < 0) for t in y):
        y = [np.maximum(t, 0.0) for t in y]
        _sweeps(plan, attrs, y, _proportional, max_sweeps, limit)
    return y


def _checked(attrs, tables, variances) -> tuple[list[tuple[str, ...]], list[np.ndarray], np.ndarray]:
    """Scopes as tuples, tables as float arrays (copies) and variances as an array, each checked."""
    attrs = [tuple(a) for a in attrs]
    if not (len(attrs) == len(tables) == len(variances)):
        raise ValueError(
            f"attrs, tables and variances need one entry per table, got {len(attrs)}, {len(tables)} and {len(variances)}"
        )
    y = [np.array(t, dtype=np.float64) for t in tables]
    for a, t in zip(attrs, y):
        if t.ndim != len(a):
            raise ValueError(f"table over {a} has {t.ndim} axes, expected {len(a)}")
        if not np.all(np.isfinite(t)):
            raise ValueError(f"table over {a} has NaN or infinite entries")
    var = np.asarray(variances, dtype=np.float64)
    if var.shape != (len(y),) or not np.all(np.isfinite(var)) or np.any(var < 0):
        raise ValueError(f"variances must be one finite non-negative number per table, got {variances!r}")
    return attrs, y, var


def _separator_plan(attrs, y, var) -> list:
    """Per separator shared by two or more tables: the tables, the cells behind each separator cell, the weights."""
    plan = []
    for s in separators(attrs):
        idx = [i for i, a in enumerate(attrs) if set(s) <= set(a)]
        if len(idx) < 2:
            continue
        spread = np.array([y[i].size / math.prod(y[i].shape[attrs[i].index(v)] for v in s) for i in idx])
        plan.append((s, idx, spread, _weights(var[idx], spread)))
    return plan


def _sweeps(plan, attrs, y: list[np.ndarray], update, max_sweeps: int, limit: float) -> None:
    """Move the tables ``y`` (in place) onto each separator's weighted consensus by ``update``, sweep after sweep,
    until no separator marginal moves by more than ``limit`` (or ``max_sweeps`` sweeps)."""
    for _ in range(max_sweeps):
        moved = 0.0
        for s, idx, spread, w in plan:
            ms = [marginal(y[i], attrs[i], s) for i in idx]
            target = sum(wi * m for wi, m in zip(w, ms)) / w.sum()
            for k, (i, m) in enumerate(zip(idx, ms)):
                moved = max(moved, float(np.max(np.abs(target - m))))
                y[i] = update(y[i], attrs[i], s, m, target, spread[k])
        if moved <= limit:
            return


def _additive(t, a, s, m, target, spread):
    """The least-squares move of one table onto a separator marginal: spread the difference evenly."""
    return t + align((target - m) / spread, s, a)


def _proportional(t, a, s, m, target, spread):
    """Rescale the cells behind each separator cell; where they are all zero (clipped), fill them evenly."""
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(m > 0, target / m, 0.0)
    fill = np.where(m > 0, 0.0, target / spread)
    return t * align(f, s, a) + align(fill, s, a)
