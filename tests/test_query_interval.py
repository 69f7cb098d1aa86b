"""Bootstrap intervals on fitted private Markov-network queries (issue 14, item 2)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.tables import release_from_codes
from pgmpy_dp.uncertainty import bootstrap_log_potentials

CHAIN = [("a", "b"), ("b", "c")]
DOMAIN = Domain({"a": ["x", "y"], "b": ["u", "v", "w"], "c": ["p", "q"]})


def truth_theta():
    rng = np.random.default_rng(3)
    return [np.log(rng.dirichlet(np.ones(DOMAIN.size(a) * DOMAIN.size(b))).reshape(DOMAIN.shape((a, b))))
            for a, b in CHAIN]


def fitted(n=2000, eps=1.0, seed=0, method="naive-mle", rho=None):
    rng = np.random.default_rng(seed)
    jt = JunctionTree(DOMAIN, CHAIN)
    codes = jt.sample(truth_theta(), n, random_state=rng)
    release = release_from_codes(codes, DOMAIN, CHAIN, eps if rho is None else None, rho=rho, random_state=rng)
    est = pgmpy_dp.PrivateMarkovEstimator(method=method, show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(DiscreteMarkovNetwork(CHAIN), release)
    return est


def fitted_bn(n=800, epsilon=0.5):
    """A DiscretePrivateMLE fitted to ``n`` records of a two-node network a -> b (a ~ 30% x; b flips a 20% of the time)."""
    from pgmpy.models import DiscreteBayesianNetwork

    rng = np.random.default_rng(0)
    a = rng.random(n) < 0.3
    df = pd.DataFrame({"a": np.where(a, "x", "y"), "b": np.where(a ^ (rng.random(n) < 0.2), "u", "v")})
    df = df.astype({"a": pd.CategoricalDtype(["x", "y"]), "b": pd.CategoricalDtype(["u", "v"])})
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=epsilon, random_state=0)
    DiscreteBayesianNetwork([("a", "b")]).fit(df, estimator=est)
    return est


def counting_refits(monkeypatch) -> list:
    """Count the Markov-network refit sets drawn (calls of ``uncertainty._simulated_releases``) into the returned list."""
    from pgmpy_dp import uncertainty

    calls, real = [], uncertainty._simulated_releases
    monkeypatch.setattr(uncertainty, "_simulated_releases", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def true_answer(variable, evidence):
    from pgmpy_dp.uncertainty import _answerer

    return _answerer(DOMAIN, CHAIN, "junction-tree", [variable], evidence)(truth_theta()).ravel()


@pytest.fixture(scope="module")
def est():
    return fitted(method="cgm-em")


def test_estimate_is_the_fitted_models_answer(est):
    iv = pgmpy_dp.query_interval(est, "a", evidence={"c": "q"}, n_samples=5, random_state=0)
    ref = pgmpy_dp.query(est.model_, ["a"], evidence={"c": "q"})
    assert list(iv.index) == ["x", "y"] and iv.index.name == "a"
    assert np.allclose(iv.estimate.to_numpy(), ref.values, atol=1e-6)
    assert (iv.lower <= iv.estimate + 1e-12).all() and (iv.estimate <= iv.upper + 1e-12).all()
    assert iv.attrs["bootstrap"].shape == (5, 2)


def test_joint_query_inside_a_clique_has_a_multiindex(est):
    iv = pgmpy_dp.query_interval(est, ["b", "a"], n_samples=4, random_state=1)
    assert iv.index.names == ["b", "a"] and len(iv) == 6
    assert iv.estimate.sum() == pytest.approx(1.0)


def test_refits_are_reusable_and_seeded(est):
    refits = bootstrap_log_potentials(est, 6, random_state=7, show_progress=False)
    a = pgmpy_dp.query_interval(est, "c", refits=refits)
    b = pgmpy_dp.query_interval(est, "c", n_samples=6, random_state=7)
    pd.testing.assert_frame_equal(a, b)


def test_coverage_of_the_true_models_answer_and_width():
    """Seeded repetitions: the 90% bands cover the TRUE conditional at about the nominal rate.

    Binary answer, so one hit per repetition; 40 repetitions, binomial(40, 0.9) has sd 1.9:
    we require at least 0.9 * 40 - 3 sd hits, and the bands must not be too wide either
    (mean width within a factor 1.6 of the one implied by the estimates' spread).
    """
    truth = true_answer("a", {"c": "q"})
    check_coverage(truth[0], [fitted(n=1000, eps=0.5, seed=100 + seed) for seed in range(40)], n_samples=40)


def check_coverage(truth, estimators, n_samples):
    """Hits of the 90% band for P(a = first state | evidence) >= 0.9 R - 3 sd, width near the spread."""
    hits, widths, estimates = 0, [], []
    evidence = {"c": "q"} if isinstance(estimators[0], pgmpy_dp.PrivateMarkovEstimator) else {"b": "v"}
    for seed, est in enumerate(estimators):
        iv = pgmpy_dp.query_interval(est, "a", evidence, level=0.9, n_samples=n_samples, random_state=seed)
        hits += bool(iv.lower.iloc[0] <= truth <= iv.upper.iloc[0])
        widths.append(iv.upper.iloc[0] - iv.lower.iloc[0])
        estimates.append(iv.estimate.iloc[0])
    r = len(estimators)
    assert hits >= 0.9 * r - 3 * np.sqrt(r * 0.09), hits
    implied = 2 * 1.645 * np.std(estimates)
    assert implied / 1.6 <= np.mean(widths) <= implied * 1.6, (np.mean(widths), implied)


def test_noise_only_bands_are_narrower_than_sampling_plus_noise():
    est = fitted(n=1000, eps=5.0, seed=1)
    full = pgmpy_dp.query_interval(est, "b", n_samples=30, random_state=0)
    noise = pgmpy_dp.query_interval(est, "b", n_samples=30, random_state=0, sampling=False)
    assert (noise.upper - noise.lower).mean() < 0.5 * (full.upper - full.lower).mean()


def test_gaussian_release_and_basic_interval():
    est = fitted(rho=0.5, seed=2)
    iv = pgmpy_dp.query_interval(est, "b", {"a": "y"}, n_samples=10, random_state=0, interval="basic")
    assert iv.attrs["interval"] == "basic"
    assert ((iv.lower >= 0) & (iv.upper <= 1)).all()


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(variables="zz"), "zz"),
        (dict(variables="a", evidence={"a": "x"}), "both queried and observed"),
        (dict(variables="a", evidence={"c": "nope"}), "not a state of c"),
        (dict(variables=["a", "c"]), "no clique"),
        (dict(variables="a", level=1.0), "level"),
        (dict(variables="a", level=float("nan")), "level"),
        (dict(variables="a", n_samples=1), "n_samples"),
        (dict(variables="a", interval="bca"), "interval"),
    ],
)
def test_bad_queries_are_refused_clearly(est, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pgmpy_dp.query_interval(est, **kwargs)


def test_unfitted_and_unsupported_estimators():
    with pytest.raises(ValueError, match="not fitted"):
        pgmpy_dp.query_interval(pgmpy_dp.PrivateMarkovEstimator(), "a")
    with pytest.raises(ValueError, match="not fitted"):
        pgmpy_dp.query_interval(pgmpy_dp.DiscretePrivateMLE(epsilon=1.0), "a")
    with pytest.raises(TypeError, match="DiscretePrivateMLE"):
        pgmpy_dp.query_interval(object(), "a")


# -- Bayesian networks -------------------------------------------------------------------------


def bn_truth():
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    bn = DiscreteBayesianNetwork([("a", "b")])
    bn.add_cpds(
        TabularCPD("a", 2, [[0.3], [0.7]], state_names={"a": ["x", "y"]}),
        TabularCPD("b", 2, [[0.8, 0.25], [0.2, 0.75]], evidence=["a"], evidence_card=[2],
                   state_names={"b": ["u", "v"], "a": ["x", "y"]}),
    )
    return bn


def bn_fitted(seed, n=1000, eps=1.0):
    from pgmpy.models import DiscreteBayesianNetwork

    from pgmpy_dp.datasets import sample_network

    df = sample_network(bn_truth(), n, seed=seed)
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=eps, random_state=seed)
    DiscreteBayesianNetwork([("a", "b")]).fit(df, estimator=est)
    return est


def test_bayesian_estimate_and_errors():
    from pgmpy.models import DiscreteBayesianNetwork

    est = bn_fitted(0)
    iv = pgmpy_dp.query_interval(est, "a", evidence={"b": "v"}, n_samples=5, random_state=0)
    model = DiscreteBayesianNetwork([("a", "b")])
    model.add_cpds(*est.parameters_)
    ref = pgmpy_dp.query(model, ["a"], evidence={"b": "v"})
    assert list(iv.index) == ["x", "y"]
    assert np.allclose(iv.estimate.to_numpy(), ref.values)
    joint = pgmpy_dp.query_interval(est, ["b", "a"], n_samples=3, random_state=0)
    assert joint.index.names == ["b", "a"] and joint.estimate.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="sampling=False"):
        pgmpy_dp.query_interval(est, "a", sampling=False)
    with pytest.raises(ValueError, match="not a state of b"):
        pgmpy_dp.query_interval(est, "a", evidence={"b": "zz"})


def test_bayesian_coverage_of_the_true_answer():
    """30 seeded repetitions of the 90% band for P(a | b=v): binomial(30, 0.9) sd 1.64, >= 27 - 3 sd hits."""
    truth = pgmpy_dp.query(bn_truth(), ["a"], evidence={"b": "v"}).values
    check_coverage(truth[0], [bn_fitted(200 + seed) for seed in range(30)], n_samples=30)


def test_intervals_guide_runs_quietly(tmp_path):
    from pathlib import Path

    from test_examples import python_blocks, run_script

    result = run_script(python_blocks(Path(__file__).resolve().parents[1] / "docs" / "intervals.md"), tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", f"docs/intervals.md printed warnings or progress bars:\n{result.stderr}"
    assert "exact coverage of each cell interval" in result.stdout and "upper" in result.stdout


def test_refits_are_kept_per_fit_and_seed():
    """Later queries of one fit with the same seed reuse the refits; a new fit or a Generator does not."""
    est = fitted(seed=5)
    a = pgmpy_dp.query_interval(est, "a", n_samples=4, random_state=3)
    b = pgmpy_dp.query_interval(est, "c", {"a": "x"}, n_samples=4, random_state=3)
    again = pgmpy_dp.query_interval(est, "a", n_samples=4, random_state=3)
    assert again.attrs["bootstrap"] is a.attrs["bootstrap"] or np.array_equal(again.attrs["bootstrap"], a.attrs["bootstrap"])
    store = est.__dict__["_bootstrap_refits"]
    assert store[0] is est.log_potentials_ and list(store[1]) == [(4, True, "fit", "warm", 3)]
    assert b.attrs["n_samples"] == 4
    other = pgmpy_dp.query_interval(est, "a", n_samples=4, random_state=4)
    assert not np.array_equal(other.attrs["bootstrap"], a.attrs["bootstrap"])
    g1 = pgmpy_dp.query_interval(est, "a", n_samples=4, random_state=np.random.default_rng(0))
    assert len(est.__dict__["_bootstrap_refits"][1]) == 2  # seeds 3 and 4; the Generator's refits are not kept
    assert g1.attrs["bootstrap"].shape == (4, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(DiscreteMarkovNetwork(CHAIN), est.releases_)
    pgmpy_dp.query_interval(est, "a", n_samples=4, random_state=3)
    assert est.__dict__["_bootstrap_refits"][0] is est.log_potentials_
    assert len(est.__dict__["_bootstrap_refits"][1]) == 1


def test_bayesian_refits_are_kept_for_the_next_query():
    est = bn_fitted(7)
    a = pgmpy_dp.query_interval(est, "a", n_samples=3, random_state=1)
    b = pgmpy_dp.query_interval(est, "b", {"a": "y"}, n_samples=3, random_state=1)
    store = est.__dict__["_bootstrap_refits"]
    assert store[0] is est.parameters_ and list(store[1]) == [(3, True, 1)]
    assert a.attrs["bootstrap"].shape == (3, 2) and b.attrs["bootstrap"].shape == (3, 2)


def test_bayesian_fit_from_releases_is_bootstrapped_from_its_tables():
    """A DiscretePrivateMLE fitted from two releases: refits re-release the same tables at their own scales."""
    from pgmpy.models import DiscreteBayesianNetwork

    from pgmpy_dp.datasets import sample_network

    df = sample_network(bn_truth(), 2000, seed=3)
    r1 = df.dp.release([("b", "a")], epsilon=0.5, random_state=1)
    r2 = df.dp.release(["a"], epsilon=1.0, random_state=2)
    est = pgmpy_dp.DiscretePrivateMLE().fit_release(DiscreteBayesianNetwork([("a", "b")]), [r1, r2])
    iv = pgmpy_dp.query_interval(est, "a", {"b": "v"}, n_samples=12, random_state=0, show_progress=False)
    assert np.allclose(iv.estimate.sum(), 1.0) and iv.attrs["bootstrap"].shape == (12, 2)
    assert ((iv.lower < iv.upper) & (iv.lower > 0) & (iv.upper < 1)).all()
    # the refits move: the bands reflect the noise of the two releases, not a degenerate copy of the fit
    assert iv.attrs["bootstrap"][:, 0].std() > 1e-3


def test_bayesian_refits_answer_joint_queries_across_families_like_pgmpy():
    """The engine answers the refits: at the fit itself it gives pgmpy's answer, also for variables in no common family."""
    from pgmpy.models import DiscreteBayesianNetwork

    from pgmpy_dp.uncertainty import _answerer, _bn_families

    model = DiscreteBayesianNetwork([("a", "b"), ("b", "c")])
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 2, 3000)})
    df["b"] = (df.a + (rng.random(3000) < 0.2)) % 2
    df["c"] = np.where(rng.random(3000) < 0.7, df.b, 1 - df.b)
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, random_state=0, domain={v: [0, 1] for v in "abc"}).fit(model, df)
    iv = pgmpy_dp.query_interval(est, ["a", "c"], {"b": 1}, n_samples=4, random_state=0, show_progress=False)
    families, theta = _bn_families(est)
    domain = Domain(dict(est.state_names_))
    answer = _answerer(domain, families + [("a", "c")], "junction-tree", ["a", "c"], {"b": 1})
    np.testing.assert_allclose(answer(theta + [np.zeros((2, 2))]).ravel(), iv.estimate.to_numpy(), atol=1e-10)
    assert iv.attrs["bootstrap"].shape == (4, 4)
    np.testing.assert_allclose(iv.attrs["bootstrap"].sum(axis=1), 1.0)


