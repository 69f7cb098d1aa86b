"""Making noisy marginal tables mutually consistent.

Independently noised tables disagree where they overlap, and CPDs derived from them describe no joint
distribution: [`project_consistent`][pgmpy_dp.estimators.consistency.project_consistent] projects them
onto consistent non-negative tables. Post-processing: it spends no budget.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp


# Interior-point tolerances: the defaults (1e-8 on the gap) leave the solution ~0.1 count from the optimum.
_CLARABEL_TIGHT = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "tol_ktratio": 1e-8}


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
    # sorted by size, then canonical positions: set iteration order follows string hashing, which
    # would make the projection differ between Python processes for the same seed
    ranked = sorted(shared, key=lambda s: (len(s), [order[a] for a in s]))
    return {s: [i for i, t in enumerate(sets) if t.issuperset(s)] for s in ranked}


def _spanning_constraints(attrs: Sequence[tuple[str, ...]]) -> list[tuple[tuple[str, ...], list[tuple[int, int]]]]:
    """Pairs of tables to tie on each shared attribute set, without redundant ties.

    Walking shared sets from large to small (ending with the totals), two tables containing ``S``
    need a tie on ``S`` only if no chain of ties on supersets of ``S`` connects them already.
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
    totals are all equal (the MLE of consistent tables under Gaussian noise).

    By default through its dual, one multiplier per shared-marginal cell, by a semismooth Newton
    method until the tables agree to 1e-10 of their total (docs/benchmarks.md, "Wide networks");
    should it not converge, the primal quadratic programme goes to Clarabel.

    Parameters
    ----------
    attrs : sequence of tuple of str
        Attributes of each table, in axis order.
    values : sequence of numpy.ndarray
        The noisy counts (may be negative).
    variances : sequence of float
        Noise variance of each table's cells.
    solver : str, optional
        A cvxpy solver name (for example ``"CLARABEL"``): solve the primal
        quadratic programme with it instead of the dual Newton method.

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
    attrs = [tuple(a) for a in attrs]
    values = [np.asarray(v, dtype=np.float64) for v in values]
    sizes = [v.size for v in values]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    eq = _consistency_matrix(attrs, values, offsets)
    y = np.concatenate([v.ravel() for v in values])
    w = np.concatenate([np.full(s, 1.0 / max(var, 1e-12)) for s, var in zip(sizes, variances)])
    # scale counts and weights to O(1) so tolerances mean the same for any record count
    scale = max(float(np.abs(y).max()), 1.0)
    y, w = y / scale, w / w.max()
    flat = None
    if eq.shape[0] == 0:
        flat = np.clip(y, 0, None)
    elif solver is None:
        flat = _dual_newton(y, w, eq, n_tables=len(values))
    if flat is None:
        flat = _solve_qp(y, w, eq, solver)
    flat = flat * scale
    return [flat[offsets[i] : offsets[i + 1]].reshape(values[i].shape) for i in range(len(values))]


def _consistency_matrix(attrs: list[tuple[str, ...]], values: list[np.ndarray], offsets: np.ndarray) -> sp.csr_matrix:
    """The sparse matrix ``E`` with ``E x = 0`` exactly when the flattened tables ``x`` agree on every tie.

    One row per cell of each tied marginal: ``+1`` on the cells of the first table that add up to it,
    ``-1`` on those of the second.
    """
    rows, cols, data = [], [], []
    n_rows = 0
    for shared, pairs in _spanning_constraints(attrs):
        for i, j in pairs:
            idx_i = marginal_index(attrs[i], values[i].shape, shared)
            idx_j = marginal_index(attrs[j], values[j].shape, shared)
            rows.extend([n_rows + idx_i, n_rows + idx_j])
            cols.extend([offsets[i] + np.arange(values[i].size), offsets[j] + np.arange(values[j].size)])
            data.extend([np.ones(values[i].size), -np.ones(values[j].size)])
            n_rows += int(max(idx_i.max(), idx_j.max())) + 1
    if not n_rows:
        return sp.csr_matrix((0, int(offsets[-1])))
    return sp.csr_matrix(
        (np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))), shape=(n_rows, int(offsets[-1]))
    )


def _dual_newton(
    y: np.ndarray, w: np.ndarray, eq: sp.csr_matrix, n_tables: int, max_iter: int = 100, tol: float = 1e-10
) -> np.ndarray | None:
    """The projection by semismooth Newton ascent on its dual, or None if it does not converge.

    For multipliers ``lam`` of ``E x = 0`` the Lagrangian's minimiser over ``x >= 0`` is
    ``x(lam) = max(y - E^T lam / w, 0)`` and the dual ``D(lam)`` is concave, piecewise
    quadratic with gradient ``E x(lam)``. A Newton step uses the generalised Hessian
    ``-E_F W_F^{-1} E_F^T`` over the cells ``F`` where ``x(lam) > 0``, with an Armijo line search
    on ``D`` and a tiny ridge for linearly dependent ties.
    """
    from scipy.sparse.linalg import splu

    eq_cols = eq.tocsc()
    eq_t = eq.T.tocsr()

    def dual(lam: np.ndarray) -> tuple[np.ndarray, float]:
        g = eq_t @ lam
        x = np.maximum(y - g / w, 0.0)
        return x, 0.5 * float(np.sum(w * (x - y) ** 2)) + float(g @ x)

    lam = np.zeros(eq.shape[0])
    x, value = dual(lam)
    for _ in range(max_iter):
        grad = eq @ x
        if np.abs(grad).max() <= tol * max(float(x.sum()) / n_tables, 1e-300):
            return x
        free = x > 0
        sub = eq_cols[:, free]
        hessian = (sub @ sp.diags(1.0 / w[free]) @ sub.T).tocsc()
        diag = hessian.diagonal()
        # rows whose cells are all at zero have a zero gradient: a unit diagonal keeps their step zero
        ridge = sp.diags(np.where(diag > 0, 1e-12 * max(float(diag.max()), 1e-300), 1.0))
        try:
            factor = splu((hessian + ridge).tocsc(), permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                          options={"SymmetricMode": True})
        except RuntimeError:  # numerically singular despite the ridge: let the QP solver have it
            return None
        step = factor.solve(grad)
        for _ in range(2):  # iterative refinement against the unridged matrix removes the ridge's bias
            step += factor.solve(grad - hessian @ step)
        slope = float(grad @ step)
        size = np.abs(grad).max()
        t = 1.0
        while True:
            x_new, value_new = dual(lam + t * step)
            # near the optimum the dual's changes fall below its rounding: a smaller gradient then decides
            if value_new >= value + 1e-4 * t * slope or np.abs(eq @ x_new).max() <= 0.5 * size or t < 1e-10:
                break
            t *= 0.5
        lam, x, value = lam + t * step, x_new, value_new
    return None


def _solve_qp(y: np.ndarray, w: np.ndarray, eq: sp.csr_matrix, solver: str | None) -> np.ndarray:
    """The projection as a primal quadratic programme in cvxpy (Clarabel unless ``solver`` names another)."""
    import cvxpy as cp

    x = cp.Variable(y.size, nonneg=True)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(cp.multiply(np.sqrt(w), x - y))), [eq @ x == 0])
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
    return _polish(np.clip(x.value, 0, None), y, w, eq)


def _polish(x: np.ndarray, y: np.ndarray, w: np.ndarray, eq: sp.csr_matrix) -> np.ndarray:
    """Snap an interior-point solution to the exact optimum of its active set.

    Fix the cells the solver drove to (near) zero at exactly zero and solve the remaining
    equality-constrained least squares exactly; keep the result only if feasible and no worse.
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
