"""Noise for count vectors: the discrete Laplace and discrete Gaussian mechanisms.

Integer noise on integer counts: the discrete Laplace ``P(k) ∝ exp(-|k| / scale)`` is ``ε``-DP at
``scale = Δ / ε`` for L1 sensitivity ``Δ``; the discrete Gaussian ``P(k) ∝ exp(-k^2 / (2 sigma^2))``
(Canonne, Kamath and Steinke 2020) is ``rho``-zCDP at ``sigma = Δ / sqrt(2 rho)`` for L2 sensitivity ``Δ``.
The output is an integer, so its low-order bits carry no trace of the input (Mironov 2012).

Each has three sampling paths (docs/privacy.md):

``"opendp"`` (default up to `OPENDP_MAX_CELLS` cells)
    OpenDP's exact sampler (rational arithmetic, OS randomness).
``"geometric"`` (Laplace) or ``"rejection"`` (Gaussian; Canonne, Kamath and Steinke 2020, Algorithm 3), beyond
    numpy from fresh OS entropy: integer-valued, probabilities accurate to double precision.
``"seeded"`` (only when the caller passes ``random_state``)
    The same construction from a seeded generator, for experiments only: whoever knows the seed can
    subtract the noise.
"""

from __future__ import annotations

import functools
import math

import numpy as np

#: Name recorded in every release made by [`discrete_laplace_noise`][pgmpy_dp.privacy.mechanisms.discrete_laplace_noise].
MECHANISM = "discrete_laplace"

#: Name recorded in every release made by [`discrete_gaussian_noise`][pgmpy_dp.privacy.mechanisms.discrete_gaussian_noise].
GAUSSIAN_MECHANISM = "discrete_gaussian"

#: Tables up to this many cells use OpenDP's exact sampler by default.
OPENDP_MAX_CELLS = 100_000

#: Largest supported noise scale (about 1.1e12). Beyond it the samplers cannot
#: stay exact: numpy's geometric saturates at the int64 maximum (so the two
#: draws cancel and the noise is 0) and sums leave float64's exact integers
#: (2**53). Up to it, ``P(|noise| >= 2**53) = exp(-2**13)``, which is 0 in doubles.
MAX_SCALE = float(2**40)


def discrete_laplace_variance(scale: float) -> float:
    """Variance of the discrete Laplace distribution with the given scale.

    ``2a / (1 - a)^2`` with ``a = exp(-1/scale)``; it approaches the continuous
    Laplace variance ``2 scale^2`` as the scale grows.

    Examples
    --------
    >>> round(discrete_laplace_variance(10.0), 3)
    199.833
    """
    if scale == 0:
        return 0.0
    a = math.exp(-1.0 / scale)
    return 2.0 * a / (1.0 - a) ** 2


def sampler_for(n_cells: int, random_state=None, mechanism: str = MECHANISM) -> str:
    """Name of the sampling path used for a table of ``n_cells`` cells.

    Examples
    --------
    >>> sampler_for(10), sampler_for(10**6), sampler_for(10**6, mechanism="discrete_gaussian")
    ('opendp', 'geometric', 'rejection')
    """
    if random_state is not None:
        return "seeded"
    if n_cells <= OPENDP_MAX_CELLS:
        return "opendp"
    return "rejection" if mechanism == GAUSSIAN_MECHANISM else "geometric"


def discrete_gaussian_variance(sigma: float) -> float:
    """Variance of the discrete Gaussian distribution ``P(k) ∝ exp(-k^2 / (2 sigma^2))`` on the integers.

    Summed directly for ``sigma <= 50``; above, ``sigma**2`` to double precision (Poisson summation).
    It is slightly *below* ``sigma**2`` for small sigma.

    Examples
    --------
    >>> discrete_gaussian_variance(10.0)
    100.0
    >>> round(discrete_gaussian_variance(0.5), 4)
    0.215
    """
    if sigma == 0:
        return 0.0
    if sigma > 50:
        return float(sigma) ** 2
    k = np.arange(1, math.ceil(40 * sigma) + 2, dtype=np.float64)  # tail beyond 40 sigma is < e^-800
    w = np.exp(-(k**2) / (2.0 * sigma**2))
    return float(2.0 * np.sum(k**2 * w) / (1.0 + 2.0 * np.sum(w)))


def _check_draw(shape, scale, random_state, sampler, mechanism: str) -> tuple[tuple[int, ...], int, str]:
    """Validate a draw's scale and sampler choice; return ``(shape, number of cells, sampler)``."""
    name, budget = ("noise scale sigma", "rho") if mechanism == GAUSSIAN_MECHANISM else ("noise scale", "epsilon")
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise ValueError(f"{name} must be positive and finite, got {scale!r}")
    if scale > MAX_SCALE:
        raise ValueError(
            f"{name} {scale:g} exceeds the largest supported scale {MAX_SCALE:g}: integer noise "
            f"cannot be drawn exactly that wide (and would drown every count); raise {budget}"
        )
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    n = math.prod(shape)
    sampler = sampler or sampler_for(n, random_state, mechanism)
    if sampler == "seeded" and random_state is None:
        raise ValueError("the 'seeded' sampler needs a random_state")
    if sampler != "seeded" and random_state is not None:
        raise ValueError(f"random_state is only used by the 'seeded' sampler, not {sampler!r}")
    return shape, n, sampler


