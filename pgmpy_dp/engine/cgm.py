"""EM for collective graphical models (CGM-EM) on noisy marginal tables.

The true clique contingency tables ``n`` are latent; the release observes
``y = n + noise`` with discrete Laplace noise of a known scale per table
(Bernstein et al. 2017, section 3.2). EM alternates

* E-step, non-linear belief propagation (their Algorithm 1): with the current
  parameters ``theta``, repeatedly set ``theta' = theta + grad_n log p(y | n)``,
  run ordinary inference on ``theta'``, rescale the marginals to ``N`` records
  and damp: ``n <- (1 - alpha) n + alpha N mu(theta')``. Its fixed point is the
  approximate posterior mode of ``n`` (their Problem 6): exact on a junction
  tree, a Bethe approximation with loopy BP.
* M-step (their Algorithm 2): the (L2-regularised) MLE of ``theta`` given the
  inferred counts ``n``, warm-started at ``theta'``. When the E-step is solved
  exactly and ``lambda = 0``, ``theta'`` already is that MLE.

Every measurement is evidence (Williams and McSherry 2010): several tables
over one clique, tables over subsets of a clique, and tables at different
epsilons each contribute their own likelihood term, weighted by their scale.

The Laplace log-likelihood ``-|y - n| / scale`` is not differentiable at
``y = n``. Its subgradient ``sign(y - n) / scale`` makes the fixed-point
iteration chatter around cells where the fit is already exact, so we use the
pseudo-Huber smoothing ``-(sqrt(r^2 + delta^2) - delta) / scale`` with
``r = y - n`` and ``delta = smoothing * scale``: it equals the Laplace term up
to ``delta / scale`` for residuals beyond a few noise scales (the gradient
tends to the paper's ``sign(r) / scale``), and is quadratic, i.e. Gaussian
with the same curvature scale, for residuals within the noise, so EM has a
genuine fixed point. ``smoothing=0`` gives the plain subgradient.

EM on this problem is slow when the noise is large: each step moves the
log-potentials by at most ``1 / scale``. We therefore use adaptive
over-relaxation (Salakhutdinov and Roweis 2003): step ``theta + omega (M(theta) - theta)``,
growing ``omega`` while the penalised log-likelihood of the tables improves
and falling back to the plain EM step (``omega = 1``) when it does not. The
fixed points are those of plain EM.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .factor import align
from .mle import ConvergenceWarning, fit_log_potentials, tie_groups

__all__ = ["CGMResult", "Measurement", "cgm_em", "laplace_log_likelihood"]


@dataclass(frozen=True, eq=False)
class Measurement:
    """One noisy table: counts ``values`` over ``attrs`` with Laplace noise of ``scale`` per cell."""

    attrs: tuple[str, ...]
    values: np.ndarray
    scale: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "attrs", tuple(self.attrs))
        object.__setattr__(self, "values", np.asarray(self.values, dtype=np.float64))
        if not (math.isfinite(self.scale) and self.scale > 0):
            raise ValueError(f"measurement over {self.attrs} needs a positive finite noise scale, got {self.scale!r}")


def laplace_log_likelihood(
    y: np.ndarray, n: np.ndarray, scale: float, smoothing: float = 1.0
) -> tuple[float, np.ndarray, np.ndarray]:
    """Smoothed Laplace log-likelihood of noisy counts ``y`` given counts ``n``, its gradient and curvature in ``n``.

    ``sum -(sqrt(r^2 + delta^2) - delta) / scale`` with ``r = y - n`` and
    ``delta = smoothing * scale`` (constants dropped); ``smoothing=0`` gives
    ``-|r| / scale`` with the subgradient ``sign(r) / scale``. The curvature
    (minus the second derivative, per cell) is what the E-step uses to size
    its steps; for ``smoothing=0`` it is taken at one noise scale.

    Examples
    --------
    >>> ll, g, k = laplace_log_likelihood(np.array([10.0, 0.0]), np.array([0.0, 0.0]), scale=1.0, smoothing=0)
    >>> ll, g.tolist()
    (-10.0, [1.0, 0.0])
    """
    r = np.asarray(y, dtype=np.float64) - n
    delta = (smoothing or 1.0) * scale
    s = np.sqrt(r * r + delta * delta)
    curvature = delta * delta / (scale * s**3)
    if smoothing == 0:
        return -float(np.abs(r).sum()) / scale, np.sign(r) / scale, curvature
    return -float(np.sum(s - delta)) / scale, r / (s * scale), curvature


@dataclass
class CGMResult:
    """Outcome of :func:`cgm_em`."""

    log_potentials: list[np.ndarray]
    counts: list[np.ndarray]
    n_iter: int
    converged: bool
    tolerance: float
    log_likelihood: list[float] = field(default_factory=list)
    omega: list[float] = field(default_factory=list)


def _host_cliques(cliques, measurements) -> list[int]:
    hosts = []
    for m in measurements:
        cands = [i for i, c in enumerate(cliques) if set(m.attrs) <= set(c)]
        if not cands:
            raise ValueError(
                f"measurement over {m.attrs} is not contained in any model clique {cliques}; "
                "drop it or add a clique that contains it"
            )
        hosts.append(min(cands, key=lambda i: len(cliques[i])))
    return hosts


def cgm_em(
    inference,
    measurements: Sequence[Measurement],
    n_records: float,
    regularization: float = 0.0,
    tied: Sequence[Sequence[int]] | None = None,
    init: Sequence[np.ndarray] | None = None,
    max_iter: int = 200,
    tol: float = 1e-6,
    damping: float = 1.0,
    nlbp_iter: int = 10,
    e_tol: float = 1e-4,
    smoothing: float = 1.0,
    overrelax: bool = True,
    m_step_iter: int = 20,
    callback: Callable[[int, float, float], None] | None = None,
    warn: bool = True,
) -> CGMResult:
    """Fit log-potentials to noisy marginal tables by EM with non-linear belief propagation.

    Parameters
    ----------
    inference : JunctionTree or LoopyBP
        Engine for the model's cliques (exact or approximate E-step).
    measurements : sequence of Measurement
        Noisy tables; each must lie inside some model clique.
    n_records : float
        Number of records ``N`` the inferred counts sum to.
    regularization : float
        ``lambda`` of the per-record L2 penalty in the M-step.
    tied : list of list of int, optional
        Groups of clique indices sharing one potential.
    init : sequence of numpy.ndarray, optional
        Starting log-potentials (default: all zero, the uniform model).
    max_iter : int
        Largest number of EM iterations.
    tol : float
        Stop when the relative change of the penalised log-likelihood of the tables falls below it.
    damping : float
        Global factor ``alpha`` on the per-cell NLBP steps (1 = only the per-cell damping).
    nlbp_iter : int
        Largest number of NLBP sweeps per E-step.
    e_tol : float
        The E-step stops when no natural parameter moves by more than this.
    smoothing : float
        Pseudo-Huber width in noise scales (see the module docstring).
    overrelax : bool
        Adaptive over-relaxation of the EM step.
    m_step_iter : int
        L-BFGS iterations per M-step (a partial M-step still increases the EM bound).
    callback : callable, optional
        Called as ``callback(iteration, log_likelihood, change)`` after every iteration.
    warn : bool
        Emit a :class:`ConvergenceWarning` with the achieved tolerance when ``max_iter`` is reached.

    Returns
    -------
    CGMResult

    Examples
    --------
    >>> from pgmpy_dp.privacy.domain import Domain
    >>> from pgmpy_dp.engine import JunctionTree
    >>> d = Domain({"a": [0, 1], "b": [0, 1]})
    >>> jt = JunctionTree(d, [("a", "b")])
    >>> y = Measurement(("a", "b"), np.array([[600.0, 100.0], [100.0, 200.0]]), scale=1.0)
    >>> fit = cgm_em(jt, [y], n_records=1000, max_iter=500)
    >>> fit.converged, np.round(fit.counts[0]).tolist()
    (True, [[600.0, 100.0], [100.0, 200.0]])
    """
    cliques = inference.cliques
    domain = inference.domain
    N = float(n_records)
    if not (math.isfinite(N) and N > 0):
        raise ValueError(f"n_records must be positive and finite, got {n_records!r}")
    if not 0 < damping <= 1:
        raise ValueError(f"damping must be in (0, 1], got {damping!r}")
    if len(measurements) == 0:
        raise ValueError("CGM-EM needs at least one measurement")
    for m in measurements:
        if m.values.shape != domain.shape(m.attrs):
            raise ValueError(f"measurement over {m.attrs} has shape {m.values.shape}, expected {domain.shape(m.attrs)}")
    hosts = _host_cliques(cliques, measurements)
    groups = tie_groups(cliques, tied, domain)
    lam = float(regularization)

    def table_counts(mu: list[np.ndarray]) -> list[np.ndarray]:
        out = []
        for m, h in zip(measurements, hosts):
            c = cliques[h]
            axes = tuple(i for i, a in enumerate(c) if a not in m.attrs)
            marg = np.sum(mu[h], axis=axes) if axes else mu[h]
            rest = [a for a in c if a in m.attrs]
            out.append(N * np.transpose(marg, [rest.index(a) for a in m.attrs]))
        return out

    def loglik(mu: list[np.ndarray], theta: list[np.ndarray]):
        """Penalised log-likelihood of the tables at counts N mu, its gradient and step sizes per clique cell."""
        total = 0.0
        grad = [np.zeros(domain.shape(c)) for c in cliques]
        stiff = [np.zeros(domain.shape(c)) for c in cliques]
        for m, h, n in zip(measurements, hosts, table_counts(mu)):
            ll, g, k = laplace_log_likelihood(m.values, n, m.scale, smoothing)
            total += ll
            grad[h] = grad[h] + align(g, m.attrs, cliques[h])
            # d(log-count) of a cell moves the table by n * d, so n * curvature is its stiffness
            stiff[h] = stiff[h] + align(k * np.maximum(n, 0.0), m.attrs, cliques[h])
        penalty = 0.5 * lam * N * sum(float(np.sum(theta[g[0]] ** 2)) for g in groups)
        return total - penalty, grad, stiff

    def tie(theta: list[np.ndarray]) -> list[np.ndarray]:
        out: list[np.ndarray] = [None] * len(cliques)  # type: ignore[list-item]
        for g in groups:
            block = np.mean([theta[i] for i in g], axis=0) if len(g) > 1 else theta[g[0]]
            for i in g:
                out[i] = block
        return out

    def e_objective(phi, mu_phi, log_z_phi) -> float:
        """Problem (6) at counts N mu(phi): theta.n + H(n) + log p(y | n), with H(n) = N (A(phi) - phi.mu)."""
        inner = sum(float(np.sum((th - ph) * m)) for th, ph, m in zip(theta, phi, mu_phi)) + log_z_phi
        return N * inner + loglik(mu_phi, theta)[0]

    def _e_step(theta, mu, log_z, grad, stiff):
        # NLBP moves the natural parameters phi of the counts towards theta + grad log p(y | n);
        # that direction is the Fisher-preconditioned gradient of Problem (6) in phi. The paper
        # damps with a fixed alpha; a fixed step overshoots whenever a cell's count exceeds its
        # squared noise scale (the likelihood is then stiffer than the multinomial prior), so
        # each cell's step is divided by 1 + its stiffness (the Newton step of an isolated
        # cell) and the whole step is halved until Problem (6) improves.
        phi, mu_phi, lz_phi = theta, mu, log_z
        g, st = grad, stiff
        obj = e_objective(phi, mu_phi, lz_phi)
        for _ in range(nlbp_iter):
            direction = [(th + gr - ph) / (1.0 + k) for th, gr, ph, k in zip(theta, g, phi, st)]
            eta = damping
            while True:
                cand = [ph + eta * d for ph, d in zip(phi, direction)]
                mu_c, lz_c = inference.marginals(cand)
                obj_c = e_objective(cand, mu_c, lz_c)
                if obj_c >= obj - 1e-12 * abs(obj) or eta < 1e-3:
                    break
                eta *= 0.5
            moved = eta * max(float(np.max(np.abs(d))) for d in direction)
            phi, mu_phi, lz_phi, obj = cand, mu_c, lz_c, obj_c
            if moved < e_tol:
                break
            _, g, st = loglik(mu_phi, theta)
        return phi, mu_phi

    theta = [np.zeros(domain.shape(c)) for c in cliques] if init is None else tie([np.array(t, dtype=np.float64) for t in init])
    mu, log_z = inference.marginals(theta)
    ll, grad, stiff = loglik(mu, theta)
    trace = [ll]
    omegas: list[float] = []
    omega = 1.0
    change = np.inf
    converged = False
    t = 0
    for t in range(1, max_iter + 1):
        # E-step: NLBP (Algorithm 1) from the current model; see _e_step
        theta_p, mu_p = _e_step(theta, mu, log_z, grad, stiff)
        n = [N * m for m in mu_p]
        # M-step, warm-started where the E-step ended
        if lam == 0 and tied is None:
            theta_m = theta_p  # exact E-step on the same cliques: theta_p is the MLE of n
        else:
            theta_m = fit_log_potentials(
                inference, n, lam, tied, init=theta_p, max_iter=m_step_iter, tol=1e-10, warn=False
            ).log_potentials
        accepted = False
        if overrelax and omega > 1:
            cand = [a + omega * (b - a) for a, b in zip(theta, theta_m)]
            mu_c, lz_c = inference.marginals(cand)
            ll_c, grad_c, stiff_c = loglik(mu_c, cand)
            if ll_c > ll:
                theta, mu, log_z, ll_new, grad, stiff = cand, mu_c, lz_c, ll_c, grad_c, stiff_c
                accepted = True
                omega *= 1.5
        if not accepted:
            mu_m, lz_m = inference.marginals(theta_m)
            ll_m, grad_m, stiff_m = loglik(mu_m, theta_m)
            theta, mu, log_z, ll_new, grad, stiff = theta_m, mu_m, lz_m, ll_m, grad_m, stiff_m
            omega = 1.5 if overrelax and omega <= 1 else 1.0
        omegas.append(omega)
        change = abs(ll_new - ll) / max(1.0, abs(ll))
        ll = ll_new
        trace.append(ll)
        if callback is not None:
            callback(t, ll, change)
        if change < tol:
            converged = True
            break
    if warn and not converged:
        warnings.warn(
            f"CGM-EM stopped after {t} iterations with relative log-likelihood change {change:.2e} > tol={tol:g}; "
            "raise max_iter or tol",
            ConvergenceWarning,
            stacklevel=2,
        )
    return CGMResult(theta, table_counts(mu), t, converged, float(change), trace, omegas)
