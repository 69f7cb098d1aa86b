"""Networks whose junction tree is too large: DiscretePrivateMLE fits family by family, warns once, says so."""

import functools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from pgmpy.models import DiscreteBayesianNetwork

import pgmpy_dp
from pgmpy_dp.datasets import load_network, sample_network
from pgmpy_dp.engine import Measurement
from pgmpy_dp.estimators import likelihood
from pgmpy_dp.estimators.likelihood import WideNetworkWarning, exact_clique_cells
from pgmpy_dp.estimators.local import fit_families_locally

# a v-structure and a loop through its parents: the moral graph's triangulation has a 3-attribute clique
EDGES = [("a", "c"), ("b", "c"), ("a", "b"), ("c", "d")]
STATES = {"a": [0, 1, 2], "b": [0, 1], "c": [0, 1, 2], "d": [0, 1]}


def _data(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (rng.random(n) < 0.3 + 0.2 * (a == 1)).astype(int)
    c = (a + b + (rng.random(n) < 0.2)) % 3
    d = (rng.random(n) < 0.2 + 0.6 * (c == 2)).astype(int)
    return pd.DataFrame({"a": a, "b": b, "c": c, "d": d})


def _fit(df, epsilon=1.0, seed=0, **kwargs):
    model = DiscreteBayesianNetwork(EDGES)
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=epsilon, domain=STATES, random_state=seed, **kwargs)
    return model.fit(df, estimator=est), est


@pytest.fixture
def low_limit(monkeypatch):
    """Make the 18-cell clique {a, b, c} too large for the exact fit."""
    cells = exact_clique_cells(pgmpy_dp.Domain(STATES), [("a",), ("b", "a"), ("c", "a", "b"), ("d", "c")])
    assert cells == 18
    monkeypatch.setattr(likelihood, "MAX_CLIQUE_CELLS", 10)


