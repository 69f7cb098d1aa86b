"""Charged mechanisms that discover what a schema leaves open: the keys of a column, the bin edges of a number.

[`discover_keys`][pgmpy_dp.privacy.discovery.discover_keys] is the stability histogram with discrete Gaussian
noise: every *observed* key gets its count plus noise of scale ``sigma = 1 / sqrt(2 rho)`` and is released when
the noisy count reaches a threshold ``t``; rare keys stay unreleased (the caller maps them to an "other" state).
One record moves one key's count by one, so on keys present in both neighbours it is ``rho``-zCDP; a key only one
neighbour holds has count 1 and is released with probability ``P(Z >= t - 1) <= delta``. The release is therefore
``delta``-approximately ``rho``-zCDP (Bun and Steinke 2016, section 8): composed with ``rho'``-zCDP mechanisms it is
``delta``-approximately ``(rho + rho')``-zCDP, which implies ``(epsilon(rho + rho', delta'), delta + delta')``-DP.
Keys that were never observed cannot be released.

[`private_bin_edges`][pgmpy_dp.privacy.discovery.private_bin_edges] chooses the inner edges of ``n_bins`` bins
within public bounds as DP quantiles of the half-and-half mixture of the data and the uniform distribution on the
bounds: each of the ``n_bins - 1`` quantiles ``q = j / n_bins`` by one exponential mechanism over candidate cut
points, the score of cut ``c`` being ``-|(#{x < c} + n U(c)) / 2 - q n|`` with ``U`` the uniform CDF (sensitivity
1). Every bin then holds at most about ``2 / n_bins`` of the records *and* of the range, which bounds the error
of values drawn uniformly within bins where plain quantiles (wide tail bins) or equal widths (crowded bins) fail.
Repeated edges merge, so fewer bins may come back. docs/decisions.md has the measured comparison.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .loss import ZCDP, PureDP
from .mechanisms import discrete_gaussian_noise
from .parameters import check_delta
from .selection import exponential_mechanism

__all__ = ["KeyRelease", "candidate_edges", "check_bounds", "discover_keys", "gaussian_tail", "private_bin_edges", "threshold_keys"]

#: How far a quantile's score can move when one record is added or removed.
QUANTILE_SENSITIVITY = 1.0

#: Weight of the uniform distribution on the bounds in the distribution whose quantiles become the edges.
UNIFORM_WEIGHT = 0.5

#: Candidate cut points per numeric column at most (an even grid when the bounds hold more).
MAX_CANDIDATES = 4096

#: A key whose true count reaches ``KeyRelease.sure_count`` is released with at least this probability.
KEEP_PROBABILITY = 0.95

# a rounding margin for losses split across mechanisms: the parts never sum above the whole
_SHRINK = 1.0 - 1e-12


def gaussian_tail(m: int, sigma: float) -> float:
    """``P(Z >= m)`` for the discrete Gaussian ``P(k) ∝ exp(-k^2 / (2 sigma^2))``.

    Summed over the lattice up to 40 sigma beyond ``m`` (the rest is below ``e^-800``); above
    ``sigma = 1e5`` the sub-Gaussian bound ``exp(-m^2 / (2 sigma^2))`` (Canonne, Kamath and Steinke 2020),
    which is larger, so never understates the tail.

    Examples
    --------
    >>> round(gaussian_tail(0, 3.0), 4), gaussian_tail(30, 3.0) < 1e-21
    (0.5665, True)
    """
    if sigma > 1e5:
        return 1.0 if m <= 0 else math.exp(-(m * m) / (2.0 * sigma * sigma))
    span = math.ceil(40 * sigma) + 2
    k = np.arange(-span, span + 1, dtype=np.float64)
    w = np.exp(-(k * k) / (2.0 * sigma * sigma))
    return float(w[k >= m].sum() / w.sum())


def _tail_quantile(p: float, sigma: float) -> int:
    """Smallest integer ``m >= 0`` with ``P(Z >= m) <= p`` (bisection on the monotone tail)."""
    lo, hi = 0, max(1, math.ceil(sigma * math.sqrt(2.0 * math.log(1.0 / p))) + 1)  # the sub-Gaussian bound holds at hi
    while gaussian_tail(hi, sigma) > p * _SHRINK:
        hi *= 2
    while lo < hi:
        mid = (lo + hi) // 2
        if gaussian_tail(mid, sigma) <= p * _SHRINK:
            hi = mid
        else:
            lo = mid + 1
    return lo


@dataclass(frozen=True)
class KeyRelease:
    """The public outcome of [`discover_keys`][pgmpy_dp.privacy.discovery.discover_keys]: released keys and the mechanism's facts.

    Attributes
    ----------
    keys : tuple
        The released keys, sorted (their noisy counts are not published).
    rho, delta : float
        The release is ``delta``-approximately ``rho``-zCDP.
    sigma : float
        The discrete Gaussian's scale, ``1 / sqrt(2 rho)``.
    threshold : int
        A key is released when its noisy count reaches it.
    sure_count : int
        A key with at least this many records is released with probability at least ``KEEP_PROBABILITY``.
    """

    keys: tuple
    rho: float
    delta: float
    sigma: float
    threshold: int
    sure_count: int

    def to_dict(self) -> dict:
        """A JSON-ready record."""
        return {"keys": list(self.keys), "rho": self.rho, "delta": self.delta, "sigma": self.sigma,
                "threshold": self.threshold, "sure_count": self.sure_count}


@functools.lru_cache(maxsize=64)
def _key_facts(rho: float, delta: float) -> tuple[float, int, int]:
    sigma = 1.0 / math.sqrt(2.0 * ZCDP(rho).rho)
    threshold = 1 + _tail_quantile(check_delta(delta), sigma)  # a lone key (count 1) passes with P <= delta
    # kept with P >= KEEP_PROBABILITY when P(Z < t - c) <= 1 - KEEP: by symmetry P(Z >= c - t + 1) <= 1 - KEEP
    sure = threshold - 1 + _tail_quantile(1.0 - KEEP_PROBABILITY, sigma)
    return sigma, threshold, sure


def threshold_keys(keys, counts, rho: float, delta: float, random_state=None) -> KeyRelease:
    """The stability histogram on given per-key counts (the mechanism of [`discover_keys`][pgmpy_dp.privacy.discovery.discover_keys]).

    ``keys`` are the distinct observed keys and ``counts`` their (positive) record counts.

    Examples
    --------
    >>> rel = threshold_keys(["a", "b"], [5000, 1], rho=0.5, delta=1e-9, random_state=0)
    >>> rel.keys, rel.threshold
    (('a',), 8)
    """
    sigma, threshold, sure = _key_facts(rho, delta)
    counts = np.asarray(counts, dtype=np.float64)
    keys = [k.item() if isinstance(k, np.generic) else k for k in keys]
    if len(keys) != counts.size:
        raise ValueError(f"threshold_keys needs one count per key, got {len(keys)} keys and {counts.size} counts")
    if counts.size and counts.min() < 1:
        raise ValueError("threshold_keys takes the counts of observed keys (each at least 1)")
    kept = []
    if counts.size:
        noisy = counts + discrete_gaussian_noise(counts.size, sigma, random_state)
        kept = [k for k, passed in zip(keys, noisy >= threshold) if passed]
    return KeyRelease(tuple(sorted(kept, key=_sort_key)), float(rho), float(delta), sigma, threshold, sure)


def _sort_key(value):
    return (type(value).__name__, value) if isinstance(value, (int, float, str)) else (type(value).__name__, repr(value))


def discover_keys(values, rho: float, delta: float, random_state=None) -> KeyRelease:
    """Release the keys of a categorical column privately: ``delta``-approximately ``rho``-zCDP.

    Parameters
    ----------
    values : array-like
        The column's values; missing values (NaN, None) are not keys and are ignored.
    rho : float
        The zCDP cost on keys both neighbours hold: the noise scale is ``1 / sqrt(2 rho)``.
    delta : float
        The probability bound of releasing a key held by one record; it sets the threshold.
    random_state : int or numpy.random.Generator, optional
        Seed for reproducible *experiments only*; ``None`` uses OpenDP's exact sampler.

    Returns
    -------
    KeyRelease

    Examples
    --------
    >>> values = ["nurse"] * 3000 + ["clerk"] * 2000 + ["astronaut"]
    >>> rel = discover_keys(values, rho=0.05, delta=1e-9, random_state=0)
    >>> rel.keys, rel.sure_count
    (('clerk', 'nurse'), 26)
    """
    counts = pd.Series(values, dtype=object).value_counts(dropna=True, sort=False)
    return threshold_keys(list(counts.index), counts.to_numpy(), rho, delta, random_state)


def check_bounds(bounds, integer: bool = False) -> tuple[float, float]:
    """Public ``bounds`` as ``(lo, hi)`` floats, or a ValueError saying what is wrong.

    Examples
    --------
    >>> check_bounds((17, 90), integer=True)
    (17.0, 90.0)
    """
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a pair (lo, hi) of numbers, got {bounds!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds must be finite with lo < hi, got {bounds!r}; e.g. (17, 90)")
    if integer and not (lo.is_integer() and hi.is_integer()):
        raise ValueError(f"the bounds of an integer column must be integers, got {bounds!r}")
    return lo, hi


def candidate_edges(bounds, integer: bool = False) -> tuple[float, float, np.ndarray]:
    """``(low edge, high edge, interior candidates)`` for a column within public ``bounds``.

    An integer column between ``lo`` and ``hi`` has bins ``[lo, ..., hi + 1)`` and integer cuts; a float
    column has bins ``[lo, ..., hi]`` (``hi`` falls in the last) and an even grid of cuts.

    Examples
    --------
    >>> lo, hi, cuts = candidate_edges((0, 3), integer=True)
    >>> lo, hi, cuts.tolist()
    (0.0, 4.0, [1.0, 2.0, 3.0])
    """
    lo, hi = check_bounds(bounds, integer)
    if integer:
        top = hi + 1.0
        if hi - lo <= MAX_CANDIDATES:
            return lo, top, np.arange(lo + 1.0, top, dtype=np.float64)
        return lo, top, np.unique(np.round(np.linspace(lo, top, MAX_CANDIDATES + 2)[1:-1]))
    return lo, hi, np.linspace(lo, hi, MAX_CANDIDATES + 2)[1:-1]


def _quantile_epsilon(loss, n_quantiles: int) -> float:
    """Each quantile's pure epsilon, so that ``n_quantiles`` of them compose to ``loss``."""
    if isinstance(loss, PureDP):
        return loss.epsilon / n_quantiles * _SHRINK
    if isinstance(loss, ZCDP):  # an epsilon exponential mechanism is epsilon^2 / 8-zCDP (Cesar and Rogers 2021)
        return math.sqrt(8.0 * loss.rho / n_quantiles) * _SHRINK
    raise TypeError(f"private_bin_edges spends a PureDP or ZCDP loss, got {type(loss).__name__}")


