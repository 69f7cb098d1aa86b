"""Which route a structure learner takes, and the settings it derives without oracle inputs.

Everything here reads public inputs (the number of columns, their declared states, ``rho``) or
private *outputs* (noisy tables, Frank-Wolfe weights): never the data. The measurements behind
the rule and the shares are in docs/structure.md.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

ROUTES = ("auto", "tables", "frank-wolfe")

#: Most cells of all two-way tables together (``p (p - 1) / 2`` pairs times the most states squared)
#: for which ``route="auto"`` releases every two-way table: 100 binary columns (docs/structure.md).
TABLES_MAX_PAIR_CELLS = 20_000

#: Share of ``rho`` spent on the two-way tables that estimate the width when ``width=None``.
WIDTH_SHARE = 0.1

#: Factor on the estimated width: the pilot fit shrinks its weights and may miss weak edges.
WIDTH_MARGIN = 1.25

#: Share of ``rho`` spent on a noisy record count when Frank-Wolfe needs ``n`` and none is declared.
COUNT_SHARE = 0.01

#: A regression whose weights use at least this share of the l1 ball sits on its boundary.
BOUNDARY_FRACTION = 0.98


class BoundaryWarning(UserWarning):
    """Most Frank-Wolfe regressions ended on the l1 ball's boundary: the width may be understated."""


def choose_route(route: str, n_columns: int, max_states: int, rho: float, frank_wolfe_settings: bool = False) -> str:
    """The route a fit takes: ``route`` itself, or for ``"auto"`` a rule on public inputs only.

    The tables route while all two-way tables hold at most ``TABLES_MAX_PAIR_CELLS`` cells (from the
    column count and the most declared states; both routes' errors scale alike in ``n`` and ``rho``,
    see docs/structure.md), unless ``frank_wolfe_settings`` (``n_iter`` or ``radius`` given). ``rho`` is
    accepted for a rule that needs it.

    Examples
    --------
    >>> choose_route("auto", 100, 2, 0.1), choose_route("auto", 101, 2, 0.1), choose_route("auto", 60, 3, 1.0)
    ('tables', 'frank-wolfe', 'tables')
    >>> choose_route("frank-wolfe", 10, 2, 1.0), choose_route("tables", 500, 2, 1.0)
    ('frank-wolfe', 'tables')
    >>> choose_route("auto", 10, 2, 0.1, frank_wolfe_settings=True)
    'frank-wolfe'
    """
    if route != "auto":
        return route
    if frank_wolfe_settings:
        return "frank-wolfe"
    cells = n_columns * (n_columns - 1) // 2 * max_states**2
    return "tables" if cells <= TABLES_MAX_PAIR_CELLS else "frank-wolfe"


def width_from_fit(weights: dict, node_weights: dict, edges, attrs) -> float:
    """``max_{i, a} sum_j max_b |W_ij(a, b)| + |theta_i(a)|`` over the kept ``edges`` of a fitted model.

    For an Ising fit (``W = A s s'``, ``theta = t s``) this is ``max_i sum_j |A_ij| + |t_i|``.

    Examples
    --------
    >>> s = np.array([-1.0, 1.0])
    >>> w = {("a", "b"): 0.5 * np.outer(s, s), ("a", "c"): 0.25 * np.outer(s, s), ("b", "c"): 0 * np.outer(s, s)}
    >>> width_from_fit(w, {"a": 0.1 * s, "b": 0 * s, "c": 0 * s}, [("a", "b"), ("a", "c")], "abc")
    0.85
    """
    total = {a: np.abs(np.asarray(node_weights[a], dtype=float)) for a in attrs}
    for a, b in edges:
        w = np.abs(np.asarray(weights[a, b], dtype=float))
        total[a] = total[a] + w.max(axis=1)
        total[b] = total[b] + w.max(axis=0)
    return round(float(max(t.max() for t in total.values())), 12)


def asymmetry_scores(raw: dict, sym: dict, sizes: dict, alpha: float = 0.05) -> tuple[dict, float]:
    """Edge scores of a Frank-Wolfe fit in units of its own noise, and their Bonferroni critical value.

    Node ``a``'s and node ``b``'s regressions estimate ``W_ab`` independently, so half the root mean
    square of their differences is the noise level of a symmetrised entry; a pair's score is its largest
    ``|W_ab|`` over that level. The critical value is the Laplace quantile at ``alpha`` over the
    ``m = sum (k_a - 1)(k_b - 1)`` free entries: ``log(m / alpha) / sqrt(2)``.

    Examples
    --------
    >>> raw = {("a", "b"): np.full((2, 2), 0.5), ("b", "a"): np.full((2, 2), 0.4),
    ...        ("a", "c"): np.full((2, 2), 0.02), ("c", "a"): np.zeros((2, 2)),
    ...        ("b", "c"): np.zeros((2, 2)), ("c", "b"): np.full((2, 2), 0.01)}
    >>> sym = {e: (raw[e] + raw[e[::-1]].T) / 2 for e in [("a", "b"), ("a", "c"), ("b", "c")]}
    >>> score, crit = asymmetry_scores(raw, sym, {"a": 2, "b": 2, "c": 2})
    >>> sorted(e for e in score if score[e] > crit)
    [('a', 'b')]
    """
    diffs = [np.asarray(raw[a, b], dtype=float) - np.asarray(raw[b, a], dtype=float).T for a, b in sym]
    level = math.sqrt(float(np.mean(np.concatenate([d.ravel() ** 2 for d in diffs])))) / 2.0
    level = max(level, 1e-12)
    n_tests = sum((sizes[a] - 1) * (sizes[b] - 1) for a, b in sym)
    crit = math.log(max(n_tests, 1) / alpha) / math.sqrt(2.0)
    return {e: float(np.abs(w).max()) / level for e, w in sym.items()}, crit


def warn_if_on_boundary(l1_fractions: np.ndarray, name: str) -> None:
    """Warn when most regressions' weights fill the l1 ball: the true weights may lie outside it.

    With room to spare, steps towards opposite vertices cancel and the weights use less than the radius.
    """
    frac = np.asarray(l1_fractions, dtype=float)
    if frac.size and float(np.median(frac)) >= BOUNDARY_FRACTION:
        warnings.warn(
            f"{name}: {np.mean(frac >= BOUNDARY_FRACTION):.0%} of the regressions ended on the l1 ball's boundary "
            f"(median |w|_1 / radius {np.median(frac):.3f}); the true weights may lie outside it. Pass a larger "
            "width= (or radius=), leave width=None to estimate it, or use route='tables'",
            BoundaryWarning,
            stacklevel=4,
        )
