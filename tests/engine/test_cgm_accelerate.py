"""CGM-EM's extrapolation of the EM map (``accelerate``): SQUAREM and Anderson keep EM's fixed points
and its monotone objective, and reach a given objective in fewer EM maps than plain EM."""

import numpy as np
import pytest

from pgmpy_dp.engine import JunctionTree, Measurement, cgm_em
from pgmpy_dp.engine.cgm import ACCELERATORS

from test_cgm import noisy_tables

MODES = [None, "squarem", "anderson"]


def run(jt, meas, n, accelerate, **kw):
    """A fit and its objective after every EM map count it reported, as (maps, value) pairs."""
    seen = []
    res = cgm_em(jt, meas, n_records=n, regularization=1.0 / n, accelerate=accelerate, warn=False,
                 callback=lambda t, value, change: seen.append((t, value)), **kw)
    return res, seen


@pytest.mark.parametrize("scale", [5.0, 40.0])
def test_accelerated_em_reaches_the_plain_em_fixed_point(loopy_model, scale):
    """Run to a tight tolerance, every variant ends at the same counts and the same objective."""
    n = 2000
    jt, meas = noisy_tables(loopy_model, n, scale, seed=3)
    fits = {m: run(jt, meas, n, m, max_iter=5000, tol=1e-13, count_tol=0)[0] for m in MODES}
    plain = fits[None]
    assert plain.converged
    for mode in ("squarem", "anderson"):
        fit = fits[mode]
        assert fit.converged, mode
        # the objective is a log-likelihood in nats: equal to far below one nat
        assert fit.log_likelihood[-1] == pytest.approx(plain.log_likelihood[-1], abs=1e-5)
        for a, b, m in zip(fit.counts, plain.counts, meas):
            np.testing.assert_allclose(a / m.scale, b / m.scale, atol=1e-3)


@pytest.mark.parametrize("mode", ["squarem", "anderson"])
def test_accelerated_em_needs_fewer_maps_to_a_given_objective(loopy_model, mode):
    """Where the noise dominates (scale 100 records against 2000), plain EM crawls: the accelerated
    variants reach plain EM's objective after 60 maps in at most two thirds of the maps (measured:
    SQUAREM 23, Anderson 15; at scale 40 they need 33 and 41, still fewer than 60)."""
    n = 2000
    jt, meas = noisy_tables(loopy_model, n, 100.0, seed=3)
    _, plain = run(jt, meas, n, None, max_iter=60, tol=1e-15, count_tol=0)
    target = plain[-1][1]
    assert plain[-1][0] == 60 and plain[-1][1] - plain[-10][1] > 1e-3  # plain EM is still climbing
    _, fast = run(jt, meas, n, mode, max_iter=60, tol=1e-15, count_tol=0)
    reached = [t for t, value in fast if value >= target]
    assert reached and reached[0] <= 40, (mode, fast[-1], target)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scale", [5.0, 40.0])
def test_objective_never_decreases_at_accepted_steps(loopy_model, mode, scale):
    n = 2000
    jt, meas = noisy_tables(loopy_model, n, scale, seed=1)
    res, _ = run(jt, meas, n, mode, max_iter=40)
    trace = np.array(res.log_likelihood)
    assert np.all(np.diff(trace) >= -1e-9 * np.abs(trace).max())
    assert trace[-1] > trace[0]
    assert res.n_iter <= 40  # the budget counts EM maps, whatever the accelerator


@pytest.mark.parametrize("mode", MODES)
def test_noiseless_tables_are_recovered(loopy_model, mode):
    domain, cliques, theta = loopy_model
    jt = JunctionTree(domain, cliques)
    marg, _ = jt.marginals(theta)
    n = 5000
    meas = [Measurement(c, n * m, 1e-3) for c, m in zip(cliques, marg)]
    res = cgm_em(jt, meas, n_records=n, regularization=1e-9, accelerate=mode, max_iter=300, warn=False)
    for got, m in zip(res.counts, meas):
        np.testing.assert_allclose(got, m.values, atol=0.05)


def test_tied_groups_stay_tied_under_anderson():
    from pgmpy_dp.privacy.domain import Domain

    d = Domain({v: [0, 1, 2] for v in "abcd"})
    cliques = [("a", "b"), ("b", "c"), ("c", "d")]
    jt = JunctionTree(d, cliques)
    rng = np.random.default_rng(5)
    step = rng.normal(size=(3, 3))
    marg, _ = jt.marginals([step, step, step])
    n = 3000
    meas = [Measurement(c, n * m + rng.laplace(0, 20.0, m.shape), 20.0) for c, m in zip(cliques, marg)]
    res = cgm_em(jt, meas, n, regularization=1e-3, tied=[[0, 1, 2]], accelerate="anderson", max_iter=40, warn=False)
    assert res.log_potentials[0] is res.log_potentials[1] or np.array_equal(res.log_potentials[0], res.log_potentials[1])
    np.testing.assert_array_equal(res.log_potentials[1], res.log_potentials[2])
    assert max(res.steps) >= 2  # Anderson did combine earlier maps here


@pytest.mark.parametrize("bad", ["fast", "SQUAREM", 2])
def test_a_bad_accelerator_is_refused_naming_the_parameter(loopy_model, bad):
    jt, meas = noisy_tables(loopy_model, 100, 1.0, seed=0)
    with pytest.raises(ValueError, match=r"accelerate must be one of \('squarem', 'anderson'\)"):
        cgm_em(jt, meas, n_records=100, accelerate=bad, max_iter=2)
    assert ACCELERATORS == ("squarem", "anderson")
