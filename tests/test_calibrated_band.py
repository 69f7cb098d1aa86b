"""The calibrated band (issue 14): the normal band widened by a second bootstrap level."""

import warnings

import numpy as np
import pytest
from test_query_interval import DOMAIN, counting_refits, fitted, fitted_bn

import pgmpy_dp
from pgmpy_dp.engine import ConvergenceWarning
from pgmpy_dp.uncertainty import _answerer, band_limits, bootstrap_log_potentials, calibration_factor


def worlds(rng, n_worlds, spread_worlds, spread_refits, refits, truth=0.3):
    """Worlds whose answers spread ``spread_worlds`` around ``truth``, each with refits spreading ``spread_refits``."""
    centres = truth + spread_worlds * rng.standard_normal((n_worlds, 1))
    return centres, [c + spread_refits * rng.standard_normal((refits, 1)) for c in centres]


@pytest.mark.parametrize("ratio", [1.0, 2.0])
def test_calibration_factor_is_how_far_the_fit_lies_in_units_of_the_worlds_bands(ratio):
    """With the fit's answer ``ratio`` world spreads from the worlds' answers and unbiased refits, the factor is ``ratio``.

    At ratio 1 the world's band is calibrated by construction: ``(fit - centre) / sd`` is Student's t with C - 1
    degrees of freedom times sqrt(1 + 1/C), whose 95% quantile is the band's own multiplier, so the factor's
    expectation is 1. At ratio 2 it is sqrt(4 + 1/C) / sqrt(1 + 1/C) = 1.985 at C = 50. The tolerance is 4 standard
    errors of a 95% quantile of 4,000 draws (about 0.013 in these units), rounded up to 0.06.
    """
    rng = np.random.default_rng(7)
    c = 50
    centres, inner = worlds(rng, 4000, 0.02 * ratio, 0.02, c)
    expected = np.sqrt(ratio**2 + 1 / c) / np.sqrt(1 + 1 / c)
    assert calibration_factor(np.array([0.3]), centres, inner, 0.95) == pytest.approx(expected, abs=0.06)


def test_calibration_factor_skips_states_whose_refits_do_not_spread_and_checks_its_input():
    rng = np.random.default_rng(0)
    centres, inner = worlds(rng, 50, 0.02, 0.02, 10)
    flat = [np.hstack([w, np.zeros_like(w)]) for w in inner]  # a second state stuck at 0 in every refit
    two = np.hstack([centres, np.zeros_like(centres)])
    assert calibration_factor(np.array([0.3, 0.0]), two, flat, 0.95) == calibration_factor(
        np.array([0.3]), centres, inner, 0.95
    )
    assert calibration_factor(np.array([0.0]), np.zeros((3, 1)), [np.zeros((4, 1))] * 3, 0.95) == 1.0
    with pytest.raises(ValueError, match="same worlds"):
        calibration_factor(np.array([0.3]), centres, inner[:-1], 0.95)
    with pytest.raises(ValueError, match="at least 2 refits"):
        calibration_factor(np.array([0.3]), centres[:1], [inner[0][:1]], 0.95)


def test_calibrated_band_is_the_normal_band_widened_by_the_factor():
    rng = np.random.default_rng(1)
    estimate = np.array([0.4, 0.6])
    answers = np.clip(estimate + 0.03 * rng.standard_normal((30, 2)) + 0.01, 0, 1)
    lo, hi = band_limits(estimate, answers, 0.95, "normal")
    assert np.allclose(band_limits(estimate, answers, 0.95, "calibrated", calibration=0.7), (lo, hi))  # never narrower
    wlo, whi = band_limits(estimate, answers, 0.95, "calibrated", calibration=1.7)
    assert np.allclose((wlo + whi) / 2, (lo + hi) / 2)
    assert np.allclose(whi - wlo, 1.7 * (hi - lo))
    for bad in (None, -1.0, np.nan):
        with pytest.raises(ValueError, match="calibration="):
            band_limits(estimate, answers, 0.95, "calibrated", calibration=bad)


@pytest.fixture(scope="module")
def mn_est():
    return fitted(n=500, method="cgm-em")


