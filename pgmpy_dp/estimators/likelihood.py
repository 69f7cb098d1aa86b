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
   of the measurements over the log-potentials, started from the maximum-likelihood
   model of the consistency projection's tables (with a little uniform mass), itself fitted
   from the BN of those tables' CPDs to within 1% of the smallest noise scale (at most 100
   L-BFGS iterations); partial M-steps (5 L-BFGS iterations each) make each EM iteration cheap;
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
from ..privacy.domain import Domain
from .conditionals import cpd_values
from .consistency import project_consistent
from .markov import UNRESOLVED_PRIOR_PRECISION

__all__ = [
    "FamilyFit", "clique_noise_regularization", "column_information", "effective_parameters", "evidence_weight",
    "fit_family_tables", "lower_order_centre", "marginal_centre", "measurement_for", "noise_regularization",
    "BN_PRIOR_CAP", "BN_WEIGHT_CAP", "BN_DIRICHLET_SPREAD", "DirichletCPDStep", "dirichlet_pseudo_count",
    "is_network_model",
]

#: Largest junction-tree clique (cells) the likelihood fit accepts; beyond it use the projection.
MAX_CLIQUE_CELLS = 2_000_000
START_ITER = 100  # L-BFGS iterations of the warm start (see _initial_log_potentials)
#: ``prior_weight="evidence"``: each family's weight stays within this factor of the weight it replaces
EVIDENCE_BOUND = 10.0
#: ``prior_weight="evidence"``: fixed-point updates of the weights (MacKay's alternation of fit and weight)
EVIDENCE_ROUNDS = 2
#: ``evidence_schedule="prefit"``: CGM-EM iterations of each pre-fit the weights are read from
EVIDENCE_PREFIT_ITER = 10
#: Issue 12 (bn12m): the largest prior weight a CPD column's centred log-potentials can be given without
#: claiming they are flatter than a draw from Jeffreys' Dirichlet(1/2) prior, ``1 / trigamma(1/2) = 2 / pi**2``
#: (derivation in [`noise_regularization`][pgmpy_dp.estimators.likelihood.noise_regularization]). The noise rule
#: is capped at ``markov.PRIOR_PRECISION`` = 1 unless ``cap`` says otherwise. Not ``DiscretePrivateMLE``'s cap:
#: it failed its fresh-noise rule on joint KL (docs/bayesian.md).
BN_PRIOR_CAP = 2.0 / np.pi**2
#: Issue 12 (bn12u): the cap ``DiscretePrivateMLE`` puts on its global prior weight, the uniform Dirichlet(1)'s
#: ``1 / trigamma(1) = 6 / pi**2``: the same law as ``markov.UNRESOLVED_PRIOR_PRECISION``, the log-count precision
#: of a cell the noise cannot resolve, which the Markov-network estimator floors its weight at. A stronger prior
#: would claim the columns flatter than that law (derivation in `noise_regularization`). Adopted by a rule fixed
#: before its fresh-noise run (benchmarks/rules/issue12_uniform_cap.md); it binds only where the noise rule
#: asks for more (on the benchmark grid: N = 1e4, epsilon 0.1 on alarm, insurance and hepar2).
BN_WEIGHT_CAP = UNRESOLVED_PRIOR_PRECISION
#: Issue 12 (bn12d): with ``prior="dirichlet"``, how much wider than the Gaussian prior's (of the capped global
#: weight ``w``) the Dirichlet's spread of centred log-probabilities is: ``trigamma(a) = spread**2 / w``, so
#: ``a ~ sqrt(w) / 2`` as the noise vanishes and ``a = 0.45`` at the cap. Chosen on seen noise (the pilots of
#: docs/bayesian.md: twice the spread was the best of four matches) and adopted as ``DiscretePrivateMLE``'s
#: default (``cpd_prior="auto"``) by a rule fixed before its fresh-noise runs (benchmarks/rules/issue12_dirichlet.md).
BN_DIRICHLET_SPREAD = 2.0


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
        weights were given or chosen by ``prior_weight="evidence"``).
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
    """Weight (per ``N`` records) of the Gaussian prior on the log-potentials of the likelihood fit.

    Without a prior, maximum likelihood drives every cell whose noisy count is
    at or below zero towards probability zero, which costs dearly in KL when
    the true probability is small but positive. The prior only needs to be as
    strong as the noise: we take the CGM-EM weight that
    [`pgmpy_dp.estimators.markov.cgm_regularization`][pgmpy_dp.estimators.markov.cgm_regularization] derives for a Markov
    network, ``min(1, mean_i (v_i K_i / N) / mean_i b_i)``, with ``v_i``, ``K_i`` and
    ``b_i`` each table's noise variance, cell count and scale, but without the
    part of that rule that would remain for noiseless tables, so the fit is the
    plain maximum likelihood (and recovers exact tables) as the noise vanishes.
    On alarm (10,000 records, epsilon = 1) the resulting weight, 0.09, was
    within the range 0.1-0.3 that gave the lowest KL divergence from the true
    network in a sweep over 0.03-3 (``docs/bayesian.md``).
    Depends only on public facts (noise scales, table shapes, the record count estimate).

    **The cap** (``cap``; ``None``: the Markov-network rule's own cap, ``markov.PRIOR_PRECISION`` = 1).
    The weight is the precision of a Gaussian prior on each log-potential, centred at uniform. Within
    one CPD column (one parent configuration) only the centred log-potentials matter (the column's
    mean is a gauge), and on them the prior's covariance is ``(1 / lambda) (I - 11^T / K)`` for ``K``
    states. A column drawn from a symmetric Dirichlet(``a``) is ``g / sum(g)`` with independent
    ``g_x ~ Gamma(a)``; its centred log-probabilities are the centred ``log g_x``, whose covariance is
    ``trigamma(a) (I - 11^T / K)``, the same form. So the Dirichlet(``a``) prior's spread is matched by
    ``lambda = 1 / trigamma(a)``: ``6 / pi**2`` = 0.61 for the uniform ``a = 1`` (the law behind
    ``markov.UNRESOLVED_PRIOR_PRECISION``), ``2 / pi**2`` = 0.203 for Jeffreys' ``a = 1/2``
    (`BN_PRIOR_CAP`). A larger weight asserts that the columns are flatter than a draw from
    Jeffreys' prior, the standard non-informative (reparametrisation-invariant) prior for a multinomial, which
    the noise rule cannot justify: it measures how little the noisy tables say, not that the truth
    is flat. Where the noise swamps a table its fit should fall back on that prior, not on a
    stronger one, so the weight is ``min(cap, rule)``. Below the cap the weight is the rule's, bit
    for bit, so every fit whose rule is below the cap is unchanged. ``DiscretePrivateMLE`` caps its
    global weight at the uniform Dirichlet's `BN_WEIGHT_CAP` (``6 / pi**2``; issue 12, bn12u: on fresh
    noise, in the 3 cells of the benchmark grid where it binds, it lowered joint KL, weighted CPD L1 and
    query L1 in all 3). Jeffreys' `BN_PRIOR_CAP` went further and was not adopted (bn12m): in the 7
    cells where it binds it lowered query L1 in all 7 but raised joint KL significantly in 2
    (``docs/bayesian.md``, "Where the prior's weight is capped").

    Parameters
    ----------
    tables : sequence of NoisyTable
        The released tables the fit reads (their noise variances, scales and cell counts).
    n_records : float
        The record count (declared, or the pooled noisy totals).
    cap : float or None, default None
        Upper bound on the weight; ``None`` keeps the Markov-network rule's bound of 1.
        `BN_PRIOR_CAP` is Jeffreys' bound derived above.

    Examples
    --------
    >>> from pgmpy_dp.tables import NoisyTable
    >>> t = NoisyTable(("a", "b"), np.zeros((10, 10)), epsilon=0.1, scale=10.0)
    >>> round(noise_regularization([t], n_records=10_000), 3)
    0.2
    >>> round(noise_regularization([t], n_records=1_000), 3)       # ten times the noise per record
    1.0
    >>> round(noise_regularization([t], n_records=1_000, cap=BN_PRIOR_CAP), 4)  # Jeffreys' cap, 2 / pi**2
    0.2026
    >>> noise_regularization([t], 10_000, cap=BN_PRIOR_CAP) == noise_regularization([t], 10_000)  # below it
    True
    >>> noise_regularization([NoisyTable(("a",), np.zeros(2), epsilon=1e9, scale=1e-9)], 100.0) < 1e-15
    True
    """
    from .markov import cgm_regularization

    weight = cgm_regularization(_noise_excess(tables, n_records), [t.scale for t in tables])
    if cap is None:
        return weight
    if not (isinstance(cap, (int, float, np.floating, np.integer)) and 0 < float(cap) < math.inf):
        raise ValueError(f"cap must be a positive finite number (e.g. likelihood.BN_PRIOR_CAP), got {cap!r}")
    return float(min(float(cap), weight))


