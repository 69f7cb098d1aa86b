import numpy as np
import pytest

from pgmpy_dp.engine import ConvergenceWarning, JunctionTree, LoopyBP, fit_log_potentials, project_simplex
from pgmpy_dp.privacy.domain import Domain


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


def test_warm_mle_matches_scipy_lbfgs_on_a_regularised_loopy_model(loopy_model):
    from pgmpy_dp.engine.mle import WarmMLE

    domain, cliques, theta = loopy_model
    jt = JunctionTree(domain, cliques)
    target, _ = jt.marginals([0.5 * t for t in theta])
    lam = 1e-3
    ref = fit_log_potentials(jt, target, lam, max_iter=2000, tol=1e-11)
    fit = WarmMLE(jt, lam).solve(target, [np.zeros(domain.shape(c)) for c in cliques], max_iter=2000, tol=1e-11)
    assert fit.converged and ref.converged
    assert fit.objective == pytest.approx(ref.objective, abs=1e-12)
    # the flattest direction has curvature ~lambda, so a gradient of 1e-11 leaves ~1e-8 per entry
    for a, b in zip(fit.log_potentials, ref.log_potentials):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_warm_mle_keeps_its_curvature_for_new_targets(loopy_model):
    """EM's M-steps in miniature: a partial first solve, then targets that drift. Keeping the
    curvature pairs takes fewer iterations in total than a cold L-BFGS per target (measured
    79 against 97 here), to the same solutions."""
    from pgmpy_dp.engine.mle import WarmMLE

    domain, cliques, theta = loopy_model
    jt = JunctionTree(domain, cliques)
    lam = 1e-3
    first, _ = jt.marginals([0.5 * t for t in theta])
    warm = WarmMLE(jt, lam)
    start = warm.solve(first, [np.zeros(domain.shape(c)) for c in cliques], max_iter=2000, tol=1e-6).log_potentials
    warm_iters = cold_iters = 0
    for f in (0.52, 0.55, 0.6):
        target, _ = jt.marginals([f * t for t in theta])
        again = warm.solve(target, start, max_iter=2000, tol=1e-8)
        cold = WarmMLE(jt, lam).solve(target, start, max_iter=2000, tol=1e-8)
        assert again.converged and cold.converged
        warm_iters += again.n_iter
        cold_iters += cold.n_iter
        for a, b in zip(again.log_potentials, cold.log_potentials):
            np.testing.assert_allclose(a, b, atol=1e-4)  # gradient 1e-8 over curvature ~lambda
        start = again.log_potentials
    assert warm_iters < cold_iters


def test_warm_mle_pools_tied_cliques_like_scipy_lbfgs():
    from pgmpy_dp.engine.mle import WarmMLE

    rng = np.random.default_rng(5)
    domain = Domain({v: [0, 1, 2] for v in "abcd"})
    cliques = [("a", "b"), ("b", "c"), ("c", "d")]
    target, _ = JunctionTree(domain, cliques).marginals([rng.normal(size=(3, 3)) for _ in cliques])
    jt = JunctionTree(domain, cliques)
    ref = fit_log_potentials(jt, target, 1e-2, tied=[[0, 1, 2]], tol=1e-11)
    fit = WarmMLE(jt, 1e-2, tied=[[0, 1, 2]]).solve(target, [np.zeros((3, 3))] * 3, max_iter=500, tol=1e-11)
    assert fit.log_potentials[0] is fit.log_potentials[2]
    np.testing.assert_allclose(fit.log_potentials[0], ref.log_potentials[0], atol=1e-7)


def test_closed_form_equals_lbfgs_mle_on_a_decomposable_model():
    """On a decomposable model the clique/separator ratios are the MLE L-BFGS converges to."""
    rng = np.random.default_rng(11)
    domain = Domain({v: list(range(k)) for v, k in zip("abcde", [2, 3, 4, 2, 3])})
    cliques = [("a", "b"), ("b", "c", "d"), ("d", "e")]
    jt = JunctionTree(domain, cliques)
    target, _ = jt.marginals([rng.normal(size=domain.shape(c)) for c in cliques])
    closed = fit_log_potentials(jt, target)
    lbfgs = fit_log_potentials(jt, target, init=[np.zeros(domain.shape(c)) for c in cliques], tol=1e-11, max_iter=5000)
    assert closed.method == "closed-form" and lbfgs.method == "lbfgs" and lbfgs.converged
    for a, b in zip(jt.marginals(closed.log_potentials)[0], jt.marginals(lbfgs.log_potentials)[0]):
        np.testing.assert_allclose(a, b, atol=1e-8)


def test_stop_reason_is_never_empty(loopy_model):
    domain, cliques, theta = loopy_model
    jt = JunctionTree(domain, cliques)
    target, _ = jt.marginals(theta)
    with pytest.warns(ConvergenceWarning, match=r"\(max_iter=2 reached\)"):
        fit = fit_log_potentials(jt, target, max_iter=2, tol=1e-12)
    assert fit.message == "max_iter=2 reached"


def test_direct_lbfgsb_driver_is_scipys_minimize_to_the_bit(loopy_model):
    """mle._lbfgsb runs scipy's own L-BFGS-B routine without minimize's wrappers: same iterates, same result."""
    import scipy
    from scipy.optimize import minimize

    from pgmpy_dp.engine.mle import _SETULB_VERSIONS, WarmMLE, _lbfgsb, _setulb

    version = tuple(int(p) for p in scipy.__version__.split(".")[:2])
    assert (_setulb() is not None) == (_SETULB_VERSIONS[0] <= version < _SETULB_VERSIONS[1])
    if _setulb() is None:
        pytest.skip(f"scipy {scipy.__version__}: fit_log_potentials uses minimize")
    domain, cliques, theta = loopy_model
    jt = JunctionTree(domain, cliques)
    problem = WarmMLE(jt, 1e-3)
    target = problem._targets(jt.marginals([0.5 * t for t in theta])[0])
    for max_iter, tol in ((7, 1e-12), (1000, 1e-6), (1000, 1e-14)):  # the cap, the gradient stop, the relative-reduction stop
        calls = {"direct": 0, "scipy": 0}

        def objective(x, key):
            calls[key] += 1
            return problem._value(x, target)

        x0 = np.zeros(problem.offsets[-1])
        ours = _lbfgsb(lambda x: objective(x, "direct"), x0, max_iter, tol, 1e-15, 20)
        ref = minimize(lambda x: objective(x, "scipy"), x0, jac=True, method="L-BFGS-B",
                       options={"maxiter": max_iter, "gtol": tol, "ftol": 1e-15, "maxcor": 20})
        assert np.array_equal(ours.x, ref.x) and np.array_equal(ours.jac, ref.jac)
        assert (ours.fun, ours.nit, ours.success, ours.message) == (ref.fun, ref.nit, ref.success, ref.message)
        assert calls["direct"] == calls["scipy"] == ref.nfev
