"""Private key discovery and private bin edges (pgmpy_dp.privacy.discovery), on plain arrays."""

import math

import numpy as np
import pytest

from pgmpy_dp.privacy import PrivacyBudget
from pgmpy_dp.privacy.budget import BudgetExceededError
from pgmpy_dp.privacy.parameters import epsilon_delta_to_rho, rho_to_epsilon_delta
from pgmpy_dp.privacy.discovery import (
    candidate_edges,
    check_bounds,
    discover_keys,
    gaussian_tail,
    private_bin_edges,
    threshold_keys,
)
from pgmpy_dp.privacy.loss import ZCDP, PureDP


@pytest.mark.parametrize("sigma", [0.7, 3.0, 25.0])
def test_the_tail_is_the_discrete_gaussian_sum(sigma):
    k = np.arange(-2000, 2001)
    w = np.exp(-(k**2) / (2 * sigma**2))
    for m in (0, 1, 5, 40):
        assert gaussian_tail(m, sigma) == pytest.approx(w[k >= m].sum() / w.sum(), rel=1e-9)


def test_above_the_summed_range_the_tail_bound_is_never_smaller_than_the_gaussian_tail():
    from scipy.stats import norm
    assert gaussian_tail(600_000, 2e5) >= norm.sf(600_000, scale=2e5)


@pytest.mark.parametrize("rho, delta", [(0.5, 1e-9), (0.05, 1e-6), (0.001, 1e-10)])
def test_the_threshold_is_the_smallest_that_bounds_a_lone_keys_release_by_delta(rho, delta):
    rel = threshold_keys([], [], rho, delta)
    sigma = 1 / math.sqrt(2 * rho)
    assert rel.sigma == pytest.approx(sigma)
    assert gaussian_tail(rel.threshold - 1, sigma) <= delta  # a key of count 1 passes with P <= delta
    assert gaussian_tail(rel.threshold - 2, sigma) > delta   # and no lower threshold does
    # a key of sure_count records fails with P <= 5%, one fewer with more
    assert gaussian_tail(rel.sure_count - rel.threshold + 1, sigma) <= 0.05
    assert gaussian_tail(rel.sure_count - rel.threshold, sigma) > 0.05


def test_only_observed_keys_are_released_and_missing_values_are_not_keys():
    values = ["a"] * 500 + ["b"] * 500 + [None, float("nan")] * 300
    for seed in range(20):
        rel = discover_keys(values, rho=1.0, delta=1e-6, random_state=seed)
        assert set(rel.keys) == {"a", "b"}


def test_numpy_keys_come_back_as_python_scalars():
    rel = discover_keys(np.array([3] * 400 + [7] * 400), rho=1.0, delta=1e-6, random_state=0)
    assert rel.keys == (3, 7) and all(type(k) is int for k in rel.keys)


def test_a_lone_key_is_released_at_about_its_delta_with_a_loose_threshold():
    # large delta so the rate is visible: P(release of a count-1 key) = P(Z >= t - 1) <= delta
    rho, delta = 0.5, 0.2
    rel = threshold_keys(["x"], [1], rho, delta)
    rate = np.mean([bool(threshold_keys(["x"], [1], rho, delta, random_state=s).keys) for s in range(3000)])
    p = gaussian_tail(rel.threshold - 1, rel.sigma)
    assert p <= delta
    assert abs(rate - p) < 4 * math.sqrt(p * (1 - p) / 3000)


def test_bad_key_inputs_are_named():
    with pytest.raises(ValueError, match="one count per key"):
        threshold_keys(["a", "b"], [3], 1.0, 1e-6)
    with pytest.raises(ValueError, match="delta"):
        discover_keys(["a"], 1.0, 1.5)
    with pytest.raises(ValueError, match="rho"):
        discover_keys(["a"], -1.0, 1e-6)


def test_private_edges_lie_within_the_bounds_and_increase():
    rng = np.random.default_rng(1)
    x = rng.normal(40, 12, 20_000).round()
    for seed in range(5):
        edges = private_bin_edges(x, (17, 90), 8, ZCDP(0.01), integer=True, random_state=seed)
        assert edges[0] == 17 and edges[-1] == 91
        assert all(a < b for a, b in zip(edges, edges[1:])) and len(edges) <= 9
        assert all(float(e).is_integer() for e in edges)