def clique_noise_regularization(tables, n_records: float, cliques: Sequence[Sequence[str]]) -> tuple[list[float], list[float]]:
    """Per clique, the prior weights of [`noise_regularization`][pgmpy_dp.estimators.likelihood.noise_regularization] and of its warm start, table by table.

    The global rule averages ``v_i K_i / N`` (how much less a noisy table is worth than ``N``
    exact records, [`auto_regularization`][pgmpy_dp.estimators.markov.auto_regularization]) and the noise scale ``b_i`` over all
    tables, so every clique is shrunk as hard as the average table. The same argument applies
    to one clique ``c`` and the tables that measure exactly its attributes: its naive weight
    ``v_c K_c / N`` and its CGM-EM weight ``min(1, (v_c K_c / N) / max(1, b_c))``, where several
    tables on one clique pool their precision (``1 / v_c = sum_t 1 / v_t``, ``1 / b_c = sum_t 1 / b_t``).
    Under the error-optimal split (``epsilon_i`` proportional to ``sqrt(K_i)``, so ``b_i`` to
    ``1 / sqrt(K_i)``) the weight grows like ``sqrt(K_c)``: a root or a binary family, measured
    precisely, is barely shrunk, a large noisy family more. When every table has the same noise
    and size the weights equal the global ones. A clique no table measures exactly (for instance
    a family whose table was not released) gets the global weights.
    Returns ``(weights, naive_weights)``, one per clique, per ``N`` records as
    [`fit_family_tables`][pgmpy_dp.estimators.likelihood.fit_family_tables] takes them (divided by ``n_records``).

    Examples
    --------
    >>> from pgmpy_dp.tables import NoisyTable
    >>> small = NoisyTable(("a",), np.zeros(2), epsilon=1.0, scale=2.0)
    >>> big = NoisyTable(("b", "a"), np.zeros((10, 2)), epsilon=1.0, scale=2.0)
    >>> w, _ = clique_noise_regularization([small, big], 1000.0, [("a",), ("b", "a")])
    >>> [round(1000 * x, 3) for x in w]  # weight per N records: the small table is shrunk about 10x less
    [0.008, 0.078]
    >>> other = NoisyTable(("c", "a"), np.zeros((10, 2)), epsilon=1.0, scale=2.0)  # same size and noise as big
    >>> w, _ = clique_noise_regularization([big, other], 1000.0, [("b", "a"), ("c", "a")])
    >>> bool(np.allclose(1000 * np.array(w), noise_regularization([big, other], 1000.0), rtol=1e-12))
    True
    """
    from .markov import PRIOR_PRECISION

    weights, naive = [], []
    overall = None  # the global weights, for cliques no table measures exactly (computed once, if needed)
    for clique in cliques:
        own = [t for t in tables if set(t.attrs) == set(clique)]
        if not own:
            if overall is None:
                overall = (noise_regularization(tables, n_records) / n_records, _noise_excess(tables, n_records) / n_records)
            weights.append(overall[0])
            naive.append(overall[1])
            continue
        v = 1.0 / sum(1.0 / t.variance for t in own)
        b = 1.0 / sum(1.0 / float(t.scale) for t in own)
        excess = v * own[0].values.size / n_records
        weights.append(min(PRIOR_PRECISION, excess / max(1.0, b)) / n_records)
        naive.append(excess / n_records)
    return weights, naive


