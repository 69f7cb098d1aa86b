"""Maximum-likelihood log-potentials from clique marginals, and the simplex projection.

The MLE of a Markov network with cliques ``C`` depends on the data only through
the clique marginals ``mu_hat``: it minimises, per record,

    f(theta) = -sum_C <theta_C, mu_hat_C> + log Z(theta) + (lambda / 2) ||theta||^2

whose gradient is ``mu(theta) - mu_hat + lambda * theta``. It is convex; L-BFGS solves it, one
inference call per evaluation, except on decomposable models without regularisation, where the
minimiser is in closed form (clique over separator marginals).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize

from .._blas import single_threaded_blas
from .factor import align
from .junction_tree import JunctionTree

# Zero marginals have no finite MLE (Haberman 1973); without regularisation the
# closed form floors them here so potentials stay finite (exp gives ~1e-300).
_LOG_FLOOR = math.log(1e-300)
#: An L-BFGS stop for lack of decrease counts as converged when the gradient is within this factor of tol.
_ROUNDING_SLACK = 10.0


class ConvergenceWarning(UserWarning):
    """An iterative fit stopped at ``max_iter`` before reaching its tolerance."""


def project_simplex(values: np.ndarray) -> np.ndarray:
    """Euclidean projection of an array (all cells together) onto the probability simplex (Duchi et al. 2008).

    Examples
    --------
    >>> project_simplex(np.array([0.5, 0.7, -0.2]))
    array([0.4, 0.6, 0. ])
    >>> float(project_simplex(np.array([[3.0, -1.0], [0.0, 0.0]])).sum())
    1.0
    """
    v = np.asarray(values, dtype=np.float64)
    flat = v.ravel()
    if not np.all(np.isfinite(flat)):
        raise ValueError("cannot project a table with NaN or infinite entries onto the simplex")
    u = np.sort(flat)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.arange(1, u.size + 1)
    rho = np.nonzero(u - css / k > 0)[0][-1]
    tau = css[rho] / (rho + 1)
    return np.maximum(flat - tau, 0.0).reshape(v.shape)


def tie_groups(cliques: Sequence[tuple[str, ...]], tied: Sequence[Sequence[int]] | None, domain) -> list[list[int]]:
    """Partition clique indices into parameter groups (one shared log-potential each): ``tied`` groups plus singletons.

    Examples
    --------
    >>> from pgmpy_dp.privacy.domain import Domain
    >>> d = Domain({v: [0, 1] for v in "abc"})
    >>> tie_groups([("a", "b"), ("b", "c"), ("c",)], [[0, 1]], d)
    [[0, 1], [2]]
    """
    groups: list[list[int]] = []
    seen: set[int] = set()
    for g in tied or []:
        g = _checked_group([int(i) for i in g], seen, cliques, domain)
        seen |= set(g)
        groups.append(g)
    groups += [[i] for i in range(len(cliques)) if i not in seen]
    return sorted(groups, key=min)


def _checked_group(g: list[int], seen: set[int], cliques, domain) -> list[int]:
    """A tied group checked: indices in range, none tied before (``seen``), one shape for all."""
    bad = [i for i in g if not 0 <= i < len(cliques)]
    if bad:
        raise ValueError(f"tied group {g} names clique indices {bad} outside 0..{len(cliques) - 1}")
    if seen & set(g):
        raise ValueError(f"clique(s) {sorted(seen & set(g))} appear in two tied groups; each may be tied once")
    shapes = {domain.shape(cliques[i]) for i in g}
    if len(shapes) > 1:
        raise ValueError(
            f"tied cliques {[cliques[i] for i in g]} have different shapes {sorted(shapes)}; "
            "tied potentials must match axis by axis"
        )
    return g


def clique_weights(regularization, groups) -> float | tuple[float, ...]:
    """The penalty weight ``regularization`` validated: a float as given, or a tuple with one weight per clique.

    A sequence gives clique ``i`` the penalty ``(lambda_i / 2) ||theta_i||^2``; tied cliques must share theirs.

    Examples
    --------
    >>> clique_weights(0.5, [[0], [1]]), clique_weights([0.1, 0.2], [[0], [1]])
    (0.5, (0.1, 0.2))
    """
    if np.ndim(regularization) == 0:
        lam = float(regularization)
        if not (math.isfinite(lam) and lam >= 0):
            raise ValueError(f"regularization must be a non-negative number, got {regularization!r}")
        return lam
    return _per_clique_weights(regularization, groups)


def _per_clique_weights(regularization, groups) -> tuple[float, ...]:
    """`clique_weights` for a sequence: one finite non-negative weight per clique, one per tied group."""
    weights = tuple(float(v) for v in regularization)
    n = sum(len(g) for g in groups)
    if len(weights) != n or not all(math.isfinite(v) and v >= 0 for v in weights):
        raise ValueError(f"regularization as a sequence needs {n} non-negative weights (one per clique), got {regularization!r}")
    for g in groups:
        if len({weights[i] for i in g}) > 1:
            raise ValueError(f"tied cliques {g} share one potential, so they need one weight; got {[weights[i] for i in g]}")
    return weights


@dataclass
class MLEResult:
    """Fitted log-potentials (one array per clique) and how the solver ended."""

    log_potentials: list[np.ndarray]
    n_iter: int
    converged: bool
    objective: float
    gradient_norm: float
    method: str
    message: str = field(default="")


def _closed_form(jt: JunctionTree, targets: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """Clique-over-separator log-ratios when every tree clique is one of the model cliques."""
    index = {frozenset(c): i for i, c in enumerate(jt.cliques)}
    node_clique = [index.get(frozenset(n)) for n in jt.nodes]
    if any(i is None for i in node_clique):
        return None
    theta = [np.zeros(t.shape) for t in targets]
    with np.errstate(divide="ignore"):
        for v, i in enumerate(node_clique):
            theta[i] = _clique_over_separator(jt, v, jt.cliques[i], targets[i])
    return theta


def _clique_over_separator(jt: JunctionTree, v: int, c: tuple[str, ...], target: np.ndarray) -> np.ndarray:
    """Log of tree clique ``v``'s marginal over that of its separator with its parent (floored at `_LOG_FLOOR`)."""
    logm = np.maximum(np.log(target), _LOG_FLOOR)
    p = jt.parent[v]
    sep = () if p is None else tuple(a for a in c if a in jt.nodes[p])
    if sep:
        logs = np.maximum(np.log(np.sum(target, axis=tuple(c.index(a) for a in c if a not in sep))), _LOG_FLOOR)
        logm = logm - align(logs, sep, c)
    return logm


