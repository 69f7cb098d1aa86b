"""pgmpy_dp.query: normalised answers for Bayesian and Markov networks, both engines."""

import warnings

import numpy as np
import pytest
from pgmpy.inference import VariableElimination
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp


@pytest.fixture(scope="module")
def fitted():
    network = pgmpy_dp.datasets.load_network("asia")
    df = pgmpy_dp.datasets.sample_network(network, 3000, seed=1)
    families = [(n, *sorted(network.get_parents(n))) for n in network.nodes()]
    rel = df.dp.release(families, epsilon=2.0, random_state=0)
    mn = DiscreteMarkovNetwork(network.to_markov_model().edges())
    est = pgmpy_dp.PrivateMarkovEstimator(method="naive-mle", show_progress=False)
    return network, est.fit(mn, rel, cliques=families).model_


def test_markov_answers_sum_to_one_and_match_normalised_ve(fitted):
    _, mn = fitted
    raw = VariableElimination(mn).query(["lung"], evidence={"xray": "yes"}, show_progress=False)
    assert not np.isclose(raw.values.sum(), 1.0)  # what pgmpy alone gives on a Markov network
    for engine in ("ve", "bp"):
        q = pgmpy_dp.query(mn, ["lung"], evidence={"xray": "yes"}, engine=engine)
        assert np.isclose(q.values.sum(), 1.0)
        np.testing.assert_allclose(q.values, raw.values / raw.values.sum(), rtol=1e-9)


def test_bayesian_answers_match_pgmpy_and_per_variable_factors(fitted):
    network, _ = fitted
    expected = VariableElimination(network).query(["lung", "bronc"], evidence={"dysp": "yes"}, show_progress=False)
    q = pgmpy_dp.query(network, ["lung", "bronc"], evidence={"dysp": "yes"})
    np.testing.assert_allclose(q.values, expected.values, atol=1e-12)
    per = pgmpy_dp.query(network, ["lung", "bronc"], evidence={"dysp": "yes"}, joint=False, engine="bp")
    assert set(per) == {"lung", "bronc"} and all(np.isclose(f.values.sum(), 1.0) for f in per.values())


def test_bad_arguments(fitted):
    network, _ = fitted
    with pytest.raises(ValueError, match="engine must be one of"):
        pgmpy_dp.query(network, ["lung"], engine="gibbs")
    with pytest.raises(TypeError, match="evidence must be a dict"):
        pgmpy_dp.query(network, ["lung"], evidence=[("xray", "yes")])
    with pytest.raises(ValueError, match="at least one"):
        pgmpy_dp.query(network, [])


def test_markov_estimator_repr_and_iteration_counts(fitted):
    est = pgmpy_dp.PrivateMarkovEstimator(method="naive-mle", max_iter=50, show_progress=False)
    assert repr(est) == "PrivateMarkovEstimator(max_iter=50, method='naive-mle', show_progress=False)"
    assert repr(pgmpy_dp.PrivateMarkovEstimator()) == "PrivateMarkovEstimator()"
    network, _ = fitted
    df = pgmpy_dp.datasets.sample_network(network, 2000, seed=2)
    mn = DiscreteMarkovNetwork([("smoke", "lung")])
    cgm = pgmpy_dp.PrivateMarkovEstimator(max_iter=3, show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pgmpy_dp.estimators.markov.ConvergenceWarning)  # 3 EM steps
        cgm.fit(mn, df, epsilon=1.0)
    assert cgm.n_iter_ <= 3 and cgm.mle_n_iter_ >= 1  # EM iterations vs the warm start's L-BFGS ones


def test_a_fitted_estimator_stands_for_its_model_and_an_unfitted_one_is_refused():
    network = pgmpy_dp.datasets.load_network("asia")
    df = pgmpy_dp.datasets.sample_network(network, 2000, seed=3)
    mn = DiscreteMarkovNetwork([("smoke", "lung")])
    est = pgmpy_dp.PrivateMarkovEstimator(method="naive-mle", random_state=0, show_progress=False)
    with pytest.raises(TypeError, match="fit it first"):
        pgmpy_dp.query(est, ["lung"])
    model = est.fit(mn, df, epsilon=1.0).model_
    q = pgmpy_dp.query(est, ["lung"], evidence={"smoke": "yes"})
    np.testing.assert_array_equal(q.values, pgmpy_dp.query(model, ["lung"], evidence={"smoke": "yes"}).values)
