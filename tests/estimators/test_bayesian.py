import warnings

import numpy as np
import pandas as pd
import pytest
from pgmpy.base import DAG
from pgmpy.inference import BeliefPropagation, VariableElimination
from pgmpy.models import DiscreteBayesianNetwork
from pgmpy.parameter_estimator import DiscreteMLE

import pgmpy_dp
from pgmpy_dp import BudgetExceededError, DiscretePrivateMLE, DomainError, PrivacyBudget
from pgmpy_dp.datasets import load_network, sample_network
from pgmpy_dp.estimators.likelihood import DEFAULT_MAX_ITER

warnings.filterwarnings("ignore", category=FutureWarning)


@pytest.fixture(scope="module")
def asia():
    net = load_network("asia")
    return net, sample_network(net, 5000, seed=11)


def _model(net):
    m = DiscreteBayesianNetwork(net.edges())
    m.add_nodes_from(net.nodes())
    return m


# pgmpy's BeliefPropagation divides 0 by 0 when calibrating CPDs with exact zeros (as the
# non-private MLE has too); the answers are still correct, which the test checks against VE
@pytest.mark.filterwarnings("ignore:invalid value encountered in divide:RuntimeWarning")
@pytest.mark.parametrize("allocation", ["optimal", "data-dependent", "uniform"])
@pytest.mark.parametrize("consistency", ["likelihood", "projection"])
def test_fit_gives_a_valid_model_that_pgmpy_queries(asia, allocation, consistency):
    net, df = asia
    est = DiscretePrivateMLE(epsilon=1.0, allocation=allocation, consistency=consistency, random_state=0)
    model = _model(net).fit(df, estimator=est)
    assert model.check_model()
    for cpd in model.get_cpds():
        np.testing.assert_allclose(cpd.get_values().sum(axis=0), 1.0, atol=1e-9)
        assert np.all(cpd.get_values() >= 0)
        assert cpd.state_names[cpd.variable] == list(df[cpd.variable].cat.categories)
    ve, bp = VariableElimination(model), BeliefPropagation(model)
    a = ve.query(["lung"], evidence={"smoke": "yes"}, show_progress=False)
    b = bp.query(["lung"], evidence={"smoke": "yes"}, show_progress=False)
    np.testing.assert_allclose(a.values, b.values, atol=1e-9)
    assert set(ve.map_query(["lung", "bronc"], evidence={"dysp": "yes"}, show_progress=False)) == {"lung", "bronc"}
    joint = ve.query(["either", "xray"], show_progress=False)
    assert joint.values.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("allocation", ["optimal", "data-dependent", "uniform"])
def test_allocation_sums_to_the_budget_and_matches_the_release(asia, allocation):
    net, df = asia
    est = DiscretePrivateMLE(epsilon=1.7, allocation=allocation, consistency="projection", random_state=1).fit(_model(net), df)
    assert est.allocation_.sum() + est.stage1_epsilon_ == pytest.approx(1.7, rel=1e-12)
    assert list(est.allocation_.index) == list(_model(net).nodes())
    for node, table in zip(est.allocation_.index, est.release_):
        assert table.attrs[0] == node
        assert table.epsilon == est.allocation_[node]
        assert table.scale == pytest.approx(1 / table.epsilon)
    if allocation == "uniform":
        assert est.stage1_release_ is None
        np.testing.assert_allclose(est.allocation_, 1.7 / 8)
    elif allocation == "optimal":
        assert est.stage1_release_ is None and est.stage1_epsilon_ == 0
        cells = np.array([t.values.size for t in est.release_])
        np.testing.assert_array_equal(est.node_stats_["cells"], cells)
        np.testing.assert_allclose(est.allocation_ / np.sqrt(cells), est.allocation_.iloc[0] / np.sqrt(cells[0]))
    else:
        assert est.stage1_epsilon_ == pytest.approx(0.17)
        # the data-dependent split is not uniform, and follows the weights * errors it reports
        assert est.allocation_.std() > 0
        costs = est.node_stats_["weight"] * est.node_stats_["error"]
        ratio = est.allocation_ / np.sqrt(costs)
        np.testing.assert_allclose(ratio, ratio.iloc[0], rtol=1e-9)


