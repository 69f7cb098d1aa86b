"""query_interval: the public function, on Markov and Bayesian fits."""

import copy
import gc
import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
from pgmpy.models import DiscreteMarkovNetwork
from uncertainty_models import CHAIN, DOMAIN, bn_fitted, bn_model, fitted, truth_theta

import pgmpy_dp
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree
from pgmpy_dp.tables import release_from_codes
from pgmpy_dp.uncertainty import interval as interval_module
from pgmpy_dp.uncertainty.bands import normal_band, response_factor
from pgmpy_dp.uncertainty.simulate import fit_view, refits

KW = dict(show_progress=False)


@pytest.fixture(scope="module")
def est():
    return fitted(method="cgm-em")


def test_signature_defaults_to_the_response_band():
    params = inspect.signature(pgmpy_dp.query_interval).parameters
    assert list(params) == ["estimator", "variables", "evidence", "level", "n_samples", "random_state", "interval",
                            "show_progress", "n_jobs"]
    assert params["interval"].default == "response"


def test_estimate_is_the_fitted_models_answer(est):
    iv = pgmpy_dp.query_interval(est, "a", evidence={"c": "q"}, n_samples=5, random_state=0, **KW)
    ref = pgmpy_dp.query(est.model_, ["a"], evidence={"c": "q"})
    assert list(iv.index) == ["x", "y"] and iv.index.name == "a"
    np.testing.assert_allclose(iv.estimate.to_numpy(), ref.values, atol=1e-6)
    assert (iv.lower <= iv.estimate + 1e-12).all() and (iv.estimate <= iv.upper + 1e-12).all()
    assert iv.attrs["bootstrap"].shape == (5, 2) and iv.attrs["interval"] == "response"
    assert set(iv.attrs) == {"level", "n_samples", "interval", "method", "bootstrap", "response", "supported_by", "needs", "model_band"}


def test_joint_queries_inside_and_across_cliques(est):
    iv = pgmpy_dp.query_interval(est, ["b", "a"], n_samples=4, random_state=1, **KW)
    assert iv.index.names == ["b", "a"] and len(iv) == 6
    assert iv.estimate.sum() == pytest.approx(1.0)
    across = pgmpy_dp.query_interval(est, ["a", "c"], n_samples=4, random_state=1, interval="normal", **KW)
    ref = pgmpy_dp.query(est.model_, ["a", "c"])
    np.testing.assert_allclose(across.estimate.to_numpy(), ref.values.ravel(), atol=1e-6)