def test_markov_worlds_are_the_fits_first_refits_each_refitted(mn_est):
    """The factor is calibration_factor of the first ``worlds`` refits and their own refits, seeded from the query's seed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        iv = pgmpy_dp.query_interval(mn_est, "a", evidence={"c": "q"}, n_samples=8, random_state=5,
                                     interval="calibrated", calibration=(3, 4), show_progress=False)
        answer = _answerer(DOMAIN, mn_est.cliques_, mn_est.inference_, ["a"], {"c": "q"})
        first = bootstrap_log_potentials(mn_est, 8, random_state=5, show_progress=False)
        inner = [bootstrap_log_potentials(mn_est, 4, random_state=np.random.default_rng([5, 14, b]),
                                          generator=first[b], show_progress=False) for b in range(3)]
    estimate = answer(mn_est.log_potentials_).ravel()
    factor = calibration_factor(estimate, [answer(t).ravel() for t in first[:3]],
                                [[answer(t).ravel() for t in w] for w in inner], 0.95)
    assert iv.attrs["calibration"] == {"factor": factor, "worlds": 3, "refits": 4}
    normal = pgmpy_dp.query_interval(mn_est, "a", evidence={"c": "q"}, n_samples=8, random_state=5,
                                     show_progress=False)
    expected = band_limits(estimate, np.array([answer(t).ravel() for t in first]), 0.95, "calibrated",
                           calibration=factor)
    assert np.allclose(iv[["lower", "upper"]].to_numpy().T, expected)
    assert (iv.lower <= normal.lower + 1e-12).all() and (iv.upper >= normal.upper - 1e-12).all()


@pytest.mark.parametrize("extra, drawn", [
    ({"interval": "calibrated", "calibration": (2, 3)}, 1 + 2),  # the fit's refits, then one set per world
    ({"interval": "response", "random_state": 12}, 1 + 6),  # the fit's refits, then one refit from each
])
def test_markov_second_levels_are_kept_for_the_next_query(mn_est, monkeypatch, extra, drawn):
    calls = counting_refits(monkeypatch)
    kwargs = {"n_samples": 6, "random_state": 11, "show_progress": False, **extra}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        pgmpy_dp.query_interval(mn_est, "b", **kwargs)
        assert len(calls) == drawn
        pgmpy_dp.query_interval(mn_est, "c", evidence={"a": "x"}, **kwargs)
        assert len(calls) == drawn  # nothing redrawn
        if extra["interval"] == "calibrated":
            pgmpy_dp.query_interval(mn_est, "c", **{**kwargs, "calibration": (2, 4)})
            assert len(calls) == drawn + 2  # other refits per world: new worlds' refits, the fit's kept


@pytest.mark.parametrize("calibration, match", [
    ((7, 3), "between 1 and n_samples"), ((2, 1), "at least 2 per world"), ((2.5, 3), "integer"),
    ("many", "pair"),
])
def test_bad_calibration_is_refused_before_any_refit(mn_est, calibration, match):
    with pytest.raises(ValueError, match=match):
        pgmpy_dp.query_interval(mn_est, "a", n_samples=6, interval="calibrated", calibration=calibration)


def test_bayesian_calibrated_band_widens_the_normal_one():
    est = fitted_bn(800, 0.5)
    kwargs = dict(n_samples=6, random_state=3, show_progress=False)
    normal = pgmpy_dp.query_interval(est, "a", evidence={"b": "v"}, **kwargs)
    iv = pgmpy_dp.query_interval(est, "a", evidence={"b": "v"}, interval="calibrated", calibration=(3, 3), **kwargs)
    factor = iv.attrs["calibration"]["factor"]
    assert iv.attrs["calibration"]["worlds"] == 3 and factor > 0
    assert np.allclose(iv.estimate, normal.estimate)
    assert (iv.lower <= normal.lower + 1e-12).all() and (iv.upper >= normal.upper - 1e-12).all()
    again = pgmpy_dp.query_interval(est, "a", evidence={"b": "v"}, interval="calibrated", calibration=(3, 3), **kwargs)
    assert again.attrs["calibration"]["factor"] == factor  # the worlds' refits are kept with the fit's
