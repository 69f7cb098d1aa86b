"""The two bands as functions of the fit's answer and its refits' answers."""

import numpy as np
import pytest
from scipy import stats

from pgmpy_dp.uncertainty.bands import band_t, normal_band, response_factor


def test_band_t_is_students_quantile_times_the_bias_share():
    assert band_t(30, 0.025) == pytest.approx(stats.t.ppf(0.975, 29) * np.sqrt(1 + 1 / 30), rel=1e-12)
    assert band_t(5, 0.05) == pytest.approx(stats.t.ppf(0.95, 4) * np.sqrt(1.2), rel=1e-12)


def test_normal_band_is_centred_on_the_bias_corrected_estimate():
    rng = np.random.default_rng(0)
    estimate = np.array([0.4, 0.6])
    answers = estimate + 0.01 + 0.03 * rng.standard_normal((30, 2))
    lo, hi = normal_band(estimate, answers, 0.95)
    centre = 2 * estimate - answers.mean(axis=0)
    half = band_t(30, 0.025) * answers.std(axis=0, ddof=1)
    np.testing.assert_allclose(lo, centre - half, atol=1e-12)
    np.testing.assert_allclose(hi, centre + half, atol=1e-12)
    wlo, whi = normal_band(estimate, answers, 0.95, widen=1.3)
    np.testing.assert_allclose(whi - wlo, 1.3 * (hi - lo), atol=1e-12)
    np.testing.assert_allclose(wlo + whi, lo + hi, atol=1e-12)


def test_normal_band_moves_against_the_refits_shift_and_clips():
    rng = np.random.default_rng(1)
    estimate = np.array([0.3, 0.7])
    answers = estimate + 0.02 * rng.standard_normal((40, 2))
    lo, hi = normal_band(estimate, answers, 0.9)
    lo2, hi2 = normal_band(estimate, answers + 0.01, 0.9)
    np.testing.assert_allclose([lo2, hi2], [lo - 0.01, hi - 0.01], atol=1e-12)
    clo, chi = normal_band(np.array([0.01, 0.99]), np.array([0.01, 0.99]) + 0.05 * rng.standard_normal((40, 2)), 0.9)
    assert clo[0] == 0.0 and chi[1] == 1.0


def test_normal_band_leaves_out_undefined_answers():
    rng = np.random.default_rng(2)
    answers = 0.5 + 0.02 * rng.standard_normal((20, 1))
    with_nan = np.vstack([answers, [[np.nan]]])
    lo, hi = normal_band(np.array([0.5]), answers, 0.95)
    nlo, nhi = normal_band(np.array([0.5]), with_nan, 0.95)
    # the mean and spread are those of the defined refits; only the multiplier counts all 21 rows
    assert (nlo + nhi) == pytest.approx(lo + hi)
    lo_all, hi_all = normal_band(np.array([np.nan]), np.full((5, 1), np.nan), 0.95)
    assert np.isnan(lo_all).all() and np.isnan(hi_all).all()


@pytest.mark.parametrize("b", [5, 30])
def test_normal_band_has_its_level_when_the_bias_is_a_mean_of_few_refits(b):
    """Estimate p + bias + s Z0, refits estimate + bias + s Z_i (the pivot's model, exactly): the centre misses the
    truth by s (Z0 - mean Z), of variance s^2 (1 + 1/b), so the band holds its 95%. Without sqrt(1 + 1/b) it would
    cover 0.936 at b = 5. 200,000 states: 3 standard errors = 0.0015."""
    rng = np.random.default_rng(11)
    k, truth, bias, s = 200_000, 0.5, 0.02, 0.01
    estimate = truth + bias + s * rng.standard_normal(k)
    answers = estimate + bias + s * rng.standard_normal((b, k))
    lo, hi = normal_band(estimate, answers, 0.95)
    coverage = float(np.mean((lo <= truth) & (truth <= hi)))
    assert abs(coverage - 0.95) < 0.0015, coverage


@pytest.mark.parametrize("k", [1.0, 0.8, 0.5, 0.0])
def test_the_factor_gives_the_centres_spread_under_a_linear_response(k):
    """Truths p, fits p_hat = c + k p + s Z, B refits at c + k p_hat + s Z' and the centre 2 p_hat - mean(refits):
    its spread over 20,000 draws, over the normal band's s sqrt(1 + 1/B), is the factor the slope gives
    (4 standard errors of a standard deviation from 20,000 draws: 2%)."""
    rng = np.random.default_rng(3)
    b, s, c, p = 20, 0.02, 0.1, 0.4
    p_hat = c + k * p + s * rng.standard_normal(20_000)
    centre = 2 * p_hat - (c + k * p_hat + s * rng.standard_normal((b, 20_000)).mean(axis=0))
    measured = centre.std() / (s * np.sqrt(1 + 1 / b))
    # the second level: one refit from each refit under common random numbers (one shared draw per state)
    first = c + k * p + s * rng.standard_normal((b, 2))
    factor, slope = response_factor(first, c + k * first + s * rng.standard_normal((1, 2)))
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