@pytest.mark.parametrize("consistency", ["likelihood", "projection"])
def test_huge_epsilon_recovers_the_non_private_mle(asia, consistency):
    net, df = asia
    est = DiscretePrivateMLE(epsilon=1e9, allocation="uniform", consistency=consistency, random_state=0)
    private = _model(net).fit(df, estimator=est)
    exact = _model(net).fit(df, estimator=DiscreteMLE(state_names=net.states))
    # the likelihood fit stops at the solvers' tolerances (L-BFGS, then CGM-EM): 1e-5 of a probability
    atol = 1e-5 if consistency == "likelihood" else 1e-6
    for node in net.nodes():
        p, q = private.get_cpds(node), exact.get_cpds(node)
        q = q.copy()
        q.reorder_parents(p.variables[1:], inplace=True) if p.variables[1:] else None
        np.testing.assert_allclose(p.get_values(), q.get_values(), atol=atol, err_msg=node)


def test_likelihood_sets_no_cpd_entry_to_zero_where_the_projection_does(asia):
    net, df = asia
    fits = {
        c: DiscretePrivateMLE(epsilon=0.3, consistency=c, random_state=4).fit(_model(net), df)
        for c in ("likelihood", "projection")
    }
    projected_zeros = sum(int(np.sum(c.get_values() == 0)) for c in fits["projection"].parameters_)
    assert projected_zeros > 0  # the noise at epsilon 0.3 makes the projection clip cells to zero ...
    for cpd in fits["likelihood"].parameters_:  # ... the likelihood fit keeps every probability positive
        assert np.all(cpd.get_values() > 0), cpd.variable
    assert fits["likelihood"].n_iter_ >= 1 and fits["projection"].n_iter_ is None


def test_fit_from_releases_is_post_processing_of_the_same_tables(asia):
    net, df = asia
    budget = PrivacyBudget(2.0)
    est = DiscretePrivateMLE(epsilon=1.0, random_state=5, budget=budget).fit(_model(net), df)
    assert budget.spent == pytest.approx(1.0)
    again = DiscretePrivateMLE(budget=budget).fit(_model(net), est.release_)  # pgmpy's fit passes data through
    assert budget.spent == pytest.approx(1.0)  # nothing more is spent
    for a, b in zip(est.parameters_, again.parameters_):
        np.testing.assert_allclose(a.get_values(), b.get_values(), atol=1e-9)
    refit = _model(net).fit(est.release_, estimator=DiscretePrivateMLE())
    assert refit.check_model()


def test_fit_from_several_releases_uses_all_of_them_as_evidence(asia):
    net, df = asia
    model = DiscreteBayesianNetwork([("smoke", "lung"), ("smoke", "bronc")])
    exact = model.copy().fit(df[["smoke", "lung", "bronc"]], estimator=DiscreteMLE(state_names=net.states))
    families = [("smoke",), ("lung", "smoke"), ("bronc", "smoke")]

    def error(releases):
        fitted = DiscretePrivateMLE().fit_release(model, releases)
        return sum(
            float(np.abs(p.get_values() - exact.get_cpds(p.variable).get_values()).sum())
            for p in fitted.parameters_
        )

    # one coarse release, and the same plus nine more precise ones at other epsilons (and a
    # table over a set that is no family): the extra evidence must pull the fit to the truth
    coarse = df.dp.release(families, epsilon=0.1, random_state=0)
    more = [df.dp.release(families + [("lung", "bronc")], epsilon=3.0, random_state=s) for s in range(1, 10)]
    assert error([coarse, *more]) < 0.5 * error(coarse)


