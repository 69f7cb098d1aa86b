"""Issue 12 (bn12h): per-family prior weights chosen by the evidence (``prior_weight="evidence"``)."""

import warnings

import numpy as np
import pytest

import pgmpy_dp
from pgmpy_dp.engine import Measurement
from pgmpy_dp.estimators.likelihood import (
    EVIDENCE_BOUND,
    column_information,
    effective_parameters,
    evidence_weight,
    fit_family_tables,
    noise_regularization,
)
from pgmpy_dp.privacy.budget import PrivacyBudget
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.tables import NoisyTable


def test_column_information_is_the_multinomial_fisher_information_without_noise_and_less_with_it():
    rng = np.random.default_rng(3)
    counts = rng.uniform(1, 50, size=(4, 3))  # node on axis 0, three parent configurations
    e0, e1 = column_information(counts, 0.0), column_information(counts, 25.0)
    for u in range(3):
        n_u, p = counts[:, u].sum(), counts[:, u] / counts[:, u].sum()
        fisher = n_u * (np.diag(p) - np.outer(p, p))
        np.testing.assert_allclose(e0[u], np.linalg.eigvalsh(fisher), atol=1e-9)
    assert np.all(np.abs(e0[:, 0]) < 1e-9) and np.all(np.abs(e1[:, 0]) < 1e-9)  # the column constant: a gauge
    assert np.all(e1[:, 1:] < e0[:, 1:])  # noise removes information


@pytest.mark.parametrize("seed", range(5))
def test_the_evidence_weight_satisfies_its_fixed_point_equation(seed):
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 2, size=(3, 4, 2))
    counts = 1000 * np.exp(theta) / np.exp(theta).sum()
    v = float(rng.uniform(1, 400))
    centre = rng.normal(0, 0.5, size=theta.shape)
    alpha = evidence_weight(theta, counts, v, 1e-8, 1e8, centre=centre)
    d = theta - centre
    d = d - d.mean(axis=0, keepdims=True)
    gamma = effective_parameters(column_information(counts, v), alpha)
    assert 1e-8 < alpha < 1e8
    assert alpha * np.sum(d**2) == pytest.approx(gamma, rel=1e-9)
    # bounds clip the root: it is returned only inside them
    assert evidence_weight(theta, counts, v, 2 * alpha, 4 * alpha, centre=centre) == 2 * alpha
    assert evidence_weight(theta, counts, v, alpha / 4, alpha / 2, centre=centre) == alpha / 2


def _family_fit(cpd, n, scale, seed):
    """Noisy tables of a root ``a`` (uniform) and its child ``b`` with conditional ``cpd`` (b x a), and the fit."""
    rng = np.random.default_rng(seed)
    k, m = cpd.shape
    d = Domain({"a": list(range(m)), "b": list(range(k))})
    truth = n * cpd / m  # (b, a)
    noisy = [truth.sum(axis=0) + rng.laplace(0, scale, m), truth + rng.laplace(0, scale, truth.shape)]
    tables = [NoisyTable(("a",), noisy[0], epsilon=1 / scale, scale=scale),
              NoisyTable(("b", "a"), noisy[1], epsilon=1 / scale, scale=scale)]
    g = noise_regularization(tables, n) / n
    ms = [Measurement(t.attrs, t.values, scale) for t in tables]
    fit = fit_family_tables(d, [("a",), ("b", "a")], ms, n, regularization=g, naive_regularization=10 * g,
                            prior_weight="evidence")
    return fit, g


def test_a_peaked_cpd_gets_a_weaker_prior_and_a_noise_swamped_family_a_stronger_one():
    # a near-deterministic child (0.95 on the diagonal) under heavy noise, where the global weight is large
    # (0.25 per table): the data still say the columns are peaked, so their prior is weaker (about 0.69x)
    cpd = np.full((6, 6), 0.01)
    cpd[np.arange(6), np.arange(6)] = 0.95
    fit, g = _family_fit(cpd, 5_000, 30.0, seed=0)
    assert fit.regularization[1] < 0.9 * g
    # a flat child over many cells, few records against heavy noise: the noise swamps the table
    cpd = np.random.default_rng(1).dirichlet(np.full(12, 50.0), size=12).T  # (12 states, 12 parent configurations)
    fit, g = _family_fit(cpd, 2_000, 20.0, seed=1)
    assert fit.regularization[1] > 1.2 * g  # about 1.5x
    assert all(g / EVIDENCE_BOUND - 1e-15 <= w <= g * EVIDENCE_BOUND + 1e-15 for w in fit.regularization)


def test_noiseless_tables_are_still_recovered_exactly():
    d = Domain({"a": [0, 1, 2], "b": [0, 1]})
    ab = np.array([[600.0, 100.0], [100.0, 150.0], [20.0, 30.0]])
    ms = [Measurement(("a",), ab.sum(axis=1), 1e-3), Measurement(("b", "a"), ab.T, 1e-3)]
    t = [NoisyTable(m.attrs, m.values, epsilon=1e3, scale=1e-3) for m in ms]
    n = float(ab.sum())
    fit = fit_family_tables(d, [("a",), ("b", "a")], ms, n, regularization=noise_regularization(t, n) / n,
                            prior_weight="evidence")
    np.testing.assert_allclose(fit.tables[1], ab.T, atol=1e-3)
    np.testing.assert_allclose(fit.tables[0], ab.sum(axis=1), atol=1e-3)


