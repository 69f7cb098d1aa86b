"""Bayesian-network CPDs by maximum likelihood over the true counts behind noisy tables.

The noisy family tables of a private BN fit (and any other released table over
attributes of the network) are measurements of one distribution. Instead of
projecting each table separately, [`fit_family_tables`][pgmpy_dp.estimators.likelihood.fit_family_tables] fits the graphical
model whose marginals make *all* tables most likely, each under its own noise
model and scale (the collective-graphical-model view of Bernstein et al. 2017,
applied to the BN's moral graph):

1. the model is a Markov network with one log-potential per family (a BN is
   one: its CPDs are such potentials, with partition function 1), plus one per
   further measured attribute set that no family contains; inference runs on
   the junction tree of its triangulated graph, which is the BN's moral graph
   triangulated ([`pgmpy_dp.engine.JunctionTree`][pgmpy_dp.engine.junction_tree.JunctionTree]);
2. [`pgmpy_dp.engine.cgm_em`][pgmpy_dp.engine.cgm.cgm_em] maximises the approximate marginal likelihood
   of the measurements (plus a prior) over the log-potentials, started from the maximum-likelihood
   model of the consistency projection's tables (with a little uniform mass), itself fitted
   from the BN of those tables' CPDs to within 1% of the smallest noise scale (at most 100
   L-BFGS iterations). With Dirichlet priors on the CPD columns the M-step is in closed form
   ([`DirichletCPDStep`][pgmpy_dp.estimators.likelihood.DirichletCPDStep]); with the Gaussian prior
   on the log-potentials it is a few L-BFGS iterations;
3. each family's expected counts are read off the fitted model's marginals,
   and CPDs off those.

The fitted model has finite log-potentials, so every fitted probability is
positive: no CPD entry becomes exactly zero because noise pushed a count below
zero. Everything here is post-processing of released tables and spends no budget.
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

#: Largest junction-tree clique (cells) the exact likelihood fit accepts; ``DiscretePrivateMLE`` fits wider
#: networks family by family ([`fit_families_locally`][pgmpy_dp.estimators.local.fit_families_locally]).
MAX_CLIQUE_CELLS = 2_000_000
#: Most cells, summed over its cliques, of the junction tree ``DiscretePrivateMLE`` fits exactly. A default
#: fit calibrates that tree about 700 times (50 CGM-EM iterations of about 14 calibrations each), at some
#: 30 microseconds per cell in all: 250,000 cells are about 8 CPU seconds. Larger trees (andes, pigs, water,
#: diabetes, mildew) are fitted family by family, which costs a few passes over the CPD cells
#: (docs/bayesian.md measures both).
MAX_EXACT_CELLS = 250_000
START_ITER = 100  # L-BFGS iterations of the warm start (see _initial_log_potentials)
#: The cap ``DiscretePrivateMLE`` puts on its prior weight: the uniform Dirichlet(1)'s ``1 / trigamma(1) =
#: 6 / pi**2``, the log-count precision of a cell the noise cannot resolve (``priors.UNRESOLVED_PRIOR_PRECISION``).
#: A stronger prior would claim the CPD columns flatter than that law (derivation in `noise_regularization`).
BN_WEIGHT_CAP = UNRESOLVED_PRIOR_PRECISION
#: How much wider than the Gaussian prior's (of weight ``w``) the Dirichlet prior's spread of centred
#: log-probabilities is: ``trigamma(a) = spread**2 / w``, so ``a ~ sqrt(w) / 2`` as the noise vanishes and
#: ``a = 0.45`` at the cap (docs/bayesian.md).
BN_DIRICHLET_SPREAD = 2.0


class WideNetworkWarning(UserWarning):
    """The exact likelihood fit's junction tree is too large: CPDs are fitted family by family instead."""