def private_bin_edges(values, bounds, n_bins: int, loss, integer: bool = False, random_state=None) -> tuple[float, ...]:
    """Bin edges of a numeric column within public bounds: DP quantiles of the data mixed half and half with the uniform.

    Parameters
    ----------
    values : array-like of float
        The column's values; NaN is ignored and values are clamped to ``bounds``.
    bounds : (float, float)
        Public bounds; the outer edges are ``lo`` and ``hi`` (``hi + 1`` for an integer column).
    n_bins : int
        Bins asked for (at least 2); repeated edges merge, so fewer may come back.
    loss : PureDP or ZCDP
        What the ``n_bins - 1`` exponential mechanisms spend together.
    integer : bool
        Whether the column holds integers (cuts are then integers).
    random_state : int or numpy.random.Generator, optional
        Seed for reproducible *experiments only*.

    Returns
    -------
    tuple of float
        Strictly increasing edges, the outer ones from ``bounds``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> ages = rng.integers(17, 91, 5000)
    >>> edges = private_bin_edges(ages, (17, 90), 4, PureDP(1.0), integer=True, random_state=0)
    >>> edges[0], edges[-1], len(edges) <= 5
    (17.0, 91.0, True)
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 2:
        raise ValueError(f"n_bins must be an integer of at least 2, got {n_bins!r}")
    lo, top, cuts = candidate_edges(bounds, integer)
    epsilon = _quantile_epsilon(loss, int(n_bins) - 1)
    x = np.asarray(values, dtype=np.float64)
    x = np.sort(np.clip(x[~np.isnan(x)], lo, top if not integer else top - 1.0))
    below = np.searchsorted(x, cuts, side="left").astype(np.float64)  # #{x < c} for every cut c
    # one record moves (1 - w) [x < c] + w U(c) - q, within [-1, 1]: sensitivity 1
    w = UNIFORM_WEIGHT
    mixed = (1.0 - w) * below + w * x.size * (cuts - lo) / (top - lo)
    rng = None if random_state is None else np.random.default_rng(random_state)
    chosen = []
    for j in range(1, int(n_bins)):
        scores = -np.abs(mixed - (j / n_bins) * x.size)
        chosen.append(float(cuts[exponential_mechanism(scores, epsilon, QUANTILE_SENSITIVITY, rng)]))
    return (lo, *sorted(set(chosen)), top)
