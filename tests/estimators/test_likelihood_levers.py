"""Issue 12, fifth round: per-family prior weights and measuring only the maximal families."""

import math

import numpy as np
import pytest

import pgmpy_dp
from pgmpy_dp.engine import Measurement
from pgmpy_dp.estimators.allocation import error_optimal_allocation, maximal_families
from pgmpy_dp.estimators.likelihood import (
    clique_noise_regularization,
    fit_family_tables,
    model_cliques,
    noise_regularization,
)
from pgmpy_dp.privacy.budget import PrivacyBudget
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.tables import NoisyTable


def test_per_clique_weights_reduce_to_the_global_weight_for_equal_tables_and_grow_with_size():
    a = NoisyTable(("x", "y"), np.zeros((4, 3)), epsilon=0.5, scale=2.0)
    b = NoisyTable(("z", "y"), np.zeros((4, 3)), epsilon=0.5, scale=2.0)
    w, naive = clique_noise_regularization([a, b], 5000.0, [("x", "y"), ("z", "y")])
    assert w[0] == w[1]
    assert w[0] * 5000.0 == pytest.approx(noise_regularization([a, b], 5000.0), rel=1e-12)
    # the sqrt split: a table with 16x the cells gets 4x the epsilon, so a quarter of the scale
    small = NoisyTable(("y",), np.zeros(3), epsilon=0.1, scale=10.0)
    big = NoisyTable(("x", "z", "y"), np.zeros((4, 4, 3)), epsilon=0.4, scale=2.5)
    w, _ = clique_noise_regularization([small, big], 5000.0, [("y",), ("x", "z", "y")])
    global_w = noise_regularization([small, big], 5000.0) / 5000.0
    assert w[0] < global_w < w[1]
    assert w[1] / w[0] == pytest.approx((big.variance * 48 / 2.5) / (small.variance * 3 / 10.0), rel=1e-12)
    # a clique no table measures exactly gets the global weight
    w, _ = clique_noise_regularization([small, big], 5000.0, [("x", "z", "y"), ("q",)])
    assert w[1] == pytest.approx(global_w, rel=1e-12)


def test_a_family_without_a_table_is_read_off_its_host_exactly():
    d = Domain({"a": [0, 1, 2], "b": [0, 1], "c": [0, 1]})
    rng = np.random.default_rng(0)
    bac = rng.integers(20, 200, size=(2, 3, 2)).astype(float)  # axes (b, a, c)
    ba = bac.sum(axis=2)
    ca = bac.sum(axis=0).T  # (c, a)
    families = [("a",), ("b", "a"), ("c", "a")]
    assert model_cliques(families, [("b", "a"), ("c", "a")], unmeasured="host") == [("b", "a"), ("c", "a")]
    ms = [Measurement(("b", "a"), ba, 1e-3), Measurement(("c", "a"), ca, 1e-3)]
    fit = fit_family_tables(d, families, ms, n_records=float(bac.sum()), unmeasured="host")
    assert fit.cliques == [("b", "a"), ("c", "a")]
    np.testing.assert_allclose(fit.tables[0], ba.sum(axis=0), atol=1e-3)
    np.testing.assert_allclose(fit.tables[1], ba, atol=1e-3)
    np.testing.assert_allclose(fit.tables[2], ca, atol=1e-3)