def column_information(counts, variance: float) -> np.ndarray:
    """Eigenvalues of the Fisher information about each CPD column's log-potentials, one row per column.

    ``counts`` is a family's table of expected counts, the node on axis 0 and its parents on the
    others; ``variance`` the noise variance of each cell of the table measuring it. Within the
    column of parent configuration ``u`` (``n_u`` records, conditional ``p``) the expected counts
    are ``n_x = n_u p_x`` with ``p = softmax(theta[:, u])``, so ``dn / dtheta = J = n_u (diag p - p p^T)``.
    A measured cell is the count (multinomial, variance about ``n_x``) plus the noise (variance
    ``v``), so about ``n_x`` with variance ``n_x + v``, and the information about the column's
    log-potentials is ``H_u = J diag(1 / (n + v)) J``; without noise it is the multinomial's,
    ``n_u (diag p - p p^T)``. ``J`` annihilates the constant vector: the column's mean log-potential
    is a gauge (it moves the parents' marginal, which other tables and cliques determine), so every
    column has one zero eigenvalue and ``|x| - 1`` informative ones. Columns are treated as
    independent (the information's off-diagonal blocks, through the parents' marginal, are dropped).
    Returns an array ``(columns, |x|)``, each row ascending.

    Examples
    --------
    >>> e = column_information(np.array([[90.0, 10.0], [10.0, 10.0]]), variance=0.0)
    >>> np.round(e, 6).tolist()  # per column: the gauge's 0 and n_u p (1 - p) times 2 (two softmax coordinates)
    [[0.0, 18.0], [0.0, 10.0]]
    """
    counts = np.asarray(counts, dtype=np.float64)
    x = counts.shape[0]
    cols = np.clip(counts.reshape(x, -1).T, 0.0, None)  # (columns, |x|)
    mass = cols.sum(axis=1, keepdims=True)
    p = np.divide(cols, mass, out=np.full_like(cols, 1.0 / x), where=mass > 0)
    jac = mass[:, :, None] * (p[:, :, None] * np.eye(x) - p[:, :, None] * p[:, None, :])  # symmetric, (columns, x, x)
    info = jac @ (jac / (cols + float(variance))[:, :, None].clip(min=1e-300))
    return np.clip(np.linalg.eigvalsh(0.5 * (info + info.transpose(0, 2, 1))), 0.0, None)


def effective_parameters(eigenvalues, alpha: float) -> float:
    """``gamma = sum_k e_k / (e_k + alpha)``: how many parameters the data determine against a prior of precision ``alpha``.

    Examples
    --------
    >>> round(effective_parameters(np.array([[0.0, 1e6], [0.0, 1e-6]]), 1.0), 4)  # one determined, one not, two gauges
    1.0
    """
    e = np.asarray(eigenvalues, dtype=np.float64)
    return float(np.sum(e / (e + float(alpha))))


