"""A potential for every measured attribute set inside a model clique (``measured_subcliques``), and
CGM-EM's prior weight set per clique (``per_clique_weights``).

Without one, a measured 1-way margin lives only inside the edge potentials, where the L2 prior
prices its log-odds once per state of the partner: a 30-state leaf's skewed margin is pulled
toward uniform far beyond what the noise explains. With one, it stays within the noise.
"""

import numpy as np
import pandas as pd
import pytest
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp
import pgmpy_dp.estimators.markov as markov_module
import pgmpy_dp.estimators.priors as priors
from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.estimators.priors import UNRESOLVED_PRIOR_PRECISION, auto_regularization, floored_regularization
from pgmpy_dp.estimators.measurements import clique_measurements, measured_subcliques
from pgmpy_dp.tables import release_marginals

K, N, EPSILON = 30, 2000, 4.0


def _skewed_pair(seed):
    rng = np.random.default_rng(seed)
    p = 0.8 ** np.arange(K)
    a = rng.choice(K, N, p=p / p.sum())
    b = (a + rng.integers(0, 3, N)) % K
    return pd.DataFrame({"a": a, "b": b}), {"a": list(range(K)), "b": list(range(K))}


def _margin_l1(est, empirical):
    return float(np.abs(pgmpy_dp.query(est, ["a"]).values - empirical).sum())


@pytest.mark.slow
@pytest.mark.parametrize("method", ["cgm-em", "naive-mle"])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_measured_margin_is_not_shrunk_toward_uniform(method, seed, monkeypatch):
    df, domain = _skewed_pair(seed)
    release = release_marginals(df, [("a", "b"), ("a",)], EPSILON, domain=domain, random_state=seed,
                                show_progress=False)
    empirical = np.bincount(df["a"], minlength=K) / N
    # the expected L1 the 1-way table's own noise puts on the margin: K cells of mean |noise| = scale
    noise_l1 = K * release.tables[1].scale / N
    model = DiscreteMarkovNetwork([("a", "b")])
    new = PrivateMarkovEstimator(method=method, show_progress=False).fit(model, release)
    assert new.cliques_ == [("a", "b"), ("a",)]
    assert len(new.model_.get_factors()) == 2
    monkeypatch.setattr(markov_module, "measured_subcliques", lambda releases, cliques: [])
    monkeypatch.setattr(priors, "per_clique_weights", lambda rule, cliques, tables, ms, tied, pooled: pooled)
    old = PrivateMarkovEstimator(method=method, show_progress=False).fit(model, release)
    assert old.cliques_ == [("a", "b")]
    err_new, err_old = _margin_l1(new, empirical), _margin_l1(old, empirical)
    assert err_new < 3 * noise_l1, (err_new, noise_l1)
    assert err_old > 6 * noise_l1, (err_old, noise_l1)  # the old parametrisation's extra shrinkage
    uniform = np.full(K, 1.0 / K)
    flat_new = np.abs(pgmpy_dp.query(new, ["a"]).values - uniform).sum()
    flat_old = np.abs(pgmpy_dp.query(old, ["a"]).values - uniform).sum()
    assert flat_old < flat_new  # shrunk toward uniform, not elsewhere


def test_measured_subcliques_adds_measured_sub_sets_once_in_clique_order():
    df = pd.DataFrame({v: np.arange(40) % 2 for v in "abcd"})
    domain = {v: [0, 1] for v in "abcd"}
    rel = release_marginals(df, [("c", "b", "a"), ("b", "a"), ("a",), ("c",), ("d",), ("c", "d")], 1.0,
                            domain=domain, random_state=0, show_progress=False)
    rel2 = release_marginals(df, [("a",), ("a", "b")], 1.0, domain=domain, random_state=1, show_progress=False)
    # (c, d) is a clique and (d,) lies in no clique: neither is added; (a,) and (a, b) twice, added once
    assert measured_subcliques([rel, rel2], [("a", "b", "c"), ("c", "d")]) == [("a", "b"), ("a",), ("c",), ("d",)]
    assert measured_subcliques([rel], [("a", "b", "c"), ("c", "d"), ("a", "b")]) == [("a",), ("c",), ("d",)]


@pytest.mark.slow
def test_node_potentials_keep_tied_groups_and_refits_working():
    """Tied cliques keep their indices (extras are appended); the interval refits reuse ``cliques_``."""
    rng = np.random.default_rng(3)
    steps = ["x1", "x2", "x3", "x4"]
    x = [rng.random(3000) < 0.3]
    for _ in steps[1:]:
        x.append(np.where(rng.random(3000) < 0.8, x[-1], ~x[-1]))
    df = pd.DataFrame(dict(zip(steps, x)))
    domain = {v: [False, True] for v in steps}
    edges = list(zip(steps, steps[1:]))
    est = PrivateMarkovEstimator(show_progress=False, random_state=0)
    est.fit(DiscreteMarkovNetwork(edges), df, epsilon=2.0, domain=domain, cliques=[("x1",)] + edges, tied=[edges])
    extra = release_marginals(df, [("x3",)], 1.0, domain=domain, random_state=1, show_progress=False)
    refit = PrivateMarkovEstimator(show_progress=False).fit(
        DiscreteMarkovNetwork(edges), [est.releases_[0], extra], cliques=[("x1",)] + edges, tied=[edges]
    )
    assert refit.cliques_ == [("x1",)] + edges + [("x3",)]
    assert refit.tied_ == [[1, 2, 3]]
    weights = refit.regularization_["cgm-em"]  # the refits below take one weight per clique
    assert np.ndim(weights) == 1 and weights[1] == weights[2] == weights[3] != weights[4]
    np.testing.assert_array_equal(refit.log_potentials_[1], refit.log_potentials_[3])
    interval = pgmpy_dp.query_interval(refit, ["x3"], n_samples=8, random_state=0, show_progress=False)
    assert np.all(interval.lower <= interval.estimate) and np.all(interval.estimate <= interval.upper)


def test_cgm_weights_are_set_per_clique_from_its_own_tables():
    """A 1-way table of 30 cells and a 2-way one of 900 at the same noise scale ask for different weights."""
    df, domain = _skewed_pair(0)
    release = release_marginals(df, [("a", "b"), ("a",)], 0.5, domain=domain, random_state=0, show_progress=False)
    est = PrivateMarkovEstimator(show_progress=False).fit(DiscreteMarkovNetwork([("a", "b")]), release)
    weights = est.regularization_["cgm-em"]
    _, per_clique = clique_measurements([release], est.cliques_)
    scales = [[t.scale] for t in release.tables]
    expected = [floored_regularization(auto_regularization(ts, est.n_records_), s) for ts, s in zip(per_clique, scales)]
    np.testing.assert_allclose(weights, expected, rtol=1e-12)
    assert weights[0] > weights[1] == pytest.approx(UNRESOLVED_PRIOR_PRECISION)
    pooled = floored_regularization(
        auto_regularization([t for ts in per_clique for t in ts], est.n_records_), [t.scale for t in release.tables]
    )
    assert weights[1] < pooled <= weights[0]  # the mean over both tables gives the 1-way the 2-way's weight