def test_fit_from_releases_rejects_what_it_cannot_use(asia):
    net, df = asia
    rel = df.dp.release([("lung", "smoke"), "smoke"], epsilon=1.0, random_state=0)
    model = DiscreteBayesianNetwork([("smoke", "lung"), ("smoke", "bronc")])
    with pytest.raises(DomainError, match=r"model node\(s\) \['bronc'\] are in no release"):
        DiscretePrivateMLE().fit(model, rel)
    small = DiscreteBayesianNetwork([("smoke", "lung")])
    with pytest.raises(ValueError, match="consistency='likelihood'"):
        DiscretePrivateMLE(consistency="projection").fit(small, rel)
    with pytest.raises(TypeError, match="MarginalRelease"):
        DiscretePrivateMLE().fit_release(small, [rel, "x"])
    with pytest.raises(DomainError, match="differ from the release"):
        DiscretePrivateMLE(domain={"smoke": ["no", "yes"]}).fit(small, rel)
    with pytest.raises(TypeError, match="a DiscretePrivateMLE fit from a DataFrame takes exactly one of epsilon= or rho=, got neither"):
        DiscretePrivateMLE().fit(small, df)


def test_domain_as_dict_or_domain_object(asia):
    net, df = asia
    plain = df.astype({"xray": str})
    states = {"xray": list(df["xray"].cat.categories)}
    a = DiscretePrivateMLE(1.0, domain=states, random_state=0).fit(_model(net), plain)
    c = DiscretePrivateMLE(1.0, domain=pgmpy_dp.Domain(states), random_state=0).fit(_model(net), plain)
    for x, z in zip(a.parameters_, c.parameters_):
        np.testing.assert_array_equal(x.get_values(), z.get_values())
    with pytest.raises(TypeError, match="domain must be a dict"):
        DiscretePrivateMLE(1.0, domain=["xray"]).fit(_model(net), plain)


def test_init_stores_its_arguments_so_sklearn_clone_works():
    sklearn_base = pytest.importorskip("sklearn.base")
    budget = pgmpy_dp.PrivacyBudget(epsilon=2.0)
    est = DiscretePrivateMLE(epsilon=1.0, domain={"a": [0, 1]}, allocation="uniform", budget=budget,
                             privacy_unit=pgmpy_dp.UserLevel("user", max_records=2), prior_strength=0.5)
    params = est.get_params()
    assert params["domain"] == {"a": [0, 1]} and params["allocation"] == "uniform" and params["prior_strength"] == 0.5
    twin = sklearn_base.clone(est)
    assert twin is not est and twin.get_params().keys() == params.keys()
    assert twin.domain == est.domain and twin.privacy_unit == pgmpy_dp.UserLevel("user", max_records=2)
    twin.set_params(epsilon=0.5)
    assert twin.epsilon == 0.5 and est.epsilon == 1.0
    # a bad value is stored as given and refused by fit, not by __init__
    bad = DiscretePrivateMLE(epsilon=-1.0, allocation="best")
    assert sklearn_base.clone(bad).allocation == "best"


def test_show_progress_changes_nothing_but_the_display(asia, capsys):
    net, df = asia
    a = DiscretePrivateMLE(1.0, random_state=2, show_progress=True).fit(_model(net), df)
    b = DiscretePrivateMLE(1.0, random_state=2).fit(_model(net), df)
    for x, y in zip(a.parameters_, b.parameters_):
        np.testing.assert_array_equal(x.get_values(), y.get_values())


def test_empty_parent_configuration_gives_a_uniform_row():
    df = pd.DataFrame({"a": ["x"] * 50 + ["y"] * 50, "b": ["u"] * 60 + ["v"] * 40})
    df = df.astype({"a": pd.CategoricalDtype(["x", "y", "z"]), "b": pd.CategoricalDtype(["u", "v"])})
    for consistency in ("likelihood", "projection"):
        model = DiscreteBayesianNetwork([("a", "b")])
        model.fit(df, estimator=DiscretePrivateMLE(1e9, "uniform", consistency=consistency, random_state=0))
        values = model.get_cpds("b").get_values()
        assert not np.isnan(values).any()
        np.testing.assert_allclose(values[:, 2], [0.5, 0.5])  # a = "z" never occurs
        np.testing.assert_allclose(values[:, 0], [1.0, 0.0], atol=1e-6)


def test_domain_declares_states_of_plain_columns():
    df = pd.DataFrame({"a": [0, 1, 1, 0] * 10, "b": ["p", "q", "q", "q"] * 10})
    model = DiscreteBayesianNetwork([("a", "b")])
    est = DiscretePrivateMLE(1.0, domain={"a": [0, 1, 2], "b": ["p", "q"]}, random_state=0)
    model.fit(df, estimator=est)
    assert model.get_cpds("a").state_names["a"] == [0, 1, 2]
    assert est.state_names_ == {"a": [0, 1, 2], "b": ["p", "q"]}


