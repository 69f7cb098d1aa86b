"""Bayesian-network CPDs by maximum likelihood over the true counts behind noisy tables.

[`fit_family_tables`][pgmpy_dp.estimators.likelihood.fit_family_tables] fits the Markov network of
the BN's moral graph (one log-potential per family, plus one per measured set no family contains)
whose marginals make *all* noisy tables most likely, by
[`pgmpy_dp.engine.cgm_em`][pgmpy_dp.engine.cgm.cgm_em] on its
[`JunctionTree`][pgmpy_dp.engine.junction_tree.JunctionTree], and reads each family's expected
counts off it (docs/bayesian.md). Post-processing of released tables: it spends no budget.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from .._blas import single_threaded_blas
from ..engine import ConvergenceWarning, JunctionTree, Measurement, cgm_em, fit_log_potentials, marginal
from ..engine.junction_tree import triangulate
from ..privacy.domain import Domain
from .conditionals import cpd_values
from .consistency import project_consistent
from .priors import PRIOR_PRECISION, UNRESOLVED_PRIOR_PRECISION, auto_regularization, cgm_regularization

#: Largest junction-tree clique (cells) the exact likelihood fit accepts; wider networks are fitted family by family.
MAX_CLIQUE_CELLS = 2_000_000
#: Most cells, summed over its cliques, of the junction tree ``DiscretePrivateMLE`` fits exactly (about 8 CPU
#: seconds for a default fit); larger trees are fitted family by family (docs/bayesian.md).
MAX_EXACT_CELLS = 250_000
START_ITER = 100  # L-BFGS iterations of the warm start (see _initial_log_potentials)
#: The cap ``DiscretePrivateMLE`` puts on its prior weight: the uniform Dirichlet(1)'s ``1 / trigamma(1) =
#: 6 / pi**2`` (derivation in `noise_regularization`).
BN_WEIGHT_CAP = UNRESOLVED_PRIOR_PRECISION
#: How much wider than the Gaussian prior's (of weight ``w``) the Dirichlet prior's spread of centred
#: log-probabilities is: ``trigamma(a) = spread**2 / w`` (docs/bayesian.md).
BN_DIRICHLET_SPREAD = 2.0


class WideNetworkWarning(UserWarning):
    """The exact likelihood fit's junction tree is too large: CPDs are fitted family by family instead."""


def exact_tree_cells(domain: Domain, cliques: Sequence[Sequence[str]]) -> tuple[int, int]:
    """Cells of the largest clique, and of all cliques, of the junction tree the exact likelihood fit would build.

    Read off the graph and the declared state counts alone (public): the first bounds the fit's
    memory, the second its time.

    Examples
    --------
    >>> d = Domain({v: range(3) for v in "abcd"})
    >>> exact_tree_cells(d, [("a", "b"), ("b", "c"), ("c", "d")])
    (9, 27)
    >>> exact_tree_cells(d, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")])   # a cycle: triangulated
    (27, 54)
    """
    sizes = [math.prod(domain.shape(c)) for c in triangulate(domain, cliques)]
    return max(sizes), sum(sizes)


def exact_clique_cells(domain: Domain, cliques: Sequence[Sequence[str]]) -> int:
    """Cells of the largest clique of the junction tree the exact likelihood fit would build over ``cliques``.

    The first number of [`exact_tree_cells`][pgmpy_dp.estimators.likelihood.exact_tree_cells].

    Examples
    --------
    >>> d = Domain({v: range(3) for v in "abcd"})
    >>> exact_clique_cells(d, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")])   # a cycle: triangulated
    27
    """
    return exact_tree_cells(domain, cliques)[0]


@dataclass
class FamilyFit:
    """Outcome of [`fit_family_tables`][pgmpy_dp.estimators.likelihood.fit_family_tables].

    Attributes
    ----------
    tables : list of numpy.ndarray
        Fitted expected counts of each family, axes in the family's order, summing to ``n_records``.
    cliques : list of tuple of str
        The fitted model's cliques ([`model_cliques`][pgmpy_dp.estimators.likelihood.model_cliques]).
    n_iter, converged : int, bool
        CGM-EM iterations run, and whether CGM-EM met its tolerance.
    log_likelihood : list of float
        The EM objective after every iteration (non-decreasing).
    tolerance : float
        Relative change of the EM objective in the last iteration (what ``tol`` bounds).
    regularization : float or list of float
        The prior weight(s) CGM-EM ran with, per ``N`` records.
    """

    tables: list
    cliques: list
    n_iter: int
    converged: bool
    log_likelihood: list
    tolerance: float = math.nan
    regularization: float | list = 0.0