def fit_log_potentials(
    inference,
    marginals: Sequence[np.ndarray],
    regularization: float = 0.0,
    tied: Sequence[Sequence[int]] | None = None,
    init: Sequence[np.ndarray] | None = None,
    max_iter: int = 1000,
    tol: float = 1e-7,
    warn: bool = True,
) -> MLEResult:
    """Log-potentials maximising the (L2-regularised) likelihood of clique marginals.

    Parameters
    ----------
    inference : JunctionTree or LoopyBP
        Engine for the model's cliques, which fix the order of ``marginals`` (loopy BP: the Bethe ``log Z``).
    marginals : sequence of numpy.ndarray
        Target marginals or (pseudo)counts per clique, non-negative; each is divided by its total.
    regularization : float or sequence of float
        ``lambda`` of the per-record penalty ``lambda/2 ||theta||^2``, or one per clique
        ([`clique_weights`][pgmpy_dp.engine.mle.clique_weights]).
    tied : list of list of int, optional
        Groups of clique indices sharing one potential (time-homogeneous chains).
    init : sequence of numpy.ndarray, optional
        Warm start (one array per clique).
    max_iter, tol : int, float
        L-BFGS iteration limit and gradient tolerance (max-norm, per record); a failed line search
        counts as converged within 10x ``tol``.
    warn : bool
        Emit a [`ConvergenceWarning`][pgmpy_dp.engine.mle.ConvergenceWarning] when the solver stops early.

    Returns
    -------
    MLEResult

    Examples
    --------
    >>> from pgmpy_dp.privacy.domain import Domain
    >>> from pgmpy_dp.engine import JunctionTree
    >>> d = Domain({v: [0, 1] for v in "abc"})
    >>> jt = JunctionTree(d, [("a", "b"), ("b", "c"), ("a", "c")])
    >>> truth = [np.log([[3.0, 1.0], [1.0, 2.0]]), np.zeros((2, 2)), np.log([[1.0, 2.0], [2.0, 1.0]])]
    >>> target, _ = jt.marginals(truth)
    >>> fit = fit_log_potentials(jt, target)
    >>> fitted, _ = jt.marginals(fit.log_potentials)
    >>> fit.method, max(float(np.abs(f - t).max()) for f, t in zip(fitted, target)) < 1e-6
    ('lbfgs', True)
    """
    targets = _normalised(inference, marginals)
    groups = tie_groups(inference.cliques, tied, inference.domain)
    lam = clique_weights(regularization, groups)
    if not any(np.atleast_1d(lam)) and all(len(g) == 1 for g in groups) and init is None and isinstance(inference, JunctionTree):
        theta = _closed_form(inference, targets)
        if theta is not None:
            return MLEResult(theta, 0, True, float("nan"), 0.0, "closed-form")
    # WarmMLE owns the packing of (tied) potentials and the objective; scipy's L-BFGS-B drives it from a cold start
    problem = WarmMLE(inference, lam, tied)
    res = _cold_lbfgs(problem, problem._targets(targets), init, int(max_iter), float(tol))
    gnorm, converged, reason = _lbfgs_outcome(res, max_iter, tol)
    if warn and not converged:
        warnings.warn(
            f"MLE stopped after {res.nit} L-BFGS iterations with gradient max-norm {gnorm:.2e} > tol={tol:g} "
            f"({reason}); raise max_iter, or regularization for tables with zeros",
            ConvergenceWarning,
            stacklevel=2,
        )
    theta = problem._unpack(res.x.copy())  # tied cliques keep sharing one array
    return MLEResult(theta, int(res.nit), converged, float(res.fun), gnorm, "lbfgs", reason)