def evidence_weight(log_potential, counts, variance: float, lower: float, upper: float, centre=None) -> float:
    """The prior precision of one family's log-potentials that maximises the evidence (type-II maximum likelihood).

    The likelihood fit's prior on a family's log-potentials is Gaussian, precision ``alpha``
    (``lambda N`` in [`cgm_em`][pgmpy_dp.engine.cgm.cgm_em]'s notation). Laplace's approximation of
    the marginal likelihood of the noisy tables, with the posterior's curvature at the fit
    ``H + alpha I`` (``H`` the information, [`column_information`][pgmpy_dp.estimators.likelihood.column_information]),
    is, in ``alpha``, ``-(alpha/2) ||theta - m||^2 + (P/2) log alpha - (1/2) log det(H + alpha I)``
    over the ``P`` parameters the prior constrains. Setting its derivative to zero gives MacKay's
    fixed point ``alpha ||theta - m||^2 = gamma(alpha) = sum_k e_k / (e_k + alpha)``
    ([`effective_parameters`][pgmpy_dp.estimators.likelihood.effective_parameters]): the precision is
    the number of well-determined parameters over their squared size. We take ``theta - m`` centred
    per column (the column constants are a gauge, see ``column_information``: ``P`` counts
    ``|x| - 1`` per column, and the gauge's zero eigenvalues add nothing to ``gamma``). A peaked
    CPD (large within-column spread) gets a small ``alpha``; a family the noise swamps (``e_k << alpha``)
    a large one. The left side increases in ``alpha`` and ``gamma`` decreases, so the root is unique;
    it is found by bisection in ``log alpha`` within ``[lower, upper]`` and clipped to them.

    What is approximated: ``theta`` and the counts are a fit's, held fixed while ``alpha`` is solved
    (MacKay re-fits between updates; [`fit_family_tables`][pgmpy_dp.estimators.likelihood.fit_family_tables]
    refits its warm start between rounds); the information treats each column alone and counts a
    cell's noise and multinomial spread as Gaussian; tables over other attribute sets that also
    inform the family are ignored.

    Examples
    --------
    >>> theta = np.log(np.array([[0.98, 0.5], [0.02, 0.5]]))  # one peaked column, one flat
    >>> counts = 1000 * np.array([[0.49, 0.25], [0.01, 0.25]])
    >>> a = evidence_weight(theta, counts, variance=200.0, lower=1e-6, upper=1e6)
    >>> d = theta - theta.mean(axis=0)
    >>> bool(np.isclose(a * np.sum(d**2), effective_parameters(column_information(counts, 200.0), a), rtol=1e-9))
    True
    """
    theta = np.asarray(log_potential, dtype=np.float64)
    if centre is not None:
        theta = theta - np.asarray(centre, dtype=np.float64)
    theta = theta - theta.mean(axis=0, keepdims=True)
    size = float(np.sum(theta**2))
    if not (0 < lower <= upper and math.isfinite(upper)):
        raise ValueError(f"evidence_weight needs 0 < lower <= upper < inf, got lower={lower!r}, upper={upper!r}")
    e = column_information(counts, variance)

    def excess(alpha):  # increasing in alpha: alpha ||theta||^2 - gamma(alpha)
        return alpha * size - effective_parameters(e, alpha)

    if excess(lower) >= 0:
        return float(lower)
    if excess(upper) <= 0:
        return float(upper)
    lo, hi = math.log(lower), math.log(upper)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if excess(math.exp(mid)) > 0:
            hi = mid
        else:
            lo = mid
        if hi - lo < 1e-13:
            break
    return float(math.exp(0.5 * (lo + hi)))


def _evidence_weights(cliques, n_families, measurements, n_records, given, log_potentials, mu, centre, bounds):
    """Per clique, the weight [`evidence_weight`][pgmpy_dp.estimators.likelihood.evidence_weight] chooses at a fit.

    ``log_potentials`` and ``mu`` (clique marginals) are the fit's; every family a table measures
    exactly gets its evidence weight within ``bounds`` (factors) of its ``given`` weight, with that
    table's noise variance (several tables pool their precision); other cliques, and weights 0,
    keep ``given``.
    """
    weights = list(given)
    variances = [_variance(m) for m in measurements]
    for i in range(n_families):
        own = [v for m, v in zip(measurements, variances) if set(m.attrs) == set(cliques[i])]
        if not own or given[i] <= 0:
            continue
        v = 1.0 / sum(1.0 / max(x, 1e-300) for x in own)
        alpha = given[i] * n_records
        alpha = evidence_weight(log_potentials[i], n_records * mu[i], v, alpha * bounds[0], alpha * bounds[1],
                                centre=None if centre is None else centre[i])
        weights[i] = alpha / n_records
    return weights


def _variance(m: Measurement) -> float:
    """A measurement's noise variance per cell: ``2 b^2`` for Laplace scale ``b``, ``sigma^2`` for Gaussian."""
    return m.scale**2 * (2.0 if m.noise == "laplace" else 1.0)


def _noise_excess(tables, n_records: float) -> float:
    """``mean_i v_i K_i / N``: the noise's share of the naive-MLE prior weight of the Markov estimator."""
    from .markov import PRIOR_PRECISION, auto_regularization

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


def marginal_centre(domain: Domain, cliques: Sequence[tuple[str, ...]], n_families: int, targets: Sequence) -> list[np.ndarray]:
    """Log-potentials of the independence model of the targets' one-variable marginals, as a prior centre.

    Family ``i < n_families`` (node first) gets ``log P(node)`` on every parent configuration, every
    other clique 0: a Bayesian network whose CPDs are the marginals (partition function 1). A
    penalty centred here shrinks a CPD column the noise leaves undetermined towards ``P(node)``,
    which every table containing the node measures, instead of towards uniform. ``P(node)`` is read
    off the first target containing the node (the projected targets agree on it); uniform if none does.

    Examples
    --------
    >>> d = Domain({"a": [0, 1], "b": [0, 1]})
    >>> centre = marginal_centre(d, [("a",), ("b", "a")], 2, [np.array([3.0, 1.0]), np.array([[2.0, 1.0], [1.0, 0.0]])])
    >>> np.round(np.exp(centre[1]), 2).tolist()  # P(b) on both columns
    [[0.75, 0.75], [0.25, 0.25]]
    """
    centre = []
    for i, clique in enumerate(cliques):
        if i >= n_families:
            centre.append(np.zeros(domain.shape(clique)))
            continue
        node = clique[0]
        p = np.full(domain.size(node), 1.0 / domain.size(node))
        for c, t in zip(cliques, targets):
            if t is not None and node in c:
                m = np.sum(t, axis=tuple(k for k, a in enumerate(c) if a != node))
                if m.sum() > 0 and np.all(m > 0):
                    p = m / m.sum()
                    break
        shape = (domain.size(node),) + (1,) * (len(clique) - 1)
        centre.append(np.broadcast_to(np.log(p).reshape(shape), domain.shape(clique)).copy())
    return centre


