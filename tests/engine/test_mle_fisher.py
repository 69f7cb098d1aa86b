"""The Fisher-preconditioned naive solver reaches the L-BFGS-B optimum."""

import numpy as np
import pytest

from pgmpy_dp.engine import JunctionTree
from pgmpy_dp.engine.mle import fit_log_potentials
from pgmpy_dp.privacy.domain import Domain


def _inconsistent_targets(domain, cliques, rng, zeros=False):
    """Independent random tables per clique: they disagree on shared attributes, like noisy releases."""
    out = []
    for c in cliques:
        t = rng.dirichlet(np.ones(int(np.prod(domain.shape(c))))).reshape(domain.shape(c))
        if zeros:
            t.ravel()[rng.random(t.size) < 0.2] = 0.0
        out.append(t / t.sum())
    return out


def _decomposable():
    domain = Domain({v: list(range(k)) for v, k in zip("abcde", [2, 3, 4, 2, 3])})
    return domain, [("a", "b"), ("b", "c", "d"), ("d", "e")]


@pytest.mark.parametrize("kind", ["loopy", "decomposable"])
@pytest.mark.parametrize("lam", [0.0, 1e-2])
def test_fisher_solver_reaches_the_lbfgs_optimum(kind, lam, loopy_model):
    rng = np.random.default_rng(3)
    domain, cliques = (loopy_model[0], loopy_model[1]) if kind == "loopy" else _decomposable()
    jt = JunctionTree(domain, cliques)
    if lam > 0:  # the penalty keeps the optimum finite even for inconsistent tables with zeros
        target = _inconsistent_targets(domain, cliques, rng, zeros=True)
    else:  # without it the MLE exists only for targets inside the marginal polytope
        target, _ = jt.marginals([2.0 * rng.normal(size=domain.shape(c)) for c in cliques])
    init = [np.zeros(domain.shape(c)) for c in cliques]  # bypasses the closed form on the decomposable model
    ref = fit_log_potentials(jt, target, lam, init=init, max_iter=5000, tol=1e-10)
    fit = fit_log_potentials(jt, target, lam, init=init, max_iter=5000, tol=1e-10, solver="fisher")
    assert ref.converged and fit.converged and fit.method == "fisher"
    assert fit.objective == pytest.approx(ref.objective, abs=1e-11)
    # marginals to the tolerance over the smallest curvature (lam, or the cells' probabilities)
    for a, b in zip(jt.marginals(fit.log_potentials)[0], jt.marginals(ref.log_potentials)[0]):
        np.testing.assert_allclose(a, b, atol=1e-7)


def test_fisher_solver_keeps_tied_potentials_shared():
    rng = np.random.default_rng(5)
    domain = Domain({v: [0, 1, 2] for v in "abcd"})
    cliques = [("a", "b"), ("b", "c"), ("c", "d")]
    jt = JunctionTree(domain, cliques)
    target = _inconsistent_targets(domain, cliques, rng)
    ref = fit_log_potentials(jt, target, 1e-2, tied=[[0, 1, 2]], tol=1e-11, max_iter=2000)
    fit = fit_log_potentials(jt, target, 1e-2, tied=[[0, 1, 2]], tol=1e-11, max_iter=2000, solver="fisher")
    assert fit.converged and fit.log_potentials[0] is fit.log_potentials[1] is fit.log_potentials[2]
    np.testing.assert_allclose(fit.log_potentials[0], ref.log_potentials[0], atol=1e-7)


def test_unknown_solver_is_named():
    domain, cliques = _decomposable()
    jt = JunctionTree(domain, cliques)
    target = [np.ones(domain.shape(c)) for c in cliques]
    with pytest.raises(ValueError, match="solver must be 'lbfgs' or 'fisher', got 'newton'"):
        fit_log_potentials(jt, target, solver="newton")