def _lbfgs_outcome(res, max_iter: int, tol: float) -> tuple[float, bool, str]:
    """The gradient max-norm at scipy's L-BFGS-B result, whether it counts as converged, and why it stopped."""
    gnorm = float(np.max(np.abs(res.jac))) if res.jac is not None and res.jac.size else 0.0
    # a failed line search ("ABNORMAL") with the gradient within _ROUNDING_SLACK of tol: float64 cannot
    # resolve a lower objective, so that point is the solution to rounding
    at_rounding = str(res.message).upper().startswith("ABNORMAL") and gnorm <= _ROUNDING_SLACK * tol
    return gnorm, bool(gnorm <= tol or res.success or at_rounding), _lbfgs_reason(str(res.message), res.nit, max_iter)


def _normalised(inference, marginals: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Each clique's target marginal checked (shape, finite, non-negative, positive mass) and divided by its total."""
    cliques, domain = inference.cliques, inference.domain
    if len(marginals) != len(cliques):
        raise ValueError(f"expected {len(cliques)} marginal tables (one per clique), got {len(marginals)}")
    targets = []
    for c, m in zip(cliques, marginals):
        m = np.asarray(m, dtype=np.float64)
        if m.shape != domain.shape(c):
            raise ValueError(f"marginal of clique {c} has shape {m.shape}, expected {domain.shape(c)}")
        if not np.all(np.isfinite(m)) or np.any(m < 0):
            raise ValueError(
                f"marginal of clique {c} has negative or non-finite entries; project it onto the simplex first"
            )
        total = m.sum()
        if total <= 0:
            raise ValueError(f"marginal of clique {c} sums to {total}; it needs positive mass")
        targets.append(m / total)
    return targets


def _cold_lbfgs(problem: WarmMLE, target: np.ndarray, init, max_iter: int, tol: float):
    """scipy's L-BFGS-B on ``problem`` for the packed ``target``, from ``init`` (default: zeros)."""
    if init is None:
        x0 = np.zeros(problem.offsets[-1])
    else:
        if len(init) != len(problem.inference.cliques):
            raise ValueError(f"init needs {len(problem.inference.cliques)} arrays, got {len(init)}")
        x0 = problem._pack(init)

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        return problem._value(x, target)

    with warnings.catch_warnings(), single_threaded_blas():
        # loopy BP warns per call; the solver's own status is what we report
        warnings.simplefilter("ignore", RuntimeWarning)
        res = _lbfgsb(objective, x0, max_iter, tol, 1e-15, 20)
        if res is None:  # a scipy whose L-BFGS-B routine this driver does not know
            res = minimize(
                objective, x0, jac=True, method="L-BFGS-B",
                options={"maxiter": max_iter, "gtol": tol, "ftol": 1e-15, "maxcor": 20},
            )
    return res


#: scipy versions whose ``_lbfgsb.setulb`` has the calling convention `_lbfgsb` uses (others: ``minimize``).
_SETULB_VERSIONS = ((1, 15), (1, 18))


@dataclass
class _LbfgsbResult:
    """The fields of scipy's ``OptimizeResult`` that `fit_log_potentials` reads."""

    x: np.ndarray
    fun: float
    jac: np.ndarray
    nit: int
    nfev: int
    success: bool
    message: str


def _setulb():
    """scipy's L-BFGS-B routine when its calling convention is the one `_lbfgsb` drives, else None."""
    try:
        import scipy
        from scipy.optimize import _lbfgsb as routine
        from scipy.optimize._lbfgsb_py import status_messages, task_messages
    except ImportError:
        return None
    version = tuple(int(p) for p in scipy.__version__.split(".")[:2] if p.isdigit())
    low, high = _SETULB_VERSIONS
    if len(version) != 2 or not low <= version < high or not hasattr(routine, "setulb"):
        return None
    return routine.setulb, status_messages, task_messages


def _lbfgsb(fun, x0: np.ndarray, max_iter: int, gtol: float, ftol: float, maxcor: int,
            maxls: int = 20, maxfun: int = 15000) -> _LbfgsbResult | None:
    """``scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", options=...)`` without its wrappers.

    The loop of scipy 1.15-1.17's ``_minimize_lbfgsb`` (no bounds, no callback), so the result is
    that of ``minimize`` to the bit (tested), without its per-evaluation bookkeeping. ``fun(x)``
    returns ``(float, gradient)`` and must not keep ``x``. Returns None for another scipy.
    """
    routine = _setulb()
    if routine is None:
        return None
    setulb, status_messages, task_messages = routine
    m = int(maxcor)
    x = np.array(np.asarray(x0).ravel(), dtype=np.float64)
    n = x.size
    factr = ftol / np.finfo(float).eps
    nbd, low, high = np.zeros(n, np.int32), np.zeros(n, np.float64), np.zeros(n, np.float64)  # no bounds
    f, g = np.array(0.0, dtype=np.float64), np.zeros(n, dtype=np.float64)
    wa, iwa = np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m, np.float64), np.zeros(3 * n, dtype=np.int32)
    task, ln_task, lsave = np.zeros(2, dtype=np.int32), np.zeros(2, dtype=np.int32), np.zeros(4, dtype=np.int32)
    isave, dsave = np.zeros(44, dtype=np.int32), np.zeros(29, dtype=np.float64)
    last_x = None  # scipy's wrapper re-uses the value at a point it was asked for already
    last = None
    nfev = nit = 0
    while True:
        g = g.astype(np.float64)
        setulb(m, x, low, high, nbd, f, g, factr, gtol, wa, iwa, task, lsave, isave, dsave, maxls, ln_task)
        if task[0] == 3:  # FG: the value and gradient at x
            if last_x is None or not np.array_equal(x, last_x):
                last_x = x.copy()
                value, grad = fun(last_x)
                last = (value, np.atleast_1d(grad))
                nfev += 1
            f, g = last
        elif task[0] == 1:  # NEW_X: an iteration ended
            nit += 1
            if nit >= max_iter:
                task[0], task[1] = 5, 504
            elif nfev > maxfun:
                task[0], task[1] = 5, 502
        else:
            break
    message = status_messages[task[0]] + ": " + task_messages[task[1]]
    return _LbfgsbResult(x, f, g, nit, nfev, bool(task[0] == 4), message)


