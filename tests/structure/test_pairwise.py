"""Private Ising / pairwise estimators: recovery, the pgmpy model they return, budget, bad input."""

import numpy as np
import pandas as pd
import pytest
from pgmpy.inference import BeliefPropagation, VariableElimination

from pgmpy_dp import BudgetExceededError, PrivacyBudget
from pgmpy_dp.structure import PrivateIsingEstimator, PrivatePairwiseEstimator, min_rows_for_structure
from pgmpy_dp.testing.pairwise_models import model_edges, random_pairwise_model, sample_pairwise_model
from pgmpy_dp.privacy import DomainError


@pytest.fixture(scope="module")
def ising5():
    W, theta = random_pairwise_model(5, k=2, max_degree=3, eta=0.4, seed=3)  # connected: BP needs it
    df = sample_pairwise_model(W, theta, 100_000, seed=4)
    return W, theta, df


@pytest.mark.slow
def test_ising_recovers_5_node_graph_at_huge_rho_and_n(ising5):
    W, theta, df = ising5
    truth = model_edges(W, list(df.columns))
    assert 2 <= len(truth) < 10  # a sparse graph, not empty or complete
    est = PrivateIsingEstimator(width=1.2, eta=0.4, n_iter=200, random_state=0).fit(df, rho=1e4)
    assert sorted(est.edges_) == sorted(truth)
    A = W[:, :, 1, 1]  # W[i, j] = A_ij s s^T with s = (-1, 1)
    # Frank-Wolfe after T steps resolves weights to about radius / T; sampling error is ~1/sqrt(n)
    np.testing.assert_allclose(est.coef_, A, atol=0.05)
    assert est.rho_ == 1e4 and est.n_iter_ == 200


def test_fitted_model_is_queried_by_pgmpy_engines(ising5):
    W, theta, df = ising5
    est = PrivateIsingEstimator(width=1.2, eta=0.4, n_iter=200, random_state=0).fit(df, rho=1e4)
    mn = est.model_
    assert mn.check_model()
    assert sorted(map(sorted, mn.edges())) == sorted(map(sorted, est.edges_))
    a, b = est.edges_[0]
    ve = VariableElimination(mn).query([b], evidence={a: 1}, show_progress=False)
    bp = BeliefPropagation(mn).query([b], evidence={a: 1}, show_progress=False)
    p_ve = ve.values / ve.values.sum()
    np.testing.assert_allclose(p_ve, bp.values / bp.values.sum(), atol=1e-8)
    # against the data: the model's conditional is close to the empirical one
    emp = (df.loc[df[a] == 1, b].astype(int) == 1).mean()
    assert abs(p_ve[1] - emp) < 0.03


@pytest.mark.slow
def test_pairwise_recovers_graph_k3():
    W, theta = random_pairwise_model(6, k=3, max_degree=2, eta=0.6, seed=5)
    df = sample_pairwise_model(W, theta, 60_000, seed=6)
    est = PrivatePairwiseEstimator(width=1.2, eta=0.6, n_iter=100, random_state=0).fit(df, rho=100.0)
    assert sorted(est.edges_) == sorted(model_edges(W, list(df.columns)))
    for (a, b), w in est.weights_.items():
        np.testing.assert_allclose(w.sum(axis=0), 0, atol=1e-9)  # doubly centred
        np.testing.assert_allclose(w.sum(axis=1), 0, atol=1e-9)
    q = VariableElimination(est.model_).query([est.edges_[0][1]], show_progress=False)
    assert q.values.shape == (3,)


def test_graph_hands_off_to_private_markov_estimator(ising5):
    from pgmpy_dp import PrivateMarkovEstimator

    W, theta, df = ising5
    # one zCDP budget for both calls: rho = 0.5 for the graph, then epsilon = 1 for the potentials,
    # which releases |C| tables at epsilon 1/|C| each: sum of (1/|C|)^2 / 2 = 1 / (2 |C|) in rho
    budget = PrivacyBudget(rho=1.0)
    est = PrivateIsingEstimator(width=1.2, eta=0.4, random_state=0).fit(df, rho=0.5, budget=budget)
    assert budget.spent == pytest.approx(0.5)
    fitted = PrivateMarkovEstimator(method="cgm-em", random_state=0, show_progress=False).fit(
        est.graph_, df, epsilon=1.0, budget=budget
    ).model_
    assert sorted(map(sorted, fitted.edges())) == sorted(map(sorted, est.edges_))
    # or with Gaussian tables, charged rho directly
    budget2 = PrivacyBudget(rho=1.0)
    est.fit(df, rho=0.5, budget=budget2)
    PrivateMarkovEstimator(method="cgm-em", random_state=0, show_progress=False).fit(
        est.graph_, df, rho=0.5, budget=budget2
    )
    assert budget2.spent == pytest.approx(1.0) and budget2.remaining == 0
    n_cliques = len(est.edges_)  # the learned graph is connected: its cliques are its edges
    assert budget.spent == pytest.approx(0.5 + 1 / (2 * n_cliques))


