"""The discrete Gaussian sampler: its variance, its distribution, and its three paths."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chisquare

from pgmpy_dp.privacy.mechanisms import (
    OPENDP_MAX_CELLS,
    discrete_gaussian_noise,
    discrete_gaussian_variance,
    sampler_for,
)


def _pmf(sigma: float, half_width: int) -> tuple[np.ndarray, np.ndarray]:
    k = np.arange(-half_width, half_width + 1)
    w = np.exp(-(k.astype(float) ** 2) / (2 * sigma**2))
    return k, w / w.sum()


def _moments(sigma: float) -> tuple[float, float]:
    k, p = _pmf(sigma, int(60 * sigma) + 10)
    return float(np.sum(p * k**2)), float(np.sum(p * k**4))


@pytest.mark.parametrize("sigma", [0.2, 0.5, 1.0, 2.0, 7.5, 49.0, 60.0, 1e3])
def test_variance_matches_direct_summation(sigma):
    var, _ = _moments(sigma)
    assert discrete_gaussian_variance(sigma) == pytest.approx(var, rel=1e-12)
    if sigma >= 2:  # by Poisson summation the difference is below sigma^2 * 1e-32
        assert discrete_gaussian_variance(sigma) == pytest.approx(sigma**2, rel=1e-12)
    else:
        assert discrete_gaussian_variance(sigma) < sigma**2


def _variance_tolerance(sigma: float, n: int, z: float) -> float:
    # the sample variance of n draws has standard error sqrt((mu4 - var^2) / n)
    var, mu4 = _moments(sigma)
    return z * math.sqrt((mu4 - var**2) / n)


@pytest.mark.parametrize("sigma", [0.7, 1.0, 3.3, 40.0])
def test_seeded_sample_variance_within_derived_tolerance(sigma):
    n = 200_000
    x = discrete_gaussian_noise(n, sigma, random_state=np.random.default_rng(11))
    assert np.all(x == np.round(x))
    # mean zero: std error sqrt(var / n); variance: see _variance_tolerance; z = 4.5 (two-sided p ~ 7e-6)
    var = discrete_gaussian_variance(sigma)
    assert abs(x.mean()) < 4.5 * math.sqrt(var / n)
    assert abs(np.mean(x**2) - var) < _variance_tolerance(sigma, n, 4.5)


@pytest.mark.parametrize("sigma", [0.6, 2.0])
def test_seeded_sample_follows_the_pmf(sigma):
    """Chi-square goodness of fit of the rejection sampler against P(k) ∝ exp(-k^2 / (2 sigma^2))."""
    n = 100_000
    x = discrete_gaussian_noise(n, sigma, random_state=5).astype(int)
    k, p = _pmf(sigma, int(8 * sigma) + 2)
    observed = np.array([np.sum(x == v) for v in k])
    assert observed.sum() == n  # nothing beyond 8 sigma in 1e5 draws (probability < 1e-9)
    keep = p * n >= 5  # pool the sparse tails
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(p[keep] * n, p[~keep].sum() * n)
    if exp[-1] < 5:
        obs, exp = obs[:-1], exp[:-1]
        exp = exp * obs.sum() / exp.sum()
    assert chisquare(obs, exp).pvalue > 1e-4


@pytest.mark.parametrize("sampler", ["opendp", "rejection"])
def test_unseeded_paths_are_integer_valued_with_the_right_variance(sampler):
    """OS randomness (no seed is possible): z = 5.5, so a correct sampler fails with probability ~4e-8."""
    sigma, n = 2.5, 20_000
    x = discrete_gaussian_noise(n, sigma, sampler=sampler)
    assert x.dtype == np.float64 and np.all(x == np.round(x))
    assert abs(np.mean(x**2) - discrete_gaussian_variance(sigma)) < _variance_tolerance(sigma, n, 5.5)


def test_paths_chosen_by_size_and_seed():
    assert sampler_for(OPENDP_MAX_CELLS, mechanism="discrete_gaussian") == "opendp"
    assert sampler_for(OPENDP_MAX_CELLS + 1, mechanism="discrete_gaussian") == "rejection"
    assert sampler_for(10, random_state=0, mechanism="discrete_gaussian") == "seeded"
    assert discrete_gaussian_noise((2, 3), 1.0, random_state=0).shape == (2, 3)


@pytest.mark.parametrize("sigma", [0, -1.0, math.inf, math.nan, "1", 2.0**41])
def test_bad_sigma(sigma):
    with pytest.raises(ValueError, match="sigma"):
        discrete_gaussian_noise(3, sigma)


def test_seed_only_with_the_seeded_path():
    with pytest.raises(ValueError, match="only used by the 'seeded' sampler"):
        discrete_gaussian_noise(3, 1.0, random_state=0, sampler="opendp")
    with pytest.raises(ValueError, match="needs a random_state"):
        discrete_gaussian_noise(3, 1.0, sampler="seeded")
    with pytest.raises(ValueError, match="unknown sampler"):
        discrete_gaussian_noise(3, 1.0, sampler="float")
