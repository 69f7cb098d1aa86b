"""A penalty weight per clique (``regularization`` as a sequence) in fit_log_potentials, WarmMLE and cgm_em."""

import numpy as np
import pytest

from pgmpy_dp.engine import JunctionTree, Measurement, WarmMLE, cgm_em, fit_log_potentials
from pgmpy_dp.privacy.domain import Domain

CLIQUES = [("a", "b"), ("b", "c"), ("d",)]


def _model(seed=0):
    domain = Domain({"a": [0, 1, 2], "b": [0, 1], "c": [0, 1, 2], "d": [0, 1]})
    jt = JunctionTree(domain, CLIQUES)
    rng = np.random.default_rng(seed)
    theta = [rng.normal(scale=1.5, size=domain.shape(c)) for c in CLIQUES]
    target, _ = jt.marginals(theta)
    return domain, jt, target


def _objective(jt, target, weights, theta):
    _, log_z = jt.marginals(theta)
    return (-sum(float(np.vdot(t, m)) for t, m in zip(theta, target)) + log_z
            + sum(0.5 * w * float(np.sum(t**2)) for w, t in zip(weights, theta)))


def test_per_clique_gradient_matches_finite_differences_and_vanishes_at_the_solution():
    _, jt, target = _model()
    weights = [0.05, 0.4, 1.5]
    solver = WarmMLE(jt, weights)
    rng = np.random.default_rng(1)
    x = rng.normal(size=solver.offsets[-1])
    t = solver._targets(target)
    f, g = solver._value(x, t)
    assert f == pytest.approx(_objective(jt, target, weights, solver._unpack(x)), rel=1e-12)
    h = 1e-6
    fd = np.array([(solver._value(x + h * e, t)[0] - solver._value(x - h * e, t)[0]) / (2 * h) for e in np.eye(x.size)])
    np.testing.assert_allclose(g, fd, atol=1e-7)
    fit = fit_log_potentials(jt, target, weights, tol=1e-10)
    assert fit.converged
    x_hat = np.concatenate([p.ravel() for p in fit.log_potentials])
    fd_hat = np.array([(solver._value(x_hat + h * e, t)[0] - solver._value(x_hat - h * e, t)[0]) / (2 * h)
                       for e in np.eye(x.size)])
    assert np.max(np.abs(fd_hat)) < 1e-7
    # and the gradient at the single-weight solution is not zero under these weights: the weights matter
    single = fit_log_potentials(jt, target, 0.4, tol=1e-10)
    x_one = np.concatenate([p.ravel() for p in single.log_potentials])
    assert np.max(np.abs(solver._value(x_one, t)[1])) > 1e-3


def test_equal_weights_give_the_single_weight_fit():
    domain, jt, target = _model()
    one = fit_log_potentials(jt, target, 0.3, tol=1e-10)
    many = fit_log_potentials(jt, target, [0.3] * len(CLIQUES), tol=1e-10)
    for a, b in zip(one.log_potentials, many.log_potentials):
        np.testing.assert_allclose(a, b, atol=1e-9)
    n = 500.0
    ms = [Measurement(c, n * m + np.random.default_rng(i).normal(scale=3.0, size=m.shape), 3.0)
          for i, (c, m) in enumerate(zip(CLIQUES, target))]
    em_one = cgm_em(jt, ms, n, 0.01, max_iter=30, warn=False)
    em_many = cgm_em(jt, ms, n, [0.01] * len(CLIQUES), max_iter=30, warn=False)
    assert em_one.n_iter == em_many.n_iter
    for a, b in zip(em_one.log_potentials, em_many.log_potentials):
        np.testing.assert_allclose(a, b, atol=1e-8)
    np.testing.assert_allclose(em_one.log_likelihood, em_many.log_likelihood, rtol=1e-10)


@pytest.mark.parametrize("engine", ["mle", "cgm"])
def test_a_larger_weight_pulls_only_its_clique_towards_zero(engine):
    domain, jt, target = _model(seed=3)
    n = 1000.0
    ms = [Measurement(c, n * m, 1.0) for c, m in zip(CLIQUES, target)]

    def fit(weights):
        if engine == "mle":
            return fit_log_potentials(jt, target, weights, tol=1e-10).log_potentials
        return cgm_em(jt, ms, n, weights, max_iter=200, warn=False).log_potentials

    base = fit([0.05, 0.05, 0.05])
    pulled = fit([0.05, 2.0, 0.05])
    assert float(np.linalg.norm(pulled[1])) < 0.8 * float(np.linalg.norm(base[1]))
    # ("d",) is its own component: its potential does not see the other cliques' weights at all
    np.testing.assert_allclose(pulled[2], base[2], atol=1e-4)


def test_a_bad_weight_sequence_is_refused_with_its_length_or_tie():
    _, jt, target = _model()
    with pytest.raises(ValueError, match="one per clique"):
        fit_log_potentials(jt, target, [0.1, 0.2])
    with pytest.raises(ValueError, match="non-negative"):
        fit_log_potentials(jt, target, [0.1, -0.2, 0.1])
    domain = Domain({v: [0, 1] for v in "xyz"})
    tied_jt = JunctionTree(domain, [("x", "y"), ("y", "z")])
    tied_target, _ = tied_jt.marginals([np.zeros((2, 2)), np.zeros((2, 2))])
    with pytest.raises(ValueError, match="one weight"):
        fit_log_potentials(tied_jt, tied_target, [0.1, 0.2], tied=[[0, 1]])
    fit = fit_log_potentials(tied_jt, tied_target, [0.1, 0.1], tied=[[0, 1]])
    assert fit.log_potentials[0] is fit.log_potentials[1]