def test_maximal_tables_beat_all_tables_on_the_absolute_error_objective_by_simulation():
    # a root x (k states) inside its child's family {y, x} (k * l cells), Laplace noise at the sqrt split
    k, l, eps, reps = 3, 4, 1.0, 40_000
    rng = np.random.default_rng(5)
    cells = np.array([k, k * l], dtype=float)
    e_all = error_optimal_allocation(cells, eps)
    own = rng.laplace(scale=1 / e_all[0], size=(reps, k))
    host = rng.laplace(scale=1 / e_all[1], size=(reps, k, l))
    # measuring both: the root's cell from its own table and from the host's row sum, inverse-variance weighted
    v_own, v_sum = 2 / e_all[0] ** 2, 2 * l / e_all[1] ** 2
    assert v_own == pytest.approx(v_sum)  # the sqrt split makes the two estimates equally precise
    combined = (own / v_own + host.sum(axis=2) / v_sum) / (1 / v_own + 1 / v_sum)
    all_error = np.abs(host).sum(axis=(1, 2)).mean() + np.abs(combined).sum(axis=1).mean()
    # measuring the host alone with the whole budget: the root's cell is the host's row sum
    host_only = rng.laplace(scale=1 / eps, size=(reps, k, l))
    maximal_error = np.abs(host_only).sum(axis=(1, 2)).mean() + np.abs(host_only.sum(axis=2)).sum(axis=1).mean()
    # the closed forms of maximal_families' docstring (Gaussian approximations of the sums)
    s_kept, dropped = math.sqrt(k * l), math.sqrt(k)
    formula_all = (s_kept + dropped) * (s_kept + math.sqrt(2 / math.pi) * dropped) / eps
    formula_maximal = s_kept * (s_kept + 2 / math.sqrt(math.pi) * dropped) / eps
    assert maximal_error == pytest.approx(formula_maximal, rel=0.03)
    assert all_error == pytest.approx(formula_all, rel=0.03)
    assert maximal_error < 0.9 * all_error
    assert maximal_families([("x",), ("y", "x")]) == [1]


def test_the_estimator_releases_only_the_maximal_families_and_spends_the_whole_budget():
    from pgmpy.models import DiscreteBayesianNetwork

    from pgmpy_dp.datasets import load_network, sample_network

    net = load_network("asia")
    df = sample_network(net, 3000, seed=2)
    model = DiscreteBayesianNetwork(net.edges())
    model.add_nodes_from(net.nodes())
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, random_state=3, tables="maximal")
    fitted = model.copy().fit(df, estimator=est)
    families = [(v, *sorted(net.get_parents(v))) for v in net.nodes()]
    kept = {families[i][0] for i in maximal_families(families)}
    assert {t.attrs[0] for t in est.release_} == kept and len(kept) < len(families)
    assert est.allocation_.sum() == pytest.approx(1.0)
    assert (est.allocation_[[v for v in est.allocation_.index if v not in kept]] == 0).all()
    assert len(fitted.get_cpds()) == len(families)
    budget = PrivacyBudget(epsilon=1.0)
    with pytest.raises(ValueError, match="tables='maximal' needs consistency='likelihood'"):
        model.copy().fit(df, estimator=pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, budget=budget, tables="maximal",
                                                                  consistency="projection"))
    assert budget.spent == 0


def test_a_free_unmeasured_family_is_exact_without_noise_and_escapes_the_hosts_shrinkage():
    d = Domain({"x": [0, 1], "y": [0, 1, 2, 3]})
    yx = np.array([[400.0, 10.0], [300.0, 20.0], [80.0, 60.0], [20.0, 110.0]])  # P(x) = (0.8, 0.2)
    families = [("x",), ("y", "x")]
    exact = [Measurement(("y", "x"), yx, 1e-3)]
    fit = fit_family_tables(d, families, exact, n_records=1000.0, unmeasured="free")
    assert fit.cliques == [("x",), ("y", "x")]
    np.testing.assert_allclose(fit.tables[0], yx.sum(axis=0), atol=1e-2)
    np.testing.assert_allclose(fit.tables[1], yx, atol=1e-2)
    # a strong prior (as for a noisy host) pulls the host-read marginal towards uniform; the free one keeps
    # it (Gaussian noise: the host's row sums then carry x's marginal, up to the E-step's smoothing; 39 vs 7 records)
    noisy = [Measurement(("y", "x"), yx, 20.0, noise="gaussian")]
    host = fit_family_tables(d, families, noisy, n_records=1000.0, regularization=5e-3, naive_regularization=5e-3,
                             unmeasured="host")
    free = fit_family_tables(d, families, noisy, n_records=1000.0, regularization=5e-3, naive_regularization=5e-3,
                             unmeasured="free")
    error_host = abs(host.tables[0][0] - 800.0)
    error_free = abs(free.tables[0][0] - 800.0)
    assert error_host > 20.0 and error_free < 0.25 * error_host
    with pytest.raises(ValueError, match="unmeasured must be"):
        fit_family_tables(d, families, exact, n_records=1000.0, unmeasured="none")