def lower_order_centre(
    domain: Domain, cliques: Sequence[tuple[str, ...]], n_families: int, targets: Sequence, max_iter: int = 200,
    tol: float = 1e-10,
) -> list[np.ndarray]:
    """Per family, the log-CPDs of its target without the highest-order interaction, as a prior centre.

    A family table over ``k + 1`` attributes is replaced by the maximum-entropy table with the
    same ``k``-attribute margins (iterative proportional fitting from uniform): a root's table by
    the uniform one, a node with one parent by the product of the two marginals (its CPD columns
    all ``P(node)``), a node with two parents by the model with every pairwise but no three-way
    interaction, and so on. Those margins sum over whole axes of the noisy table, so they are
    measured far more precisely than its cells. The centre is the log of each such table's
    CPD (a Bayesian network, partition function 1); a penalty centred here shrinks a CPD
    column the noise leaves undetermined towards what the lower-order structure predicts for it
    (``P(node | fewer parents)``), not towards uniform. Other cliques get 0, and so does a
    family without a target (no table measures it exactly).
    ``max_iter`` and ``tol`` (largest relative margin gap) bound the fitting.

    Examples
    --------
    >>> d = Domain({"a": [0, 1], "b": [0, 1]})
    >>> centre = lower_order_centre(d, [("a",), ("b", "a")], 2, [np.array([3.0, 1.0]), np.array([[2.0, 1.0], [1.0, 0.0]])])
    >>> centre[0].tolist()  # a root: uniform
    [0.0, 0.0]
    >>> np.round(np.exp(centre[1]), 2).tolist()  # one parent: P(b) on every column
    [[0.75, 0.75], [0.25, 0.25]]
    """
    centre = []
    for i, clique in enumerate(cliques):
        t = targets[i] if i < n_families else None
        if t is None or len(clique) == 1:
            centre.append(np.zeros(domain.shape(clique)))
            continue
        t = np.asarray(t, dtype=np.float64) / np.sum(t)
        axes = range(t.ndim)
        margins = [(a, np.sum(t, axis=a, keepdims=True)) for a in axes]  # each k-attribute margin: one axis summed out
        fit = np.full(t.shape, 1.0 / t.size)
        for _ in range(max_iter):
            for a, m in margins:
                fit = fit * (m / np.sum(fit, axis=a, keepdims=True))
            if max(float(np.max(np.abs(np.sum(fit, axis=a, keepdims=True) / m - 1.0))) for a, m in margins) < tol:
                break
        centre.append(np.log(fit / np.sum(fit, axis=0, keepdims=True)))
    return centre


#: Centres of the prior on the log-potentials, by the name ``fit_family_tables(prior=...)`` takes (None: 0)
_CENTRES = {"uniform": None, "marginals": marginal_centre, "lower-order": lower_order_centre}


def _initial_log_potentials(jt, targets, regularization, warm_start="mle", tol=1e-9, prior_mean=None):
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
    fit = fit_log_potentials(jt, targets, regularization, init=cpds, max_iter=START_ITER, tol=tol, warn=False,
                             prior_mean=prior_mean)
    return fit.log_potentials


#: CGM-EM iterations of the likelihood fit by default (``fit_family_tables`` and ``DiscretePrivateMLE``
#: with ``max_iter=None``): the budget docs/bayesian.md measures on the full grid; 50 beat 20 in
#: query L1 in 48 of 60 cells, cost no significant win against D-Ind, and fits alarm at 1e6 rows in
#: 0.76x pgmpy's DiscreteMLE
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
                   nlbp_iter, count_tol, prior_weight, match="spread", spread=1.0) -> FamilyFit:
    """``fit_family_tables(prior="dirichlet")``: CGM-EM with the exact M-step of `DirichletCPDStep`.

    The pseudo-count per cell is read off the (global) prior weight by ``match`` and ``spread``
    (``fit_family_tables``' ``dirichlet_match`` and ``dirichlet_spread``). CGM-EM starts from ``start``:
    by default the Gaussian fit's warm start (a Markov network that matches consistent tables exactly,
    which a network of CPDs cannot when a family's parents are dependent in the tables but not in the
    DAG); its first M-step turns it into CPDs.
    """
    weights = np.atleast_1d(np.asarray(regularization, dtype=np.float64))
    if list(cliques) != list(families) or np.ptp(weights) > 0 or prior_weight != "given":
        raise ValueError(
            "prior='dirichlet' needs one measured table per family and nothing else (the model is then the "
            "network itself, whose log-CPDs the M-step reads off in closed form) and one global weight"
        )
    if match not in ("spread", "curvature"):
        raise ValueError(f"dirichlet_match must be 'spread' or 'curvature', got {match!r}")
    if not (isinstance(spread, (int, float, np.integer, np.floating)) and math.isfinite(spread) and spread > 0):
        raise ValueError(f"dirichlet_spread must be a positive finite number, got {spread!r}")
    weight = float(weights[0]) * n_records
    step = DirichletCPDStep(n_records, dirichlet_pseudo_count(weight / spread**2) if match == "spread" else weight)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = cgm_em(jt, measurements, n_records, 0.0, init=start, max_iter=max_iter, tol=tol, callback=callback,
                        warn=False, nlbp_iter=nlbp_iter, count_tol=count_tol, m_step=step)
        mu, _ = jt.marginals(result.log_potentials)
    tables = [n_records * _family_marginal(f, cliques, mu) for f in families]
    return FamilyFit(tables, cliques, result.n_iter, result.converged, list(result.log_likelihood),
                     float(result.tolerance), regularization)


