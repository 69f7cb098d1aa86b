"""benchmarks/mobility.py: the generator, the statistics, the PSGD accountant and a tiny end-to-end run."""

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from pgmpy_dp.engine import JunctionTree, fit_log_potentials
from pgmpy_dp.privacy.parameters import rho_to_epsilon_delta
from pgmpy_dp.privacy.domain import Domain

_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.append(str(_BENCHMARKS))  # for the shared harness; appended, so no script shadows an installed package
_PATH = _BENCHMARKS / "mobility.py"
_spec = importlib.util.spec_from_file_location("bench_mobility", _PATH)
mobility = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = mobility  # dataclasses look their module up there
_spec.loader.exec_module(mobility)


def test_generator_is_sparse_heavy_tailed_and_reproducible():
    df = mobility.generate(700, n_aps=6, seed=3)
    assert len(df) == 700 * 24 and df.groupby("individual").size().eq(24).all()
    codes = np.stack([df[v].cat.codes.to_numpy() for v in mobility.STEPS], axis=1)
    assert 0.7 < (codes == 0).mean() < 0.99  # most steps null
    per_user = (codes > 0).any(axis=1).reshape(-1, 24).sum(axis=1)  # present hours per individual
    assert per_user.max() >= 5 * max(1.0, np.median(per_user))  # a few very active individuals
    again = mobility.generate(700, n_aps=6, seed=3)
    assert df.equals(again)


def test_split_holds_out_whole_individuals():
    df = mobility.generate(400, n_aps=4, seed=0)
    train, test = mobility.split(df, seed=1)
    assert set(train["individual"]).isdisjoint(test["individual"])
    assert 0.15 < test["individual"].nunique() / 400 < 0.35


def test_individual_statistics_add_up_to_the_tables():
    df = mobility.generate(300, n_aps=4, seed=2)
    k = 5
    stats, ids = mobility.individual_stats(df, k)
    node, pooled = mobility.exact_tables(df, k)
    np.testing.assert_allclose(stats.sum(axis=0) * 24, np.concatenate([node, pooled.ravel()]))
    assert ids.size == 300


@pytest.mark.parametrize("eps, steps", [(0.1, 100), (1.0, 300), (5.0, 30)])
def test_psgd_accountant_composes_full_batch_gaussian_steps_in_zcdp(eps, steps):
    sigma = mobility.psgd_noise_multiplier(eps, steps, delta=1e-6)
    rho = steps / (2 * sigma**2)  # each step: sensitivity C, noise sigma C, so 1 / (2 sigma^2)-zCDP
    assert rho_to_epsilon_delta(rho, 1e-6) == pytest.approx(eps, rel=1e-9)
    assert rho_to_epsilon_delta(rho * 1.01, 1e-6) > eps  # and no slack left
    # more steps at the same budget need proportionally more noise variance
    assert mobility.psgd_noise_multiplier(eps, 4 * steps) == pytest.approx(2 * sigma)


def _three_aps(n, seed):
    """A small population over 3 access points (4 states), its junction tree and per-individual statistics."""
    df = mobility.generate(n, n_aps=3, seed=seed)
    jt = JunctionTree(Domain({v: mobility.states(3) for v in mobility.STEPS}), mobility.CLIQUES)
    return df, 4, jt, mobility.individual_stats(df, 4)[0]


@pytest.mark.slow
def test_psgd_without_noise_or_clipping_converges_to_the_mle():
    df, k, jt, stats = _three_aps(600, seed=4)
    data = mobility.PSGDData.from_stats(stats)
    assert data.weights.sum() == 600 and data.stats.shape[0] < 600  # identical all-null individuals merged
    # |stats - E[stats]| <= 1 + 5 + 5 * sqrt(2) < 20: the clip never binds; at eps=1e9 the noise is ~1e-5 per step
    theta = mobility.psgd(data, jt, k, 1e9, clip=20.0, lr=1.0, n_steps=3000, rng=np.random.default_rng(0))
    node, pooled = mobility.exact_tables(df, k)
    n = len(df)
    targets = [node / n] + [pooled / (5 * n)] * 5
    mle = fit_log_potentials(jt, targets, 0.0, mobility.TIED, tol=1e-10)
    ll_psgd = mobility.holdout_loglik(theta, jt, (node, pooled), n)
    ll_mle = mobility.holdout_loglik(mle.log_potentials, jt, (node, pooled), n)
    assert ll_psgd <= ll_mle + 1e-9  # the MLE maximises the training log-likelihood
    assert ll_psgd == pytest.approx(ll_mle, abs=2e-3)


def test_tiny_run_scores_every_method():
    runs, grid = mobility.run(sizes=(400,), epsilons=(1.0,), reps=1, n_aps=3, grid=[(0.1, 8.0, 30)], log=lambda *_: None)
    assert set(runs["method"]) == {"non-private", "naive-mle", "cgm-em", "psgd"}
    assert np.all(np.isfinite(runs["loglik"])) and np.all(runs["loglik"] < 0)
    assert len(grid) == 1
    summary = mobility.summarise(runs)
    naive = summary[summary["method"] == "naive-mle"]
    assert math.isclose(float(naive["time_vs_naive"].iloc[0]), 1.0)


def test_psgd_clips_each_individual_exactly_as_a_dense_per_individual_loop():
    """The sparse, de-duplicated sum equals clipping every individual's own gradient, noise draw for noise draw."""
    _, k, jt, stats = _three_aps(300, seed=5)
    clip, lr, steps, eps = 0.05, 20.0, 15, 0.5
    got = mobility.psgd(mobility.PSGDData.from_stats(stats), jt, k, eps, clip, lr, steps, np.random.default_rng(1))
    sigma = mobility.psgd_noise_multiplier(eps, steps)
    rng = np.random.default_rng(1)
    x = np.zeros(k + k * k)
    for _ in range(steps):
        mu, _ = jt.marginals(mobility.tied_theta(x[:k], x[k:].reshape(k, k)))
        g = stats - np.concatenate([mu[0], sum(mu[1:]).ravel()])
        g *= np.minimum(1.0, clip / np.linalg.norm(g, axis=1))[:, None]
        assert np.all(np.linalg.norm(g, axis=1) <= clip * (1 + 1e-12))
        x = x + lr * (g.sum(axis=0) + rng.normal(0.0, sigma * clip, size=x.size)) / len(stats)
    np.testing.assert_allclose(got[0], x[:k], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(got[1], x[k:].reshape(k, k), rtol=1e-9, atol=1e-9)


def test_skip_bias_separates_skipped_from_unskipped_releases():
    """Without skip_state a normalised table (24 records per individual, equal weights) is the records'
    distribution up to the 1/1024 rounding; with it, even renormalised over its counted cells it is not."""
    bias = mobility.skip_bias(sizes=(400,), n_aps=3)
    unskipped = bias[bias["skip_state"] == "None"]
    skipped = bias[bias["skip_state"] == mobility.NULL]
    assert len(unskipped) == len(skipped) == 2
    assert np.all(unskipped["tv_distance"] < 1e-3)  # rounding only
    assert np.all(skipped["tv_distance"] > 0.01)  # 0.030-0.051 over seeds 0 and 5
