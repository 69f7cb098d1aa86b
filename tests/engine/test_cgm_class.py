"""CGM-EM as a class: the options object, the facade, fresh state per fit, the stopping rule and SQUAREM's budget."""
import numpy as np
import pytest

from pgmpy_dp.engine import JunctionTree, Measurement, cgm_em
from pgmpy_dp.engine.cgm import CgmEM, CgmOptions, _EMStep, _Squarem, _Stopping


def _setup(loopy_model, n=2000, scale=5.0):
    domain, cliques, theta = loopy_model
    jt = JunctionTree(domain, cliques)
    marg, _ = jt.marginals(theta)
    rng = np.random.default_rng(3)
    return jt, [Measurement(c, n * m + rng.laplace(0, scale, size=m.shape), scale) for c, m in zip(cliques, marg)]


@pytest.mark.parametrize("kwargs, error, text", [
    (dict(damping=0.0), ValueError, "damping must be in (0, 1], got 0.0"),
    (dict(damping=float("nan")), ValueError, "damping must be in (0, 1]"),
    (dict(accelerate="yes"), TypeError, "accelerate must be True (SQUAREM) or False (plain EM), got 'yes'"),
])
def test_options_refuse_bad_knobs_and_the_facade_says_the_same(loopy_model, kwargs, error, text):
    with pytest.raises(error, match=text.replace("(", r"\(").replace(")", r"\)")):
        CgmOptions(**kwargs)
    jt, meas = _setup(loopy_model)
    with pytest.raises(error, match=text.replace("(", r"\(").replace(")", r"\)")):
        cgm_em(jt, meas, 2000, **kwargs)


def test_the_facade_is_the_class_to_the_bit_and_a_second_fit_starts_afresh(loopy_model):
    jt, meas = _setup(loopy_model)
    seen = []
    facade = cgm_em(jt, meas, 2000, regularization=1e-3, max_iter=9, warn=False, callback=lambda *a: seen.append(a))
    em = CgmEM(jt, meas, 2000, regularization=1e-3, options=CgmOptions(max_iter=9, warn=False))
    first, second = em.fit(), em.fit()
    for fit in (first, second):
        assert all(np.array_equal(a, b) for a, b in zip(fit.log_potentials, facade.log_potentials))
        assert fit.log_likelihood == facade.log_likelihood and fit.steps == facade.steps
        assert (fit.n_iter, fit.converged, fit.tolerance) == (facade.n_iter, facade.converged, facade.tolerance)
    assert [t for t, _, _ in seen] == sorted({t for t, _, _ in seen}) and seen[-1][0] == facade.n_iter


def test_stopping_rule_on_the_objective_and_on_the_counts():
    counts = [np.array([10.0, 20.0])]
    stop = _Stopping(CgmOptions(tol=1e-6, count_tol=1e-3), [2.0], counts, -1000.0)
    assert not stop.update(-990.0, [np.array([11.0, 20.0])])  # change 1e-2, counts moved half a scale
    assert stop.change == pytest.approx(1e-2) and stop.trace == [-1000.0, -990.0]
    assert stop.update(-980.0, [np.array([11.0, 20.001])])  # counts moved 5e-4 noise scales
    off = _Stopping(CgmOptions(tol=1e-6, count_tol=0), [2.0], counts, -1000.0)
    assert not off.update(-990.0, counts) and off.update(-990.0 - 1e-7, counts)  # count rule off: the objective decides


def test_squarem_keeps_the_plain_step_when_the_budget_runs_out():
    """A jump that lowers the objective with no EM map left to shorten it: the plain EM step, a = 0."""
    theta = [np.zeros(2)]
    here, one = _EMStep([np.array([1.0, 0.0])], None, 0.0), _EMStep([np.array([1.5, 0.0])], None, 1.0)
    calls = []

    def worse(cand, state):
        calls.append(cand)
        return _EMStep(cand, state, -np.inf)

    squarem = _Squarem(lambda coefs, thetas: [sum(c * th[0] for c, th in zip(coefs, thetas))])
    squarem.step_max = 8.0
    point, nxt, alpha, used = squarem.step(worse, theta, here, one, budget=1)
    assert (point, nxt, alpha, used) == (here.theta, one, 0.0, 1) and len(calls) == 1
    point, nxt, alpha, used = squarem.step(worse, theta, here, one, budget=100)
    assert alpha == 1.0 and point is one.theta and 2 < used < 100  # halved towards 1: the double EM step


def test_the_convergence_warning_points_at_the_caller_of_the_facade_and_of_fit(loopy_model):
    """Through the facade's extra frame too, so warnings filters and de-duplication see the caller's line."""
    from pgmpy_dp.engine import ConvergenceWarning

    jt, meas = _setup(loopy_model)
    with pytest.warns(ConvergenceWarning) as facade:
        cgm_em(jt, meas, 2000, max_iter=2, count_tol=0)
    with pytest.warns(ConvergenceWarning) as direct:
        CgmEM(jt, meas, 2000, options=CgmOptions(max_iter=2, count_tol=0)).fit()
    assert [w.filename for w in facade] == [__file__] and [w.filename for w in direct] == [__file__]