def exact_tree_cells(domain: Domain, cliques: Sequence[Sequence[str]]) -> tuple[int, int]:
    """Cells of the largest clique, and of all cliques, of the junction tree the exact likelihood fit would build.

    Read off the graph (``cliques``, triangulated) and the declared state counts alone (public),
    without allocating anything. The first bounds the fit's memory, the second its time: every
    calibration of the tree is a few passes over all its cells.

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
        The fitted model's cliques ([`model_cliques`][pgmpy_dp.estimators.likelihood.model_cliques]): the families
        (but an unmeasured one inside another family), then any extra measured attribute sets.
    n_iter : int
        CGM-EM iterations run.
    converged : bool
        Whether CGM-EM met its tolerance.
    log_likelihood : list of float
        The EM objective after every iteration (non-decreasing).
    tolerance : float
        Relative change of the EM objective in the last iteration (what ``tol`` bounds).
    regularization : float or list of float
        The prior weight(s) CGM-EM ran with, per ``N`` records (one per clique when per-clique
        weights were given).
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

    Discrete-Gaussian tables (``mechanism == "discrete_gaussian"``, whose ``scale`` is
    the standard deviation) get the Gaussian likelihood; all others the Laplace one.

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

    Without a prior, maximum likelihood drives every cell whose noisy count is
    at or below zero towards probability zero, which costs dearly in KL when
    the true probability is small but positive. The prior only needs to be as
    strong as the noise: we take the CGM-EM weight that
    [`cgm_regularization`][pgmpy_dp.estimators.priors.cgm_regularization] derives for a Markov
    network, ``min(1, mean_i (v_i K_i / N) / mean_i b_i)``, with ``v_i``, ``K_i`` and
    ``b_i`` each table's noise variance, cell count and scale, but without the
    part of that rule that would remain for noiseless tables, so the fit is the
    plain maximum likelihood (and recovers exact tables) as the noise vanishes.
    Depends only on public facts (noise scales, table shapes, the record count estimate).

    **The cap.** Within one CPD column only the centred log-potentials matter, and a Gaussian
    prior of precision ``lambda`` on them has covariance ``(1 / lambda) (I - 11^T / K)`` for ``K``
    states. A column drawn from a symmetric Dirichlet(``a``) has centred log-probabilities of
    covariance ``trigamma(a) (I - 11^T / K)``, the same form, so ``lambda = 1 / trigamma(a)``
    matches it: ``6 / pi**2`` for the uniform ``a = 1`` (`BN_WEIGHT_CAP`). A larger weight would
    assert that the columns are flatter than a uniform Dirichlet draw, which the noise rule cannot
    justify: it measures how little the noisy tables say, not that the truth is flat. So the
    weight is ``min(cap, rule)``; below the cap it is the rule's, bit for bit.

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

    The noisy tables projected onto consistent non-negative ones
    ([`project_consistent`][pgmpy_dp.estimators.consistency.project_consistent]), plus a little
    mass from the uniform distribution (whose marginals are consistent too):
    half a count on the cells of the largest table, never more than the noise
    scale, so noiseless tables stay exact. A clique no table matches exactly gets the sum of a
    table containing it, ``None`` if none does.
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

    ``"cpds"``: the Bayesian network of the targets' CPDs, in closed form (a BN's log-CPDs are
    log-potentials of its moral graph with partition function 1); it costs no inference.
    ``"mle"``: the maximum-likelihood Markov network of the targets, as if they were exact, by
    L-BFGS started from ``"cpds"`` (consistent, positive targets make it well posed even with a
    vanishing prior). Only ``"mle"`` is a fixed point of EM for noiseless tables: the BN of the
    CPDs keeps each family's conditional but not the joint of its parents, and 20 EM iterations
    from it left a CPD of asia 0.09 off the exact one at epsilon 1e9 (``"mle"``: 2e-7).
    Without a target for every clique both are the targets' CPDs (uniform elsewhere).
    ``tol`` is L-BFGS's gradient tolerance: the largest gap between a fitted and a target
    probability that may remain.
    """
    cpds = [
        np.log(cpd_values(t)).reshape(t.shape) if t is not None else np.zeros(jt.domain.shape(c))
        for t, c in zip(targets, jt.cliques)
    ]
    if warm_start == "cpds" or any(t is None for t in targets):
        return cpds
    fit = fit_log_potentials(jt, targets, regularization, init=cpds, max_iter=START_ITER, tol=tol, warn=False)
    return fit.log_potentials


