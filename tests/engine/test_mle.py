import numpy as np
import pytest

from pgmpy_dp.engine import JunctionTree, LoopyBP, fit_log_potentials, project_simplex


def max_diff(a, b):
    return max(float(np.abs(x - y).max()) for x, y in zip(a, b))


def test_recovers_a_loopy_model_from_its_exact_marginals(loopy_model, brute_force):
    domain, cliques, theta = loopy_model
    jt = JunctionTree(domain, cliques)
    target, _ = jt.marginals(theta)
    fit = fit_log_potentials(jt, target, tol=1e-9)
    assert fit.converged and fit.method == "lbfgs"
    fitted, _ = jt.marginals(fit.log_potentials)
    assert max_diff(fitted, target) < 1e-7
    # the distribution is identified (parameters only up to gauge): compare full joints
    joint = brute_force(domain, [domain.attrs], [_joint(domain, cliques, theta)])[0][0]
    joint_fit = brute_force(domain, [domain.attrs], [_joint(domain, cliques, fit.log_potentials)])[0][0]
    np.testing.assert_allclose(joint_fit, joint, atol=1e-7)


def _joint(domain, cliques, theta):
    from pgmpy_dp.engine import align

    out = np.zeros(domain.shape(domain.attrs))
    for c, t in zip(cliques, theta):
        out = out + align(t, c, domain.attrs)
    return out


def test_closed_form_on_a_decomposable_model():
    from pgmpy_dp.privacy.domain import Domain

    rng = np.random.default_rng(3)
    domain = Domain({v: list(range(k)) for v, k in zip("abcd", [2, 3, 4, 2])})
    cliques = [("b", "a"), ("b", "c", "d"), ("c",)]
    jt = JunctionTree(domain, cliques)
    target, _ = jt.marginals([rng.normal(size=domain.shape(c)) for c in cliques])
    fit = fit_log_potentials(jt, target)
    assert fit.method == "closed-form"
    assert max_diff(jt.marginals(fit.log_potentials)[0], target) < 1e-12


def test_loopy_mle_matches_bethe_marginals(loopy_model):
    domain, cliques, theta = loopy_model
    bp = LoopyBP(domain, cliques)
    target, _ = bp.marginals([0.3 * t for t in theta])
    fit = fit_log_potentials(bp, target, tol=1e-7)
    assert max_diff(bp.marginals(fit.log_potentials)[0], target) < 1e-5


def test_regularisation_keeps_potentials_finite_with_zero_targets(loopy_model):
    domain, cliques, theta = loopy_model
    jt = JunctionTree(domain, cliques)
    target, _ = jt.marginals(theta)
    target = [np.where(t < np.median(t), 0.0, t) for t in target]  # half the cells projected to zero
    fit = fit_log_potentials(jt, target, regularization=1e-3)
    assert all(np.all(np.isfinite(t)) for t in fit.log_potentials)
    assert max(float(np.abs(t).max()) for t in fit.log_potentials) < 100


def test_tied_potentials_share_one_array_and_pool_the_counts():
    from pgmpy_dp.privacy.domain import Domain

    domain = Domain({f"x{t}": [0, 1, 2] for t in range(4)})
    cliques = [("x0", "x1"), ("x1", "x2"), ("x2", "x3")]
    jt = JunctionTree(domain, cliques)
    rng = np.random.default_rng(4)
    trans = rng.normal(size=(3, 3))
    target, _ = jt.marginals([trans] * 3)
    fit = fit_log_potentials(jt, target, tied=[[0, 1, 2]], tol=1e-9)
    assert fit.log_potentials[0] is fit.log_potentials[1] is fit.log_potentials[2]
    assert max_diff(jt.marginals(fit.log_potentials)[0], target) < 1e-6
    with pytest.raises(ValueError, match="two tied groups"):
        fit_log_potentials(jt, target, tied=[[0, 1], [1, 2]])


def test_simplex_projection():
    rng = np.random.default_rng(5)
    for _ in range(20):
        v = rng.normal(size=(4, 5))
        p = project_simplex(v)
        assert p.shape == v.shape and p.min() >= 0 and p.sum() == pytest.approx(1.0)
        # optimality (KKT): positive cells are v - tau for one common tau
        pos = p > 0
        assert np.ptp((v - p)[pos]) < 1e-12
        assert np.all(v[~pos] <= (v - p)[pos][0] + 1e-12)
    with pytest.raises(ValueError, match="NaN"):
        project_simplex(np.array([np.nan, 1.0]))
