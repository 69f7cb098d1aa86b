"""A fitted model stands for the private estimator that fitted it (query_interval, query)."""

import numpy as np
import pandas as pd
import pytest
from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork
from pgmpy.parameter_estimator import DiscreteMLE

import pgmpy_dp
from pgmpy_dp.estimators.fitted import estimator_of

DOMAIN = {"a": [0, 1], "b": [0, 1]}


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    a = rng.random(2000) < 0.3
    b = np.where(a, rng.random(2000) < 0.8, rng.random(2000) < 0.2)
    return pd.DataFrame({"a": a.astype(int), "b": b.astype(int)})


def _interval(obj):
    return pgmpy_dp.query_interval(obj, ["b"], evidence={"a": 1}, n_samples=4, random_state=3,
                                   interval="normal", show_progress=False)


def test_a_bayesian_network_stands_for_its_estimator(frame):
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, domain=DOMAIN, random_state=0)
    bn = DiscreteBayesianNetwork([("a", "b")]).fit(frame, estimator=est)
    assert estimator_of(bn) is est and est.model_ is bn
    pd.testing.assert_frame_equal(_interval(bn), _interval(est))
    np.testing.assert_array_equal(pgmpy_dp.query(est, ["b"]).values, pgmpy_dp.query(bn, ["b"]).values)


def test_a_markov_network_stands_for_its_estimator(frame):
    est = pgmpy_dp.PrivateMarkovEstimator(random_state=0, show_progress=False)
    est.fit(DiscreteMarkovNetwork([("a", "b")]), frame, epsilon=1.0, domain=DOMAIN)
    pd.testing.assert_frame_equal(_interval(est.model_), _interval(est))


def test_a_model_refitted_without_privacy_no_longer_stands_for_the_private_fit(frame):
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, domain=DOMAIN, random_state=0)
    bn = DiscreteBayesianNetwork([("a", "b")]).fit(frame, estimator=est)
    bn.fit(frame, estimator=DiscreteMLE())
    with pytest.raises(ValueError, match="parameters changed since DiscretePrivateMLE"):
        _interval(bn)


def test_a_model_no_private_estimator_fitted_is_refused_clearly(frame):
    bn = DiscreteBayesianNetwork([("a", "b")]).fit(frame, estimator=DiscreteMLE())
    with pytest.raises(ValueError, match="not fitted by a pgmpy_dp estimator"):
        _interval(bn)
