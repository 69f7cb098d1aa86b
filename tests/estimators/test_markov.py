import warnings

import numpy as np
import pandas as pd
import pytest
from pgmpy.factors.discrete import DiscreteFactor
from pgmpy.inference import BeliefPropagation, VariableElimination
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp
from pgmpy_dp import DomainError, PrivateMarkovEstimator
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree, Measurement, cgm_em, fit_log_potentials
from pgmpy_dp.estimators.markov_fit import naive_tolerance
from pgmpy_dp.evaluation.markov import kl_divergence, kl_divergence_potentials
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.tables import contingency_table, release_marginals

EDGES = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]  # one loop


def true_model(seed=0, k=3):
    rng = np.random.default_rng(seed)
    domain = Domain({v: [f"s{i}" for i in range(k)] for v in "abcd"})
    theta = [np.log(rng.dirichlet(np.ones(k * k)).reshape(k, k)) for _ in EDGES]
    return domain, theta


def sample_frame(n, seed=0, k=3):
    domain, theta = true_model(seed, k)
    codes = JunctionTree(domain, EDGES).sample(theta, n, random_state=seed)
    df = pd.DataFrame({v: pd.Categorical.from_codes(codes[v], categories=domain[v]) for v in domain.attrs})
    return df, domain, theta, codes


