"""Floating-point safety of the noise (Mironov 2012) and seeded sampling being opt-in.

Mironov's attack: a naive floating-point Laplace mechanism ``c + Laplace(b)``
outputs doubles whose set of possible values (their low-order bits) depends on
``c``, so one output can reveal ``c`` exactly. Our mechanism adds *integer*
noise to integer counts: every output is an exact integer held in a float64
(``|x| < 2**53``), so the support is the integers for every input and the low
bits carry nothing. These tests check that promise on every sampling path, show
that the same check rejects the naive float mechanism, and check the bounds that
keep the integers exact (the 64-bit OpenDP type, :data:`MAX_SCALE`).
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chisquare

import pgmpy_dp  # noqa: F401
from pgmpy_dp import PrivacyBudget
from pgmpy_dp.privacy import discrete_laplace_noise, sampler_for
from pgmpy_dp.privacy.mechanisms import MAX_SCALE, OPENDP_MAX_CELLS

EXACT = 2.0**53


def assert_exact_integers(x: np.ndarray) -> None:
    """Every value is a finite float64 holding an integer exactly (no fractional bits)."""
    assert x.dtype == np.float64
    assert np.all(np.isfinite(x))
    assert np.all(np.abs(x) < EXACT)
    assert np.all(np.modf(x)[0] == 0.0)


def test_the_check_rejects_naive_floating_point_laplace():
    """The property we test is the one Mironov's attack exploits: naive float Laplace fails it."""
    rng = np.random.default_rng(0)
    naive = 7.0 + rng.laplace(scale=2.0, size=1000)
    with pytest.raises(AssertionError):
        assert_exact_integers(naive)
    # and the naive outputs of neighbouring counts have different supports (low-order bits)
    lo = {float(np.float64(7.0) + v) - 7.0 for v in rng.laplace(scale=2.0, size=2000)}
    assert any(v != math.floor(v) for v in lo)


@pytest.mark.parametrize(
    "sampler, kwargs",
    [("opendp", {}), ("geometric", {}), ("seeded", {"random_state": 3})],
)
@pytest.mark.parametrize("scale", [0.3, 2.0, 1e4, 1e10])
def test_every_sampler_outputs_exact_integers(sampler, kwargs, scale):
    x = discrete_laplace_noise(2000, scale, sampler=sampler, **kwargs)
    assert_exact_integers(x)


def test_opendp_path_is_64_bit_and_not_saturated():
    """Regression: OpenDP's ``T=int`` is i32 and clamped noise at +-2**31 (clamping breaks privacy)."""
    x = discrete_laplace_noise(1000, 1e10, sampler="opendp")
    assert np.abs(x).max() > 2**31  # P(|N| > 2**31) ~ 0.8 per draw at this scale
    assert not np.isin(x, [2**31 - 1, -(2**31)]).any()


def test_geometric_path_does_not_saturate_near_the_largest_scale():
    """Regression: numpy's geometric saturates at the int64 maximum for tiny p, so X - Y was 0."""
    x = discrete_laplace_noise(1000, MAX_SCALE, random_state=0)
    assert_exact_integers(x)
    assert np.count_nonzero(x) > 990
    assert 0.3 * MAX_SCALE < np.median(np.abs(x)) < 3 * MAX_SCALE  # median |N| = scale * ln 2


def test_scales_beyond_the_exact_range_are_refused_before_spending():
    with pytest.raises(ValueError, match="exceeds the largest supported scale"):
        discrete_laplace_noise(3, MAX_SCALE * 2, random_state=0)
    df = pd.DataFrame({"a": pd.Categorical(["x", "y"])})
    budget = PrivacyBudget(1.0)
    for eps in (1e-20, 1e-300, 5e-324):
        with pytest.raises(ValueError, match=r"epsilon .* too small: its noise scale"):
            df.dp.release(["a"], eps, budget=budget)
    assert budget.spent == 0 and budget.ledger == ()


@pytest.mark.parametrize("cells, random_state, expected", [(6, None, "opendp"), (OPENDP_MAX_CELLS + 2, None, "geometric"),
                                                          (6, 0, "seeded")])
def test_released_values_are_counts_plus_integers(cells, random_state, expected):
    """End to end: released value minus exact count is an integer on every path."""
    n_a = cells // 2 if cells > 6 else 3
    states = list(range(n_a))
    df = pd.DataFrame(
        {
            "a": pd.Categorical(np.arange(50) % n_a, categories=states),
            "b": pd.Categorical(np.arange(50) % 2, categories=[0, 1]),
        }
    )
    rel = df.dp.release([("a", "b")], 1.0, random_state=random_state)
    assert rel.sampler == expected
    exact = np.bincount((np.arange(50) % n_a) * 2 + np.arange(50) % 2, minlength=2 * n_a).reshape(n_a, 2)
    values = rel[("a", "b")].values
    assert_exact_integers(values)
    assert_exact_integers(values - exact)


@pytest.mark.parametrize("sampler, kwargs, n", [("seeded", {"random_state": 11}, 200_000), ("opendp", {}, 20_000)])
def test_sampler_matches_the_exact_discrete_laplace_pmf(sampler, kwargs, n):
    """Chi-square goodness of fit against P(k) = (1-a)/(1+a) a^|k| (seeded: fixed seed; OpenDP: p > 1e-6)."""
    scale = 1.5
    x = discrete_laplace_noise(n, scale, sampler=sampler, **kwargs).astype(int)
    a = math.exp(-1 / scale)
    ks = np.arange(-8, 9)
    pmf = (1 - a) / (1 + a) * a ** np.abs(ks)
    tail = (1 - pmf.sum()) / 2  # mass below -8 and above 8 each
    observed = [np.sum(x < -8), *[np.sum(x == k) for k in ks], np.sum(x > 8)]
    expected = n * np.array([tail, *pmf, tail])
    assert chisquare(observed, expected).pvalue > 1e-6


# -- seeded sampling is opt-in ---------------------------------------------------------------------


def test_no_seed_never_selects_the_seeded_sampler():
    for n in (1, 6, OPENDP_MAX_CELLS, OPENDP_MAX_CELLS + 1, 10**7):
        assert sampler_for(n) in {"opendp", "geometric"}
        assert sampler_for(n, random_state=0) == "seeded"
    with pytest.raises(ValueError, match="needs a random_state"):
        discrete_laplace_noise(3, 1.0, sampler="seeded")


def test_default_release_ignores_numpy_global_seed_and_records_its_sampler():
    """Seeding numpy's global state does not make a default release reproducible (OS entropy)."""
    df = pd.DataFrame({"a": pd.Categorical(np.arange(100) % 50, categories=range(50))})
    outs = []
    for _ in range(2):
        np.random.seed(0)
        rel = df.dp.release(["a"], 0.1)
        assert rel.sampler == "opendp" and rel.to_dict()["sampler"] == "opendp"
        outs.append(rel["a"].values)
    assert not np.array_equal(*outs)  # equal with probability < 1e-40
    seeded = df.dp.release(["a"], 0.1, random_state=0)
    assert seeded.sampler == "seeded" and seeded.to_dict()["sampler"] == "seeded"  # visible in the artifact
    assert np.array_equal(seeded["a"].values, df.dp.release(["a"], 0.1, random_state=0)["a"].values)