def measurement_for(table) -> Measurement:
    """The engine's [`Measurement`][pgmpy_dp.engine.cgm.Measurement] of a released ``NoisyTable``.

    Discrete-Gaussian tables get the Gaussian likelihood; all others the Laplace one.

    Examples
    --------
    >>> from pgmpy_dp.tables import NoisyTable
    >>> m = measurement_for(NoisyTable(("a",), np.array([3.0, 1.0]), epsilon=1.0, scale=1.0))
    >>> m.attrs, m.scale, m.noise
    (('a',), 1.0, 'laplace')
    """
    noise = "gaussian" if getattr(table, "mechanism", "discrete_laplace") == "discrete_gaussian" else "laplace"
    return Measurement(tuple(table.attrs), table.values, float(table.scale), noise=noise)


def noise_regularization(tables, n_records: float, cap: float | None = None) -> float:
    """Weight (per ``N`` records) of the prior on the log-potentials of the likelihood fit.

    The CGM-EM weight of [`cgm_regularization`][pgmpy_dp.estimators.priors.cgm_regularization]
    without its noiseless part, so the fit is the plain MLE as the noise vanishes; public facts only.

    **The cap.** A Gaussian prior of precision ``lambda`` on a CPD column's centred log-potentials
    has the covariance of a symmetric Dirichlet(``a``) column's centred log-probabilities when
    ``lambda = 1 / trigamma(a)``: ``6 / pi**2`` for the uniform ``a = 1`` (`BN_WEIGHT_CAP`). The
    weight is ``min(cap, rule)`` (docs/bayesian.md).

    Parameters
    ----------
    tables : sequence of NoisyTable
        The released tables the fit reads (their noise variances, scales and cell counts).
    n_records : float
        The record count (declared, or the pooled noisy totals).
    cap : float or None, default None
        Upper bound on the weight; ``None`` keeps the Markov-network rule's bound of 1.

    Examples
    --------
    >>> from pgmpy_dp.tables import NoisyTable
    >>> t = NoisyTable(("a", "b"), np.zeros((10, 10)), epsilon=0.1, scale=10.0)
    >>> round(noise_regularization([t], n_records=10_000), 3)
    0.2
    >>> round(noise_regularization([t], n_records=1_000), 3)       # ten times the noise per record
    1.0
    >>> round(noise_regularization([t], n_records=1_000, cap=BN_WEIGHT_CAP), 4)  # 6 / pi**2
    0.6079
    >>> noise_regularization([NoisyTable(("a",), np.zeros(2), epsilon=1e9, scale=1e-9)], 100.0) < 1e-15
    True
    """
    weight = cgm_regularization(noise_excess(tables, n_records), [t.scale for t in tables])
    if cap is None:
        return weight
    if not (isinstance(cap, (int, float, np.floating, np.integer)) and 0 < float(cap) < math.inf):
        raise ValueError(f"cap must be a positive finite number (e.g. likelihood.BN_WEIGHT_CAP), got {cap!r}")
    return float(min(float(cap), weight))


def _variance(m: Measurement) -> float:
    """A measurement's noise variance per cell: ``2 b^2`` for Laplace scale ``b``, ``sigma^2`` for Gaussian."""
    return m.scale**2 * (2.0 if m.noise == "laplace" else 1.0)


def noise_excess(tables, n_records: float) -> float:
    """``mean_i v_i K_i / N``: the noise's share of the naive-MLE prior weight of the Markov estimator."""
    return max(auto_regularization(tables, n_records) - PRIOR_PRECISION, 0.0)