def discrete_laplace_noise(
    shape: int | tuple[int, ...],
    scale: float,
    random_state: int | np.random.Generator | None = None,
    sampler: str | None = None,
) -> np.ndarray:
    """Draw integer-valued discrete Laplace noise of the given ``scale``.

    Parameters
    ----------
    shape : int or tuple of int
        Shape of the noise array.
    scale : float
        Noise scale ``Δ / ε`` (positive and finite).
    random_state : int or numpy.random.Generator, optional
        Seed for reproducible experiments; ``None`` (OS randomness) for a real release.
    sampler : {"opendp", "geometric", "seeded"}, optional
        Force a sampling path (see the module docstring); chosen automatically by default.

    Returns
    -------
    numpy.ndarray of float64 holding integers.

    Examples
    --------
    >>> noise = discrete_laplace_noise((2, 3), scale=2.0, random_state=0)
    >>> noise.shape, bool(np.all(noise == np.round(noise)))
    ((2, 3), True)
    """
    shape, n, sampler = _check_draw(shape, scale, random_state, sampler, MECHANISM)
    if sampler == "opendp":
        return _opendp_noise(n, scale).reshape(shape)
    if sampler in ("geometric", "seeded"):
        rng = np.random.default_rng(random_state)  # None -> fresh OS entropy
        return _geometric_difference(rng, n, scale).reshape(shape)
    raise ValueError(f"unknown sampler {sampler!r}; use 'opendp', 'geometric' or 'seeded'")


def discrete_gaussian_noise(
    shape: int | tuple[int, ...],
    sigma: float,
    random_state: int | np.random.Generator | None = None,
    sampler: str | None = None,
) -> np.ndarray:
    """Draw integer-valued discrete Gaussian noise ``P(k) ∝ exp(-k^2 / (2 sigma^2))``.

    Parameters
    ----------
    shape : int or tuple of int
        Shape of the noise array.
    sigma : float
        Scale ``Δ_2 / sqrt(2 rho)`` (positive and finite); the variance is
        [`discrete_gaussian_variance`][pgmpy_dp.privacy.mechanisms.discrete_gaussian_variance] of it (``sigma**2`` for sigma above a few).
    random_state : int or numpy.random.Generator, optional
        Seed for reproducible experiments; ``None`` (OS randomness) for a real release.
    sampler : {"opendp", "rejection", "seeded"}, optional
        Force a sampling path (see the module docstring); chosen automatically by default.

    Returns
    -------
    numpy.ndarray of float64 holding integers.

    Examples
    --------
    >>> noise = discrete_gaussian_noise(1000, sigma=3.0, random_state=0)
    >>> bool(np.all(noise == np.round(noise))), bool(6 < noise.var() < 12)
    (True, True)
    """
    shape, n, sampler = _check_draw(shape, sigma, random_state, sampler, GAUSSIAN_MECHANISM)
    if sampler == "opendp":
        return _opendp_noise(n, sigma, gaussian=True).reshape(shape)
    if sampler in ("rejection", "seeded"):
        rng = np.random.default_rng(random_state)  # None -> fresh OS entropy
        return _gaussian_rejection(rng, n, sigma).reshape(shape)
    raise ValueError(f"unknown sampler {sampler!r}; use 'opendp', 'rejection' or 'seeded'")


def _gaussian_rejection(rng: np.random.Generator, n: int, sigma: float) -> np.ndarray:
    # Canonne, Kamath and Steinke (2020), Algorithm 3: propose Y from the discrete Laplace of
    # scale t = floor(sigma) + 1 and accept with probability exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2));
    # the acceptance rate stays above 0.4, so a few vectorised rounds suffice.
    t = math.floor(sigma) + 1.0
    out = np.empty(n, dtype=np.float64)
    filled = 0
    while filled < n:
        need = n - filled
        batch = int(need * 2.5) + 16
        y = _geometric_difference(rng, batch, t)
        accept = rng.random(batch) < np.exp(-((np.abs(y) - sigma**2 / t) ** 2) / (2.0 * sigma**2))
        kept = y[accept][:need]
        out[filled : filled + len(kept)] = kept
        filled += len(kept)
    return out


def _geometric_difference(rng: np.random.Generator, n: int, scale: float) -> np.ndarray:
    # X - Y with X, Y ~ Geometric(p) on {0, 1, ...} is discrete Laplace with
    # P(k) ∝ a^|k|, a = 1 - p = exp(-1/scale).
    p = -math.expm1(-1.0 / scale)
    return (rng.geometric(p, size=n) - rng.geometric(p, size=n)).astype(np.float64)


@functools.lru_cache(maxsize=128)
def _opendp_measurement(gaussian: bool, scale: float):
    # Building a measurement costs about a millisecond; data-dependent allocations make a
    # new scale per table and fit, so the cache is bounded.
    import opendp.prelude as dp

    dp.enable_features("contrib")
    # i64, not T=int (i32): OpenDP saturates at the type's bounds, and clamped noise is not private;
    # an integer vector domain makes OpenDP draw the exact discrete Laplace (L1) or Gaussian (L2)
    make, metric = (dp.m.make_gaussian, dp.l2_distance) if gaussian else (dp.m.make_laplace, dp.l1_distance)
    return make(dp.vector_domain(dp.atom_domain(T="i64")), metric(T="i64"), scale=float(scale))


def _opendp_noise(n: int, scale: float, gaussian: bool = False) -> np.ndarray:
    return np.asarray(_opendp_measurement(gaussian, float(scale))([0] * n), dtype=np.float64)
