"""Pairwise Markov networks learned from a Gaussian release of every two-way table.

The "tables" route of [`PrivateIsingEstimator`][pgmpy_dp.structure.pairwise.PrivateIsingEstimator] and
[`PrivatePairwiseEstimator`][pgmpy_dp.structure.pairwise.PrivatePairwiseEstimator]:

1. **Release** the ``p (p - 1) / 2`` two-way tables with the discrete Gaussian mechanism at the whole
   ``rho`` ([`release_from_codes`][pgmpy_dp.tables.release.release_from_codes]); the rest is post-processing.
2. **Fit** the complete pairwise model to the noisy tables: exactly up to ``EXACT_MAX_CELLS`` cells, beyond
   that from the inverse of the indicator covariance the tables imply (an edge score only).
3. **Select** the edges against a user threshold or, by default, by a Wald test of "no interaction"
   ([`wald_scores`][pgmpy_dp.structure.tables_route.wald_scores]) at a family-wise rate that falls with
   the rows ([`edge_alpha`][pgmpy_dp.structure.tables_route.edge_alpha]); the inverse-covariance test only
   screens, and the screened graph's exact refit is tested again.
4. **Refit** the potentials on the selected graph from the same release.

The evidence for the route and its rule of use is in docs/structure.md.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2, norm

from ..estimators.markov import PrivateMarkovEstimator
from ..privacy import Domain
from ..privacy.random_state import check_random_state
from ..tables.artifact import MarginalRelease, NoisyTable
from ..tables.counting import contingency_tables
from ..tables.release import release_counts, release_from_codes

#: Largest complete-graph clique (cells) fitted exactly; a binary 14-node model has 16,384 cells
#: and fits in about a second, 16 nodes in five.
EXACT_MAX_CELLS = 2**14

_HALF_NORMAL_MEDIAN = float(norm.isf(0.25))

#: Largest joint-cells x features array the exact fit's Fisher information may build (floats).
EXACT_MAX_FEATURE_CELLS = 2**24

#: Family-wise error rate of the default (noise-level) edge rule. Exact recovery needs no false
#: and no missed edge; the null scores of the regularised fits run below their nominal spread, so
#: a looser rate than the usual 5% misses fewer edges at little cost (docs/structure.md).
EDGE_ALPHA = 0.2

#: Rows up to which the default edge rule keeps the family-wise rate ``EDGE_ALPHA``; beyond, the
#: rate falls like ``1 / n**2`` ([`edge_alpha`][pgmpy_dp.structure.tables_route.edge_alpha]).
ALPHA_ROWS = 1000

#: Bonferroni level of the icov screen (the expected number of no-edge pairs passing it): a loose
#: screen, since the pairs above it are refitted exactly and tested again (docs/structure.md).
SCREEN_ALPHA = 4.0

#: Draws of the refitted model that estimate its Fisher information for the second test.
CONFIRM_DRAWS = 20_000


@dataclass
class TablesFit:
    """What the tables route learned: couplings, their noise, the edges and the refitted model."""

    weights: dict
    node_weights: dict
    strength: dict
    score: dict
    threshold: float
    edges: list
    method: str
    release: MarginalRelease
    noise_scale: float
    refit: PrivateMarkovEstimator


def _n_features(sizes) -> int:
    return sum(k - 1 for k in sizes) + sum((a - 1) * (b - 1) for a, b in itertools.combinations(sizes, 2))


def is_exact(sizes) -> bool:
    """Whether the complete pairwise model on columns of ``sizes`` states is fitted exactly (public: states only)."""
    cells = math.prod(sizes)
    return cells <= EXACT_MAX_CELLS and cells * _n_features(sizes) <= EXACT_MAX_FEATURE_CELLS


def memory_needed(sizes) -> int:
    """Bytes of the tables route's largest work arrays for columns of ``sizes`` states (rows excluded)."""
    tables = 48 * sum(a * b for a, b in itertools.combinations(sizes, 2))
    if is_exact(sizes):
        return tables + 24 * math.prod(sizes) * _n_features(sizes) + 24 * _n_features(sizes) ** 2
    return tables + 32 * sum(k - 1 for k in sizes) ** 2