def _lbfgs_reason(message: str, n_iter: int, max_iter: int) -> str:
    """scipy's L-BFGS-B stop message, made readable (recent scipy prints ``"ABNORMAL: "`` with no reason).

    Examples
    --------
    >>> _lbfgs_reason("ABNORMAL: ", 12, 1000)
    'the line search found no lower objective along the search direction: the gradient left is at the rounding level of the objective, so tol is stricter than float64 resolves here'
    >>> _lbfgs_reason("STOP: TOTAL NO. OF ITERATIONS REACHED LIMIT", 1000, 1000)
    'max_iter=1000 reached'
    """
    text = message.strip()
    if n_iter >= max_iter or "ITERATIONS REACHED LIMIT" in text.upper():
        return f"max_iter={max_iter} reached"
    if text.upper().startswith("ABNORMAL"):
        detail = text.split(":", 1)[1].strip() if ":" in text else ""
        return (
            "the line search found no lower objective along the search direction: the gradient left is at the "
            "rounding level of the objective, so tol is stricter than float64 resolves here"
            + (f" (scipy: {detail})" if detail else "")
        )
    return text or "no reason given by scipy"


def _max_abs(g: np.ndarray) -> float:
    return float(np.max(np.abs(g))) if g.size else 0.0


def _flat_but_better(f: float, f_new: float, g_new: np.ndarray, gnorm: float) -> bool:
    """Near the solution the decrease is below the rounding of f (f + 1e-4 step slope == f): there a step that
    does not raise f beyond rounding is taken when it shrinks the gradient. Accepting any f_new == f instead can
    stall on a point forever."""
    flat = abs(f_new - f) <= 8 * np.spacing(abs(f)) + 1e-300
    return flat and float(np.max(np.abs(g_new))) < gnorm