def test_same_seed_same_model_and_fit_accepts_a_dag(asia):
    net, df = asia
    dag = DAG(net.edges())
    a = DiscretePrivateMLE(1.0, random_state=5).fit(dag, df)
    b = DiscretePrivateMLE(1.0, random_state=5).fit(dag, df)
    for p, q in zip(a.parameters_, b.parameters_):
        np.testing.assert_array_equal(p.get_values(), q.get_values())


def test_budget_is_charged_once_and_refunded_on_failure(asia):
    net, df = asia
    budget = PrivacyBudget(2.0)
    DiscretePrivateMLE(1.5, budget=budget).fit(_model(net), df)
    assert budget.spent == pytest.approx(1.5)
    assert [e.epsilon for e in budget.ledger] == [1.5]
    with pytest.raises(BudgetExceededError):
        DiscretePrivateMLE(1.0, budget=budget).fit(_model(net), df)
    bad = df.copy()
    bad["smoke"] = bad["smoke"].astype(str)
    bad.loc[0, "smoke"] = "sometimes"
    with pytest.raises(DomainError):
        DiscretePrivateMLE(0.5, budget=budget, domain={"smoke": ["yes", "no"]}).fit(_model(net), bad)
    assert budget.spent == pytest.approx(1.5)


def test_default_noise_path_is_not_seeded(asia):
    net, df = asia
    est = DiscretePrivateMLE(1.0, allocation="data-dependent").fit(_model(net), df)
    assert est.release_.sampler == "opendp"
    assert est.stage1_release_.sampler == "opendp"


@pytest.mark.parametrize(
    "kwargs, exc, message",
    [
        ({"epsilon": 0}, ValueError, "epsilon must be positive"),
        ({"epsilon": -1}, ValueError, "epsilon must be positive"),
        ({"epsilon": float("nan")}, ValueError, "epsilon must be positive"),
        ({"epsilon": "1"}, TypeError, "epsilon must be a positive finite number"),
        ({"stage1_fraction": 0, "allocation": "data-dependent"}, ValueError, "stage1_fraction must be a number in"),
        ({"stage1_fraction": 1, "allocation": "data-dependent"}, ValueError, "stage1_fraction must be a number in"),
        ({"stage1_fraction": 1.5, "allocation": "data-dependent"}, ValueError, "stage1_fraction must be a number in"),
        ({"sample_rate": 0, "allocation": "data-dependent"}, ValueError, "sample_rate must be a number in"),
        ({"allocation": "greedy"}, ValueError, "allocation must be one of"),
        ({"consistency": "magic"}, ValueError, "consistency must be one of"),
        ({"max_iter": 0}, ValueError, "max_iter must be a positive integer"),
        ({"budget": 1.0}, TypeError, "budget must be a pgmpy_dp.PrivacyBudget"),
    ],
)
def test_bad_parameters(asia, kwargs, exc, message):
    net, df = asia
    with pytest.raises(exc, match=message):
        DiscretePrivateMLE(**{"epsilon": 1.0, **kwargs}).fit(_model(net), df)


def test_bad_models_and_data(asia):
    net, df = asia
    with pytest.raises(DomainError, match=r"model node\(s\) \['lung'\] are not columns"):
        DiscretePrivateMLE(1.0).fit(_model(net), df.drop(columns="lung"))
    latent = DiscreteBayesianNetwork(net.edges(), latents={"lung"})
    with pytest.raises(ValueError, match="latent"):
        DiscretePrivateMLE(1.0).fit(latent, df)
    plain = df.astype({"xray": str})
    with pytest.raises(DomainError, match="column 'xray' has no public domain"):
        DiscretePrivateMLE(1.0).fit(_model(net), plain)
    nan = df.copy()
    nan["asia"] = nan["asia"].astype(object)
    nan.loc[3, "asia"] = np.nan
    with pytest.raises(DomainError, match="column 'asia' has missing value"):
        DiscretePrivateMLE(1.0, domain={"asia": ["yes", "no"]}).fit(_model(net), nan)
    with pytest.raises(ValueError, match="DataFrame is empty"):
        DiscretePrivateMLE(1.0).fit(_model(net), df.iloc[:0])
    with pytest.raises(ValueError, match="sample_weight is not supported"):
        DiscretePrivateMLE(1.0).fit(_model(net), df, sample_weight=np.ones(len(df)))
    with pytest.raises(TypeError, match="model must be a pgmpy DAG"):
        DiscretePrivateMLE(1.0).fit("asia", df)