def test_a_network_above_the_limit_fits_family_by_family_and_warns_once(low_limit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model, est = _fit(_data(2000, 0))
    wide = [w for w in caught if issubclass(w.category, WideNetworkWarning)]
    assert len(wide) == 1
    assert "18 cells" in str(wide[0].message) and "limit" in str(wide[0].message)
    assert est.consistency_ == "local-likelihood"
    assert model.check_model()
    for cpd in est.parameters_:
        values = cpd.get_values()
        assert np.all(np.isfinite(values)) and np.all(values > 0)
        np.testing.assert_allclose(values.sum(axis=0), 1.0, atol=1e-12)


def test_below_the_limit_nothing_changes_and_nothing_warns():
    with warnings.catch_warnings():
        warnings.simplefilter("error", WideNetworkWarning)
        _, est = _fit(_data(2000, 0))
    assert est.consistency_ == "likelihood"


def test_the_warning_depends_on_the_graph_and_declared_states_only(low_limit):
    """Two very different data sets (one constant) give the same warning, word for word."""
    constant = pd.DataFrame({v: [0] * 500 for v in STATES})
    messages = []
    for df in (_data(3000, 1), constant):
        with pytest.warns(WideNetworkWarning) as record:
            _fit(df, seed=3)
        messages.append([str(w.message) for w in record if issubclass(w.category, WideNetworkWarning)])
    assert messages[0] == messages[1] and len(messages[0]) == 1


def test_the_route_is_decided_before_anything_is_charged(low_limit, monkeypatch):
    import pgmpy_dp.estimators.bayesian as bayesian

    def refuse(*args, **kwargs):
        raise RuntimeError("release reached")

    budget = pgmpy_dp.PrivacyBudget(epsilon=2.0)
    monkeypatch.setattr(bayesian, "release_from_codes", refuse)
    with pytest.warns(WideNetworkWarning), pytest.raises(RuntimeError, match="release reached"):
        _fit(_data(500, 0), budget=budget)
    assert budget.remaining == pytest.approx(2.0)  # refunded: no noise was drawn


def _column_gap_within_noise(est_a, est_b, n_records, allocation):
    """Per CPD column, the two fits' gap against what the noise of the family table allows."""
    checked = 0
    for ta, tb, (node, eps) in zip(est_a._tables, est_b._tables, allocation.items()):
        k = ta.shape[0]
        a2, b2 = ta.reshape(k, -1), tb.reshape(k, -1)
        cols = a2.sum(axis=0)
        scale = 1.0 / eps  # Laplace scale of the family table (L1 sensitivity 1)
        # the CPD column's noise: K cells of variance 2 b^2 over a column of n_u records; four standard errors
        tol = 4.0 * math.sqrt(2.0 * k) * scale / cols
        gap = np.abs(a2 / cols - b2 / b2.sum(axis=0)).max(axis=0)
        big = cols > 50 * scale
        assert np.all(gap[big] <= tol[big]), (node, gap[big], tol[big])
        checked += int(big.sum())
    return checked


@pytest.mark.slow
@pytest.mark.parametrize("network, n", [("asia", 20_000), ("child", 20_000)])
def test_the_fallback_agrees_with_the_exact_fit_within_the_noise(network, n, monkeypatch):
    truth = load_network(network)
    df = sample_network(truth, n, seed=2)
    fits = []
    for limit in (likelihood.MAX_CLIQUE_CELLS, 0):
        monkeypatch.setattr(likelihood, "MAX_CLIQUE_CELLS", limit)
        est = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, random_state=5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", WideNetworkWarning)
            DiscreteBayesianNetwork(truth.edges()).fit(df, estimator=est)
        fits.append(est)
    assert [f.consistency_ for f in fits] == ["likelihood", "local-likelihood"]
    assert _column_gap_within_noise(*fits, n, fits[0].allocation_) > 10


def test_the_per_family_fit_is_not_the_noisy_tables_themselves():
    """A column measured twice (its own table and a child's, summed) moves towards the better measurement."""
    d = pgmpy_dp.Domain({"a": [0, 1], "b": [0, 1]})
    truth = np.array([[300.0, 200.0], [100.0, 400.0]])  # (b, a)
    noisy_ba = truth + np.array([[40.0, -40.0], [-40.0, 40.0]])
    ms = [Measurement(("a",), truth.sum(axis=0), 0.01), Measurement(("b", "a"), noisy_ba, 20.0)]
    alone = fit_families_locally(d, [("a",), ("b", "a")], ms, 1000.0, pseudo_count=0.0, max_iter=500)
    # a second, far more precise table over (b, a) pulls the fit to the truth
    ms.append(Measurement(("a", "b"), truth.T, 0.5))
    both = fit_families_locally(d, [("a",), ("b", "a")], ms, 1000.0, pseudo_count=0.0, max_iter=500)
    assert np.abs(both.tables[1] - truth).max() < 0.2 * np.abs(alone.tables[1] - truth).max()
    np.testing.assert_allclose(both.tables[1].sum(), 1000.0)


def test_a_family_no_table_covers_is_refused_naming_it():
    d = pgmpy_dp.Domain({"a": [0, 1], "b": [0, 1]})
    with pytest.raises(ValueError, match=r"family \('b', 'a'\) lies inside no released table"):
        fit_families_locally(d, [("b", "a")], [Measurement(("a",), np.array([3.0, 1.0]), 1.0)], 4.0, 0.5)


def test_progress_and_clone_work_on_the_fallback(low_limit):
    from sklearn.base import clone

    with pytest.warns(WideNetworkWarning):
        _, est = _fit(_data(1000, 0), show_progress=True)
    assert est.n_iter_ >= 1
    assert clone(est).get_params() == est.get_params()


@pytest.mark.slow
def test_markov_auto_inference_falls_back_to_loopy_and_says_so(monkeypatch):
    from pgmpy.models import DiscreteMarkovNetwork

    import pgmpy_dp.estimators.markov as markov
    from pgmpy_dp.engine.inference import make_inference

    df = _data(3000, 0)
    cycle = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]
    release = df.dp.release(cycle, epsilon=2.0, domain=STATES, random_state=0)
    monkeypatch.setattr(markov, "make_inference", functools.partial(make_inference, max_cells=10))
    with pytest.warns(UserWarning, match="loopy belief propagation") as record:
        est = pgmpy_dp.PrivateMarkovEstimator().fit(DiscreteMarkovNetwork(cycle), release)
    assert est.inference_ == "loopy"
    assert sum("loopy belief propagation" in str(w.message) for w in record) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        monkeypatch.undo()
        assert pgmpy_dp.PrivateMarkovEstimator().fit(DiscreteMarkovNetwork(cycle), release).inference_ == "junction-tree"


