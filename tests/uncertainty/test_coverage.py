"""Seeded repetitions: the bands cover the TRUE answer at about their level (slow statistical checks).

Data are drawn from a fixed true model, released, fitted, and each band is checked against the
true answer. With R repetitions the hits are Binomial(R, level) for calibrated bands; the tolerances
are 3 of its standard deviations.
"""

import warnings

import numpy as np
import pytest
from uncertainty_models import bn_fitted, bn_truth, fitted, true_answer

import pgmpy_dp
from pgmpy_dp.engine import ConvergenceWarning

pytestmark = pytest.mark.slow


def coverage(truth, estimators, evidence, level, n_samples, interval):
    hits, widths, estimates = 0, [], []
    for seed, est in enumerate(estimators):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            iv = pgmpy_dp.query_interval(est, "a", evidence, level=level, n_samples=n_samples, random_state=seed,
                                         interval=interval, show_progress=False)
        hits += bool(iv.lower.iloc[0] <= truth <= iv.upper.iloc[0])
        widths.append(iv.upper.iloc[0] - iv.lower.iloc[0])
        estimates.append(iv.estimate.iloc[0])
    return hits, np.mean(widths), np.std(estimates)


@pytest.fixture(scope="module")
def markov_fits():
    return [fitted(n=1000, eps=0.5, seed=100 + seed, method="cgm-em") for seed in range(40)]


@pytest.mark.parametrize("interval", ["normal", "response"])
def test_markov_bands_cover_the_true_conditional_at_90_percent(markov_fits, interval):
    """40 repetitions, binomial(40, 0.9) sd 1.9: at least 36 - 3 sd hits; the mean width within a factor 1.6 of
    the one the estimates' spread implies (2 x 1.645 sd), so a band may not buy its coverage by width alone."""
    truth = true_answer("a", {"c": "q"})[0]
    hits, width, spread = coverage(truth, markov_fits, {"c": "q"}, 0.9, 30, interval)
    r = len(markov_fits)
    assert hits >= 0.9 * r - 3 * np.sqrt(r * 0.09), hits
    assert 2 * 1.645 * spread / 1.6 <= width <= 2 * 1.645 * spread * 1.6, (width, spread)


@pytest.mark.parametrize("interval", ["normal", "response"])
def test_bayesian_bands_cover_the_true_conditional_at_90_percent(interval):
    """30 repetitions, binomial(30, 0.9) sd 1.64: at least 27 - 3 sd hits, width as above."""
    truth = pgmpy_dp.query(bn_truth(), ["a"], evidence={"b": "v"}).values[0]
    fits = [bn_fitted(200 + seed) for seed in range(30)]
    hits, width, spread = coverage(truth, fits, {"b": "v"}, 0.9, 30, interval)
    assert hits >= 0.9 * 30 - 3 * np.sqrt(30 * 0.09), hits
    assert 2 * 1.645 * spread / 1.6 <= width <= 2 * 1.645 * spread * 1.6, (width, spread)


@pytest.mark.parametrize("evidence", [{}, {"c": "q"}], ids=["marginal", "conditional"])
def test_default_band_is_neither_too_short_nor_too_long_at_80_percent(markov_fits, evidence):
    """At 80% the check is two-sided: hits within 0.8 R ± 3 sd (sd = sqrt(R 0.8 0.2)), so a band far too wide
    fails as well as one too short. The refits do not depend on the query or level: with 30 of them those of the
    90% checks are reused."""
    truth = true_answer("a", evidence)[0]
    hits, _, _ = coverage(truth, markov_fits, evidence, 0.8, 30, "response")
    r = len(markov_fits)
    assert abs(hits - 0.8 * r) <= 3 * np.sqrt(r * 0.16), hits