def fit(method, data, model=None, **kw):
    opts = dict(method=method, show_progress=False, random_state=kw.pop("random_state", 0))
    opts.update({k: kw.pop(k) for k in list(kw) if k in ("max_iter", "tol", "regularization", "inference")})
    est = PrivateMarkovEstimator(**opts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitted = est.fit(model or DiscreteMarkovNetwork(EDGES), data, **kw).model_
    return est, fitted


def test_fitted_model_is_a_pgmpy_network_that_pgmpy_inference_queries():
    df, domain, _, _ = sample_frame(5000)
    est, fitted = fit("cgm-em", df, epsilon=1.0)
    assert isinstance(fitted, DiscreteMarkovNetwork) and fitted.check_model()
    assert all(isinstance(f, DiscreteFactor) for f in fitted.get_factors())
    assert [tuple(f.scope()) for f in fitted.get_factors()] == est.cliques_
    assert {frozenset(c) for c in est.cliques_} == {frozenset(e) for e in EDGES}
    for f in fitted.get_factors():
        assert np.all(np.isfinite(f.values)) and np.all(f.values > 0)
        assert f.state_names["a" if "a" in f.scope() else "c"] == ["s0", "s1", "s2"]
    bp = BeliefPropagation(fitted).query(["d"], evidence={"a": "s1"}, show_progress=False)
    ve = VariableElimination(fitted).query(["d"], evidence={"a": "s1"}, show_progress=False)
    np.testing.assert_allclose(bp.values, ve.values / ve.values.sum(), atol=1e-10)
    # fitted attributes record what was done
    assert len(est.releases_) == 1 and est.releases_[0].sensitivity == len(EDGES)
    assert est.releases_[0].tables[0].scale == pytest.approx(len(EDGES) / 1.0)
    assert est.inference_ == "junction-tree" and est.n_iter_ >= 1
    assert len(est.log_likelihood_) >= 1 and isinstance(est.converged_, bool)
    assert est.n_records_ == pytest.approx(5000, abs=50)


def test_budget_is_charged_and_random_state_reproduces():
    df, *_ = sample_frame(2000)
    budget = pgmpy_dp.PrivacyBudget(1.0)
    est1, f1 = fit("naive-mle", df, epsilon=0.6, budget=budget, random_state=3)
    assert budget.spent == pytest.approx(0.6)
    est2, f2 = fit("naive-mle", df, epsilon=0.6, random_state=3)
    for a, b in zip(est1.log_potentials_, est2.log_potentials_):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(pgmpy_dp.BudgetExceededError):
        fit("naive-mle", df, epsilon=0.6, budget=budget)


def test_cgm_em_with_huge_epsilon_converges_to_the_non_private_mle():
    n = 20_000
    df, domain, _, codes = sample_frame(n, seed=1)
    lam = 1.0
    exact = [contingency_table(codes, domain, c) for c in EDGES]
    jt = JunctionTree(domain, EDGES)
    mle = fit_log_potentials(jt, exact, regularization=lam / n, tol=1e-10).log_potentials
    # noise scale |C| / eps = 4e-6 counts: the release is the exact table up to rounding
    rel = release_marginals(df, EDGES, epsilon=1e6, random_state=0)
    assert max(float(np.abs(rel[c].values - e).max()) for c, e in zip(EDGES, exact)) == 0
    # the engine's EM from the uniform model (not from the naive warm start) must get there by itself
    meas = [Measurement(t.attrs, t.values, t.scale) for t in rel.tables]
    res = cgm_em(jt, meas, n_records=n, regularization=lam / n, max_iter=300, tol=1e-9, warn=False)
    kl_em = kl_divergence_potentials(domain, EDGES, mle, EDGES, res.log_potentials)
    assert kl_em < 1e-4
    est, fitted = fit("cgm-em", rel, regularization=lam, max_iter=200, tol=1e-9)
    assert kl_divergence_potentials(domain, EDGES, mle, est.cliques_, est.log_potentials_) < 1e-4
    jt_est = JunctionTree(domain, est.cliques_)
    for c, m in zip(est.cliques_, jt_est.marginals(est.log_potentials_)[0]):
        # the fitted marginals reproduce the counts up to the pull of the unit prior
        e = contingency_table(codes, domain, c)
        assert np.max(np.abs(m * n - e)) < 0.05 * np.sqrt(n)


@pytest.mark.slow
@pytest.mark.parametrize("regularization", [0.0, "auto"])
def test_naive_mle_never_gives_nan_or_infinite_potentials_on_projected_zeros(regularization):
    df, *_ = sample_frame(300, seed=2, k=4)
    est, fitted = fit("naive-mle", df, epsilon=0.05, regularization=regularization, max_iter=300)
    rel = est.releases_[0]
    # the noise (scale 80) swamps 300 records: most projected cells are zero
    zeros = sum(int(np.sum(np.isclose(np.clip(t.values, 0, None), 0))) for t in rel.tables)
    assert zeros > 20
    for t in est.log_potentials_:
        assert np.all(np.isfinite(t))
    for f in fitted.get_factors():
        assert np.all(np.isfinite(f.values)) and not np.any(np.isnan(f.values))
    q = BeliefPropagation(fitted).query(["a"], show_progress=False)
    assert np.all(np.isfinite(q.values)) and q.values.sum() == pytest.approx(1.0)


def test_repeated_and_overlapping_releases_are_all_used():
    df, domain, theta, _ = sample_frame(5000, seed=3)
    r1 = release_marginals(df, EDGES, epsilon=0.5, random_state=1)  # scale 8 per cell
    # a second release: (a, b) and (c, d) again, far more accurately (scale 0.3), plus a sub-table
    r2 = release_marginals(df, [("a", "b"), ("c", "d"), ("d",)], epsilon=10.0, random_state=2)
    truth = DiscreteMarkovNetwork(EDGES)
    truth.add_factors(
        *[DiscreteFactor(list(c), [3, 3], np.exp(t).ravel(), state_names={a: list(domain[a]) for a in c})
          for c, t in zip(EDGES, theta)]
    )
    for method in ("naive-mle", "cgm-em"):
        est, fitted = fit(method, [r1, r2], max_iter=10)
        assert est.releases_ == [r1, r2] and fitted.check_model()
        _, fitted1 = fit(method, r1, max_iter=10)
        assert kl_divergence(truth, fitted) < 0.8 * kl_divergence(truth, fitted1)


def test_time_homogeneous_chain_with_tied_potentials():
    rng = np.random.default_rng(4)
    T, k = 6, 3
    trans = np.log(rng.dirichlet(np.ones(k * k)).reshape(k, k))
    domain = Domain({f"x{t}": list(range(k)) for t in range(T)})
    edges = [(f"x{t}", f"x{t + 1}") for t in range(T - 1)]
    codes = JunctionTree(domain, edges).sample([trans] * len(edges), 20_000, random_state=0)
    df = pd.DataFrame({v: pd.Categorical.from_codes(codes[v], categories=domain[v]) for v in domain.attrs})
    est, fitted = fit("cgm-em", df, model=DiscreteMarkovNetwork(edges), epsilon=1.0, tied=[edges], max_iter=10)
    values = [f.values for f in fitted.get_factors()]
    for v in values[1:]:
        np.testing.assert_allclose(v, values[0])
    est_free, _ = fit("cgm-em", df, model=DiscreteMarkovNetwork(edges), epsilon=1.0, max_iter=10)
    kl_tied = kl_divergence_potentials(domain, edges, [trans] * len(edges), edges, est.log_potentials_)
    kl_free = kl_divergence_potentials(domain, edges, [trans] * len(edges), edges, est_free.log_potentials_)
    assert kl_tied < kl_free  # tying pools the T-1 noisy tables of one shared potential


@pytest.mark.slow
def test_loopy_inference_option_gives_a_close_fit():
    df, *_ = sample_frame(5000, seed=5)
    rel = release_marginals(df, EDGES, epsilon=1.0, random_state=0)
    est_jt, _ = fit("naive-mle", rel, inference="junction-tree")
    est_lp, fitted = fit("naive-mle", rel, inference="loopy")
    assert est_lp.inference_ == "loopy" and fitted.check_model()
    domain = est_jt.domain_
    # the Bethe approximation on a strongly coupled 3-cycle: close, not equal
    kl = kl_divergence_potentials(domain, est_jt.cliques_, est_jt.log_potentials_, est_lp.cliques_, est_lp.log_potentials_)
    assert kl < 0.1


def test_errors_name_the_problem():
    df, *_ = sample_frame(500)
    rel = release_marginals(df, [("a", "b"), ("b", "c"), ("c", "d")], epsilon=1.0, random_state=0)
    with pytest.raises(DomainError, match=r"clique\(s\) \[\('a', 'c'\)\] are not covered"):
        fit("naive-mle", rel)
    with pytest.raises(DomainError, match=r"node\(s\) \['d'\] are in no release"):
        fit("naive-mle", release_marginals(df, EDGES[:3], epsilon=1.0, random_state=0))
    other = df.copy()
    other["d"] = other["d"].cat.rename_categories(["x", "y", "z"])
    rel_other = release_marginals(other, [("c", "d")], epsilon=1.0, random_state=0)
    rel_full = release_marginals(df, EDGES, epsilon=1.0, random_state=0)
    with pytest.raises(DomainError, match="disagree.*'d'"):
        fit("naive-mle", [rel_full, rel_other])
    model = DiscreteMarkovNetwork(EDGES)
    model.add_factors(
        *[DiscreteFactor(list(c), [3, 3], np.ones(9), state_names={a: ["p", "q", "r"] for a in c}) for c in EDGES]
    )
    with pytest.raises(DomainError, match="states"):
        fit("naive-mle", rel_full, model=model)
    with pytest.raises(TypeError, match="PrivateMarkovEstimator fit from a DataFrame .* takes exactly one of epsilon= or rho=, got neither"):
        fit("naive-mle", df)
    with pytest.raises(ValueError, match="a release has already spent"):
        fit("naive-mle", rel_full, epsilon=1.0)
    with pytest.raises(ValueError, match="method must be one of"):
        PrivateMarkovEstimator(method="em").fit(DiscreteMarkovNetwork(EDGES), rel_full)
    with pytest.raises(ValueError, match="regularization"):
        PrivateMarkovEstimator(regularization=-1).fit(DiscreteMarkovNetwork(EDGES), rel_full)


def test_non_convergence_is_a_warning_with_the_achieved_tolerance():
    df, *_ = sample_frame(5000)
    est = PrivateMarkovEstimator(method="cgm-em", max_iter=2, tol=1e-12, show_progress=False, random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"did not converge: relative change .* after max_iter=2"):
        est.fit(DiscreteMarkovNetwork(EDGES), df, epsilon=0.5)
    assert est.converged_ is False and est.tolerance_ > 1e-12


def test_cgm_warm_start_stops_at_the_noise_scale():
    """The naive warm start of CGM-EM stops once its gradient (model minus target probability) is
    below one noise scale per record; naive MLE itself keeps its own tolerance on the same release."""
    df, domain, _, _ = sample_frame(20_000)
    release = release_marginals(df, EDGES, epsilon=0.2, random_state=1)
    cgm, _ = fit("cgm-em", release, max_iter=2)
    naive, _ = fit("naive-mle", release)
    scale = min(t.scale for t in release.tables)
    tables = [Measurement(t.attrs, t.values, t.scale) for t in release.tables]
    assert cgm.fit_settings_.naive_tol == naive_tolerance("cgm-em", cgm.tol, tables, cgm.n_records_)
    assert naive_tolerance("cgm-em", cgm.tol, tables, cgm.n_records_) == pytest.approx(scale / cgm.n_records_)
    assert naive.fit_settings_.naive_tol == naive_tolerance("naive-mle", naive.tol, tables, naive.n_records_)
    assert naive.fit_settings_.naive_tol == pytest.approx(naive.tol * 1e-2)
    assert cgm.mle_n_iter_ < naive.mle_n_iter_


def test_the_default_budget_does_not_warn_but_an_explicit_max_iter_does():
    """``max_iter=None`` is a fixed budget of EM_BUDGET iterations (no warning when EM is still moving
    there); the same cap asked for explicitly warns, and both fits are the same."""
    from pgmpy_dp.estimators.markov_fit import EM_BUDGET

    from pgmpy.utils import get_example_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pgmpy's deprecation notice for get_example_model
        bn = get_example_model("asia")
    df = bn.simulate(10_000, seed=0, show_progress=False)
    edges = list(bn.to_markov_model().edges())
    domain = {v: list(bn.states[v]) for v in bn.nodes()}  # public: the network's declared states
    release = df.dp.release(edges, epsilon=1.0, domain=domain, random_state=1)
    model = DiscreteMarkovNetwork(edges)
    default = pgmpy_dp.PrivateMarkovEstimator(show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        default.fit(model, release)
    assert default.max_iter_ == EM_BUDGET and default.n_iter_ == EM_BUDGET and not default.converged_
    explicit = pgmpy_dp.PrivateMarkovEstimator(max_iter=EM_BUDGET, show_progress=False)
    with pytest.warns(ConvergenceWarning, match=f"max_iter={EM_BUDGET}"):
        explicit.fit(model, release)
    for a, b in zip(default.log_potentials_, explicit.log_potentials_):
        np.testing.assert_array_equal(a, b)


def test_get_params_set_params_and_clone_follow_the_estimator_convention():
    sklearn_base = pytest.importorskip("sklearn.base")
    est = pgmpy_dp.PrivateMarkovEstimator(method="naive-mle", max_iter=7, regularization=0.5, show_progress=False)
    params = est.get_params()
    assert params == {"method": "naive-mle", "max_iter": 7, "tol": 1e-6, "regularization": 0.5,
                      "inference": "auto", "random_state": None, "show_progress": False}
    twin = sklearn_base.clone(est)
    assert twin is not est and twin.get_params() == params
    assert twin.set_params(max_iter=3) is twin and twin.max_iter == 3 and est.max_iter == 7
    # stored unchanged, refused by fit
    assert sklearn_base.clone(pgmpy_dp.PrivateMarkovEstimator(method="em")).method == "em"


def test_fit_returns_the_estimator_with_the_model_in_model_():
    from pgmpy.models import DiscreteMarkovNetwork

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.random(500) < 0.5, "b": rng.random(500) < 0.5})
    est = pgmpy_dp.PrivateMarkovEstimator(method="naive-mle", show_progress=False, random_state=0)
    out = est.fit(DiscreteMarkovNetwork([("a", "b")]), df, epsilon=1.0, domain={"a": [False, True], "b": [False, True]})
    assert out is est and est.model_.check_model()
    np.testing.assert_allclose(pgmpy_dp.query(est, ["a"]).values, pgmpy_dp.query(est.model_, ["a"]).values)
