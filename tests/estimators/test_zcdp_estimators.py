"""Estimators fed with discrete Gaussian (rho-zCDP) releases."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork

import pgmpy_dp
from pgmpy_dp import DiscretePrivateMLE, PrivacyBudget, PrivateMarkovEstimator
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree
from pgmpy_dp.estimators.markov import clique_measurements
from pgmpy_dp.evaluation.markov import kl_divergence_potentials
from pgmpy_dp.privacy.domain import Domain

EDGES = [("a", "b"), ("b", "c"), ("c", "d")]


def sample_frame(n, seed=0, k=3):
    rng = np.random.default_rng(seed)
    domain = Domain({v: [f"s{i}" for i in range(k)] for v in "abcd"})
    theta = [np.log(rng.dirichlet(np.ones(k * k)).reshape(k, k)) for _ in EDGES]
    codes = JunctionTree(domain, EDGES).sample(theta, n, random_state=seed)
    df = pd.DataFrame({v: pd.Categorical.from_codes(codes[v], categories=domain[v]) for v in domain.attrs})
    return df, domain, theta


def _fit(method, data, regularization="auto", **kw):
    est = PrivateMarkovEstimator(
        method=method, show_progress=False, random_state=kw.pop("random_state", 0), regularization=regularization
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(DiscreteMarkovNetwork(EDGES), data, **kw)
    return est


def test_gaussian_tables_become_gaussian_measurements():
    df, _, _ = sample_frame(500)
    g = df.dp.release(EDGES, rho=1.0, random_state=0)
    lap = df.dp.release(EDGES, epsilon=1.0, random_state=0)
    measurements, _ = clique_measurements([g, lap], EDGES)
    assert [m.noise for m in measurements] == ["gaussian"] * 3 + ["laplace"] * 3
    assert [m.scale for m in measurements[:3]] == [t.scale for t in g.tables]


def test_markov_fit_with_rho_spends_rho_and_releases_gaussian_tables():
    df, _, _ = sample_frame(2000)
    budget = PrivacyBudget(rho=1.0)
    est = _fit("naive-mle", df, rho=0.3, budget=budget)
    (rel,) = est.releases_
    assert rel.mechanism == "discrete_gaussian" and rel.rho == pytest.approx(0.3)
    assert [t.scale for t in rel.tables] == pytest.approx([math.sqrt(3 / 0.6)] * 3)
    assert budget.spent == 0.3


@pytest.mark.parametrize(
    "kwargs, exc, message",
    [
        ({"rho": 0.3, "budget": "pure"}, ValueError, r"PrivacyBudget\(rho=...\)"),
        ({"rho": 0.3, "epsilon": 1.0}, ValueError, "got both"),
        ({"rho": -1.0}, ValueError, "rho must be positive"),
        ({"rho": math.inf}, ValueError, "rho must be positive"),
    ],
)
def test_markov_fit_bad_rho_spends_nothing(kwargs, exc, message):
    df, _, _ = sample_frame(200)
    budget = PrivacyBudget(1.0) if kwargs.pop("budget", None) == "pure" else PrivacyBudget(rho=1.0)
    with pytest.raises(exc, match=message):
        _fit("naive-mle", df, budget=budget, **kwargs)
    assert budget.spent == 0 and budget.ledger == ()


def test_markov_fit_from_a_release_refuses_rho():
    df, _, _ = sample_frame(200)
    rel = df.dp.release(EDGES, rho=1.0, random_state=0)
    with pytest.raises(ValueError, match="epsilon, rho and budget only apply"):
        _fit("naive-mle", rel, rho=1.0)


@pytest.mark.parametrize("method", ["naive-mle", "cgm-em"])
def test_fit_from_a_gaussian_release_approaches_the_truth(method):
    """At rho = 1e4 (sigma 0.01, no noise to speak of) the fit is as good as the non-private one."""
    df, domain, theta = sample_frame(20_000, seed=3)
    exact = _fit("naive-mle", df.dp.release(EDGES, epsilon=1e8, random_state=0))
    est = _fit(method, df.dp.release(EDGES, rho=1e4, random_state=0))
    kl_exact = kl_divergence_potentials(domain, EDGES, theta, exact.cliques_, exact.log_potentials_)
    kl = kl_divergence_potentials(domain, EDGES, theta, est.cliques_, est.log_potentials_)
    assert kl == pytest.approx(kl_exact, rel=0.05, abs=1e-4)


def test_naive_mle_weights_tables_by_their_noise_variance():
    """A precise Gaussian table and a very noisy Laplace table of the same cliques: the fit follows the Gaussian."""
    df, domain, theta = sample_frame(20_000, seed=2)
    precise = df.dp.release(EDGES, rho=100.0, random_state=1)
    noisy = df.dp.release(EDGES, epsilon=0.01, random_state=1)
    # no penalty: "auto" would strengthen it because of the noisy table, which is not what is tested
    alone = _fit("naive-mle", precise, regularization=0.0)
    both = _fit("naive-mle", [precise, noisy], regularization=0.0)
    kl_alone = kl_divergence_potentials(domain, EDGES, theta, alone.cliques_, alone.log_potentials_)
    kl_both = kl_divergence_potentials(domain, EDGES, theta, both.cliques_, both.log_potentials_)
    assert kl_both == pytest.approx(kl_alone, rel=0.1, abs=1e-4)


# -- DiscretePrivateMLE ----------------------------------------------------------------------------


def _bn_frame(n=3000):
    return pgmpy_dp.datasets.sample_network("asia", n, seed=0)


def _bn():
    return DiscreteBayesianNetwork(pgmpy_dp.datasets.load_network("asia").edges())


def test_discrete_private_mle_with_rho_uniform():
    budget = PrivacyBudget(rho=1.0)
    est = DiscretePrivateMLE(rho=0.4, allocation="uniform", random_state=0, budget=budget)
    model = _bn().fit(_bn_frame(), estimator=est)
    assert model.check_model()
    n = len(model.nodes())
    assert est.release_.mechanism == "discrete_gaussian" and est.release_.rho == pytest.approx(0.4)
    assert [t.scale for t in est.release_] == pytest.approx([math.sqrt(n / 0.8)] * n)
    assert est.allocation_.name == "rho" and est.allocation_.sum() == pytest.approx(0.4)
    assert budget.spent == 0.4 and budget.ledger[0].rho == 0.4


def test_discrete_private_mle_with_rho_at_the_defaults_splits_rho_by_cells_to_the_two_thirds():
    """The default (error-optimal split, likelihood fit) with Gaussian noise: rho_i ∝ cells_i^(2/3)."""
    budget = PrivacyBudget(rho=1.0)
    est = DiscretePrivateMLE(rho=0.4, random_state=0, budget=budget)
    model = _bn().fit(_bn_frame(), estimator=est)
    assert model.check_model()
    cells = np.array([t.values.size for t in est.release_], dtype=float)
    rho = np.array([t.rho for t in est.release_])
    np.testing.assert_allclose(rho, 0.4 * cells ** (2 / 3) / np.sum(cells ** (2 / 3)), rtol=1e-12)
    assert est.release_.mechanism == "discrete_gaussian" and budget.spent == 0.4
    # and no CPD entry is set to exactly zero by the likelihood fit
    assert all(np.all(cpd.values > 0) for cpd in model.get_cpds())


@pytest.mark.parametrize(
    "kwargs, budget, message",
    [
        ({"rho": 0.4, "allocation": "data-dependent"}, PrivacyBudget(rho=1.0), "needs allocation='optimal' or 'uniform'"),
        ({"rho": 0.4, "epsilon": 1.0, "allocation": "uniform"}, PrivacyBudget(rho=1.0), "got both"),
        ({"rho": 0.4, "allocation": "uniform"}, PrivacyBudget(1.0), r"PrivacyBudget\(rho=...\)"),
        ({"rho": 0.0, "allocation": "uniform"}, PrivacyBudget(rho=1.0), "rho must be positive"),
    ],
)
def test_discrete_private_mle_bad_rho_spends_nothing(kwargs, budget, message):
    with pytest.raises(ValueError, match=message):
        _bn().fit(_bn_frame(200), estimator=DiscretePrivateMLE(budget=budget, **kwargs))
    assert budget.spent == 0 and budget.ledger == ()
