"""Exact per-cell intervals of released counts (issue 14, item 1)."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.tables.intervals import noise_coverage, noise_quantile, release_interval
from pgmpy_dp.tables.release import release_counts

LAPLACE, GAUSS = "discrete_laplace", "discrete_gaussian"


def pmf_coverage(mechanism, scale, q):
    """P(|Z| <= q) by summing the normalised pmf over a wide support (independent of the module)."""
    k = np.arange(-int(60 * scale) - 50, int(60 * scale) + 51, dtype=float)
    logp = -np.abs(k) / scale if mechanism == LAPLACE else -(k**2) / (2 * scale**2)
    p = np.exp(logp - logp.max())
    p /= p.sum()
    return float(p[np.abs(k) <= q].sum())


@pytest.mark.parametrize("mechanism", [LAPLACE, GAUSS])
@pytest.mark.parametrize("scale", [0.3, 1.0, 2.5, 7.0, 40.0])
@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99])
def test_quantile_reaches_level_and_is_minimal(mechanism, scale, level):
    q = noise_quantile(mechanism, scale, level)
    assert pmf_coverage(mechanism, scale, q) >= level - 1e-12
    if q > 0:  # shrinking by one loses the level
        assert pmf_coverage(mechanism, scale, q - 1) < level
    assert noise_coverage(mechanism, scale, q) == pytest.approx(pmf_coverage(mechanism, scale, q), abs=1e-12)


def test_large_gaussian_sigma_uses_a_consistent_approximation():
    from pgmpy_dp.tables.intervals import GAUSSIAN_SUM_LIMIT

    sigma = GAUSSIAN_SUM_LIMIT
    q_exact = noise_quantile(GAUSS, sigma, 0.95)
    q_approx = noise_quantile(GAUSS, sigma * (1 + 1e-12), 0.95)  # just over the limit: midpoint rule
    assert abs(q_exact - q_approx) <= 1
    assert q_exact == pytest.approx(stats.norm.ppf(0.975) * sigma, abs=2)


def release(mechanism, scale, shape=(60, 60), seed=0):
    domain = Domain({"a": list(range(shape[0])), "b": list(range(shape[1]))})
    rng = np.random.default_rng(seed)
    exact = rng.integers(0, 50, size=shape).astype(float)
    budget = {"epsilon": 1.0 / scale} if mechanism == LAPLACE else {"rho": 1.0 / (2 * scale**2)}
    rel = release_counts([exact], domain, [("a", "b")], random_state=seed, **budget)
    return rel, exact


@pytest.mark.parametrize("mechanism,scale", [(LAPLACE, 3.0), (GAUSS, 4.0), (LAPLACE, 0.7)])
def test_simulated_coverage_matches_exact_coverage(mechanism, scale):
    rel, exact = release(mechanism, scale)
    assert rel[("a", "b")].scale == pytest.approx(scale)
    iv = rel.interval(("a", "b"), level=0.9)
    assert iv.attrs["method"] == "exact"
    c = iv.attrs["coverage"]
    assert c >= 0.9
    truth = exact.ravel()
    hits = int(((iv.lower.to_numpy() <= truth) & (truth <= iv.upper.to_numpy())).sum())
    n = truth.size
    sd = math.sqrt(n * c * (1 - c))
    assert abs(hits - n * c) <= 4 * sd, (hits, n * c, sd)
    # estimate column is the release itself
    assert np.array_equal(iv.estimate.to_numpy(), rel.series(("a", "b")).to_numpy())


def test_transposed_table_is_exact_and_indexed_like_series():
    rel, _ = release(LAPLACE, 2.0, shape=(3, 4))
    iv = rel.interval(("b", "a"))
    assert iv.attrs["method"] == "exact"
    assert iv.index.equals(rel.series(("b", "a")).index)
    assert np.array_equal(iv.estimate.to_numpy(), rel[("a", "b")].values.T.ravel())


def test_subset_uses_normal_approximation_with_exact_variance():
    rel, exact = release(GAUSS, 5.0, shape=(400, 30))
    iv = rel.interval("a", level=0.9)
    assert iv.attrs["method"] == "normal"
    sd = math.sqrt(rel[("a", "b")].variance * 30)
    assert np.allclose((iv.upper - iv.lower).to_numpy(), 2 * stats.norm.ppf(0.95) * sd)
    truth = exact.sum(axis=1)
    hits = int(((iv.lower.to_numpy() <= truth) & (truth <= iv.upper.to_numpy())).sum())
    assert abs(hits - 0.9 * 400) <= 4 * math.sqrt(400 * 0.09)


def test_clip_keeps_bounds_non_negative_and_only_widens_coverage():
    rel, _ = release(LAPLACE, 20.0, shape=(5, 5))
    raw, clipped = rel.interval(("a", "b")), rel.interval(("a", "b"), clip=True)
    assert (clipped[["estimate", "lower", "upper"]] >= 0).all().all()
    assert np.array_equal(clipped.lower.to_numpy(), np.maximum(raw.lower.to_numpy(), 0))
    assert np.array_equal(clipped.upper.to_numpy(), np.maximum(raw.upper.to_numpy(), 0))


@pytest.mark.parametrize("level", [0, 1, -0.5, 1.5, float("nan"), float("inf"), True, "0.95", None])
def test_bad_level_is_refused_by_name(level):
    rel, _ = release(LAPLACE, 1.0, shape=(2, 2))
    with pytest.raises(ValueError, match="level"):
        rel.interval(("a", "b"), level=level)
    with pytest.raises(ValueError, match="level"):
        noise_quantile(LAPLACE, 1.0, level)


def test_unknown_attrs_raise_key_error():
    rel, _ = release(LAPLACE, 1.0, shape=(2, 2))
    with pytest.raises(KeyError):
        release_interval(rel, ("a", "zzz"))


def test_noiseless_table_gives_point_intervals():
    rel, _ = release(LAPLACE, 1e-9, shape=(2, 2))
    iv = rel.interval(("a", "b"))
    assert isinstance(iv, pd.DataFrame)
    assert np.array_equal(iv.lower.to_numpy(), iv.upper.to_numpy())
