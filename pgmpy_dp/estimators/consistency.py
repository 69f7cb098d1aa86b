"""Making noisy marginal tables mutually consistent.

Independently noised tables disagree wherever they overlap: two family tables
that share the attribute ``lung`` imply two different ``P(lung)``. CPDs derived
from them then describe no joint distribution at all.
[`project_consistent`][pgmpy_dp.estimators.consistency.project_consistent] is the weighted
least-squares projection of the noisy counts onto non-negative tables that agree on every
shared attribute subset and on the total, weighting each table by its inverse noise variance:
a small convex quadratic programme solved with cvxpy. It is post-processing of released
tables and spends no budget.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp


# Interior-point tolerances: the defaults (1e-8 on the gap) leave the solution ~0.1 count
# from the optimum on 10,000 records; 1e-10 costs a couple of iterations more.
_CLARABEL_TIGHT = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "tol_ktratio": 1e-8}

__all__ = ["project_consistent", "marginal_index", "max_inconsistency"]


def marginal_index(attrs: Sequence[str], shape: Sequence[int], onto: Sequence[str]) -> np.ndarray:
    """For each cell of a C-ordered table over ``attrs``, the flat index of its cell in the marginal on ``onto``.

    Examples
    --------
    >>> marginal_index(["a", "b"], [2, 3], ["b"])
    array([0, 1, 2, 0, 1, 2])
    """
    axes = [list(attrs).index(a) for a in onto]
    if not axes:
        return np.zeros(math.prod(shape), dtype=np.intp)
    grids = np.unravel_index(np.arange(math.prod(shape)), tuple(shape))
    return np.ravel_multi_index([grids[i] for i in axes], [shape[i] for i in axes])


def _marginal(values: np.ndarray, attrs: Sequence[str], onto: Sequence[str]) -> np.ndarray:
    idx = marginal_index(attrs, values.shape, onto)
    size = math.prod(values.shape[list(attrs).index(a)] for a in onto)
    return np.bincount(idx, weights=values.ravel(), minlength=size)


def _overlaps(attrs: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], list[int]]:
    """Each distinct non-empty pairwise intersection (in a canonical order) and the tables containing it."""
    order = {a: i for i, a in enumerate(dict.fromkeys(a for t in attrs for a in t))}
    sets = [frozenset(t) for t in attrs]
    shared = {
        tuple(sorted(s & t, key=order.__getitem__))
        for s, t in itertools.combinations(sets, 2)
        if s & t
    }
    # sorted by size, then by the attributes' canonical positions: never by set iteration order, which
    # follows string hashing and would make the projection (and every fit started from it) differ
    # between Python processes for the same seed
    ranked = sorted(shared, key=lambda s: (len(s), [order[a] for a in s]))
    return {s: [i for i, t in enumerate(sets) if t.issuperset(s)] for s in ranked}


def _spanning_constraints(attrs: Sequence[tuple[str, ...]]) -> list[tuple[tuple[str, ...], list[tuple[int, int]]]]:
    """Pairs of tables to tie on each shared attribute set, without redundant ties.

    Agreement on a set implies agreement on its subsets, and agreement is
    transitive. Walking shared sets from large to small (ending with the empty
    set, i.e. the totals), two tables containing ``S`` need a tie on ``S`` only
    if no chain of ties on supersets of ``S`` already connects them. Redundant
    equality rows make the projection degenerate and slow interior-point solvers.
    """
    shared_sets = list(_overlaps(attrs)) + [()]
    ties: list[tuple[frozenset, int, int]] = []
    out = []
    for shared in sorted(shared_sets, key=len, reverse=True):
        s = frozenset(shared)
        parent = list(range(len(attrs)))

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for t, i, j in ties:
            if s <= t:
                parent[find(i)] = find(j)
        members = [i for i, a in enumerate(attrs) if s <= set(a)]
        pairs = []
        for j in members[1:]:
            if find(j) != find(members[0]):
                parent[find(j)] = find(members[0])
                pairs.append((j, members[0]))
                ties.append((s, j, members[0]))
        if pairs:
            out.append((shared, pairs))
    return out


def project_consistent(
    attrs: Sequence[Sequence[str]],
    values: Sequence[np.ndarray],
    variances: Sequence[float],
    solver: str | None = None,
) -> list[np.ndarray]:
    """Nearest non-negative, mutually consistent tables in inverse-variance weighted least squares.

    Solves ``min sum_i ||x_i - y_i||^2 / var_i`` over tables ``x_i >= 0`` whose
    marginals agree on every attribute subset two tables share, and whose
    totals are all equal. With independent Gaussian noise this is the maximum
    likelihood estimate of consistent tables; with Laplace noise it is the
    minimum-variance linear-unbiased fit, corrected by the non-negativity
    constraint.

    The solver is Clarabel (an interior-point method for sparse conic
    programmes, installed with cvxpy) with tolerances tightened to 1e-10. The
    problem has one variable per cell (752 for alarm, 2,139 for hepar2), a
    diagonal quadratic and a sparse equality matrix from which redundant ties
    are removed; Clarabel solves it in 20 ms (alarm) to 60 ms (hepar2) with the
    tables agreeing to 1e-9 of their total. OSQP, the first-order alternative,
    is as fast on alarm but on hepar2 stopped with marginals 7 counts apart at
    its default tolerances (measured with ``benchmarks/bn_speed.py``'s data).

    Parameters
    ----------
    attrs : sequence of tuple of str
        Attributes of each table, in axis order.
    values : sequence of numpy.ndarray
        The noisy counts (may be negative).
    variances : sequence of float
        Noise variance of each table's cells.
    solver : str, optional
        A cvxpy solver name to use instead of Clarabel.

    Returns
    -------
    list of numpy.ndarray, the consistent tables in the input shapes.

    Examples
    --------
    >>> a = np.array([6.0, -1.0])                       # table over ("x",)
    >>> b = np.array([[2.0, 3.0], [1.0, 0.0]])          # table over ("x", "y")
    >>> x, xy = project_consistent([("x",), ("x", "y")], [a, b], [1.0, 1.0])
    >>> np.allclose(xy.sum(axis=1), x, atol=1e-6), bool((x >= -1e-9).all())
    (True, True)
    """
    import cvxpy as cp

    attrs = [tuple(a) for a in attrs]
    values = [np.asarray(v, dtype=np.float64) for v in values]
    sizes = [v.size for v in values]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    n = int(offsets[-1])

    rows, cols, data = [], [], []
    n_rows = 0

    def add_difference(i: int, j: int, idx_i: np.ndarray, idx_j: np.ndarray) -> None:
        # rows: marginal cells; + table i's cells, - table j's cells
        nonlocal n_rows
        rows.extend([n_rows + idx_i, n_rows + idx_j])
        cols.extend([offsets[i] + np.arange(sizes[i]), offsets[j] + np.arange(sizes[j])])
        data.extend([np.ones(sizes[i]), -np.ones(sizes[j])])
        n_rows += int(max(idx_i.max(), idx_j.max())) + 1

    for shared, pairs in _spanning_constraints(attrs):
        for i, j in pairs:
            add_difference(
                i,
                j,
                marginal_index(attrs[i], values[i].shape, shared),
                marginal_index(attrs[j], values[j].shape, shared),
            )

    y = np.concatenate([v.ravel() for v in values])
    w = np.concatenate([np.full(s, 1.0 / max(var, 1e-12)) for s, var in zip(sizes, variances)])
    # scale the objective to O(1) so solver tolerances mean the same for any record count
    scale = max(float(np.abs(y).max()), 1.0)
    x = cp.Variable(n, nonneg=True)
    objective = cp.Minimize(cp.sum_squares(cp.multiply(np.sqrt(w / w.max()), x - y / scale)))
    constraints = []
    eq = None
    if n_rows:
        eq = sp.csr_matrix(
            (np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))), shape=(n_rows, n)
        )
        constraints.append(eq @ x == 0)
    problem = cp.Problem(objective, constraints)
    attempts = [(solver, {})] if solver else [(cp.CLARABEL, _CLARABEL_TIGHT), (cp.CLARABEL, {})]
    for name, options in attempts:
        try:
            problem.solve(solver=name, **options)
            break
        except cp.error.SolverError as exc:
            error = exc
    else:
        raise RuntimeError(
            f"the consistency projection failed in solver {attempts[-1][0]}: {error}; "
            "try consistency='likelihood' (the default)"
        ) from error
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or x.value is None:
        raise RuntimeError(
            f"the consistency projection ended with status {problem.status!r}; try consistency='likelihood' (the default)"
        )
    flat = np.clip(x.value, 0, None)
    if n_rows:
        flat = _polish(flat, y / scale, w / w.max(), eq)
    flat = flat * scale
    return [flat[offsets[i] : offsets[i + 1]].reshape(values[i].shape) for i in range(len(values))]


def _polish(x: np.ndarray, y: np.ndarray, w: np.ndarray, eq: sp.csr_matrix) -> np.ndarray:
    """Snap an interior-point solution to the exact optimum of its active set.

    Interior-point iterates keep inequality-bound cells slightly above zero
    (~1e-6 of the largest count when the bound is degenerate). Fix the cells the
    solver drove to (near) zero at exactly zero and solve the remaining
    equality-constrained least squares exactly: with ``z = sqrt(w) x`` and
    ``M = E_F W_F^{-1/2}``, the optimum is ``b`` minus its projection onto the
    row space of ``M``. Keep the result only if it is feasible and no worse.
    """
    from scipy.sparse.linalg import lsqr

    free = x > 1e-7 * max(float(x.max()), 1e-300)
    tol = 1e-9 * max(float(np.abs(y).max()), 1.0)
    for _ in range(5):  # cells the exact solve pushes below zero join the active set
        root_w = np.sqrt(w[free])
        m = (eq[:, free] @ sp.diags(1.0 / root_w)).tocsr()
        b = root_w * y[free]
        u = lsqr(m.T, b, atol=1e-15, btol=1e-15, iter_lim=20 * m.shape[0] + 100)[0]
        polished = np.zeros_like(x)
        polished[free] = (b - m.T @ u) / root_w
        if polished.min() >= -tol:
            break
        free &= polished > 0
    feasible = polished.min() >= -tol
    consistent = np.abs(eq @ polished).max() <= 1e-9 * max(float(polished.sum()), 1.0)
    no_worse = np.sum(w * (polished - y) ** 2) <= np.sum(w * (x - y) ** 2) * (1 + 1e-9) + 1e-15
    return np.clip(polished, 0, None) if feasible and consistent and no_worse else x


def max_inconsistency(attrs: Sequence[Sequence[str]], values: Sequence[np.ndarray]) -> float:
    """Largest absolute disagreement between two tables' marginals on their shared attributes (and totals).

    Examples
    --------
    >>> max_inconsistency([("x",), ("x", "y")], [np.array([1.0, 2.0]), np.ones((2, 2))])
    1.0
    """
    attrs = [tuple(a) for a in attrs]
    worst = 0.0
    totals = [float(np.sum(v)) for v in values]
    worst = max(totals) - min(totals)
    for shared, members in _overlaps(attrs).items():
        margins = [_marginal(np.asarray(values[i]), attrs[i], shared) for i in members]
        for m in margins[1:]:
            worst = max(worst, float(np.abs(m - margins[0]).max()))
    return worst