def test_bayesian_refits_with_the_projection_leave_the_fit_alone():
    """Another consistency step is run on a bare copy: the fitted estimator's attributes stay as they were."""
    from pgmpy.models import DiscreteBayesianNetwork

    from pgmpy_dp.datasets import sample_network

    df = sample_network(bn_truth(), 1500, seed=4)
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, consistency="projection", random_state=4)
    DiscreteBayesianNetwork([("a", "b")]).fit(df, estimator=est)
    before = (est.n_iter_, est.converged_, [c.get_values().copy() for c in est.parameters_])
    iv = pgmpy_dp.query_interval(est, "b", {"a": "x"}, n_samples=8, random_state=0, show_progress=False)
    assert (est.n_iter_, est.converged_) == before[:2]
    assert all(np.array_equal(c.get_values(), v) for c, v in zip(est.parameters_, before[2]))
    assert iv.attrs["bootstrap"][:, 0].std() > 1e-3 and (iv.lower <= iv.upper).all()


@pytest.mark.parametrize("prior_weight, cpd_prior", [("global", "gaussian"), ("per-clique", "auto"),
                                                     ("global", "dirichlet"), ("global", "auto")])
def test_bayesian_refits_fit_with_the_estimators_prior(prior_weight, cpd_prior, monkeypatch):
    """The refits re-run the estimator's own likelihood fit, its prior weighting and CPD prior included."""
    from pgmpy.models import DiscreteBayesianNetwork

    from pgmpy_dp.datasets import sample_network
    from pgmpy_dp.estimators.bayesian import DiscretePrivateMLE

    df = sample_network(bn_truth(), 1000, seed=2)
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, random_state=2, prior_weight=prior_weight, cpd_prior=cpd_prior)
    DiscreteBayesianNetwork([("a", "b")]).fit(df, estimator=est)
    seen = []
    original = DiscretePrivateMLE._likelihood_tables

    def spy(self, *args, **kwargs):
        tables = original(self, *args, **kwargs)
        seen.append((self.prior_weight, self.cpd_prior_))
        return tables

    monkeypatch.setattr(DiscretePrivateMLE, "_likelihood_tables", spy)
    pgmpy_dp.query_interval(est, "a", n_samples=2, random_state=0, show_progress=False)
    assert seen == [(prior_weight, est.cpd_prior_)] * 2
    assert est.cpd_prior_ == ("gaussian" if cpd_prior == "gaussian" or prior_weight != "global" else "dirichlet")