def _pairs(dom: Domain) -> list[tuple[str, str]]:
    return list(itertools.combinations(dom.attrs, 2))


def double_centre(t: np.ndarray) -> np.ndarray:
    """``t`` minus its row and column means plus its grand mean: the interaction part of a pair potential."""
    return t - t.mean(axis=1, keepdims=True) - t.mean(axis=0, keepdims=True) + t.mean()


def _split_potentials(cliques, log_potentials, dom: Domain):
    """Doubly centred pair weights and centred node weights of a fitted pairwise model."""
    weights, theta = {}, {a: np.zeros(dom.size(a)) for a in dom.attrs}
    order = {a: i for i, a in enumerate(dom.attrs)}
    for clique, t in zip(cliques, log_potentials):
        t = np.asarray(t, dtype=float)
        if len(clique) == 1:
            theta[clique[0]] += t - t.mean()
            continue
        a, b = clique
        if order[a] > order[b]:
            a, b, t = b, a, t.T
        weights[a, b] = double_centre(t)
        theta[a] += t.mean(axis=1) - t.mean()
        theta[b] += t.mean(axis=0) - t.mean()
    return weights, theta


def _quiet_fit(est: PrivateMarkovEstimator, model, release):
    # convergence notes of the inner fit concern its tolerance on noisy targets, not the structure
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(model, release)