def _naive_targets(cliques, measurements):
    """Per clique, consistent non-negative tables to fit as if exact: the warm start of CGM-EM.

    The noisy tables projected (`project_consistent`) plus half a count (at most the noise scale)
    of uniform mass on the cells of the largest table; a clique no table matches exactly gets the
    sum of a table containing it, ``None`` if none does.
    """
    variances = [_variance(m) for m in measurements]
    projected = project_consistent([m.attrs for m in measurements], [m.values for m in measurements], variances)
    mass = min(0.5, min(m.scale for m in measurements)) * max(m.values.size for m in measurements)
    targets = []
    for clique in cliques:
        same = [(m, p) for m, p in zip(measurements, projected) if set(m.attrs) == set(clique)]
        same = same or [(m, p) for m, p in zip(measurements, projected) if set(clique) < set(m.attrs)]
        if not same:
            targets.append(None)
            continue
        m, p = same[0]
        p = marginal(p, m.attrs, clique)  # the projection is consistent: any table containing the clique will do
        targets.append(p + mass / p.size)
    return targets


def _initial_log_potentials(jt, targets, regularization, warm_start="mle", tol=1e-9):
    """A warm start for CGM-EM from consistent ``targets`` (see [`fit_family_tables`][pgmpy_dp.estimators.likelihood.fit_family_tables]).

    ``"cpds"``: the Bayesian network of the targets' CPDs, in closed form. ``"mle"``: the
    maximum-likelihood Markov network of the targets by L-BFGS (gradient tolerance ``tol``) started
    from ``"cpds"``; only it is a fixed point of EM for noiseless tables. Without a target for every
    clique both are the targets' CPDs (uniform elsewhere).
    """
    cpds = [
        np.log(cpd_values(t)).reshape(t.shape) if t is not None else np.zeros(jt.domain.shape(c))
        for t, c in zip(targets, jt.cliques)
    ]
    if warm_start == "cpds" or any(t is None for t in targets):
        return cpds
    fit = fit_log_potentials(jt, targets, regularization, init=cpds, max_iter=START_ITER, tol=tol, warn=False)
    return fit.log_potentials


#: CGM-EM iterations of the likelihood fit by default: a fixed budget (docs/bayesian.md)
DEFAULT_MAX_ITER = 50


class DirichletCPDStep:
    """CGM-EM's exact M-step for a Bayesian network (cliques: its families, node first) under Dirichlet priors.

    With ``a`` pseudo-records per cell the maximiser is in closed form (docs/bayesian.md):

        theta(x | u) = (N mu_f(x, u) + a) / (N mu_f(u) + K a),   K = |dom(x)|.

    ``log_prior`` evaluates the prior at any log-potentials through each family's log-softmax
    over the node's axis.

    Examples
    --------
    >>> step = DirichletCPDStep(n_records=100.0, pseudo_count=1.0)   # families ("a",), ("b", "a"): node first
    >>> theta = step.step([np.array([0.5, 0.5]), np.array([[0.5, 0.0], [0.0, 0.5]])])
    >>> np.round(np.exp(theta[1]), 4).tolist()   # 50 records per column, one state never seen
    [[0.9808, 0.0192], [0.0192, 0.9808]]
    """

    def __init__(self, n_records: float, pseudo_count: float):
        if not (math.isfinite(pseudo_count) and pseudo_count >= 0):
            raise ValueError(f"pseudo_count must be a non-negative number, got {pseudo_count!r}")
        self.n, self.a = float(n_records), float(pseudo_count)

    def step(self, mu) -> list[np.ndarray]:
        out = []
        for m in mu:
            counts = self.n * np.asarray(m, dtype=np.float64) + self.a
            with np.errstate(divide="ignore"):
                out.append(np.log(counts) - np.log(counts.sum(axis=0, keepdims=True)))
        return out

    def log_prior(self, theta) -> float:
        total = 0.0
        for t in theta:
            t = np.asarray(t, dtype=np.float64)
            top = t.max(axis=0)  # a log-sum-exp over the node's axis in plain numpy (scipy's costs ~0.1 ms a table)
            with np.errstate(invalid="ignore"):
                log_norm = np.log(np.exp(t - top).sum(axis=0)) + top
            # sum over a column of (t - log_norm), K cells each
            total += float(t.sum() - t.shape[0] * log_norm.sum())
        return self.a * total


