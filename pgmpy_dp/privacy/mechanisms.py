"""Noise for count vectors: the (discrete) Laplace mechanism.

Counts are integers, so we add integer-valued noise from the discrete Laplace
distribution ``P(k) ∝ exp(-|k| / scale)``. For an integer-valued query of L1
sensitivity ``Δ`` it gives ``ε``-differential privacy at ``scale = Δ / ε``,
exactly like the continuous Laplace mechanism, while avoiding the floating
point attack of Mironov (2012): the output is an integer, so its low-order bits
carry no trace of the input.

Three sampling paths share that one distribution:

``"opendp"`` (default for tables up to :data:`OPENDP_MAX_CELLS` cells)
    OpenDP's exact sampler (rational arithmetic, OS randomness). The strongest
    guarantee; about 10-20 microseconds per cell.
``"geometric"`` (default for larger tables)
    Difference of two geometric variables drawn by numpy from fresh OS
    entropy. Integer-valued, so free of floating-point leaks; its probabilities
    are accurate to double precision rather than exact. About 100x faster.
``"seeded"`` (only when the caller passes ``random_state``)
    The same geometric construction from a seeded numpy generator, for
    reproducible experiments and tests. Never use a seed for a real release:
    anyone who learns the seed can subtract the noise.
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = [
    "MAX_SCALE",
    "MECHANISM",
    "OPENDP_MAX_CELLS",
    "discrete_laplace_noise",
    "discrete_laplace_variance",
    "sampler_for",
]

#: Name recorded in every release made by :func:`discrete_laplace_noise`.
MECHANISM = "discrete_laplace"

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


def sampler_for(n_cells: int, random_state=None) -> str:
    """Name of the sampling path used for a table of ``n_cells`` cells."""
    if random_state is not None:
        return "seeded"
    return "opendp" if n_cells <= OPENDP_MAX_CELLS else "geometric"


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
        Seed for reproducible experiments. ``None`` (the default) uses OS
        randomness, as a real release must.
    sampler : {"opendp", "geometric", "seeded"}, optional
        Force a sampling path (see the module docstring); chosen automatically
        by default.

    Returns
    -------
    numpy.ndarray of float64 holding integers.

    Examples
    --------
    >>> noise = discrete_laplace_noise((2, 3), scale=2.0, random_state=0)
    >>> noise.shape, bool(np.all(noise == np.round(noise)))
    ((2, 3), True)
    """
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise ValueError(f"noise scale must be positive and finite, got {scale!r}")
    if scale > MAX_SCALE:
        raise ValueError(
            f"noise scale {scale:g} exceeds the largest supported scale {MAX_SCALE:g}: integer noise "
            "cannot be drawn exactly that wide (and would drown every count); raise epsilon"
        )
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    n = math.prod(shape)
    sampler = sampler or sampler_for(n, random_state)
    if sampler == "seeded" and random_state is None:
        raise ValueError("the 'seeded' sampler needs a random_state")
    if sampler != "seeded" and random_state is not None:
        raise ValueError(f"random_state is only used by the 'seeded' sampler, not {sampler!r}")
    if sampler == "opendp":
        return _opendp_noise(n, scale).reshape(shape)
    if sampler in ("geometric", "seeded"):
        rng = np.random.default_rng(random_state)  # None -> fresh OS entropy
        return _geometric_difference(rng, n, scale).reshape(shape)
    raise ValueError(f"unknown sampler {sampler!r}; use 'opendp', 'geometric' or 'seeded'")


def _geometric_difference(rng: np.random.Generator, n: int, scale: float) -> np.ndarray:
    # X - Y with X, Y ~ Geometric(p) on {0, 1, ...} is discrete Laplace with
    # P(k) ∝ a^|k|, a = 1 - p = exp(-1/scale).
    p = -math.expm1(-1.0 / scale)
    return (rng.geometric(p, size=n) - rng.geometric(p, size=n)).astype(np.float64)


@functools.lru_cache(maxsize=128)
def _opendp_measurement(scale: float):
    # Building a measurement costs about a millisecond; data-dependent allocations make a
    # new scale per table and fit, so the cache is bounded.
    import opendp.prelude as dp

    dp.enable_features("contrib")
    # i64, not T=int (i32): OpenDP saturates at the type's bounds, and clamped noise is not private
    return dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64"), scale=float(scale)
    )


def _opendp_noise(n: int, scale: float) -> np.ndarray:
    return np.asarray(_opendp_measurement(float(scale))([0] * n), dtype=np.float64)
