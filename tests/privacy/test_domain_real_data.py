"""Real-data inputs (issue 18): binned numeric columns and declared missing states flow through
``domain=`` into releases and both estimators; encoding is inside the release's progress bar."""

import numpy as np
import pandas as pd
import pytest
from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork

import pgmpy_dp
from pgmpy_dp import _progress

AGE_EDGES = [17, 30, 60, 91]


@pytest.fixture(scope="module")
def census():
    rng = np.random.default_rng(3)
    n = 3000
    age = rng.integers(15, 95, n).astype(float)
    age[rng.random(n) < 0.05] = np.nan
    sex = np.where(rng.random(n) < 0.5, "F", "M").astype(object)
    sex[rng.random(n) < 0.02] = None
    return pd.DataFrame({"age": age, "sex": sex})


@pytest.fixture(scope="module")
def domain():
    return pgmpy_dp.Domain({"sex": ["F", "M"]}, bins={"age": AGE_EDGES}, missing="Missing")


def test_markov_estimator_fits_binned_and_missing_states(census, domain):
    est = pgmpy_dp.PrivateMarkovEstimator(method="naive-mle", show_progress=False, random_state=0)
    budget = pgmpy_dp.PrivacyBudget(1.0)
    model = est.fit(DiscreteMarkovNetwork([("age", "sex")]), census, epsilon=1.0, domain=domain, budget=budget).model_
    (factor,) = model.get_factors()
    assert factor.state_names["age"] == ["[17, 30)", "[30, 60)", "[60, 91)", "Missing"]
    assert factor.state_names["sex"] == ["F", "M", "Missing"]
    assert budget.spent == 1.0
    # the missing share of age (~5%): noise of scale 1 per cell on 3000 records moves it by ~1e-3
    p_missing = pgmpy_dp.query(model, ["age"]).get_value(age="Missing")
    assert abs(p_missing - census["age"].isna().mean()) < 0.01


def test_bayesian_estimator_fits_binned_and_missing_states(census, domain):
    bn = DiscreteBayesianNetwork([("age", "sex")])
    bn.fit(census, estimator=pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, domain=domain, random_state=0))
    cpd = bn.get_cpds("age")
    assert cpd.state_names["age"] == ["[17, 30)", "[30, 60)", "[60, 91)", "Missing"]
    # clamped: [17, 30) also holds ages 15-16, [60, 91) also 91-94
    age = census["age"]
    expected = [((age < 30)).mean(), ((age >= 30) & (age < 60)).mean(), (age >= 60).mean(), age.isna().mean()]
    # Laplace noise of scale 2 per cell (two CPD tables share epsilon 1) on 3000 records moves a
    # share by ~0.001; 0.02 also leaves room for the allocation's Stage-I subsample
    np.testing.assert_allclose(cpd.values, expected, atol=0.02)


def test_release_draws_an_encoding_bar(census, domain, capsys, monkeypatch):
    monkeypatch.setattr(_progress, "PROGRESS_DELAY", 0)
    census.dp.release([("age", "sex")], epsilon=1.0, domain=domain)
    assert "encoding columns" in capsys.readouterr().err
    census.dp.release([("age", "sex")], epsilon=1.0, domain=domain, show_progress=False)
    assert capsys.readouterr().err == ""