@pytest.mark.parametrize("warm_start, warm_prior", [("reconciled", "naive"), ("noisy", "naive"), ("reconciled", "em")])
def test_warm_refits_use_the_estimators_own_warm_start_and_prior(warm_start, warm_prior, monkeypatch):
    """refit="warm" re-runs the fit's own first stage (its warm-start targets and weight) and EM's weight."""
    import pgmpy_dp.estimators.markov as markov_module
    import pgmpy_dp.uncertainty as uncertainty
    from pgmpy_dp.engine import max_disagreement

    monkeypatch.setattr(markov_module, "_WARM_PRIOR", warm_prior)
    rng = np.random.default_rng(11)
    codes = JunctionTree(DOMAIN, CHAIN).sample(truth_theta(), 1500, random_state=rng)
    release = release_from_codes(codes, DOMAIN, CHAIN, 0.3, random_state=rng)
    est = pgmpy_dp.PrivateMarkovEstimator(show_progress=False, max_iter=3, warm_start=warm_start)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(DiscreteMarkovNetwork(CHAIN), release)
    seen = {"naive": [], "em": []}
    fit, em = uncertainty.fit_log_potentials, uncertainty.cgm_em

    def fit_spy(engine, targets, regularization, *a, **k):
        seen["naive"].append(([np.array(t) for t in targets], regularization))
        return fit(engine, targets, regularization, *a, **k)

    def em_spy(engine, measurements, n, regularization, *a, **k):
        seen["em"].append(regularization)
        return em(engine, measurements, n, regularization, *a, **k)

    monkeypatch.setattr(uncertainty, "fit_log_potentials", fit_spy)
    monkeypatch.setattr(uncertainty, "cgm_em", em_spy)
    bootstrap_log_potentials(est, 3, random_state=0, show_progress=False)
    reg, n = est.regularization_, est.n_records_
    assert len(seen["naive"]) == len(seen["em"]) == 3
    # the weights are the fit's own: warm start (naive MLE's, or EM's under _WARM_PRIOR="em") and EM's
    assert reg["warm-start"] == (reg["cgm-em"] if warm_prior == "em" else reg["naive-mle"])
    assert reg["warm-start"] != pytest.approx(reg["cgm-em"] if warm_prior == "naive" else reg["naive-mle"])
    for targets, lam in seen["naive"]:
        assert lam == pytest.approx(reg["warm-start"] / n, rel=1e-12)
        # reconciled targets agree on b; each noisy table projected on its own does not
        assert (max_disagreement(est.cliques_, targets) < 1e-10) == (warm_start == "reconciled")
    assert all(lam == pytest.approx(reg["cgm-em"] / n, rel=1e-12) for lam in seen["em"])