def test_huge_epsilon_equals_pgmpys_mle_and_evidence_changes_a_noisy_fit():
    from pgmpy.models import DiscreteBayesianNetwork
    from pgmpy.parameter_estimator import DiscreteMLE

    net = pgmpy_dp.datasets.load_network("asia")
    df = pgmpy_dp.datasets.sample_network(net, 3000, seed=0)

    def fit(**kw):
        model = DiscreteBayesianNetwork(net.edges())
        model.add_nodes_from(net.nodes())
        return model.fit(df, estimator=pgmpy_dp.DiscretePrivateMLE(random_state=0, **kw))

    private = fit(epsilon=1e9, prior_weight="evidence")
    exact = DiscreteBayesianNetwork(net.edges()).fit(df, estimator=DiscreteMLE(state_names=net.states))
    for node in net.nodes():
        p, q = private.get_cpds(node), exact.get_cpds(node).copy()
        q.reorder_parents(p.variables[1:], inplace=True) if p.variables[1:] else None
        np.testing.assert_allclose(p.get_values(), q.get_values(), atol=1e-5, err_msg=node)
    # at a real epsilon the weights move, so the CPDs differ from the global weight's (same noise)
    a, b = fit(epsilon=0.5, prior_weight="evidence"), fit(epsilon=0.5)
    gap = max(np.max(np.abs(a.get_cpds(n).get_values() - b.get_cpds(n).get_values())) for n in net.nodes())
    assert gap > 1e-4


@pytest.mark.parametrize("bad", ["evidnce", None, 1.0])
def test_a_bad_prior_weight_is_refused_before_spending(bad):
    from pgmpy.models import DiscreteBayesianNetwork

    net = pgmpy_dp.datasets.load_network("asia")
    budget = PrivacyBudget(epsilon=1.0)
    with pytest.raises(ValueError, match="prior_weight must be one of"):
        DiscreteBayesianNetwork(net.edges()).fit(
            pgmpy_dp.datasets.sample_network(net, 300, seed=1),
            estimator=pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, budget=budget, prior_weight=bad),
        )
    assert budget.spent == 0


def test_bad_arguments_of_the_likelihood_functions_name_the_parameter():
    d = Domain({"a": [0, 1]})
    ms = [Measurement(("a",), np.array([5.0, 5.0]), 1.0)]
    with pytest.raises(ValueError, match="prior_weight must be 'given'"):
        fit_family_tables(d, [("a",)], ms, 10.0, prior_weight="per-clique")
    with pytest.raises(ValueError, match="0 < lower <= upper"):
        evidence_weight(np.zeros(2), np.ones(2), 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="0 < lower <= upper"):
        evidence_weight(np.zeros(2), np.ones(2), 1.0, 2.0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a flat family (theta = 0): the root is at the upper bound, no warning
        assert evidence_weight(np.zeros((2, 2)), np.full((2, 2), 5.0), 1.0, 0.1, 3.0) == 3.0


def _noisy_asia_fit(**kw):
    from pgmpy_dp.estimators.evidence import pooled_n_records
    from pgmpy_dp.estimators.likelihood import _noise_excess, measurement_for

    net = pgmpy_dp.datasets.load_network("asia")
    df = pgmpy_dp.datasets.sample_network(net, 2000, seed=2)
    families = [(n, *sorted(net.get_parents(n))) for n in net.nodes()]
    rel = df.dp.release(families, epsilon=1.0, random_state=3)
    tables = list(rel)
    n = pooled_n_records([rel])
    return fit_family_tables(rel.domain, [t.attrs for t in tables], [measurement_for(t) for t in tables], n,
                             regularization=noise_regularization(tables, n) / n,
                             naive_regularization=_noise_excess(tables, n) / n, **kw), noise_regularization(tables, n) / n


@pytest.mark.parametrize("schedule", ["prefit", "staged"])
def test_both_schedules_keep_the_weights_within_their_bounds_and_bounds_one_keep_the_global_weight(schedule):
    given, g = _noisy_asia_fit()
    fit, _ = _noisy_asia_fit(prior_weight="evidence", evidence_schedule=schedule, evidence_bounds=(0.5, 2.0))
    ratios = np.array(fit.regularization) / g
    assert np.all((ratios >= 0.5 - 1e-12) & (ratios <= 2.0 + 1e-12)) and np.ptp(ratios) > 0.1
    held, _ = _noisy_asia_fit(prior_weight="evidence", evidence_schedule=schedule, evidence_bounds=(1.0, 1.0))
    assert np.allclose(held.regularization, g, rtol=1e-12)
    gap = max(float(np.max(np.abs(a - b)) / np.sum(b)) for a, b in zip(held.tables, given.tables))
    if schedule == "prefit":  # the main fit is the given fit itself (weights as a list instead of a float)
        assert gap < 1e-6
    assert held.n_iter <= 50  # staged: the three stages share the iteration budget (DEFAULT_MAX_ITER)


def test_bad_schedule_or_bounds_are_refused():
    d = Domain({"a": [0, 1]})
    ms = [Measurement(("a",), np.array([5.0, 5.0]), 1.0)]
    with pytest.raises(ValueError, match="evidence_schedule must be"):
        fit_family_tables(d, [("a",)], ms, 10.0, prior_weight="evidence", evidence_schedule="between")
    with pytest.raises(ValueError, match="evidence_bounds must be"):
        fit_family_tables(d, [("a",)], ms, 10.0, prior_weight="evidence", evidence_bounds=(2.0, 1.0))
