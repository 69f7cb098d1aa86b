"""CGM-EM's derived prior for a converged fit (issue 13, fifth round): ``UNRESOLVED_PRIOR_PRECISION``."""

import numpy as np
import pytest
from scipy.special import polygamma

import pgmpy_dp.estimators.markov as markov_module
from pgmpy_dp.estimators.markov import UNRESOLVED_PRIOR_PRECISION, auto_regularization, cgm_regularization
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
    monkeypatch.setattr(markov_module, "_CGM_PRIOR", prior)
    return fit_with_targets(release, markov_module._WARM_TARGETS, monkeypatch)


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