def test_private_edges_follow_the_quantiles_of_the_data_mixed_with_the_uniform_at_a_large_budget():
    rng = np.random.default_rng(2)
    x = rng.exponential(1000, 50_000)
    edges = private_bin_edges(x, (0, 100_000), 4, PureDP(50.0), random_state=0)
    grid = np.linspace(0, 100_000, 200_001)
    mixture_cdf = 0.5 * np.searchsorted(np.sort(x), grid) / x.size + 0.5 * grid / 100_000
    expected = [grid[np.argmin(np.abs(mixture_cdf - q))] for q in (0.25, 0.5, 0.75)]
    # the candidate grid's spacing is 100000 / 4097 ~ 24, so each edge is within a few steps of its quantile
    np.testing.assert_allclose(edges[1:-1], expected, atol=75)
    assert edges[1] < 2 * np.quantile(x, 0.5)  # unlike equal widths, the first bin splits the bulk


def test_an_integer_column_with_wide_bounds_gets_an_even_integer_grid():
    lo, top, cuts = candidate_edges((0, 99_999), integer=True)
    assert (lo, top) == (0, 100_000) and len(cuts) <= 4096 and np.all(cuts == np.round(cuts))


def test_bad_bin_inputs_are_named():
    with pytest.raises(ValueError, match="lo < hi"):
        check_bounds((90, 17))
    with pytest.raises(ValueError, match="pair"):
        check_bounds("age")
    with pytest.raises(ValueError, match="integer column must be integers"):
        check_bounds((0.5, 3), integer=True)
    with pytest.raises(ValueError, match="n_bins"):
        private_bin_edges([1.0], (0, 1), 1, PureDP(1.0))
    with pytest.raises(TypeError, match="PureDP or ZCDP"):
        private_bin_edges([1.0], (0, 1), 2, 1.0)


def test_a_charge_with_delta_is_recorded_and_counted():
    budget = PrivacyBudget(1.0, delta=1e-9)
    with budget.charge(rho=0.001, label="keys", delta=1e-10):
        pass
    with budget.charge(rho=0.002, label="fit"):
        pass
    assert [e.delta for e in budget.ledger] == [1e-10, None]
    assert budget.delta_spent == 1e-10
    eps, delta = budget.epsilon_delta(1e-9)  # at a given delta, the charges' own deltas add to it
    assert delta == pytest.approx(1.1e-9, rel=1e-12) and eps == pytest.approx(rho_to_epsilon_delta(0.003, 1e-9))
    eps, delta = budget.epsilon_delta()  # at the budget's own delta: the rest of it converts the rho
    assert delta == 1e-9 and eps == pytest.approx(rho_to_epsilon_delta(0.003, 0.9e-9))
    again = PrivacyBudget.from_json(budget.to_json())
    assert [e.delta for e in again.ledger] == [1e-10, None] and again.delta_spent == 1e-10


def test_a_charge_s_own_delta_shrinks_what_an_epsilon_delta_budget_may_spend():
    budget = PrivacyBudget(1.0, delta=1e-9)
    with budget.charge(rho=0.001, label="keys", delta=1e-10):
        pass
    cap = epsilon_delta_to_rho(1.0, 1e-9 - 1e-10)  # the promise (1, 1e-9) with 1e-10 of delta taken
    assert cap < budget.total
    assert budget.remaining == pytest.approx(cap - 0.001, rel=1e-12)
    with pytest.raises(BudgetExceededError):  # the rho the whole delta would allow is no longer there
        with budget.charge(rho=budget.total - 0.001, label="too much"):
            pass
    with budget.charge(rho=budget.remaining * (1 - 1e-12), label="the rest"):  # the float below the exact rest
        pass
    eps, delta = budget.epsilon_delta()
    assert delta == 1e-9 and eps <= 1.0 + 1e-12


def test_a_rho_budget_refuses_a_charge_with_its_own_delta():
    budget = PrivacyBudget(rho=1.0)
    with pytest.raises(ValueError, match="promises pure zCDP"):
        with budget.charge(rho=0.1, label="keys", delta=1e-10):
            pass
    assert budget.spent == 0 and budget.ledger == ()


def test_a_delta_charge_needs_rho_and_a_zcdp_budget():
    with pytest.raises(ValueError, match="give rho= with it"):
        with PrivacyBudget(rho=1.0).charge(0.1, "x", delta=1e-9):
            pass
    pure = PrivacyBudget(1.0)
    with pytest.raises(ValueError, match="pure epsilon"):
        with pure.charge(rho=0.1, label="x", delta=1e-9):
            pass
    assert pure.spent == 0 and pure.ledger == ()