def dirichlet_pseudo_count(weight: float) -> float:
    """The pseudo-count ``a`` whose Dirichlet(``a``) column matches a Gaussian prior of precision ``weight``.

    ``trigamma(a) = 1 / weight`` (see
    [`noise_regularization`][pgmpy_dp.estimators.likelihood.noise_regularization]).

    Examples
    --------
    >>> round(dirichlet_pseudo_count(6 / np.pi**2), 6), round(dirichlet_pseudo_count(2 / np.pi**2), 6)
    (1.0, 0.5)
    >>> dirichlet_pseudo_count(0.0)
    0.0
    """
    if weight <= 0:
        return 0.0
    target = 1.0 / float(weight)
    # trigamma decreases from +inf at 0; bracket the root in log a
    log_a = optimize.brentq(lambda la: special.polygamma(1, math.exp(la)) - target, -40.0, 40.0, xtol=1e-12)
    return float(math.exp(log_a))


def _dirichlet_fit(jt, families, cliques, measurements, n_records, regularization, start, max_iter, tol, callback,
                   nlbp_iter, count_tol, spread=1.0) -> FamilyFit:
    """``fit_family_tables(prior="dirichlet")``: CGM-EM with the exact M-step of `DirichletCPDStep`.

    The pseudo-count per cell is read off the (global) prior weight ``w``: ``trigamma(a) = spread**2 / w``.
    CGM-EM starts from ``start``; its first M-step turns it into CPDs.
    """
    weights = np.atleast_1d(np.asarray(regularization, dtype=np.float64))
    if list(cliques) != list(families) or np.ptp(weights) > 0:
        raise ValueError(
            "prior='dirichlet' needs one measured table per family and nothing else (the model is then the "
            "network itself, whose log-CPDs the M-step reads off in closed form) and one global weight"
        )
    if not (isinstance(spread, (int, float, np.integer, np.floating)) and math.isfinite(spread) and spread > 0):
        raise ValueError(f"dirichlet_spread must be a positive finite number, got {spread!r}")
    weight = float(weights[0]) * n_records
    step = DirichletCPDStep(n_records, dirichlet_pseudo_count(weight / spread**2))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = cgm_em(jt, measurements, n_records, 0.0, init=start, max_iter=max_iter, tol=tol, callback=callback,
                        warn=False, nlbp_iter=nlbp_iter, count_tol=count_tol, m_step=step)
        mu, _ = jt.marginals(result.log_potentials)
    tables = [n_records * _family_marginal(f, cliques, mu) for f in families]
    return FamilyFit(tables, cliques, result.n_iter, result.converged, list(result.log_likelihood),
                     float(result.tolerance), regularization)


