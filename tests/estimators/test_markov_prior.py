"""CGM-EM's prior weight: the derived ``UNRESOLVED_PRIOR_PRECISION`` (issue 13, fifth round) and the
``prior=`` rules of ``PrivateMarkovEstimator``, "floored" (the default since the seventh round), "scaled"
and "unresolved"."""

import numpy as np
import pytest
from scipy.special import polygamma

import warnings

from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp.estimators.markov as markov_module
from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.engine import ConvergenceWarning, max_disagreement
from pgmpy_dp.estimators.markov import (
    UNRESOLVED_PRIOR_PRECISION,
    auto_regularization,
    cgm_regularization,
    floored_regularization,
)
from pgmpy_dp.tables import release_marginals

from tests.estimators.test_markov_reconciled import EDGES, _frame
from tests.estimators.test_markov_reconciled import _fit as fit_with_targets


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


def _fit(release, monkeypatch, prior):
    return fit_with_targets(release, "reconciled", monkeypatch, prior=prior)


def test_mn_prior_switch_leaves_the_shared_weight_and_the_warm_start_alone(monkeypatch):
    release = release_marginals(_frame(4000), EDGES, epsilon=0.5, random_state=2)
    scaled = _fit(release, monkeypatch, "scaled")
    unresolved = _fit(release, monkeypatch, "unresolved")
    tables = [release[c] for c in EDGES]
    lam_naive = auto_regularization(tables, scaled.n_records_)
    # "scaled" is the shared (BN path) rule, unchanged; "unresolved" only replaces CGM-EM's weight
    assert scaled.regularization_["cgm-em"] == pytest.approx(cgm_regularization(lam_naive, [t.scale for t in tables]))
    assert unresolved.regularization_["cgm-em"] == UNRESOLVED_PRIOR_PRECISION
    assert unresolved.regularization_["naive-mle"] == scaled.regularization_["naive-mle"] == pytest.approx(lam_naive)
    assert scaled.regularization_["cgm-em"] != pytest.approx(UNRESOLVED_PRIOR_PRECISION, rel=1e-3)

    # a stronger prior pulls the fitted log-potentials towards 0 (smaller norm, centred per clique)
    def norm(est):
        return sum(float(np.sum((t - t.mean()) ** 2)) for t in est.log_potentials_)

    assert (unresolved.regularization_["cgm-em"] > scaled.regularization_["cgm-em"]) == (
        norm(unresolved) < norm(scaled)
    )


@pytest.mark.parametrize(
    "naive, scales", [(5.6, [48.0, 48.0]), (1236.0, [240.0]), (40.0, [50.0]), (0.9, [0.5]), (3.0, [1.0, 9.0])]
)
def test_floored_weight_is_the_larger_of_the_scaled_weight_and_the_derived_floor(naive, scales):
    scaled = cgm_regularization(naive, scales)
    floored = floored_regularization(naive, scales)
    assert floored == max(scaled, UNRESOLVED_PRIOR_PRECISION)
    assert floored >= UNRESOLVED_PRIOR_PRECISION and floored >= scaled


def _weights(release, prior):
    est = PrivateMarkovEstimator(show_progress=False, max_iter=2, prior=prior)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(DiscreteMarkovNetwork(EDGES), release)
    return est.regularization_


@pytest.mark.parametrize("n, eps", [(20_000, 1.0), (300, 0.05)])
def test_floored_prior_is_the_default_and_floors_or_keeps_the_scaled_weight(n, eps):
    """At N = 2e4 the scaled weight is below 6/pi^2 and is floored; at N = 300, epsilon = 0.05 it is
    above (naive MLE's weight is large there) and is kept. The default is "floored" in both."""
    release = release_marginals(_frame(n), EDGES, epsilon=eps, random_state=5)
    default = _weights(release, "floored")
    assert PrivateMarkovEstimator().prior == "floored"
    plain = PrivateMarkovEstimator(show_progress=False, max_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain.fit(DiscreteMarkovNetwork(EDGES), release)
    assert plain.regularization_ == default
    scaled = _weights(release, "scaled")["cgm-em"]
    assert default["cgm-em"] == max(scaled, UNRESOLVED_PRIOR_PRECISION)
    if n == 20_000:
        assert scaled < UNRESOLVED_PRIOR_PRECISION and default["cgm-em"] == UNRESOLVED_PRIOR_PRECISION
    else:
        assert scaled > UNRESOLVED_PRIOR_PRECISION and default["cgm-em"] == scaled


def test_a_numeric_regularization_overrides_the_prior_rule():
    release = release_marginals(_frame(2000), EDGES, epsilon=0.5, random_state=6)
    for prior in ("floored", "scaled", "unresolved"):
        est = PrivateMarkovEstimator(show_progress=False, max_iter=2, prior=prior, regularization=0.25)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(DiscreteMarkovNetwork(EDGES), release)
        assert est.regularization_ == {"naive-mle": 0.25, "warm-start": 0.25, "cgm-em": 0.25}


def test_default_warm_start_is_reconciled(monkeypatch):
    """EM is started from the fit to the reconciled (consistent) targets, not to the noisy ones."""
    release = release_marginals(_frame(3000), EDGES, epsilon=0.3, random_state=8)
    assert PrivateMarkovEstimator().warm_start == "reconciled"
    seen = {}
    fit = markov_module.fit_log_potentials

    def spy(engine, targets, *a, **k):
        seen.setdefault("targets", []).append([np.array(t) for t in targets])
        return fit(engine, targets, *a, **k)

    monkeypatch.setattr(markov_module, "fit_log_potentials", spy)
    for warm_start in (None, "noisy"):
        kw = {} if warm_start is None else {"warm_start": warm_start}
        est = PrivateMarkovEstimator(show_progress=False, max_iter=2, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(DiscreteMarkovNetwork(EDGES), release)
    default, noisy = seen["targets"]
    cliques = est.cliques_  # the model's clique order, not necessarily EDGES'
    assert max_disagreement(cliques, default) < 1e-10
    assert max_disagreement(cliques, noisy) > 1e-3
    _, per_clique = markov_module._measurements([release], cliques)
    for got, want in zip(default, markov_module._reconciled_targets(cliques, per_clique, est.n_records_)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "kw, match",
    [({"warm_start": "consistent"}, "warm_start must be one of"), ({"prior": "max"}, "prior must be one of"),
     ({"prior": None}, "prior must be a str"), ({"warm_start": 1}, "warm_start must be a str")],
)
def test_bad_warm_start_or_prior_is_refused_before_fitting(kw, match):
    release = release_marginals(_frame(500), EDGES, epsilon=1.0, random_state=9)
    with pytest.raises((ValueError, TypeError), match=match):
        PrivateMarkovEstimator(show_progress=False, **kw).fit(DiscreteMarkovNetwork(EDGES), release)