def model_cliques(
    families: Sequence[Sequence[str]], measured: Sequence[Sequence[str]], unmeasured: str = "free"
) -> list[tuple[str, ...]]:
    """The cliques [`fit_family_tables`][pgmpy_dp.estimators.likelihood.fit_family_tables] fits (so per-clique weights can be computed before the fit).

    The families, except those no table measures that lie inside another family (their table is
    read off that family's fitted marginal: a clique of their own would add parameters and no
    evidence), then each measured attribute set no earlier clique contains.

    Examples
    --------
    >>> model_cliques([("a",), ("b", "a")], [("a",), ("b", "a"), ("c", "a")])
    [('a',), ('b', 'a'), ('c', 'a')]
    >>> model_cliques([("a",), ("b", "a")], [("b", "a")])  # a's table not released: kept, with a free potential
    [('a',), ('b', 'a')]
    >>> model_cliques([("a",), ("b", "a")], [("b", "a")], unmeasured="host")  # or read off (b, a)
    [('b', 'a')]
    """
    families = [tuple(f) for f in families]
    exact = {frozenset(m) for m in measured}
    cliques = [
        f for f in families
        if unmeasured == "free" or frozenset(f) in exact or not any(set(f) < set(g) for g in families)
    ]
    for attrs in measured:
        if not any(set(attrs) <= set(c) for c in cliques):
            cliques.append(tuple(attrs))
    return cliques


