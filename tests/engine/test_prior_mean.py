"""The ``prior_mean=`` keyword of fit_log_potentials and cgm_em: an L2 prior centred away from 0."""

import numpy as np
import pytest

from pgmpy_dp.engine import JunctionTree, Measurement, cgm_em, fit_log_potentials
from pgmpy_dp.privacy.domain import Domain


@pytest.mark.parametrize("tied", [None, [[0, 2]]])
def test_fit_log_potentials_minimises_the_objective_centred_at_prior_mean(loopy_model, tied):
    domain, cliques, theta = loopy_model
    if tied:  # cliques 0 and 2 have the same shape (2 x 3 vs 2 x 2 would not tie)
        cliques = [("a", "b"), ("b", "c"), ("c", "b"), ("c", "d", "e"), ("e", "a"), ("d",)]
        theta = [np.random.default_rng(1).normal(size=domain.shape(c)) for c in cliques]
    jt = JunctionTree(domain, cliques)
    target, _ = jt.marginals(theta)
    rng = np.random.default_rng(5)
    centre = [rng.normal(size=domain.shape(c)) for c in cliques]
    lam = 0.05
    fit = fit_log_potentials(jt, target, regularization=lam, prior_mean=centre, tied=tied, tol=1e-10, max_iter=2000)
    mu, _ = jt.marginals(fit.log_potentials)
    groups = tied or []
    grouped = {i for g in groups for i in g}
    # the objective -theta.t + log Z + lam/2 ||theta - m||^2 is convex: its gradient vanishes at the minimum;
    # per parameter group, sum of (mu - t) over members plus lam (theta - mean of the members' centres)
    for g in groups + [[i] for i in range(len(cliques)) if i not in grouped]:
        grad = sum(mu[i] - target[i] for i in g) + lam * (fit.log_potentials[g[0]] - np.mean([centre[i] for i in g], axis=0))
        assert np.abs(grad).max() < 1e-7, g  # tol 1e-10, within the solver's rounding slack
    # and it is not the fit centred at 0
    plain = fit_log_potentials(jt, target, regularization=lam, tied=tied, tol=1e-10, max_iter=2000)
    assert max(float(np.abs(a - b).max()) for a, b in zip(plain.log_potentials, fit.log_potentials)) > 1e-2


def test_cgm_em_shrinks_towards_the_model_of_its_prior_mean():
    # one noisy table over (a, b); a strong prior centred at a known model pulls the fit onto that model,
    # a vanishing one leaves the data's table: the centre is what the keyword says
    d = Domain({"a": [0, 1], "b": [0, 1, 2]})
    jt = JunctionTree(d, [("a", "b")])
    data = np.array([[300.0, 100.0, 100.0], [100.0, 100.0, 300.0]])
    centre_p = np.array([[0.05, 0.1, 0.35], [0.2, 0.2, 0.1]])
    y = [Measurement(("a", "b"), data, scale=20.0)]
    strong = cgm_em(jt, y, 1000, regularization=100.0, prior_mean=[np.log(centre_p)], max_iter=200, warn=False)
    np.testing.assert_allclose(strong.counts[0] / 1000, centre_p, atol=2e-3)
    weak = cgm_em(jt, y, 1000, regularization=1e-9, prior_mean=[np.log(centre_p)], max_iter=200, warn=False)
    np.testing.assert_allclose(weak.counts[0], data, atol=1.0)
    # the objective it reports includes the centred penalty: never decreasing, as for the 0 centre
    mid = cgm_em(jt, y, 1000, regularization=0.05, prior_mean=[np.log(centre_p)], max_iter=50, warn=False)
    assert np.all(np.diff(mid.log_likelihood) >= -1e-8 * np.abs(mid.log_likelihood[:-1]))


def test_prior_mean_needs_one_array_per_clique(loopy_model):
    domain, cliques, theta = loopy_model
    jt = JunctionTree(domain, cliques)
    target, _ = jt.marginals(theta)
    with pytest.raises(ValueError, match="prior_mean needs 6 arrays"):
        fit_log_potentials(jt, target, regularization=0.1, prior_mean=[np.zeros(2)])
