"""A fit that fails after its release has been paid for keeps that release reachable.

Once noise is drawn the budget stays charged (a later failure is a function of the noisy
output), so what was bought must not be thrown away: ``releases_`` (Markov) and
``release_`` (Bayesian) are set as soon as the release exists.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork

import pgmpy_dp.estimators.bayesian as bayesian
import pgmpy_dp.estimators.markov as markov
import pgmpy_dp.estimators.markov_fit as markov_fit
from pgmpy_dp import DiscretePrivateMLE, MarginalRelease, PrivacyBudget, PrivateMarkovEstimator
from pgmpy_dp.engine import ConvergenceWarning

EDGES = [("a", "b"), ("b", "c")]


def frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(3, size=n)
    b = (a + rng.integers(2, size=n)) % 3
    c = (b + rng.integers(2, size=n)) % 2
    return pd.DataFrame({"a": a, "b": b, "c": c}).astype("category")


class Injected(Exception):
    """Stands for anything that fails after the release (a solver error, a bug)."""


def _fail(*args, **kwargs):
    raise Injected("injected after the release")


@pytest.mark.parametrize(
    "method, module, stage, exc",
    [
        ("cgm-em", markov_fit, "cgm_em", KeyboardInterrupt),  # Ctrl-C during EM
        ("cgm-em", markov_fit, "cgm_em", Injected),
        ("naive-mle", markov_fit, "fit_log_potentials", Injected),
        ("cgm-em", markov, "fitted_network", Injected),  # even the very last step
    ],
)
def test_markov_fit_that_fails_after_its_release_keeps_it(monkeypatch, method, module, stage, exc):
    def raise_it(*args, **kwargs):
        raise exc("injected after the release")

    monkeypatch.setattr(module, stage, raise_it)
    budget = PrivacyBudget(1.0)
    est = PrivateMarkovEstimator(method=method, random_state=0, show_progress=False)
    with pytest.raises(exc):
        est.fit(DiscreteMarkovNetwork(EDGES), frame(), epsilon=0.5, budget=budget)
    assert budget.spent == 0.5  # noise was drawn: the charge stays
    (release,) = est.releases_
    assert isinstance(release, MarginalRelease) and release.epsilon == 0.5
    assert release.attrs == EDGES
    assert not hasattr(est, "model_")


def test_convergence_warning_raised_as_an_error_keeps_the_release():
    """``python -W error`` turns CGM-EM's ConvergenceWarning into an exception after the release."""
    budget = PrivacyBudget(1.0)
    est = PrivateMarkovEstimator(method="cgm-em", max_iter=1, tol=1e-15, random_state=0, show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        with pytest.raises(ConvergenceWarning, match="CGM-EM did not converge"):
            est.fit(DiscreteMarkovNetwork(EDGES), frame(), epsilon=1.0, budget=budget)
    assert budget.spent == 1.0
    assert est.releases_[0].epsilon == 1.0
    # the paid-for release is enough to fit again without spending anything
    fitted = PrivateMarkovEstimator(method="naive-mle").fit(DiscreteMarkovNetwork(EDGES), est.releases_).model_
    assert fitted.check_model() and budget.spent == 1.0


def test_markov_fit_that_fails_before_its_release_spends_nothing(monkeypatch):
    monkeypatch.setattr(markov, "_tied_indices", _fail)
    budget = PrivacyBudget(1.0)
    est = PrivateMarkovEstimator(method="naive-mle")
    with pytest.raises(Injected):
        est.fit(DiscreteMarkovNetwork(EDGES), frame(), epsilon=0.5, budget=budget)
    assert budget.spent == 0 and not hasattr(est, "releases_")


@pytest.mark.parametrize("allocation", ["optimal", "uniform", "data-dependent"])
@pytest.mark.parametrize("consistency", ["likelihood", "projection"])
def test_bayesian_fit_that_fails_after_its_release_keeps_it(monkeypatch, allocation, consistency):
    """DiscretePrivateMLE already did this; kept here so a rework cannot lose it."""
    monkeypatch.setattr(bayesian, "project_consistent", _fail)
    monkeypatch.setattr(bayesian, "fit_family_tables", _fail)
    budget = PrivacyBudget(1.0)
    est = DiscretePrivateMLE(
        epsilon=1.0, allocation=allocation, consistency=consistency, budget=budget, random_state=0
    )
    with pytest.raises(Injected):
        DiscreteBayesianNetwork(EDGES).fit(frame(), estimator=est)
    assert budget.spent == 1.0
    assert isinstance(est.release_, MarginalRelease) and len(est.release_) == 3
    if allocation == "data-dependent":
        assert isinstance(est.stage1_release_, MarginalRelease)