def is_network_model(families: Sequence[Sequence[str]], measured: Sequence[Sequence[str]]) -> bool:
    """Whether ``fit_family_tables(prior="dirichlet")`` applies: its model is the network itself.

    True when every measured attribute set lies inside a family (no clique beyond the families) and
    every family inside another is measured exactly (no family whose potential the fit leaves free
    of the prior, as ``unmeasured="free"`` does for the families ``tables="maximal"`` drops).

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
    return not free and model_cliques(families, measured, "free") == families


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
    prior: str = "uniform",
    unmeasured: str = "free",
    prior_weight: str = "given",
    evidence_bounds: tuple[float, float] = (1.0 / EVIDENCE_BOUND, EVIDENCE_BOUND),
    evidence_schedule: str = "prefit",
    dirichlet_match: str = "spread",
    dirichlet_spread: float = 1.0,
) -> FamilyFit:
    """Family count tables of the model that maximises the likelihood of all noisy tables.

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
        [`model_cliques`][pgmpy_dp.estimators.likelihood.model_cliques] (e.g. from
        [`clique_noise_regularization`][pgmpy_dp.estimators.likelihood.clique_noise_regularization]).
    naive_regularization : float or sequence of float
        The same for the warm start, a fit to the projected tables as if they were exact.
    max_iter, tol : int, float
        CGM-EM iteration limit (default ``DEFAULT_MAX_ITER``, 50) and relative tolerance on its objective.
    count_tol : float
        CGM-EM also stops once no fitted count moved by more than ``count_tol`` noise scales (of its
        table) in an iteration ([`cgm_em`][pgmpy_dp.engine.cgm.cgm_em]).
    callback : callable, optional
        ``callback(iteration, objective, change)`` after every EM iteration.
    prior : {"uniform", "marginals", "lower-order", "dirichlet"}
        ``"dirichlet"``: symmetric Dirichlet priors on the CPD columns instead of the Gaussian, with
        CGM-EM's exact M-step ([`DirichletCPDStep`][pgmpy_dp.estimators.likelihood.DirichletCPDStep];
        one measured table per family and nothing else), ``a`` pseudo-records per cell from the weight
        by ``dirichlet_match``. Otherwise the centre of the Gaussian prior on the log-potentials (of the fit and of its warm start):
        0, which shrinks every CPD column towards uniform; the independence model of the
        projected tables' one-variable marginals ([`marginal_centre`][pgmpy_dp.estimators.likelihood.marginal_centre]),
        which shrinks it towards the node's marginal; or each projected family table without its
        highest-order interaction ([`lower_order_centre`][pgmpy_dp.estimators.likelihood.lower_order_centre]),
        which shrinks it towards ``P(node | fewer parents)``. Either way the weight vanishes with the noise.
    unmeasured : {"host", "free"}
        A family no table measures but another family contains: ``"host"`` reads its table off
        that family's fitted marginal (no clique of its own); ``"free"`` keeps it as a clique whose
        potential has no prior (weight 0), so the prior on the host does not shrink its marginal
        towards uniform (it is then determined by the host's expected counts alone). ``"free"``
        is the default and what [`DiscretePrivateMLE`][pgmpy_dp.estimators.bayesian.DiscretePrivateMLE]
        uses: reading off the host let the host's prior shrink the family (alarm, 1e4 records,
        epsilon 0.1: query L1 +30% in the pilot of ``docs/bayesian.md``).
    prior_weight : {"given", "evidence"}
        ``"given"`` uses ``regularization`` as it is. ``"evidence"`` re-chooses each measured family's
        weight by type-II maximum likelihood
        ([`evidence_weight`][pgmpy_dp.estimators.likelihood.evidence_weight]) at a CGM-EM fit, within
        ``evidence_bounds`` of the given weight, `EVIDENCE_ROUNDS` (2) times (MacKay's alternation of
        fit and weight; see ``evidence_schedule``). Cliques no table measures exactly, weights 0 and
        the warm start keep the given weights. (Choosing them at the warm start instead, which
        ``naive_regularization`` shrinks far harder than EM, raised most weights to the bound.)
    evidence_schedule : {"prefit", "staged"}
        With ``prior_weight="evidence"``: ``"staged"`` updates the weights between three stages of the
        main CGM-EM run (``max_iter // 3`` iterations at the given weights, update, another third,
        update, the rest; each stage restarts CGM-EM where the last stopped, so ``log_likelihood`` is
        monotone within a stage, not across the weight changes); ``"prefit"`` (default) reads them off `EVIDENCE_ROUNDS` short CGM-EM pre-fits
        (`EVIDENCE_PREFIT_ITER` iterations each, the second at the first's weights) and then runs the
        main fit from the warm start in one piece, so EM's acceleration is never restarted (restarting
        it, with the weights held fixed, raised insurance's query L1 by about 4% at 1e4 records,
        epsilon 0.1), at the price of the pre-fits' iterations.
    dirichlet_match : {"spread", "curvature"}
        With ``prior="dirichlet"``, the Dirichlet that stands for the Gaussian prior of the weight ``w``
        (``regularization`` times ``n_records``): ``"spread"``, the one whose draws' log-probabilities
        spread as the Gaussian's, ``trigamma(a) = 1 / w``
        ([`dirichlet_pseudo_count`][pgmpy_dp.estimators.likelihood.dirichlet_pseudo_count]); ``"curvature"``,
        the one whose log-density has the Gaussian's curvature at the uniform column, ``a = w`` (the
        log-density ``a sum_x log p_x`` has Hessian ``a (I - 11^T / K)`` in the centred log-potentials there).
    dirichlet_spread : float
        With ``dirichlet_match="spread"``: the Dirichlet's spread of log-probabilities over the Gaussian's,
        ``trigamma(a) = dirichlet_spread**2 / w``; above 1 a smaller pseudo-count, a weaker pull towards
        uniform (`BN_DIRICHLET_SPREAD`, 2, is what ``DiscretePrivateMLE`` uses).
    evidence_bounds : (float, float)
        With ``prior_weight="evidence"``: the factors of the given weight an evidence weight is clipped
        to, ``0 < lower <= upper`` (default ``(1/10, 10)``; ``upper=1`` lets the evidence only lower weights).
    warm_start : {"mle", "cpds", "best"}
        Where CGM-EM starts: the maximum-likelihood Markov network of the projected tables
        (an L-BFGS fit started from their CPDs), or the BN of those CPDs (closed form, but not
        exact for noiseless tables). ``"best"`` (``prior="dirichlet"`` only): CGM-EM from both,
        keeping the run with the higher final EM objective (the better MAP point; twice the cost;
        what ``DiscretePrivateMLE`` does where the weight's cap binds, issue 12's bn12s).
    m_step_iter, nlbp_iter : int
        L-BFGS iterations per M-step and NLBP sweeps per E-step of CGM-EM. Partial steps keep EM
        monotone (a generalised EM). With the default 5 M-step iterations a fit of alarm takes
        about a third of the junction-tree calibrations of 20; 3 NLBP sweeps instead of 10 saved
        another third but cost 2-8% in joint KL and query L1 on alarm and sachs (``docs/bayesian.md``).

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
    if prior not in _CENTRES and prior != "dirichlet":
        raise ValueError(f"prior must be one of {sorted([*_CENTRES, 'dirichlet'])}, got {prior!r}")
    if prior_weight not in ("given", "evidence"):
        raise ValueError(
            f"prior_weight must be 'given' (the weights passed) or 'evidence' (chosen per family by "
            f"the marginal likelihood), got {prior_weight!r}"
        )
    if evidence_schedule not in ("staged", "prefit"):
        raise ValueError(f"evidence_schedule must be 'staged' or 'prefit', got {evidence_schedule!r}")
    if prior_weight == "evidence" and not (0 < evidence_bounds[0] <= evidence_bounds[1] < math.inf):
        raise ValueError(f"evidence_bounds must be factors 0 < lower <= upper < inf, got {evidence_bounds!r}")
    families = [tuple(f) for f in families]
    n_records = float(n_records)
    if not (math.isfinite(n_records) and n_records > 0):
        raise ValueError(f"n_records must be positive and finite, got {n_records!r}")
    if unmeasured not in ("host", "free"):
        raise ValueError(f"unmeasured must be 'host' or 'free', got {unmeasured!r}")
    cliques = model_cliques(families, [m.attrs for m in measurements], unmeasured)
    if unmeasured == "free":
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
            "use consistency='projection' for this network"
        )
    with single_threaded_blas():  # the projection's polish makes many tiny BLAS calls
        targets = _naive_targets(cliques, measurements)
    if warm_start not in ("cpds", "mle", "best"):
        raise ValueError(f"warm_start must be 'cpds', 'mle' or 'best', got {warm_start!r}")
    if warm_start == "best" and prior != "dirichlet":
        raise ValueError("warm_start='best' (CGM-EM from both starts) is implemented for prior='dirichlet' only")
    # The start only has to be exact to well within the noise: stop L-BFGS once every fitted count
    # is within 1% of the smallest noise scale of its target (noiseless tables: 1e-9, as exact as float64 allows)
    start_tol = max(1e-9, 0.01 * min(m.scale for m in measurements) / n_records)
    n_families = sum(1 for c in cliques if c in families)  # the fitted families come first
    if prior == "dirichlet":
        # the same warm start as the Gaussian fit (exact for noiseless tables): the first E-step then starts at
        # the tables, and the closed-form M-step reads the CPDs off them
        def shifted(k):  # the second run's iterations count on from max_iter (one progress bar of 2 max_iter)
            return None if callback is None else (lambda i, obj, change: callback(k * max_iter + i, obj, change))

        fits = [
            _dirichlet_fit(jt, families, cliques, measurements, n_records, regularization,
                           _initial_log_potentials(jt, targets, naive_regularization, start, start_tol), max_iter, tol,
                           shifted(k), nlbp_iter, count_tol, prior_weight, dirichlet_match, dirichlet_spread)
            for k, start in enumerate(("mle", "cpds") if warm_start == "best" else (warm_start,))
        ]
        return max(fits, key=lambda f: f.log_likelihood[-1])  # a tie keeps the exact start's
    centre = _CENTRES[prior](domain, cliques, n_families, targets) if _CENTRES[prior] else None
    naive = _initial_log_potentials(jt, targets, naive_regularization, warm_start, start_tol, prior_mean=centre)
    # prior_weight="evidence": MacKay's scheme, the weights re-chosen at the fit between stages of EM
    # (EVIDENCE_ROUNDS updates; the stages share max_iter), each stage started where the last stopped
    rounds = EVIDENCE_ROUNDS if prior_weight == "evidence" else 0
    if rounds:
        regularization = [float(regularization)] * len(cliques) if np.ndim(regularization) == 0 else list(regularization)
        given = list(regularization)
    if rounds and evidence_schedule == "prefit":
        # the weights from short CGM-EM pre-fits (EVIDENCE_PREFIT_ITER iterations each, chained: each
        # round's fit at the previous round's weights), then the main fit from the warm start, uncut
        theta = naive
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", ConvergenceWarning)
            for _ in range(rounds):
                pre = cgm_em(jt, measurements, n_records, regularization, init=theta, max_iter=EVIDENCE_PREFIT_ITER,
                             tol=tol, warn=False, m_step_iter=m_step_iter, nlbp_iter=nlbp_iter, count_tol=count_tol,
                             prior_mean=centre)
                mu, _ = jt.marginals(pre.log_potentials)
                if not all(np.all(np.isfinite(m)) for m in mu):
                    break
                theta = pre.log_potentials
                regularization = _evidence_weights(cliques, n_families, measurements, n_records, given, theta, mu,
                                                   centre, evidence_bounds)
        rounds = 0  # the main fit below runs in one stage
    stages = [max_iter // (rounds + 1)] * rounds + [max_iter - rounds * (max_iter // (rounds + 1))]
    theta, n_iter, trace = naive, 0, []
    # Degenerate inputs (a record or two, noise scales near 1e-300) overflow inside the E-step;
    # the fit then falls back to its warm start below, so the numpy warnings carry no news.
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", ConvergenceWarning)
        for k, stage in enumerate(stages):
            if k:
                mu, _ = jt.marginals(theta)
                if not all(np.all(np.isfinite(m)) for m in mu):
                    break
                regularization = _evidence_weights(cliques, n_families, measurements, n_records, given, theta, mu, centre,
                                                   evidence_bounds)
            result = cgm_em(
                jt, measurements, n_records, regularization, init=theta, max_iter=max(stage, 1) if rounds else max_iter, tol=tol,
                callback=None if callback is None else (lambda t, v, c, o=n_iter: callback(o + t, v, c)),
                warn=False, m_step_iter=m_step_iter, nlbp_iter=nlbp_iter, count_tol=count_tol, prior_mean=centre,
            )
            theta, n_iter = result.log_potentials, n_iter + result.n_iter
            trace += list(result.log_likelihood)
        mu, _ = jt.marginals(theta)
        if not all(np.all(np.isfinite(m)) for m in mu):
            mu, _ = jt.marginals(naive)
    tables = [n_records * _family_marginal(f, cliques, mu) for f in families]
    return FamilyFit(tables, cliques, n_iter, result.converged, trace, float(result.tolerance), regularization)
