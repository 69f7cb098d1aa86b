"""CGM-EM's prior weight: the derived floor ``UNRESOLVED_PRIOR_PRECISION`` and the floored rule."""

import warnings

import numpy as np
import pytest
from pgmpy.models import DiscreteMarkovNetwork
from scipy.special import polygamma

import pgmpy_dp.estimators.markov_fit as markov_fit
import pgmpy_dp.estimators.measurements as measurements
from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.engine import ConvergenceWarning, max_disagreement
from pgmpy_dp.estimators.evidence import pooled_n_records
from pgmpy_dp.estimators.priors import (
    UNRESOLVED_PRIOR_PRECISION,
    auto_regularization,
    cgm_regularization,
    floored_regularization,
)
from pgmpy_dp.tables import release_marginals
from tests.estimators.test_markov_reconciled import EDGES, _frame


def test_unresolved_prior_is_the_inverse_trigamma_at_one():
    """The precision is 1 / Var(log E) for an exponential E: 1 / psi'(1) = 6 / pi^2."""
    assert UNRESOLVED_PRIOR_PRECISION == pytest.approx(1.0 / float(polygamma(1, 1.0)), rel=1e-12)


@pytest.mark.parametrize("sigma", [0.3, 5.0, 400.0])
def test_unresolved_log_count_spread_is_scale_free(sigma):
    """The derivation on samples: counts below the noise, exponential with mean sigma (the maximum-entropy
    law of a non-negative count of known mean), have log-spread pi^2/6 whatever sigma is."""
    n = 200_000
    logs = np.log(np.random.default_rng(7).exponential(sigma, n))
    var = np.var(logs)
    # standard error of a sample variance: sqrt((mu4 - var^2) / n); the log of an exponential
    # (a reflected Gumbel) has excess kurtosis 12/5, so mu4 = 5.4 var^2
    se = np.pi**2 / 6 * np.sqrt(4.4 / n)
    assert abs(var - np.pi**2 / 6) < 4 * se
    # the prior precision is the inverse spread (delta method: SE of 1/var is SE(var) / var^2)
    assert abs(1.0 / var - UNRESOLVED_PRIOR_PRECISION) < 4 * se / (np.pi**2 / 6) ** 2


@pytest.mark.parametrize(
    "naive, scales", [(5.6, [48.0, 48.0]), (1236.0, [240.0]), (40.0, [50.0]), (0.9, [0.5]), (3.0, [1.0, 9.0])]
)
def test_floored_weight_is_the_larger_of_the_scaled_weight_and_the_derived_floor(naive, scales):
    scaled = cgm_regularization(naive, scales)
    floored = floored_regularization(naive, scales)
    assert floored == max(scaled, UNRESOLVED_PRIOR_PRECISION)
    assert floored >= UNRESOLVED_PRIOR_PRECISION and floored >= scaled


def _weights(release):
    est = PrivateMarkovEstimator(show_progress=False, max_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(DiscreteMarkovNetwork(EDGES), release)
    return est.regularization_


@pytest.mark.parametrize("n, eps", [(20_000, 1.0), (300, 0.05)])
def test_cgm_weight_floors_or_keeps_the_scaled_weight(n, eps):
    """At N = 2e4 the scaled weight is below 6/pi^2 and is floored; at N = 300, epsilon = 0.05 it is
    above (naive MLE's weight is large there) and is kept."""
    release = release_marginals(_frame(n), EDGES, epsilon=eps, random_state=5)
    weights = _weights(release)
    tables = [release[c] for c in EDGES]
    lam_naive = auto_regularization(tables, pooled_n_records([release]))
    scaled = cgm_regularization(lam_naive, [t.scale for t in tables])
    assert weights["naive-mle"] == weights["warm-start"] == pytest.approx(lam_naive)
    assert weights["cgm-em"] == pytest.approx(max(scaled, UNRESOLVED_PRIOR_PRECISION))
    if n == 20_000:
        assert scaled < UNRESOLVED_PRIOR_PRECISION and weights["cgm-em"] == UNRESOLVED_PRIOR_PRECISION
    else:
        assert scaled > UNRESOLVED_PRIOR_PRECISION and weights["cgm-em"] == pytest.approx(scaled)


def test_a_numeric_regularization_overrides_the_prior_rule():
    release = release_marginals(_frame(2000), EDGES, epsilon=0.5, random_state=6)
    est = PrivateMarkovEstimator(show_progress=False, max_iter=2, regularization=0.25)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(DiscreteMarkovNetwork(EDGES), release)
    assert est.regularization_ == {"naive-mle": 0.25, "warm-start": 0.25, "cgm-em": 0.25}


def test_warm_start_is_fitted_to_the_reconciled_targets(monkeypatch):
    """EM is started from the fit to the reconciled (consistent) targets, not to the noisy ones."""
    release = release_marginals(_frame(3000), EDGES, epsilon=0.3, random_state=8)
    seen = []
    fit = markov_fit.fit_log_potentials

    def spy(engine, targets, *a, **k):
        seen.append([np.array(t) for t in targets])
        return fit(engine, targets, *a, **k)

    monkeypatch.setattr(markov_fit, "fit_log_potentials", spy)
    est = PrivateMarkovEstimator(show_progress=False, max_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(DiscreteMarkovNetwork(EDGES), release)
    cliques = est.cliques_  # the model's clique order, not necessarily EDGES'
    assert max_disagreement(cliques, seen[0]) < 1e-10
    _, per_clique = measurements.clique_measurements([release], cliques)
    assert max_disagreement(cliques, measurements._naive_targets(cliques, per_clique, est.n_records_)) > 1e-3
    for got, want in zip(seen[0], measurements._reconciled_targets(cliques, per_clique, est.n_records_)):
        np.testing.assert_array_equal(got, want)
