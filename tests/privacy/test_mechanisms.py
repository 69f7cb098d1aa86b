import math

import numpy as np
import pytest

from pgmpy_dp.privacy import discrete_laplace_noise, discrete_laplace_variance, sampler_for


def _check_moments(x, scale):
    """Mean and variance within 5 standard errors of the discrete Laplace values."""
    n = x.size
    var = discrete_laplace_variance(scale)
    # Laplace-like tails: fourth central moment ~ 6 var^2, so Var(s^2) ~ 5 var^2 / n.
    assert abs(x.mean()) < 5 * math.sqrt(var / n)
    assert abs(x.var() - var) < 5 * var * math.sqrt(5 / n)


@pytest.mark.parametrize("scale", [0.5, 3.0, 40.0])
def test_seeded_noise_has_the_claimed_variance(scale):
    x = discrete_laplace_noise(200_000, scale, random_state=12345)
    _check_moments(x, scale)
    # the same check rejects half the scale: it can fail
    with pytest.raises(AssertionError):
        _check_moments(x, scale * 2)


def test_opendp_default_path_has_the_claimed_variance():
    assert sampler_for(20_000) == "opendp"
    x = discrete_laplace_noise(20_000, 4.0)
    _check_moments(x, 4.0)


def test_geometric_path_for_large_tables():
    assert sampler_for(10**6) == "geometric"
    x = discrete_laplace_noise(200_000, 2.0, sampler="geometric")
    _check_moments(x, 2.0)


def test_outputs_are_integers_and_seed_is_reproducible():
    a = discrete_laplace_noise((50, 4), 7.3, random_state=1)
    b = discrete_laplace_noise((50, 4), 7.3, random_state=1)
    assert np.array_equal(a, b) and np.all(a == np.round(a))
    assert np.all(discrete_laplace_noise(1000, 7.3) % 1 == 0)


def test_variance_formula_matches_continuous_limit():
    assert discrete_laplace_variance(1000.0) == pytest.approx(2 * 1000.0**2, rel=1e-5)
    # exact pmf sum for a small scale
    a = math.exp(-1 / 0.7)
    k = np.arange(-200, 201)
    pmf = (1 - a) / (1 + a) * a ** np.abs(k)
    assert discrete_laplace_variance(0.7) == pytest.approx(float(np.sum(pmf * k**2)), rel=1e-12)


@pytest.mark.parametrize("scale", [0, -1.0, float("inf"), float("nan")])
def test_bad_scale(scale):
    with pytest.raises(ValueError, match="noise scale must be positive and finite"):
        discrete_laplace_noise(3, scale)


def test_random_state_only_with_seeded_sampler():
    with pytest.raises(ValueError, match="only used by the 'seeded' sampler"):
        discrete_laplace_noise(3, 1.0, random_state=0, sampler="opendp")
    with pytest.raises(ValueError, match="needs a random_state"):
        discrete_laplace_noise(3, 1.0, sampler="seeded")
