"""The response band (issue 14): the normal band widened by the estimator's measured slope on the truth."""

import warnings

import numpy as np
import pytest
from test_query_interval import DOMAIN, fitted, fitted_bn

import pgmpy_dp
from pgmpy_dp.engine import ConvergenceWarning
from pgmpy_dp.uncertainty import (
    _answerer,
    _common_seed,
    band_limits,
    bootstrap_log_potentials,
    response_factor,
)


@pytest.mark.parametrize("k", [1.0, 0.8, 0.5, 0.0])
def test_the_factor_gives_the_centres_spread_under_a_linear_response(k):
    """Simulate the pivot: truths p, fits p_hat = c + k p + s Z, B refits at c + k p_hat + s Z', and the
    centre 2 p_hat - mean(refits). Its spread over 20,000 draws, over the normal band's s sqrt(1 + 1/B), is the
    factor the slope gives (tolerance: 4 standard errors of a standard deviation from 20,000 draws, 2%)."""
    rng = np.random.default_rng(3)
    b, s, c, p = 20, 0.02, 0.1, 0.4
    p_hat = c + k * p + s * rng.standard_normal(20_000)
    refit_mean = c + k * p_hat + s * rng.standard_normal((b, 20_000)).mean(axis=0)
    centre = 2 * p_hat - refit_mean
    measured = centre.std() / (s * np.sqrt(1 + 1 / b))
    # the slope as the second level measures it: one refit from each refit, all with the same random numbers,
    # so the second answers differ only through their generators (the shared draw is one row for every j)
    first = c + k * p + s * rng.standard_normal((b, 2))
    second = c + k * first + s * rng.standard_normal((1, 2))
    factor, slope = response_factor(first, second)
    assert slope == pytest.approx(k, abs=1e-9)
    assert factor == pytest.approx(measured, rel=0.02)
    assert factor == pytest.approx(np.sqrt(((2 - k) ** 2 + 1 / b) / (1 + 1 / b)), abs=1e-12)


def test_the_slope_is_clipped_and_undefined_states_are_left_out():
    rng = np.random.default_rng(0)
    first = 0.5 + 0.05 * rng.standard_normal((10, 1))
    assert response_factor(first, 0.1 + 1.3 * first) == (1.0, 1.0)  # k > 1 is noise: never narrower
    factor, k = response_factor(first, 0.9 - 0.4 * first)  # an answer moving against its truth: k = 0
    assert k == 0.0 and factor == pytest.approx(np.sqrt((4 + 0.1) / 1.1))
    with_nan = np.hstack([first, np.full((10, 1), np.nan)])
    assert response_factor(with_nan, np.hstack([0.2 + 0.5 * first, with_nan[:, 1:]])) == response_factor(
        first, 0.2 + 0.5 * first)
    assert response_factor(np.full((5, 2), 0.3), rng.random((5, 2))) == (1.0, 1.0)  # no spread: the normal band
    with pytest.raises(ValueError, match="at least 2 refits"):
        response_factor(first[:1], first[:1])


def test_response_band_is_the_normal_band_widened_by_the_factor():
    rng = np.random.default_rng(1)
    estimate = np.array([0.4, 0.6])
    answers = np.clip(estimate + 0.03 * rng.standard_normal((30, 2)) + 0.01, 0, 1)
    lo, hi = band_limits(estimate, answers, 0.95, "normal")
    wlo, whi = band_limits(estimate, answers, 0.95, "response", calibration=1.3)
    assert np.allclose((wlo + whi) / 2, (lo + hi) / 2)
    assert np.allclose(whi - wlo, 1.3 * (hi - lo))
    with pytest.raises(ValueError, match="interval='response' needs calibration="):
        band_limits(estimate, answers, 0.95, "response")


@pytest.fixture(scope="module")
def mn_est():
    return fitted(n=500, method="cgm-em")