#: CGM-EM iterations of the likelihood fit by default (``fit_family_tables`` and ``DiscretePrivateMLE``
#: with ``max_iter=None``): a fixed budget, measured in docs/bayesian.md
DEFAULT_MAX_ITER = 50


class DirichletCPDStep:
    """CGM-EM's exact M-step for a Bayesian network whose CPD columns carry Dirichlet priors.

    When the model's cliques are the network's families (node first, then its parents), its
    log-potentials can be the log-CPDs (partition function 1), and the expected complete-data
    log-likelihood ``sum_f sum_(x,u) N mu_f(x, u) log theta(x | u)`` splits into one multinomial
    per CPD column. With a symmetric Dirichlet prior on each column, ``a`` pseudo-records per cell
    (``log prior = a sum log theta(x | u)``), the maximiser is in closed form:

        theta(x | u) = (N mu_f(x, u) + a) / (N mu_f(u) + K a),   K = |dom(x)|.

    The Gaussian prior on the log-potentials penalises a log-probability quadratically, this one
    linearly; a column the noise leaves unresolved (``N mu_f(u)`` small) falls back towards uniform
    under either. The step is exact, where the Gaussian prior's M-step is a few L-BFGS iterations
    (docs/bayesian.md measures the two). ``log_prior`` evaluates the prior at any
    log-potentials through each family's log-softmax over the node's axis (exact for log-CPDs; the
    EM objective only needs it at extrapolated points, to accept or shorten a jump).

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

    [`noise_regularization`][pgmpy_dp.estimators.likelihood.noise_regularization] derives that a
    symmetric Dirichlet(``a``) column's centred log-probabilities have covariance ``trigamma(a)``
    times the centring projection, so the Gaussian prior of precision ``weight`` on the
    log-potentials has the spread of Dirichlet(``a``) with ``trigamma(a) = 1 / weight``: ``a = 1`` at
    ``6 / pi**2``, ``1/2`` at ``2 / pi**2``, and ``a ~ sqrt(weight)`` as the weight vanishes with the noise.

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

    The pseudo-count per cell is read off the (global) prior weight ``w``: ``trigamma(a) = spread**2 / w``
    (``fit_family_tables``' ``dirichlet_spread``). CGM-EM starts from ``start``:
    by default the Gaussian fit's warm start (a Markov network that matches consistent tables exactly,
    which a network of CPDs cannot when a family's parents are dependent in the tables but not in the
    DAG); its first M-step turns it into CPDs.
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

    The families, then each measured attribute set no family contains. A family no table
    measures exactly but another family contains keeps its clique, with a potential free of
    the prior (see ``fit_family_tables``).

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

    True when every measured attribute set lies inside a family (no clique beyond the families) and
    every family inside another is measured exactly (no family whose potential the fit leaves free
    of the prior).

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
        Noisy tables over attribute sets of the network, each with its own noise
        scale and model (several per family, or over other attribute sets, are all evidence).
    n_records : float
        Record count the fitted tables sum to (e.g. a release's pooled noisy total).
    regularization : float or sequence of float
        Per-record L2 penalty on the log-potentials (``lambda`` of [`cgm_em`][pgmpy_dp.engine.cgm.cgm_em]);
        0 fits the maximum likelihood itself. A sequence gives one weight per clique of
        [`model_cliques`][pgmpy_dp.estimators.likelihood.model_cliques].
    naive_regularization : float or sequence of float
        The same for the warm start, a fit to the projected tables as if they were exact.
    max_iter, tol : int, float
        CGM-EM iteration limit (default ``DEFAULT_MAX_ITER``, 50) and relative tolerance on its objective.
    callback : callable, optional
        ``callback(iteration, objective, change)`` after every EM iteration.
    warm_start : {"mle", "cpds", "best"}
        Where CGM-EM starts: the maximum-likelihood Markov network of the projected tables
        (an L-BFGS fit started from their CPDs), or the BN of those CPDs (closed form, but not
        exact for noiseless tables). ``"best"`` (``prior="dirichlet"`` only): CGM-EM from both,
        keeping the run with the higher final EM objective (twice the cost).
    m_step_iter, nlbp_iter : int
        L-BFGS iterations per M-step and NLBP sweeps per E-step of CGM-EM. Partial steps keep EM
        monotone (a generalised EM).
    count_tol : float
        CGM-EM also stops once no fitted count moved by more than ``count_tol`` noise scales (of its
        table) in an iteration.
    prior : {"gaussian", "dirichlet"}
        ``"gaussian"``: a Gaussian prior on the log-potentials, centred at 0, which shrinks every CPD
        column towards uniform. ``"dirichlet"``: symmetric Dirichlet priors on the CPD columns with
        CGM-EM's exact M-step ([`DirichletCPDStep`][pgmpy_dp.estimators.likelihood.DirichletCPDStep]);
        it needs one global weight and the model to be the network itself
        ([`is_network_model`][pgmpy_dp.estimators.likelihood.is_network_model]).
    dirichlet_spread : float
        With ``prior="dirichlet"``: the Dirichlet's spread of log-probabilities over the Gaussian's
        of the same weight ``w``, ``trigamma(a) = dirichlet_spread**2 / w``
        (`BN_DIRICHLET_SPREAD` is what ``DiscretePrivateMLE`` uses).

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
    if prior not in ("gaussian", "dirichlet"):
        raise ValueError(f"prior must be 'gaussian' or 'dirichlet', got {prior!r}")
    if warm_start not in ("cpds", "mle", "best"):
        raise ValueError(f"warm_start must be 'cpds', 'mle' or 'best', got {warm_start!r}")
    if warm_start == "best" and prior != "dirichlet":
        raise ValueError("warm_start='best' (CGM-EM from both starts) is implemented for prior='dirichlet' only")
    families = [tuple(f) for f in families]
    n_records = float(n_records)
    if not (math.isfinite(n_records) and n_records > 0):
        raise ValueError(f"n_records must be positive and finite, got {n_records!r}")
    cliques = model_cliques(families, [m.attrs for m in measurements])
    exact = {frozenset(m.attrs) for m in measurements}
    free = [frozenset(c) not in exact and any(set(c) < set(g) for g in families) for c in cliques]

    def unpenalised(weights):  # a float or one weight per clique; 0 on the free cliques
        weights = [float(weights)] * len(cliques) if np.ndim(weights) == 0 else [float(w) for w in weights]
        return [0.0 if f else w for f, w in zip(free, weights)]

    regularization, naive_regularization = unpenalised(regularization), unpenalised(naive_regularization)
    jt = JunctionTree(domain, cliques)
    if jt.max_cells > MAX_CLIQUE_CELLS:
        raise ValueError(
            f"the triangulated moral graph has a clique of {jt.max_cells:,} cells (limit {MAX_CLIQUE_CELLS:,}); "
            "DiscretePrivateMLE fits such networks family by family (estimators.local.fit_families_locally)"
        )
    with single_threaded_blas():  # the projection's polish makes many tiny BLAS calls
        targets = _naive_targets(cliques, measurements)
    # The start only has to be exact to well within the noise: stop L-BFGS once every fitted count
    # is within 1% of the smallest noise scale of its target (noiseless tables: 1e-9, as exact as float64 allows)
    start_tol = max(1e-9, 0.01 * min(m.scale for m in measurements) / n_records)
    if prior == "dirichlet":
        # the same warm start as the Gaussian fit (exact for noiseless tables): the first E-step then starts at
        # the tables, and the closed-form M-step reads the CPDs off them
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
    # Degenerate inputs (a record or two, noise scales near 1e-300) overflow inside the E-step;
    # the fit then falls back to its warm start below, so the numpy warnings carry no news.
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