class WarmMLE:
    """Repeated MLE solves on one model whose targets change: L-BFGS that keeps its curvature.

    The targets enter the objective (module docstring) only linearly, so the L-BFGS curvature pairs
    do not depend on them: pairs kept from earlier solves make the next solve's first step quasi-Newton.

    Parameters
    ----------
    inference : JunctionTree or LoopyBP
        Engine for the model's cliques.
    regularization : float or sequence of float
        ``lambda`` of the per-record penalty, or one per clique (``lambda_i / 2 ||theta_i||^2``).
    tied : list of list of int, optional
        Groups of clique indices sharing one potential.
    memory : int
        Curvature pairs kept (the most recent).

    Examples
    --------
    >>> from pgmpy_dp.engine import make_inference
    >>> from pgmpy_dp.privacy.domain import Domain
    >>> loop = make_inference(Domain({v: [0, 1, 2] for v in "xyz"}), [("x", "y"), ("y", "z"), ("z", "x")])
    >>> rng = np.random.default_rng(0)
    >>> theta = [rng.normal(size=(3, 3)) for _ in range(3)]
    >>> solver = WarmMLE(loop, regularization=1e-4)
    >>> first = solver.solve(loop.marginals(theta)[0], [np.zeros((3, 3))] * 3, max_iter=100, tol=1e-9)
    >>> moved = [0.9 * t for t in theta]  # EM's next M-step: new targets, the same curvature
    >>> second = solver.solve(loop.marginals(moved)[0], first.log_potentials, max_iter=100, tol=1e-9)
    >>> first.converged, second.converged, len(solver.pairs) > 0
    (True, True, True)
    """

    def __init__(
        self, inference, regularization: float = 0.0, tied: Sequence[Sequence[int]] | None = None, memory: int = 20,
    ) -> None:
        self.inference = inference
        self.groups = tie_groups(inference.cliques, tied, inference.domain)
        self.shapes = [inference.domain.shape(inference.cliques[g[0]]) for g in self.groups]
        self.offsets = np.concatenate([[0], np.cumsum([math.prod(s) for s in self.shapes])]).astype(int)
        lam = clique_weights(regularization, self.groups)
        # per-clique weights: one per parameter, so every use of lam below stays elementwise
        self.lam = lam if isinstance(lam, float) else np.repeat([lam[g[0]] for g in self.groups], np.diff(self.offsets))
        self.memory = int(memory)
        self.pairs: list[tuple[np.ndarray, np.ndarray, float]] = []  # (s, y, 1 / s.y)
        self.calls = 0  # inference calls made, for profiling
        self._last_eval: tuple | None = None  # (x, marginals, log Z) of the latest objective evaluation
        #: Marginals and log Z at the point the latest `solve` returned, if evaluated there, else None.
        self.final_marginals: tuple[list[np.ndarray], float] | None = None

    def _pack(self, arrays) -> np.ndarray:
        return np.concatenate([np.mean([np.asarray(arrays[i], dtype=np.float64) for i in g], axis=0).ravel() for g in self.groups])

    def _unpack(self, x: np.ndarray) -> list[np.ndarray]:
        out: list[np.ndarray] = [None] * len(self.inference.cliques)  # type: ignore[list-item]
        for k, g in enumerate(self.groups):
            block = x[self.offsets[k] : self.offsets[k + 1]].reshape(self.shapes[k])
            for i in g:
                out[i] = block
        return out

    def _targets(self, marginals) -> np.ndarray:
        return np.concatenate([np.sum([np.asarray(marginals[i], dtype=np.float64) for i in g], axis=0).ravel() for g in self.groups])

    def _value(self, x: np.ndarray, target: np.ndarray) -> tuple[float, np.ndarray]:
        mu, log_z = self.inference.marginals(self._unpack(x))
        self.calls += 1
        self._last_eval = (x, mu, log_z)
        # an untied clique's marginal as it is: np.sum over a one-element list copies it for nothing
        mu_group = np.concatenate([(mu[g[0]] if len(g) == 1 else np.sum([mu[i] for i in g], axis=0)).ravel() for g in self.groups])
        penalty = 0.5 * self.lam * float(x @ x) if isinstance(self.lam, float) else 0.5 * float(x @ (self.lam * x))
        return -float(x @ target) + log_z + penalty, mu_group - target + self.lam * x

    def _direction(self, g: np.ndarray) -> np.ndarray:
        # L-BFGS two-loop recursion over the kept pairs (Nocedal and Wright, Algorithm 7.4)
        # in-place updates of q (a new array from the first line): the same arithmetic, no temporaries kept
        q = -g
        alphas = []
        for s, y, rho in reversed(self.pairs):
            a = rho * float(s @ q)
            alphas.append(a)
            q -= a * y
        if self.pairs:
            s, y, rho = self.pairs[-1]
            q = q * (float(s @ y) / float(y @ y))
        for (s, y, rho), a in zip(self.pairs, reversed(alphas)):
            b = rho * float(y @ q)
            q += (a - b) * s
        return q

    def _descent(self, g: np.ndarray) -> tuple[np.ndarray, float]:
        """The L-BFGS direction and its slope; a gradient step when the kept curvature is stale for this point."""
        d = self._direction(g)
        slope = float(g @ d)
        if not slope < 0:
            self.pairs.clear()
            d = self._direction(g)
            slope = float(g @ d)
        return d, slope

    def _line_search(self, x, f: float, g, gnorm: float, d, slope: float, target):
        """Backtracking along ``d``: (accepted, point, value, gradient) at the last step tried."""
        # the first L-BFGS step of a run has no curvature yet: keep it short
        step = 1.0 if self.pairs else min(1.0, 1.0 / max(gnorm, 1e-300))
        while True:
            x_new = x + step * d
            f_new, g_new = self._value(x_new, target)
            ok = f_new < f + 1e-4 * step * slope or _flat_but_better(f, f_new, g_new, gnorm)
            if ok or step < 1e-10:
                return ok, x_new, f_new, g_new
            step *= 0.5

    def _remember(self, s: np.ndarray, y: np.ndarray) -> None:
        """Keep the curvature pair (s, y) when it is safely positive (the most recent `memory` pairs)."""
        sy = float(s @ y)
        if sy > 1e-12 * math.sqrt(float(s @ s) * float(y @ y)):
            self.pairs.append((s, y, 1.0 / sy))
            del self.pairs[: -self.memory]

    def solve(self, marginals: Sequence[np.ndarray], init: Sequence[np.ndarray], max_iter: int = 20, tol: float = 1e-8) -> MLEResult:
        """Minimise ``f`` for these target marginals from ``init``, to gradient max-norm ``tol`` or ``max_iter``."""
        target = self._targets(marginals)
        x = self._pack(init)
        f, g = self._value(x, target)
        it = 0
        gnorm = _max_abs(g)
        message = "gradient below tol"
        while gnorm > tol and it < max_iter:
            d, slope = self._descent(g)
            ok, x_new, f_new, g_new = self._line_search(x, f, g, gnorm, d, slope, target)
            if not ok:
                message = "line search found no decrease (the gradient is at rounding level)"
                break
            self._remember(x_new - x, g_new - g)
            x, f, g = x_new, f_new, g_new
            gnorm = _max_abs(g)
            it += 1
        else:
            if gnorm > tol:
                message = f"max_iter={max_iter} reached"
        last = self._last_eval
        self.final_marginals = (last[1], last[2]) if last is not None and last[0] is x else None
        return MLEResult(self._unpack(x.copy()), it, gnorm <= tol, f, gnorm, "warm-lbfgs", message)