def _tiny():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.integers(0, 2, 500), "b": rng.integers(0, 2, 500)}).astype(
        pd.CategoricalDtype([0, 1])
    )


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"rho": 0.0}, ValueError, "rho"),
        ({"rho": -1.0}, ValueError, "rho"),
        ({"rho": float("nan")}, ValueError, "rho"),
        ({"rho": float("inf")}, ValueError, "rho"),
        ({"epsilon": 1.0, "delta": 1.5}, ValueError, r"delta must be in \(0, 1\)"),
        ({"epsilon": 1.0, "delta": 0.0}, ValueError, "delta"),
        ({"epsilon": 1.0}, ValueError, "delta"),
        ({"rho": 1.0, "epsilon": 1.0, "delta": 1e-6}, ValueError, "exactly one of epsilon=.*got both"),
    ],
)
def test_bad_budget_input_spends_nothing(kwargs, error, match):
    df = _tiny()
    est = PrivateIsingEstimator()
    with pytest.raises(error, match=match):
        est.fit(df, **kwargs)
    assert not hasattr(est, "edges_")


def test_bad_domains_name_the_column():
    df = _tiny()
    df["c"] = pd.Categorical([0] * 500, categories=[0, 1, 2])
    with pytest.raises(DomainError, match="column 'c' declares 3 states.*PrivatePairwiseEstimator"):
        PrivateIsingEstimator().fit(df, rho=1.0)
    df["c"] = pd.Categorical([0] * 500, categories=[0])
    with pytest.raises(DomainError, match="column 'c' declares a single state"):
        PrivatePairwiseEstimator().fit(df, rho=1.0)
    df["c"] = np.zeros(500, dtype=int)
    with pytest.raises(DomainError, match="column 'c' has no public domain"):
        PrivatePairwiseEstimator().fit(df, rho=1.0)
    df["c"] = pd.Categorical([np.nan] * 500, categories=[0, 1])
    with pytest.raises(DomainError, match="column 'c' has missing values"):
        PrivateIsingEstimator().fit(df, rho=1.0)


def test_min_rows_is_the_notes_bound():
    assert min_rows_for_structure(20, rho=0.01) == int(np.ceil(np.sqrt(20 / 0.01)))
    assert min_rows_for_structure(20, rho=0.01, k=4) == int(np.ceil(np.sqrt(16 * 20 / 0.01)))


def test_epsilon_delta_round_trip():
    df = _tiny()
    est = PrivateIsingEstimator(random_state=0).fit(df, epsilon=2.0, delta=1e-5)
    eps, delta = est.epsilon_delta(1e-5)
    assert eps == pytest.approx(2.0, rel=1e-6) and delta == 1e-5


def test_budget_is_charged_rho_and_bad_budgets_spend_nothing():
    df = _tiny()
    zb = PrivacyBudget(rho=1.0)
    PrivateIsingEstimator(random_state=0).fit(df, rho=0.25, budget=zb)
    assert zb.spent == pytest.approx(0.25) and [e.rho for e in zb.ledger] == [0.25]
    with pytest.raises(BudgetExceededError):
        PrivateIsingEstimator(random_state=0).fit(df, rho=0.9, budget=zb)
    assert zb.spent == pytest.approx(0.25)
    pure = PrivacyBudget(1.0)
    with pytest.raises(ValueError, match=r"PrivacyBudget\(rho=...\)"):
        PrivateIsingEstimator(random_state=0).fit(df, rho=0.25, budget=pure)
    assert pure.spent == 0
    # a domain error after the budget was given still spends nothing
    bad = df.assign(c=pd.Categorical([0] * len(df), categories=[0, 1, 2]))
    with pytest.raises(DomainError):
        PrivateIsingEstimator().fit(bad, rho=0.1, budget=zb)
    assert zb.spent == pytest.approx(0.25)


def test_pairwise_budget_split_is_rho_over_p_times_k_minus_one():
    from pgmpy_dp.structure import frank_wolfe_noise_scale, frank_wolfe_rho

    rng = np.random.default_rng(2)
    df = pd.DataFrame({
        "a": pd.Categorical.from_codes(rng.integers(0, 2, 3000), categories=["u", "v"]),
        "b": pd.Categorical.from_codes(rng.integers(0, 3, 3000), categories=[0, 1, 2]),
        "c": pd.Categorical.from_codes(rng.integers(0, 4, 3000), categories=list("wxyz")),
    })
    rho, T = 0.6, 20
    est = PrivatePairwiseEstimator(width=1.0, n_iter=T, random_state=0).fit(df, rho=rho)
    radius = 2 * 4 * 1.0  # default: 2 k width, k the most states of any column
    sizes = [2, 3, 4]
    expected = [frank_wolfe_noise_scale(rho / (3 * (k - 1)), radius, T) for k in sizes]
    np.testing.assert_allclose(est.noise_scale_, expected)
    # a row sits in k_i - 1 pair regressions of node i: the worst-case total is exactly rho
    total = sum((k - 1) * frank_wolfe_rho(b, radius, T) for k, b in zip(sizes, est.noise_scale_))
    assert total == pytest.approx(rho)
    assert est.weights_["a", "c"].shape == (2, 4)


@pytest.mark.parametrize("estimator", [PrivateIsingEstimator, PrivatePairwiseEstimator])
@pytest.mark.parametrize("bad", [False, True, "junk", 1.5, -3])
def test_bad_random_state_is_refused_before_the_budget_is_charged(estimator, bad):
    """The library's one random_state rule (a bool is not a seed: numpy would take False as seed 0)."""
    budget = PrivacyBudget(rho=10.0)
    with pytest.raises((TypeError, ValueError), match="random_state"):
        estimator(random_state=bad).fit(_tiny(), rho=1.0, budget=budget)
    assert budget.spent == 0