@pytest.mark.parametrize("kind", ["markov", "bayesian"])
def test_each_band_is_the_normal_band_of_the_refits_widened_by_the_response_factor(kind, est):
    """The frame's bands from the refits drawn by simulate with the query's seed; the response band's second level
    is one refit per refit, every one from the seed derived from the query's (common random numbers)."""
    fit = est if kind == "markov" else bn_fitted(3, n=3000)
    variable, evidence = ("a", {"c": "q"}) if kind == "markov" else ("a", {"b": "v"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        normal = pgmpy_dp.query_interval(fit, variable, evidence, n_samples=6, random_state=5, interval="normal", **KW)
        response = pgmpy_dp.query_interval(fit, variable, evidence, n_samples=6, random_state=5, **KW)
        view = fit_view(fit)
        answer = interval_module._answerer(view, [variable], evidence)
        first = refits(view, 6, 5)
        second = [refits(view, 1, np.random.default_rng(interval_module._common_seed(5)), theta=t)[0] for t in first]
    answers = np.array([answer(t) for t in first])
    np.testing.assert_array_equal(normal.attrs["bootstrap"], answers)
    np.testing.assert_array_equal(response.attrs["bootstrap"], answers)
    estimate = normal.estimate.to_numpy()
    np.testing.assert_array_equal(np.transpose(normal_band(estimate, answers, 0.95)), normal[["lower", "upper"]])
    factor, slope = response_factor(answers, [answer(t) for t in second])
    assert response.attrs["response"] == {"factor": factor, "slope": slope} and "response" not in normal.attrs
    np.testing.assert_array_equal(np.transpose(normal_band(estimate, answers, 0.95, factor)),
                                  response[["lower", "upper"]])
    assert (response.lower <= normal.lower + 1e-12).all() and (response.upper >= normal.upper - 1e-12).all()


def test_the_same_seed_gives_the_same_frame_and_another_seed_another(est):
    kw = dict(n_samples=4, interval="normal", **KW)
    a = pgmpy_dp.query_interval(est, "c", random_state=7, **kw)
    b = pgmpy_dp.query_interval(copy.deepcopy(est), "c", random_state=7, **kw)  # a copy: nothing kept
    pd.testing.assert_frame_equal(a, b)
    np.testing.assert_array_equal(a.attrs["bootstrap"], b.attrs["bootstrap"])
    c = pgmpy_dp.query_interval(est, "c", random_state=8, **kw)
    assert not np.array_equal(a.attrs["bootstrap"], c.attrs["bootstrap"])


def test_refits_are_kept_per_fit_and_seed_outside_the_estimator():
    """Later queries of one fit with the same seed reuse its refits; a new fit or a Generator does not; the
    estimator's own state stays its fitted attributes."""
    est = fitted(seed=5)
    state = set(vars(est))
    a = pgmpy_dp.query_interval(est, "a", n_samples=4, random_state=3, interval="normal", **KW)
    kept = interval_module._KEPT[id(est)][2]
    assert list(kept) == [("refits", 4, 3)]
    first = kept[("refits", 4, 3)]
    pgmpy_dp.query_interval(est, "c", {"a": "x"}, n_samples=4, random_state=3, **KW)
    assert kept[("refits", 4, 3)] is first and list(kept) == [("refits", 4, 3), ("response", 4, 3)]
    pgmpy_dp.query_interval(est, "a", n_samples=4, random_state=np.random.default_rng(0), **KW)
    assert len(kept) == 2
    assert set(vars(est)) == state
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(DiscreteMarkovNetwork(CHAIN), est.releases_)
    again = pgmpy_dp.query_interval(est, "a", n_samples=4, random_state=3, interval="normal", **KW)
    renewed = interval_module._KEPT[id(est)][2]
    assert list(renewed) == [("refits", 4, 3)] and renewed[("refits", 4, 3)] is not first
    np.testing.assert_array_equal(a.attrs["bootstrap"], again.attrs["bootstrap"])  # the same fit, made again
    ident = id(est)
    del est
    gc.collect()
    assert ident not in interval_module._KEPT


def test_gaussian_release():
    est = fitted(rho=0.5, seed=2)
    for band in ("normal", "response"):
        iv = pgmpy_dp.query_interval(est, "b", {"a": "y"}, n_samples=10, random_state=0, interval=band, **KW)
        assert ((0 <= iv.lower) & (iv.lower < iv.upper) & (iv.upper <= 1)).all()


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(variables="zz"), "zz"),
        (dict(variables=[]), "at least one"),
        (dict(variables=["a", "a"]), "twice"),
        (dict(variables="a", evidence={"a": "x"}), "both queried and observed"),
        (dict(variables="a", evidence={"c": "nope"}), "not a state of c"),
        (dict(variables="a", level=1.0), "level"),
        (dict(variables="a", level=float("nan")), "level"),
        (dict(variables="a", n_samples=1), "n_samples"),
        (dict(variables="a", n_samples=2.0), "n_samples"),
        (dict(variables="a", interval="ratio"), "interval must be one of"),
    ],
)
def test_bad_queries_are_refused_clearly(est, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pgmpy_dp.query_interval(est, **kwargs)


@pytest.mark.parametrize("n_jobs", [0, -2, 1.5, True, "2"])
def test_bad_n_jobs_is_refused_naming_the_parameter(est, n_jobs):
    with pytest.raises(ValueError, match="n_jobs must be a positive integer or -1"):
        pgmpy_dp.query_interval(est, "a", n_samples=2, random_state=0, n_jobs=n_jobs)


def test_unfitted_and_unsupported_estimators():
    with pytest.raises(ValueError, match="not fitted"):
        pgmpy_dp.query_interval(pgmpy_dp.PrivateMarkovEstimator(), "a")
    with pytest.raises(ValueError, match="not fitted"):
        pgmpy_dp.query_interval(pgmpy_dp.DiscretePrivateMLE(epsilon=1.0), "a")
    with pytest.raises(TypeError, match="DiscretePrivateMLE"):
        pgmpy_dp.query_interval(object(), "a")


def test_bayesian_estimate_and_joint_queries_match_pgmpy():
    est = bn_fitted(0)
    iv = pgmpy_dp.query_interval(est, "a", evidence={"b": "v"}, n_samples=5, random_state=0, **KW)
    assert list(iv.index) == ["x", "y"]
    np.testing.assert_allclose(iv.estimate.to_numpy(), pgmpy_dp.query(bn_model(est), ["a"], evidence={"b": "v"}).values,
                               atol=1e-12)
    joint = pgmpy_dp.query_interval(est, ["b", "a"], n_samples=3, random_state=0, **KW)
    assert joint.index.names == ["b", "a"] and joint.estimate.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="not a state of b"):
        pgmpy_dp.query_interval(est, "a", evidence={"b": "zz"})