@pytest.mark.parametrize("accelerate", ["anderson", None])
def test_refits_use_the_fits_own_em_accelerator(accelerate, monkeypatch):
    """The warm refits (and the prior-free generator) run CGM-EM with the accelerator the fit used."""
    import pgmpy_dp.uncertainty as uncertainty
    from pgmpy_dp.uncertainty import prior_free_log_potentials

    est = fitted(method="cgm-em")
    est.accelerate = accelerate  # as if fitted with it: only the refits read it from here on
    seen = []
    real = uncertainty.cgm_em

    def recording(*args, **kwargs):
        seen.append(kwargs.get("accelerate", "missing"))
        return real(*args, **kwargs)

    monkeypatch.setattr(uncertainty, "cgm_em", recording)
    pgmpy_dp.query_interval(est, "a", n_samples=2, random_state=1)
    prior_free_log_potentials(est)
    assert seen and set(seen) == {accelerate}


def test_bayesian_refits_can_be_drawn_from_another_network():
    """``generator=``: the fit's own log-CPDs reproduce the default refits; a flat network gives other refits."""
    from pgmpy_dp.uncertainty import _bayesian_refits, _bn_families

    est = bn_fitted(5)
    _, theta = _bn_families(est)
    own = _bayesian_refits(est, 3, 11, False)
    same = _bayesian_refits(est, 3, 11, False, generator=theta)
    assert all(np.array_equal(x, y) for a, b in zip(own, same) for x, y in zip(a, b))
    flat = _bayesian_refits(est, 3, 11, False, generator=[np.full_like(t, -np.log(t.shape[0])) for t in theta])
    assert max(np.abs(x - y).max() for a, b in zip(own, flat) for x, y in zip(a, b)) > 0.05