@pytest.mark.parametrize(
    "kwargs, released",
    [({}, 8), ({"tables": "maximal"}, 6), ({"tables": "maximal", "allocation": "uniform"}, 6),
     ({"tables": "maximal", "prior_weight": "per-clique"}, 6), ({"consistency": "projection"}, 8)],
)
def test_tables_maximal_releases_the_maximal_families_and_the_default_one_per_family(kwargs, released):
    from pgmpy.models import DiscreteBayesianNetwork

    from pgmpy_dp.datasets import load_network, sample_network

    net = load_network("asia")
    model = DiscreteBayesianNetwork(net.edges())
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=2.0, random_state=0, **kwargs)
    fitted = model.fit(sample_network(net, 2000, seed=1), estimator=est)
    assert len(est.release_) == released and fitted.check_model()


@pytest.mark.parametrize("bad", [{"tables": "auto"}, {"prior_weight": "local"}, {"tables": ["all"]},
                                 {"tables": "maximal", "allocation": "data-dependent"}])
def test_bad_tables_or_prior_weight_is_refused_before_spending(bad):
    from pgmpy.models import DiscreteBayesianNetwork

    from pgmpy_dp.datasets import load_network, sample_network

    net = load_network("asia")
    budget = PrivacyBudget(epsilon=1.0)
    with pytest.raises(ValueError, match="tables must be|prior_weight must be|tables='maximal' needs"):
        DiscreteBayesianNetwork(net.edges()).fit(sample_network(net, 500, seed=1),
                                                 estimator=pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, budget=budget, **bad))
    assert budget.spent == 0


def test_tables_maximal_still_fits_the_cpd_of_every_dropped_family():
    """asia's roots lie inside their children's families: no table, no budget, yet a CPD of the right shape that sums to
    1 and sits near the data at a large budget (its marginal is read off the fitted model, with no prior on it)."""
    from pgmpy.models import DiscreteBayesianNetwork

    from pgmpy_dp.datasets import load_network, sample_network

    net = load_network("asia")
    df = sample_network(net, 20000, seed=5)
    families = [(v, *sorted(net.get_parents(v))) for v in net.nodes()]
    kept = [families[i] for i in maximal_families(families)]
    dropped = sorted(f[0] for f in families if f not in kept)
    assert dropped == ["asia", "smoke"]
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=50.0, random_state=1, tables="maximal")
    fitted = DiscreteBayesianNetwork(net.edges()).fit(df, estimator=est)
    assert sorted(t.attrs for t in est.release_) == sorted(kept)
    assert est.allocation_[dropped].sum() == 0 and est.allocation_.sum() == pytest.approx(50.0)
    for v in dropped:
        cpd = fitted.get_cpds(v)
        assert cpd.get_values().shape == (2, 1)
        np.testing.assert_allclose(cpd.get_values().sum(axis=0), 1.0, atol=1e-9)
        # the host tables' noise at epsilon 50 moves a share by about 1e-4; the rest is the fit's tolerance
        empirical = (df[v] == cpd.state_names[v][0]).mean()
        assert abs(cpd.get_values()[0, 0] - empirical) < 0.005


def test_query_interval_refits_a_maximal_fit_from_its_released_tables_only(monkeypatch):
    """The bootstrap refits of a tables="maximal" fit re-release the maximal families alone (the dropped ones stay
    unmeasured, as in the fit) and still refit every family."""
    from pgmpy.models import DiscreteBayesianNetwork

    from pgmpy_dp.datasets import load_network, sample_network
    from pgmpy_dp.estimators.bayesian import DiscretePrivateMLE

    net = load_network("asia")
    est = DiscretePrivateMLE(epsilon=1.0, random_state=0, tables="maximal")
    DiscreteBayesianNetwork(net.edges()).fit(sample_network(net, 2000, seed=0), estimator=est)
    released = sorted(t.attrs for t in est.release_)
    seen = []
    original = DiscretePrivateMLE._likelihood_tables

    def spy(self, domain, families, tables, n_records):
        seen.append((sorted(t.attrs for t in tables), len(families)))
        return original(self, domain, families, tables, n_records)

    monkeypatch.setattr(DiscretePrivateMLE, "_likelihood_tables", spy)
    iv = pgmpy_dp.query_interval(est, "smoke", n_samples=2, random_state=0, show_progress=False, interval="normal")
    assert seen == [(released, 8)] * 2 and len(released) == 6
    assert iv.attrs["bootstrap"].shape == (2, 2) and iv.estimate.sum() == pytest.approx(1.0)