def test_a_fallback_too_large_for_memory_is_refused_before_anything_is_charged(low_limit, monkeypatch):
    import pgmpy_dp.estimators.bayesian as bayesian

    budget = pgmpy_dp.PrivacyBudget(epsilon=1.0)
    monkeypatch.setattr(bayesian, "MAX_LOCAL_CELLS", 20)  # the four families hold 3 + 6 + 18 + 6 = 33 cells
    with pytest.raises(ValueError, match="33 cells in all"):
        _fit(_data(500, 0), budget=budget)
    assert budget.remaining == pytest.approx(1.0)


# the test network's triangulated cliques {a, b, c} and {c, d}: 18 + 6 cells in all
TREE_CELLS = 24


def test_the_test_network_tree_size_is_read_off_the_graph():
    families = [("a",), ("b", "a"), ("c", "a", "b"), ("d", "c")]
    assert likelihood.exact_tree_cells(pgmpy_dp.Domain(STATES), families) == (18, TREE_CELLS)


@pytest.mark.parametrize("limit, route", [(TREE_CELLS - 1, "local-likelihood"), (TREE_CELLS, "likelihood")])
def test_a_tree_above_the_total_cell_limit_takes_the_fallback_and_says_why(limit, route, monkeypatch):
    monkeypatch.setattr(likelihood, "MAX_EXACT_CELLS", limit)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model, est = _fit(_data(2000, 0))
    wide = [str(w.message) for w in caught if issubclass(w.category, WideNetworkWarning)]
    assert est.consistency_ == route
    if route == "likelihood":
        assert wide == []
        return
    assert len(wide) == 1
    assert f"junction tree of {TREE_CELLS} cells in all" in wide[0]
    assert f"MAX_EXACT_CELLS = {limit}" in wide[0] and "local-likelihood" in wide[0]
    assert model.check_model()


def test_the_total_cell_rule_makes_the_same_choice_on_neighbouring_data(monkeypatch):
    """Adding or removing one record, or replacing the data by a constant table, changes neither route nor words."""
    monkeypatch.setattr(likelihood, "MAX_EXACT_CELLS", TREE_CELLS - 1)
    df = _data(1500, 4)
    one_more = pd.concat([df, pd.DataFrame({v: [max(STATES[v])] for v in STATES})], ignore_index=True)
    constant = pd.DataFrame({v: [0] * 40 for v in STATES})
    outcomes = []
    for data in (df, df.iloc[1:], one_more, constant):
        with pytest.warns(WideNetworkWarning) as record:
            _, est = _fit(data, seed=7)
        outcomes.append((est.consistency_, [str(w.message) for w in record if issubclass(w.category, WideNetworkWarning)]))
    assert all(o == outcomes[0] for o in outcomes) and outcomes[0][0] == "local-likelihood"


@pytest.mark.slow
@pytest.mark.parametrize("network, exact", [("alarm", True), ("insurance", True), ("hailfinder", True),
                                            ("win95pts", True), ("andes", False), ("pigs", False), ("water", False)])
def test_which_shipped_networks_the_exact_fit_keeps(network, exact):
    """The networks docs/bayesian.md names on either side of the limits, from their graphs alone."""
    net = load_network(network)
    domain = pgmpy_dp.Domain({v: list(net.states[v]) for v in net.nodes()})
    families = [(v, *sorted(net.get_parents(v))) for v in net.nodes()]
    largest, total = likelihood.exact_tree_cells(domain, families)
    assert (largest <= likelihood.MAX_CLIQUE_CELLS and total <= likelihood.MAX_EXACT_CELLS) == exact


@pytest.mark.slow
def test_the_per_family_sweeps_settle_on_water():
    """Water's families are measured again by many summed tables; their bound must not stall the sweeps.

    The earlier per-cell bound (precision times the cells summed) still moved counts by 0.8 noise scales a
    sweep after 100 sweeps on these tables; the weighted bound settles below a tenth of one.
    """
    from pgmpy_dp.estimators.likelihood import measurement_for

    truth = load_network("water")
    df = sample_network(truth, 20_000, seed=0)
    with pytest.warns(WideNetworkWarning):
        est = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, random_state=0)
        DiscreteBayesianNetwork(truth.edges()).fit(df, estimator=est)
    families = [(n, *sorted(truth.get_parents(n))) for n in est.model_.nodes()]
    domain = pgmpy_dp.Domain(est.state_names_)
    changes = []
    fit_families_locally(domain, families, [measurement_for(t) for t in est.release_], 20_000.0, pseudo_count=0.5,
                         max_iter=100, callback=lambda i, objective, change: changes.append(change))
    assert len(changes) == 100 and max(changes[-10:]) < 0.1, changes[-10:]