def model_cliques(families: Sequence[Sequence[str]], measured: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
    """The cliques [`fit_family_tables`][pgmpy_dp.estimators.likelihood.fit_family_tables] fits.

    The families, then each measured attribute set no family contains.

    Examples
    --------
    >>> model_cliques([("a",), ("b", "a")], [("a",), ("b", "a"), ("c", "a")])
    [('a',), ('b', 'a'), ('c', 'a')]
    >>> model_cliques([("a",), ("b", "a")], [("b", "a")])  # a's table not released: kept, with a free potential
    [('a',), ('b', 'a')]
    """
    cliques = [tuple(f) for f in families]
    for attrs in measured:
        if not any(set(attrs) <= set(c) for c in cliques):
            cliques.append(tuple(attrs))
    return cliques


def is_network_model(families: Sequence[Sequence[str]], measured: Sequence[Sequence[str]]) -> bool:
    """Whether ``fit_family_tables(prior="dirichlet")`` applies: its model is the network itself.

    True when every measured set lies inside a family and every family inside another is measured exactly.

    Examples
    --------
    >>> is_network_model([("a",), ("b", "a")], [("a",), ("b", "a")])
    True
    >>> is_network_model([("a",), ("b", "a")], [("b", "a")])  # a's family is read off (b, a), unshrunk
    False
    >>> is_network_model([("a",), ("b", "a")], [("a",), ("b", "a"), ("c", "a")])  # a clique beyond them
    False
    """
    families = [tuple(f) for f in families]
    exact = {frozenset(m) for m in measured}
    free = any(frozenset(f) not in exact and any(set(f) < set(g) for g in families) for f in families)
    return not free and model_cliques(families, measured) == families


def _family_marginal(family: tuple[str, ...], cliques, mu) -> np.ndarray:
    """A family's fitted marginal (axes in the family's order) from the clique holding it (itself if it is one)."""
    i = next((k for k, c in enumerate(cliques) if set(c) == set(family)), None)
    if i is None:
        i = next(k for k, c in enumerate(cliques) if set(family) <= set(c))
    return marginal(mu[i], cliques[i], family)


def _check_family_fit(prior: str, warm_start: str, n_records) -> float:
    """``fit_family_tables``'s options checked; the record count as a float."""
    if prior not in ("gaussian", "dirichlet"):
        raise ValueError(f"prior must be 'gaussian' or 'dirichlet', got {prior!r}")
    if warm_start not in ("cpds", "mle", "best"):
        raise ValueError(f"warm_start must be 'cpds', 'mle' or 'best', got {warm_start!r}")
    if warm_start == "best" and prior != "dirichlet":
        raise ValueError("warm_start='best' (CGM-EM from both starts) is implemented for prior='dirichlet' only")
    n_records = float(n_records)
    if not (math.isfinite(n_records) and n_records > 0):
        raise ValueError(f"n_records must be positive and finite, got {n_records!r}")
    return n_records


def _unpenalised(weights, families, cliques, measurements) -> list[float]:
    """A float or one weight per clique, as a list; 0 on the free cliques (unmeasured, inside a family)."""
    exact = {frozenset(m.attrs) for m in measurements}
    free = [frozenset(c) not in exact and any(set(c) < set(g) for g in families) for c in cliques]
    weights = [float(weights)] * len(cliques) if np.ndim(weights) == 0 else [float(w) for w in weights]
    return [0.0 if f else w for f, w in zip(free, weights)]


def fit_family_tables(
    domain: Domain,
    families: Sequence[Sequence[str]],
    measurements: Sequence[Measurement],
    n_records: float,
    regularization: float | Sequence[float] = 0.0,
    naive_regularization: float | Sequence[float] = 0.0,
    max_iter: int = DEFAULT_MAX_ITER,
    tol: float = 1e-6,
    callback: Callable[[int, float, float], None] | None = None,
    warm_start: str = "mle",
    m_step_iter: int = 5,
    nlbp_iter: int = 10,
    count_tol: float = 1e-3,
    prior: str = "gaussian",
    dirichlet_spread: float = 1.0,
) -> FamilyFit:
    """Family count tables of the model that maximises the likelihood of all noisy tables.

    A family no table measures exactly but that lies inside another family keeps a clique whose
    potential has no prior (weight 0): it is determined by the host's expected counts alone, and
    the host's prior does not shrink it towards uniform.

    Parameters
    ----------
    domain : Domain
        Public states of every attribute.
    families : sequence of tuple of str
        Each node followed by its parents (the tables to return).
    measurements : sequence of Measurement
        Noisy tables over attribute sets of the network, each with its own noise scale and model.
    n_records : float
        Record count the fitted tables sum to (e.g. a release's pooled noisy total).
    regularization : float or sequence of float
        Per-record L2 penalty on the log-potentials (``lambda`` of [`cgm_em`][pgmpy_dp.engine.cgm.cgm_em]),
        or one weight per clique of [`model_cliques`][pgmpy_dp.estimators.likelihood.model_cliques].
    naive_regularization : float or sequence of float
        The same for the warm start, a fit to the projected tables as if they were exact.
    max_iter, tol : int, float
        CGM-EM iteration limit (default ``DEFAULT_MAX_ITER``, 50) and relative tolerance on its objective.
    callback : callable, optional
        ``callback(iteration, objective, change)`` after every EM iteration.
    warm_start : {"mle", "cpds", "best"}
        Where CGM-EM starts (see `_initial_log_potentials`); ``"best"`` (``prior="dirichlet"`` only):
        from both, keeping the run with the higher final EM objective.
    m_step_iter, nlbp_iter : int
        L-BFGS iterations per M-step and NLBP sweeps per E-step of CGM-EM.
    count_tol : float
        CGM-EM also stops once no fitted count moved by more than ``count_tol`` noise scales.
    prior : {"gaussian", "dirichlet"}
        A Gaussian prior on the log-potentials, or symmetric Dirichlet priors on the CPD columns
        ([`DirichletCPDStep`][pgmpy_dp.estimators.likelihood.DirichletCPDStep]; only for
        [`is_network_model`][pgmpy_dp.estimators.likelihood.is_network_model] and one global weight).
    dirichlet_spread : float
        With ``prior="dirichlet"``: ``trigamma(a) = dirichlet_spread**2 / w`` (see `BN_DIRICHLET_SPREAD`).

    Returns
    -------
    FamilyFit

    Examples
    --------
    Noiseless tables are recovered exactly:

    >>> d = Domain({"a": [0, 1], "b": [0, 1]})
    >>> ab = np.array([[600.0, 100.0], [100.0, 200.0]])
    >>> ms = [Measurement(("a",), ab.sum(axis=1), 1e-3), Measurement(("b", "a"), ab.T, 1e-3)]
    >>> fit = fit_family_tables(d, [("a",), ("b", "a")], ms, n_records=1000)
    >>> np.round(fit.tables[1]).tolist()
    [[600.0, 100.0], [100.0, 200.0]]
    """
    n_records = _check_family_fit(prior, warm_start, n_records)
    families = [tuple(f) for f in families]
    cliques = model_cliques(families, [m.attrs for m in measurements])
    regularization = _unpenalised(regularization, families, cliques, measurements)
    naive_regularization = _unpenalised(naive_regularization, families, cliques, measurements)
    jt = JunctionTree(domain, cliques)
    if jt.max_cells > MAX_CLIQUE_CELLS:
        raise ValueError(
            f"the triangulated moral graph has a clique of {jt.max_cells:,} cells (limit {MAX_CLIQUE_CELLS:,}); "
            "DiscretePrivateMLE fits such networks family by family (estimators.local.fit_families_locally)"
        )
    with single_threaded_blas():  # the projection's polish makes many tiny BLAS calls
        targets = _naive_targets(cliques, measurements)
    # the start need only be exact to 1% of the smallest noise scale (noiseless tables: 1e-9)
    start_tol = max(1e-9, 0.01 * min(m.scale for m in measurements) / n_records)
    if prior == "dirichlet":
        # the Gaussian fit's warm start (exact for noiseless tables); the first M-step reads CPDs off it
        def shifted(k):  # the second run's iterations count on from max_iter (one progress bar of 2 max_iter)
            return None if callback is None else (lambda i, obj, change: callback(k * max_iter + i, obj, change))

        fits = [
            _dirichlet_fit(jt, families, cliques, measurements, n_records, regularization,
                           _initial_log_potentials(jt, targets, naive_regularization, start, start_tol), max_iter, tol,
                           shifted(k), nlbp_iter, count_tol, dirichlet_spread)
            for k, start in enumerate(("mle", "cpds") if warm_start == "best" else (warm_start,))
        ]
        return max(fits, key=lambda f: f.log_likelihood[-1])  # a tie keeps the exact start's
    naive = _initial_log_potentials(jt, targets, naive_regularization, warm_start, start_tol)
    # degenerate inputs overflow inside the E-step; the fit then falls back to its warm start below
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = cgm_em(
            jt, measurements, n_records, regularization, init=naive, max_iter=max_iter, tol=tol,
            callback=callback, warn=False, m_step_iter=m_step_iter, nlbp_iter=nlbp_iter, count_tol=count_tol,
        )
        mu, _ = jt.marginals(result.log_potentials)
        if not all(np.all(np.isfinite(m)) for m in mu):
            mu, _ = jt.marginals(naive)
    tables = [n_records * _family_marginal(f, cliques, mu) for f in families]
    return FamilyFit(tables, cliques, result.n_iter, result.converged, list(result.log_likelihood),
                     float(result.tolerance), regularization)