def test_bayesian_refits_in_worker_processes_are_the_same_refits():
    """n_jobs > 1 runs only the fits in workers; the tables are drawn in one stream, so nothing changes."""
    est = bn_fitted(8)
    one = pgmpy_dp.query_interval(est, "b", {"a": "x"}, n_samples=4, random_state=2, show_progress=False)
    est.__dict__.pop("_bootstrap_refits")  # make the second call refit instead of reusing the kept refits
    two = pgmpy_dp.query_interval(est, "b", {"a": "x"}, n_samples=4, random_state=2, show_progress=False, n_jobs=2)
    assert np.array_equal(one.attrs["bootstrap"], two.attrs["bootstrap"])
    pd.testing.assert_frame_equal(one, two)
    assert one.attrs["bootstrap"][:, 0].std() > 0  # the refits do differ from one another: the check can fail


@pytest.mark.parametrize("n_jobs", [0, -2, 1.5, True, "2"])
def test_bad_n_jobs_is_rejected_naming_the_parameter(n_jobs):
    with pytest.raises(ValueError, match="n_jobs must be a positive integer or -1"):
        pgmpy_dp.query_interval(bn_fitted(8), "a", n_samples=2, random_state=0, n_jobs=n_jobs)


@pytest.mark.parametrize("refit", ["warm", "estimator"])
def test_markov_refits_in_worker_processes_are_the_same_refits(refit):
    est = fitted(n=800, method="cgm-em")
    one = bootstrap_log_potentials(est, 3, random_state=4, show_progress=False, refit=refit)
    two = bootstrap_log_potentials(est, 3, random_state=4, show_progress=False, refit=refit, n_jobs=2)
    assert all(np.array_equal(x, y) for a, b in zip(one, two) for x, y in zip(a, b))
    assert max(np.abs(x - y).max() for x, y in zip(one[0], one[1])) > 1e-3  # distinct refits: the check can fail


def test_loopy_markov_refits_refuse_worker_processes():
    rng = np.random.default_rng(3)
    codes = JunctionTree(DOMAIN, CHAIN).sample(truth_theta(), 500, random_state=rng)
    release = release_from_codes(codes, DOMAIN, CHAIN, 1.0, random_state=rng)
    est = pgmpy_dp.PrivateMarkovEstimator(show_progress=False, max_iter=2, inference="loopy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(DiscreteMarkovNetwork(CHAIN), release)
    with pytest.raises(ValueError, match="n_jobs > 1 needs junction-tree inference"):
        pgmpy_dp.query_interval(est, "a", n_samples=2, random_state=0, n_jobs=2)