def test_markov_second_level_is_one_refit_per_refit_with_one_seed(mn_est):
    """The factor is response_factor of the refits' answers and of one refit drawn from each, every one seeded
    with the same integer derived from the query's seed (common random numbers)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        iv = pgmpy_dp.query_interval(mn_est, "a", evidence={"c": "q"}, n_samples=6, random_state=5,
                                     interval="response", show_progress=False)
        answer = _answerer(DOMAIN, mn_est.cliques_, mn_est.inference_, ["a"], {"c": "q"})
        first = bootstrap_log_potentials(mn_est, 6, random_state=5, show_progress=False)
        common = _common_seed(5)
        second = [bootstrap_log_potentials(mn_est, 1, random_state=np.random.default_rng(common), generator=t,
                                           show_progress=False)[0] for t in first]
    estimate = answer(mn_est.log_potentials_).ravel()
    a1 = np.array([answer(t).ravel() for t in first])
    factor, k = response_factor(a1, [answer(t).ravel() for t in second])
    assert iv.attrs["response"] == {"factor": factor, "slope": k}
    assert np.allclose(iv[["lower", "upper"]].to_numpy().T, band_limits(estimate, a1, 0.95, "response",
                                                                        calibration=factor))
    normal = pgmpy_dp.query_interval(mn_est, "a", evidence={"c": "q"}, n_samples=6, random_state=5,
                                     show_progress=False)
    assert (iv.lower <= normal.lower + 1e-12).all() and (iv.upper >= normal.upper - 1e-12).all()


def test_bayesian_response_band_widens_the_normal_one_by_its_factor():
    est = fitted_bn(3000, 1.0)
    kwargs = dict(n_samples=8, random_state=3, show_progress=False)
    normal = pgmpy_dp.query_interval(est, "a", evidence={"b": "v"}, **kwargs)
    iv = pgmpy_dp.query_interval(est, "a", evidence={"b": "v"}, interval="response", **kwargs)
    factor, k = iv.attrs["response"]["factor"], iv.attrs["response"]["slope"]
    assert 0.0 <= k <= 1.0 and factor == pytest.approx(np.sqrt(((2 - k) ** 2 + 1 / 8) / (1 + 1 / 8)))
    assert np.allclose(iv.estimate, normal.estimate)
    centre = (normal.lower + normal.upper) / 2
    inside = (iv.lower > 0) & (iv.upper < 1)  # unclipped states: exactly the factor wider
    assert inside.any() and np.allclose(((iv.upper - iv.lower) / (normal.upper - normal.lower))[inside], factor)
    assert np.allclose(((iv.lower + iv.upper) / 2)[inside], centre[inside])
    again = pgmpy_dp.query_interval(est, "a", evidence={"b": "v"}, interval="response", **kwargs)
    assert again.attrs["response"] == iv.attrs["response"]  # the second level is kept with the fit's refits


@pytest.mark.parametrize("kind", ["markov", "bayesian"])
def test_second_level_in_worker_processes_is_the_same(kind):
    """n_jobs > 1 runs the second level's fits in workers too; its draws stay in this process, so the band is the
    same, bit for bit."""
    est = fitted(n=500, method="cgm-em") if kind == "markov" else fitted_bn(3000, 1.0)
    # seeds at which the 4 refits measure a slope below 1 (so the second level moves the band)
    kwargs = dict(n_samples=4, random_state=7 if kind == "markov" else 6, show_progress=False, interval="response")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        one = pgmpy_dp.query_interval(est, "a", **kwargs)
        est.__dict__.pop("_bootstrap_refits")  # refit both levels rather than reuse the kept ones
        two = pgmpy_dp.query_interval(est, "a", n_jobs=2, **kwargs)
    assert one.attrs["response"] == two.attrs["response"]
    assert np.array_equal(one[["lower", "upper"]].to_numpy(), two[["lower", "upper"]].to_numpy())
    assert one.attrs["response"]["factor"] > 1.0  # a measured slope below 1: the second level did run