def test_bayesian_joint_query_over_variables_in_no_common_family():
    from pgmpy.models import DiscreteBayesianNetwork

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 2, 3000)})
    df["b"] = (df.a + (rng.random(3000) < 0.2)) % 2
    df["c"] = np.where(rng.random(3000) < 0.7, df.b, 1 - df.b)
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, random_state=0, domain={v: [0, 1] for v in "abc"})
    DiscreteBayesianNetwork([("a", "b"), ("b", "c")]).fit(df, estimator=est)
    iv = pgmpy_dp.query_interval(est, ["a", "c"], {"b": 1}, n_samples=4, random_state=0, **KW)
    ref = pgmpy_dp.query(bn_model(est), ["a", "c"], evidence={"b": 1})
    np.testing.assert_allclose(iv.estimate.to_numpy(), np.transpose(ref.values, [ref.variables.index(v) for v in "ac"])
                               .ravel(), atol=1e-10)
    assert iv.attrs["bootstrap"].shape == (4, 4)
    np.testing.assert_allclose(iv.attrs["bootstrap"].sum(axis=1), 1.0)


@pytest.mark.parametrize("kind", ["markov", "bayesian"])
def test_worker_processes_give_the_same_bands(kind):
    """n_jobs > 1 runs both levels' fits in workers; their draws stay in this process."""
    est = fitted(n=500, method="cgm-em") if kind == "markov" else bn_fitted(8, n=3000)
    # seeds at which the 4 refits measure a slope below 1 (so the second level moves the band)
    kwargs = dict(n_samples=4, random_state=7 if kind == "markov" else 6, **KW)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        one = pgmpy_dp.query_interval(est, "a", **kwargs)
        two = pgmpy_dp.query_interval(copy.deepcopy(est), "a", n_jobs=2, **kwargs)
    pd.testing.assert_frame_equal(one, two)
    assert one.attrs["response"] == two.attrs["response"]
    assert one.attrs["response"]["factor"] > 1.0  # the second level did move the band: the check can fail


@pytest.fixture(scope="module")
def loopy_est():
    rng = np.random.default_rng(3)
    codes = JunctionTree(DOMAIN, CHAIN).sample(truth_theta(), 500, random_state=rng)
    release = release_from_codes(codes, DOMAIN, CHAIN, 1.0, random_state=rng)
    est = pgmpy_dp.PrivateMarkovEstimator(show_progress=False, max_iter=2, inference="loopy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(DiscreteMarkovNetwork(CHAIN), release)
    return est


def test_loopy_fits_refuse_worker_processes_and_queries_across_cliques(loopy_est):
    with pytest.raises(ValueError, match="n_jobs > 1 needs junction-tree inference"):
        pgmpy_dp.query_interval(loopy_est, "a", n_samples=2, random_state=0, n_jobs=2)
    with pytest.raises(ValueError, match="no model clique"):
        pgmpy_dp.query_interval(loopy_est, ["a", "c"], n_samples=2, random_state=0)


@pytest.mark.slow
def test_loopy_fits_are_refitted_on_per_table_draws(loopy_est):
    """Loopy inference cannot sample records: each table is drawn from its own multinomial (10 s for 2 refits)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        iv = pgmpy_dp.query_interval(loopy_est, "a", {"c": "q"}, n_samples=2, random_state=0, interval="normal", **KW)
    np.testing.assert_allclose(iv.estimate, pgmpy_dp.query(loopy_est.model_, ["a"], evidence={"c": "q"}).values,
                               atol=0.02)
    assert (iv.lower <= iv.upper).all() and iv.attrs["bootstrap"][:, 0].std() > 0
