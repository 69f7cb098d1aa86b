"""The structure learners decide only from public inputs, and refuse before charging what would fail."""

import numpy as np
import pandas as pd
import pytest

from pgmpy_dp import PrivacyBudget
from pgmpy_dp import _memory
from pgmpy_dp.structure import NotFittedError, PrivateIsingEstimator, PrivatePairwiseEstimator, pairwise
from pgmpy_dp.structure.pairwise import MAX_N_ITER

ESTIMATORS = [PrivateIsingEstimator, PrivatePairwiseEstimator]


def _binary(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({c: rng.integers(0, 2, n) for c in "abc"}).astype(pd.CategoricalDtype([0, 1]))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_few_rows_at_a_small_rho_are_not_refused(cls):
    # 40 rows are far below ceil(sqrt(p / rho)) = 1,733 rows, but the row count is private: the fit runs
    budget = PrivacyBudget(rho=1.0)
    est = cls(n_iter=5, random_state=0).fit(_binary(), rho=1e-6, budget=budget)
    assert budget.spent == 1e-6 and est.rho_ == 1e-6 and est.n_iter_ == 5


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("n_iter, error", [(10**12, ValueError), (MAX_N_ITER + 1, ValueError), (0, ValueError),
                                           (1e12, TypeError), (50.0, TypeError), (True, TypeError)])
def test_n_iter_is_bounded_before_anything_is_charged(cls, n_iter, error):
    budget = PrivacyBudget(rho=1.0)
    with pytest.raises(error, match="n_iter must be"):
        cls(n_iter=n_iter).fit(_binary(), rho=0.5, budget=budget)
    assert budget.spent == 0 and budget.pending == ()


def test_a_fit_too_large_for_memory_is_refused_before_charging(monkeypatch):
    monkeypatch.setattr(_memory, "available_memory", lambda: 8 * 2**30)
    states = list(range(1000))
    rng = np.random.default_rng(0)
    df = pd.DataFrame({c: rng.integers(0, 1000, 200) for c in "abc"}).astype(pd.CategoricalDtype(states))
    budget = PrivacyBudget(rho=100.0)
    with pytest.raises(ValueError, match=r"would need about .* GiB .*1000 declared states.*Nothing was charged"):
        PrivatePairwiseEstimator(route="frank-wolfe").fit(df, rho=100.0, budget=budget)
    assert budget.spent == 0 and budget.pending == ()


def test_the_memory_estimate_reads_only_the_declared_states():
    # the same domain needs the same memory whatever the rows: the estimate takes no data
    small = PrivatePairwiseEstimator._memory_needed([3, 3, 3])
    big = PrivatePairwiseEstimator._memory_needed([1000, 1000, 1000])
    assert small < 2**30 < 8 * 2**30 < big


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("budget", [5.0, "1.0", {"rho": 1.0}])
def test_a_number_as_budget_is_a_type_error(cls, budget):
    with pytest.raises(TypeError, match=r"budget must be a pgmpy_dp.PrivacyBudget or None, got"):
        cls().fit(_binary(), rho=0.5, budget=budget)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_a_pure_dp_budget_is_refused_up_front(cls):
    budget = PrivacyBudget(1.0)
    with pytest.raises(ValueError, match=r"spends rho \(zCDP\).*PrivacyBudget\(rho=...\)"):
        cls().fit(_binary(), rho=0.5, budget=budget)
    assert budget.spent == 0


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_unfitted_estimators_say_so(cls):
    est = cls()
    for call in (est.to_markov_network, lambda: est.epsilon_delta(1e-6)):
        with pytest.raises(NotFittedError, match="not fitted yet; call fit"):
            call()
    assert issubclass(NotFittedError, ValueError) and issubclass(NotFittedError, AttributeError)


@pytest.mark.parametrize(
    "edges, match",
    [([("a", "zz")], r"edge \('a', 'zz'\) names \['zz'\], not fitted"),
     ([("a",)], r"edge \('a',\) is not a \(column, column\) pair"),
     ([("a", "a")], r"joins a column to itself"),
     ([3], r"edge 3 is not a \(column, column\) pair")],
)
def test_to_markov_network_names_the_bad_edge(edges, match):
    est = PrivateIsingEstimator(n_iter=5, random_state=0).fit(_binary(), rho=1.0)
    with pytest.raises(ValueError, match=match):
        est.to_markov_network(edges=edges)
    assert sorted(est.to_markov_network(edges=[["b", "a"]]).edges()) in ([("a", "b")], [("b", "a")])
    import networkx as nx

    assert len(est.to_markov_network(edges=nx.complete_graph(["a", "b", "c"]).edges()).edges()) == 3


def test_domain_naming_an_absent_column_is_refused():
    budget = PrivacyBudget(rho=1.0)
    with pytest.raises(ValueError, match=r"names column\(s\) \['zz'\] that are not in the DataFrame"):
        PrivateIsingEstimator().fit(_binary(), rho=0.5, budget=budget, domain={"zz": [0, 1]})
    assert budget.spent == 0


def test_batched_labels_are_the_u_vs_v_labels(monkeypatch):
    # the label columns are built batch by batch: concatenated, they are +1 for state u, -1 for v, else 0
    rng = np.random.default_rng(5)
    df = pd.DataFrame({c: rng.integers(0, 4, 300) for c in "abc"}).astype(pd.CategoricalDtype([0, 1, 2, 3]))
    seen = []
    real = pairwise._frank_wolfe_batch

    def spy(X, Y, *args):
        seen.append(np.array(Y))
        return real(X, Y, *args)

    monkeypatch.setattr(pairwise, "_frank_wolfe_batch", spy)
    monkeypatch.setattr(pairwise, "_BATCH_CELLS", 600)  # two problems per batch
    PrivatePairwiseEstimator(n_iter=3, random_state=1).fit(df, rho=1.0)
    assert all(y.shape == (300, 2) for y in seen) and len(seen) == 9  # 3 nodes x 6 pairs / 2
    z = df["a"].cat.codes.to_numpy()
    pairs = [(u, v) for u in range(4) for v in range(u + 1, 4)]
    expected = np.column_stack([(z == u).astype(float) - (z == v) for u, v in pairs])
    np.testing.assert_array_equal(np.concatenate(seen[:3], axis=1), expected)


@pytest.mark.parametrize("cls", [PrivateIsingEstimator, PrivatePairwiseEstimator])
def test_structure_learners_follow_the_estimator_convention(cls):
    from sklearn import base as sklearn_base

    est = cls(width=2.0, eta=0.3, n_iter=7, random_state=3)
    assert est.get_params() == {"width": 2.0, "eta": 0.3, "n_iter": 7, "random_state": 3,
                                "threshold": None, "radius": None, "route": "auto"}
    twin = sklearn_base.clone(est)
    assert type(twin) is cls and twin.get_params() == est.get_params()
    assert twin.set_params(n_iter=9) is twin and twin.n_iter == 9 and est.n_iter == 7
    bad = cls(n_iter="many")  # stored as given; refused only by fit
    assert sklearn_base.clone(bad).n_iter == "many"