def refit_on_edges(release: MarginalRelease, dom: Domain, edges) -> PrivateMarkovEstimator:
    """Maximum-likelihood potentials of the pairwise model on ``edges`` from the released tables (free)."""
    from pgmpy.models import DiscreteMarkovNetwork

    mn = DiscreteMarkovNetwork()
    mn.add_nodes_from(dom.attrs)
    mn.add_edges_from(edges)
    touched = {a for e in edges for a in e}
    lonely = [a for a in dom.attrs if a not in touched]
    cliques = [tuple(e) for e in edges] + [(a,) for a in lonely]
    releases = [release]
    if lonely:
        # an isolated node's own table: the inverse-variance mean of its margins of the pair tables
        singles = []
        # a discrete Gaussian of tiny scale has a variance that rounds to zero; the continuous
        # sigma of the mean over the p - 1 tables bounds it below and keeps the measurement valid
        floor = min(t.scale for t in release.tables) / math.sqrt(max(len(dom.attrs) - 1, 1))
        for a in lonely:
            _, values, variance, _ = release._marginal_with_noise((a,))
            scale = max(math.sqrt(float(variance)), floor)
            singles.append(NoisyTable((a,), np.asarray(values, dtype=float), None, scale,
                                      mechanism=release.tables[0].mechanism, rho=release.tables[0].rho))
        releases.append(MarginalRelease(dom, singles, release.mechanism, release.sampler, release.n_records))
    est = PrivateMarkovEstimator(method="naive-mle", show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(mn, releases, cliques=cliques)


def _exact_weights(release: MarginalRelease, dom: Domain):
    from pgmpy.models import DiscreteMarkovNetwork

    est = _quiet_fit(PrivateMarkovEstimator(method="naive-mle", show_progress=False),
                     DiscreteMarkovNetwork(_pairs(dom)), release)
    return est, *_split_potentials(est.cliques_, est.log_potentials_, dom)


def _normalised_tables(release: MarginalRelease, dom: Domain) -> dict:
    out = {}
    for a, b in _pairs(dom):
        v = np.clip(np.asarray(release[(a, b)].values, dtype=float), 0.0, None)
        out[a, b] = v / max(v.sum(), 1.0)
    return out


def _icov_weights(release: MarginalRelease, dom: Domain, sigma: float, n_hat: float) -> dict:
    """Couplings ``-inverse(Cov)`` of the indicator features (state 0 the reference) implied by the tables.

    Under a Gaussian approximation the off-diagonal blocks of the negative precision are the interaction
    contrasts; padded with a zero row and column and double centred they give ``W_ij``. The ridge is the
    spectral size of the tables' noise per record. Returns the weights and the precision matrix.
    """
    attrs = dom.attrs
    sizes = [dom.size(a) for a in attrs]
    offsets = _indicator_offsets(sizes)
    D = int(offsets[-1])
    P = _normalised_tables(release, dom)
    means = [np.zeros(k - 1) for k in sizes]
    counts = np.zeros(len(attrs))
    M = np.zeros((D, D))
    for (a, b), v in P.items():
        i, j = attrs.index(a), attrs.index(b)
        M[offsets[i]:offsets[i + 1], offsets[j]:offsets[j + 1]] = v[1:, 1:]
        means[i] += v.sum(axis=1)[1:]
        means[j] += v.sum(axis=0)[1:]
        counts[i] += 1
        counts[j] += 1
    m = np.concatenate([mu / max(c, 1.0) for mu, c in zip(means, counts)])
    M = M + M.T
    for i in range(len(attrs)):
        sl = slice(offsets[i], offsets[i + 1])
        M[sl, sl] = np.diag(m[sl])
    cov = M - np.outer(m, m)
    ridge = sigma / max(n_hat, 1.0) * math.sqrt(D)
    w, V = np.linalg.eigh(cov)
    prec = (V / (np.clip(w, 0.0, None) + ridge)) @ V.T
    weights = {}
    for a, b in _pairs(dom):
        i, j = attrs.index(a), attrs.index(b)
        q = np.zeros((sizes[i], sizes[j]))
        q[1:, 1:] = -prec[offsets[i]:offsets[i + 1], offsets[j]:offsets[j + 1]]
        weights[a, b] = double_centre(q)
    return weights, prec


def _indicator_offsets(sizes):
    return np.concatenate([[0], np.cumsum([k - 1 for k in sizes])]).astype(int)


def _joint_grid(est: PrivateMarkovEstimator, dom: Domain):
    """Every cell of the joint (codes per column, one column per cell) and its probability under ``est``."""
    attrs = dom.attrs
    grids = np.indices([dom.size(a) for a in attrs]).reshape(len(attrs), -1)
    logp = np.zeros(grids.shape[1])
    for clique, t in zip(est.cliques_, est.log_potentials_):
        logp += np.asarray(t)[tuple(grids[attrs.index(a)] for a in clique)]
    prob = np.exp(logp - logp.max())
    return grids, prob / prob.sum()


def _model_sample(est: PrivateMarkovEstimator, dom: Domain, size: int, rng):
    """``size`` exact draws of the fitted model (codes per column, one column per draw), equal weights."""
    from ..engine.junction_tree import JunctionTree

    codes = JunctionTree(est.domain_, est.cliques_).sample(est.log_potentials_, size, random_state=rng)
    return np.vstack([codes[a] for a in dom.attrs]), np.full(size, 1.0 / size)


def _wald_covariance(grids: np.ndarray, prob: np.ndarray, dom: Domain, edges, sigma: float, n_hat: float):
    """Covariance of the interaction contrasts of an MLE on ``edges``, by its Fisher information.

    ``grids`` holds joint states (codes per column) with weights ``prob``: every cell of the joint
    (exact) or draws of the fitted model (Monte Carlo). The log-linear features are the indicators
    ``1{x_a = u}`` (``u >= 1``) and, for the pairs in ``edges``, ``1{x_a = u, x_b = v}`` (``u, v >= 1``);
    the MLE solves ``E_theta[phi] = mu_hat``, so ``theta_hat - theta ~ F^-1 (mu_hat - mu)`` with
    ``F = Cov_theta(phi)``. The noisy moments err by sampling (``F / n``) and by the release's noise:
    a pair cell is one table's cell (``sigma**2 / n**2``), a node margin the mean of ``p - 1`` tables'
    margins (``sigma**2 k_b / ((p - 1) n**2)``, ``k_b`` the other axis' states, taken at its mean).
    """
    attrs = dom.attrs
    sizes = [dom.size(a) for a in attrs]
    offsets = _indicator_offsets(sizes)
    blocks, start = {}, int(offsets[-1])
    for a, b in edges:
        r = (dom.size(a) - 1) * (dom.size(b) - 1)
        blocks[a, b] = slice(start, start + r)
        start += r
    phi = np.zeros((grids.shape[1], start))
    for i, k in enumerate(sizes):
        for u in range(1, k):
            phi[:, offsets[i] + u - 1] = grids[i] == u
    for (a, b), sl in blocks.items():
        i, j = attrs.index(a), attrs.index(b)
        cols = [(u, v) for u in range(1, sizes[i]) for v in range(1, sizes[j])]
        for c, (u, v) in enumerate(cols):
            phi[:, sl.start + c] = (grids[i] == u) & (grids[j] == v)
    mean = prob @ phi
    F = (phi * prob[:, None]).T @ phi - np.outer(mean, mean)
    Finv = np.linalg.pinv(F, hermitian=True)
    noise = np.full(start, sigma**2 / n_hat**2)
    noise[: offsets[-1]] *= float(np.mean(sizes)) / max(len(sizes) - 1, 1)
    cov = Finv / n_hat + (Finv * noise) @ Finv
    return {e: cov[sl, sl] for e, sl in blocks.items()}


def _contrasts(w: np.ndarray) -> np.ndarray:
    """Interaction contrasts ``W(u, v) - W(u, 0) - W(0, v) + W(0, 0)`` (``u, v >= 1``), flattened."""
    return (w[1:, 1:] - w[1:, :1] - w[:1, 1:] + w[0, 0]).ravel()


def _icov_covariance(prec: np.ndarray, dom: Domain, sigma: float, n_hat: float):
    """Per-entry variance of the negative precision entries (Gaussian approximation).

    Sampling: ``(P_aa P_bb + P_ab**2) / n`` (the Wishart variance); noise: a covariance error ``E``
    moves ``P`` by ``-P E P``, so entries of scale ``s = sigma / n`` add ``s**2 |P_a.|**2 |P_b.|**2``.
    """
    sizes = [dom.size(a) for a in dom.attrs]
    offsets = _indicator_offsets(sizes)
    d = np.diag(prec)
    rows = np.sum(prec**2, axis=1)
    s2 = (sigma / n_hat) ** 2
    out = {}
    for (i, a), (j, b) in itertools.combinations(enumerate(dom.attrs), 2):
        si, sj = slice(offsets[i], offsets[i + 1]), slice(offsets[j], offsets[j + 1])
        var = (np.outer(d[si], d[sj]) + prec[si, sj] ** 2) / n_hat + s2 * np.outer(rows[si], rows[sj])
        out[a, b] = np.diag(var.ravel())
    return out


def wald_scores(weights: dict, covariances: dict, alpha: float = EDGE_ALPHA) -> tuple[dict, float]:
    """Each pair's Wald statistic for "no interaction", as a normal score, and its Bonferroni critical value.

    A pair's ``r = (k_a - 1)(k_b - 1)`` interaction contrasts ``c`` with covariance ``V`` give
    ``c' V^-1 c``, chi-square with ``r`` degrees of freedom under no edge; its tail probability is
    mapped to the two-sided normal score with the same tail, and the critical value is the normal
    quantile at ``alpha / (2 m)`` over the ``m`` pairs.

    Examples
    --------
    >>> w = {("a", "b"): np.array([[1.0, -1.0], [-1.0, 1.0]]), ("a", "c"): np.zeros((2, 2))}
    >>> cov = {("a", "b"): np.array([[0.25]]), ("a", "c"): np.array([[0.25]])}
    >>> score, crit = wald_scores(w, cov)
    >>> round(score["a", "b"], 3), score["a", "c"], round(crit, 3)
    (8.0, 0.0, 1.645)
    """
    crit = float(norm.isf(alpha / (2.0 * max(len(weights), 1))))
    score = {}
    for e, w in weights.items():
        c = _contrasts(np.asarray(w, dtype=float))
        stat = float(c @ np.linalg.pinv(np.atleast_2d(covariances[e]), hermitian=True) @ c)
        tail = float(chi2.sf(stat, len(c)))
        score[e] = float(norm.isf(tail / 2.0)) if tail > 0 else math.sqrt(stat)
        if len(c) == 1:
            score[e] = math.sqrt(stat)  # exact for one degree of freedom, no round trip
    return score, crit


def release_pair_tables(codes, dom: Domain, rho: float, *, budget=None, random_state=None,
                        n_records=None, label=None, on_noise=None) -> MarginalRelease:
    """One discrete Gaussian release of every two-way table at total ``rho``.

    ``on_noise`` (for a learner charged once for its whole fit): see
    [`release_counted`][pgmpy_dp.structure.tables_route.release_counted].
    """
    if on_noise is not None:
        return release_counted(codes, dom, _pairs(dom), rho, random_state=random_state, n_records=n_records,
                               on_noise=on_noise)
    return release_from_codes(codes, dom, _pairs(dom), rho=rho, budget=budget, random_state=random_state,
                              n_records=n_records, label=label)


def release_counted(codes, dom: Domain, tables, rho: float, *, random_state=None, n_records=None,
                    on_noise) -> MarginalRelease:
    """Count ``tables`` exactly, call ``on_noise()``, then draw their discrete Gaussian noise at total ``rho``.

    The numbers of [`release_from_codes`][pgmpy_dp.tables.release.release_from_codes] without a budget, for a
    caller holding the fit's one charge: ``on_noise`` (its ``commit``) runs after the counting, so an
    interrupt while counting still refunds. The caller checks the codes and table sizes before charging.
    """
    exact = contingency_tables(codes, dom, tables)
    on_noise()
    return release_counts(exact, dom, tables, rho=rho, random_state=random_state, n_records=n_records)


def edge_alpha(n_records: float) -> float:
    """Family-wise error rate of the default edge rule for a release of about ``n_records`` rows.

    ``EDGE_ALPHA`` up to ``ALPHA_ROWS`` rows, then ``EDGE_ALPHA * (ALPHA_ROWS / n_records)**2``, so
    selection stays consistent (docs/structure.md). ``n_records`` is declared or the noisy estimate.

    Examples
    --------
    >>> edge_alpha(500) == EDGE_ALPHA, round(edge_alpha(10 * ALPHA_ROWS) / EDGE_ALPHA, 3)
    (True, 0.01)
    """
    return EDGE_ALPHA * min(1.0, ALPHA_ROWS / max(float(n_records), 1.0)) ** 2


def _standardise(score: dict) -> dict:
    # the regularised fit and the projection onto the simplex shrink the estimates below the
    # delta method's spread when the noise dominates; the pairs' median score (most pairs of a
    # sparse graph have no edge) measures that shrinkage, never above the theory's scale
    spread = min(1.0, float(np.median(list(score.values()))) / _HALF_NORMAL_MEDIAN)
    return {e: v / max(spread, 1e-12) for e, v in score.items()}


def _confirm_on_refit(refit: PrivateMarkovEstimator, dom: Domain, candidates, sigma: float, n_hat: float, rng):
    """Wald scores of the candidate edges from the sparse refit (Monte Carlo Fisher information), or None.

    The icov score's bias for a non-edge does not shrink with the rows; the refit's Wald test keeps its
    level. Skipped (None) when the refit needed loopy inference (too dense to sample exactly).
    """
    if not candidates or getattr(refit, "inference_", None) != "junction-tree":
        return None
    grids, prob = _model_sample(refit, dom, CONFIRM_DRAWS, rng)
    cov = _wald_covariance(grids, prob, dom, candidates, sigma, n_hat)
    weights, _ = _split_potentials(refit.cliques_, refit.log_potentials_, dom)
    score, _ = wald_scores({e: weights[e] for e in candidates}, cov)
    return score


def _select_by_icov(release: MarginalRelease, dom: Domain, weights: dict, prec, sigma: float, n_hat: float,
                    alpha: float, rng):
    """The icov route's selection: a loose screen, the screened graph refitted, then its own Wald test.

    Returns the scores, the critical value, the edges, the refit on them and the method's name.
    """
    score, crit = wald_scores(weights, _icov_covariance(prec, dom, sigma, n_hat), alpha)
    score = _standardise(score)
    screen = float(norm.isf(max(alpha, SCREEN_ALPHA) / (2.0 * max(len(score), 1))))
    candidates = [e for e in _pairs(dom) if score[e] > screen]
    refit = refit_on_edges(release, dom, candidates)
    second = _confirm_on_refit(refit, dom, candidates, sigma, n_hat, rng)
    method = "icov"
    if second is None:
        edges = [e for e in candidates if score[e] > crit]
    else:
        score = {**score, **second}
        edges = [e for e in candidates if second[e] > crit]
        method = "icov+refit"
    if edges != candidates:
        refit = refit_on_edges(release, dom, edges)
    return score, crit, edges, refit, method


def fit_tables_route(release: MarginalRelease, dom: Domain, threshold: float | None = None,
                     alpha: float | None = None, random_state=None) -> TablesFit:
    """Couplings, edges and refitted potentials from a release of every two-way table (post-processing).

    ``threshold`` keeps a pair whose largest ``|W_ij|`` exceeds it; ``None`` keeps a pair whose
    [`wald_scores`][pgmpy_dp.structure.tables_route.wald_scores] exceeds the Bonferroni value at ``alpha``
    (default [`edge_alpha`][pgmpy_dp.structure.tables_route.edge_alpha] of the release's row count).
    With the approximate (icov) scores that test only screens: the pairs scoring above the Bonferroni
    value at ``SCREEN_ALPHA`` are refitted exactly and kept if the refit's own Wald score passes.
    ``random_state`` seeds the Monte Carlo draws of that second test (post-processing: no privacy cost).
    """
    sizes = [dom.size(a) for a in dom.attrs]
    sigma = float(max(t.scale for t in release.tables))
    n_hat = max(float(release.n_records_estimate), 1.0)
    if alpha is None:
        alpha = edge_alpha(n_hat)
    if is_exact(sizes):
        est, weights, _ = _exact_weights(release, dom)
        method = "exact-mle"
    else:
        weights, prec = _icov_weights(release, dom, sigma, n_hat)
        method = "icov"
    strength = {e: float(np.abs(w).max()) for e, w in weights.items()}
    if threshold is not None:
        score, crit = strength, float(threshold)
        edges = [e for e in _pairs(dom) if score[e] > crit]
        refit = refit_on_edges(release, dom, edges)
    elif method == "exact-mle":
        grids, prob = _joint_grid(est, dom)
        score, crit = wald_scores(weights, _wald_covariance(grids, prob, dom, _pairs(dom), sigma, n_hat), alpha)
        score = _standardise(score)
        edges = [e for e in _pairs(dom) if score[e] > crit]
        refit = refit_on_edges(release, dom, edges)
    else:
        score, crit, edges, refit, method = _select_by_icov(
            release, dom, weights, prec, sigma, n_hat, alpha, check_random_state(random_state)
        )
    # the selection fit only selects; the reported couplings are the refit's (zero off the graph),
    # the model the learner returns
    w_fit, theta = _split_potentials(refit.cliques_, refit.log_potentials_, dom)
    weights = {e: w_fit.get(e, np.zeros_like(w)) for e, w in weights.items()}
    return TablesFit(weights, theta, strength, score, crit, edges, method, release, sigma, refit)