def test_package_exports():
    assert pgmpy_dp.DiscretePrivateMLE is DiscretePrivateMLE


def test_likelihood_fit_reports_convergence_and_warns_naming_max_iter(asia):
    net, df = asia
    with pytest.warns(pgmpy_dp.engine.ConvergenceWarning, match="max_iter=1 "):
        est = DiscretePrivateMLE(epsilon=1.0, max_iter=1, random_state=0).fit(_model(net), df)
    assert est.n_iter_ == 1 and est.converged_ is False
    with warnings.catch_warnings():
        warnings.simplefilter("error", pgmpy_dp.engine.ConvergenceWarning)
        proj = DiscretePrivateMLE(epsilon=1.0, consistency="projection", random_state=0).fit(_model(net), df)
        # the default budget (max_iter=None: DEFAULT_MAX_ITER iterations) is silent even when it stops short
        default = DiscretePrivateMLE(epsilon=1.0, random_state=0).fit(_model(net), df)
    assert proj.n_iter_ is None and proj.converged_ is None
    assert default.n_iter_ <= DEFAULT_MAX_ITER and isinstance(default.converged_, bool)
    # given enough iterations CGM-EM meets its tolerance, says so and stays silent
    with warnings.catch_warnings():
        warnings.simplefilter("error", pgmpy_dp.engine.ConvergenceWarning)
        done = DiscretePrivateMLE(epsilon=1.0, max_iter=500, random_state=0).fit(_model(net), df)
    assert done.converged_ is True and 1 < done.n_iter_ < 500


@pytest.fixture(scope="module")
def child_benchmark():
    """The first runs of benchmarks/bn_accuracy.py's child cell at N = 1e4, epsilon = 1 (same seeds)."""
    from pgmpy_dp.evaluation.bayesian import answer_queries, random_queries

    net = load_network("child")
    df = sample_network(net, 10_000, seed=1)
    rng = np.random.default_rng(1)
    queries = random_queries(net, df, 10, False, rng) + random_queries(net, df, 10, True, rng)
    return net, df, queries, answer_queries(net, queries, show_progress=False)


@pytest.mark.slow
def test_default_beats_d_ind_on_a_seeded_benchmark(child_benchmark):
    """On child (N = 1e4, epsilon = 1) the 10-run benchmark measured the default's (50 CGM-EM
    iterations) joint KL at 0.16-0.26 of D-Ind's in every run (docs/bayesian.md; 0.16-0.25 with 20)
    and its query L1 lower by 0.0038 on average (per-run sd 0.0031). Three of those runs, same
    seeds: KL below 0.35 of D-Ind's in each run, and query L1 lower on average."""
    from pgmpy_dp.evaluation.bayesian import joint_kl, query_errors

    net, df, queries, truth = child_benchmark
    kl_ratio, query_diff = [], []
    for run in range(3):
        fits = {
            name: _model(net).fit(df, estimator=DiscretePrivateMLE(epsilon=1.0, random_state=1000 + run, **kw))
            for name, kw in (("default", {}), ("D-Ind", {"allocation": "uniform", "consistency": "projection"}))
        }
        kl_ratio.append(joint_kl(net, fits["default"]) / joint_kl(net, fits["D-Ind"]))
        q = {k: query_errors(m, truth, queries, False)["l1"].mean() for k, m in fits.items()}
        query_diff.append(q["default"] - q["D-Ind"])
    assert max(kl_ratio) < 0.35, kl_ratio
    assert np.mean(query_diff) < 0, query_diff
