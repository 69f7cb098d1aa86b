"""Exact confidence intervals for released counts, from the noise distribution itself.

A released cell is ``y = x + Z`` with integer noise ``Z`` symmetric about 0 and independent of ``x``.
If ``P(|Z| <= q) >= level`` then ``[y - q, y + q]`` covers ``x`` with probability at least ``level`` for
every ``x``: public facts only, so post-processing. We take the smallest such ``q`` and report the exact
coverage it achieves (Williams and McSherry 2010). Intervals are symmetric: the shortest of any shape is
at most one integer shorter. See docs/intervals.md.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd
from scipy import special, stats

from ..privacy.mechanisms import GAUSSIAN_MECHANISM, MECHANISM

#: Above this sigma the discrete Gaussian's coverage comes from the midpoint rule
#: ``erf((q + 1/2) / (sigma sqrt 2))`` instead of summing about 12 sigma pmf terms;
#: its error (Euler-Maclaurin plus Poisson summation) is of order ``1 / sigma^2``, below 1e-10 here.
GAUSSIAN_SUM_LIMIT = 1e5


def check_level(level) -> float:
    """``level`` as a float strictly between 0 and 1, or a ValueError naming ``level``.

    Examples
    --------
    >>> check_level(0.9)
    0.9
    """
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0.0 < float(level) < 1.0:
        raise ValueError(
            f"level must be a number strictly between 0 and 1 (the wanted coverage, e.g. 0.95); got {level!r}"
        )
    return float(level)


def _gaussian_cumulative(sigma: float) -> np.ndarray:
    """``P(|Z| <= q)`` for ``q = 0 .. ceil(12 sigma) + 5`` under the discrete Gaussian (exact sum)."""
    k = np.arange(1, math.ceil(12.0 * sigma) + 6, dtype=np.float64)  # tail beyond 12 sigma is < e^-72
    w = np.exp(-(k**2) / (2.0 * sigma**2))
    inside = 1.0 + 2.0 * np.concatenate(([0.0], np.cumsum(w)))
    return np.minimum(inside / inside[-1], 1.0)


def noise_coverage(mechanism: str, scale: float, q) -> np.ndarray | float:
    """Exact ``P(|Z| <= q)`` for the noise ``Z`` of ``mechanism`` with the given scale (sigma).

    Parameters
    ----------
    mechanism : str
        ``"discrete_laplace"`` or ``"discrete_gaussian"``.
    scale : float
        Laplace scale or Gaussian sigma (0 means no noise).
    q : int or array of int
        Half-widths (non-negative integers).

    Examples
    --------
    >>> a = math.exp(-1 / 2.0)   # discrete Laplace, scale 2: P(|Z| <= 0) = (1 - a) / (1 + a)
    >>> bool(np.isclose(noise_coverage("discrete_laplace", 2.0, 0), (1 - a) / (1 + a)))
    True
    >>> round(float(noise_coverage("discrete_gaussian", 3.0, 6)), 4)
    0.9705
    """
    q = np.asarray(q)
    if scale == 0:
        out = np.ones(q.shape)
    elif mechanism == MECHANISM:
        a = math.exp(-1.0 / scale)
        # P(Z > q) = a^(q+1) / (1 + a) for the two-sided geometric law
        out = 1.0 - 2.0 * np.exp(-(q + 1.0) / scale) / (1.0 + a)
    elif mechanism == GAUSSIAN_MECHANISM:
        if scale > GAUSSIAN_SUM_LIMIT:
            out = special.erf((q + 0.5) / (scale * math.sqrt(2.0)))
        else:
            cum = _gaussian_cumulative(scale)
            out = cum[np.minimum(q, cum.size - 1)]
    else:
        raise ValueError(f"mechanism must be {MECHANISM!r} or {GAUSSIAN_MECHANISM!r}; got {mechanism!r}")
    return float(out) if out.ndim == 0 else out


def noise_quantile(mechanism: str, scale: float, level: float) -> int:
    """Smallest integer ``q >= 0`` with ``P(|Z| <= q) >= level`` for the noise of ``mechanism``.

    ``[y - q, y + q]`` then covers the true count with probability at least ``level``.

    Examples
    --------
    >>> noise_quantile("discrete_laplace", 1.0, 0.95), noise_quantile("discrete_gaussian", 3.0, 0.95)
    (3, 6)
    """
    level = check_level(level)
    if scale == 0:
        return 0
    if mechanism == MECHANISM:
        a = math.exp(-1.0 / scale)
        q = max(0, math.ceil(scale * math.log(2.0 / ((1.0 - level) * (1.0 + a)))) - 1)
    elif mechanism == GAUSSIAN_MECHANISM:
        if scale > GAUSSIAN_SUM_LIMIT:
            q = max(0, math.ceil(scale * math.sqrt(2.0) * special.erfinv(level) - 0.5))
        else:
            q = int(np.searchsorted(_gaussian_cumulative(scale), level, side="left"))
    else:
        raise ValueError(f"mechanism must be {MECHANISM!r} or {GAUSSIAN_MECHANISM!r}; got {mechanism!r}")
    # the closed forms above can be one off after rounding: settle on the exact criterion
    while q > 0 and noise_coverage(mechanism, scale, q - 1) >= level:
        q -= 1
    while noise_coverage(mechanism, scale, q) < level:
        q += 1
    return q


def release_interval(release, attrs, level: float = 0.95, clip: bool = False) -> pd.DataFrame:
    """Per-cell confidence intervals for the true counts over ``attrs`` (post-processing, no budget).

    Parameters
    ----------
    release : MarginalRelease
        The release holding (or covering) ``attrs``.
    attrs : str or sequence of str
        A released table (in any attribute order), or a subset of released
        tables as accepted by [`MarginalRelease.series`][pgmpy_dp.tables.artifact.MarginalRelease.series].
    level : float
        Wanted coverage, strictly between 0 and 1.
    clip : bool
        When true, clip estimate and bounds at 0 (true counts are non-negative,
        so this never lowers the coverage). Default ``False``: the raw interval.

    Returns
    -------
    pandas.DataFrame
        Indexed like ``release.series(attrs)``, columns ``estimate`` (the
        released noisy count), ``lower``, ``upper``. ``frame.attrs`` holds
        ``level``, ``method`` and ``coverage``:

        - ``"exact"`` for one released table's own cells: ``estimate ± q`` with ``q`` from
          [`noise_quantile`][pgmpy_dp.tables.intervals.noise_quantile]; ``coverage`` is exact.
        - ``"normal"`` for sums of cells or a combination of tables: ``estimate ± z sd`` with the
          exact standard deviation (``coverage`` is the nominal ``level``).

    Examples
    --------
    >>> import pgmpy_dp
    >>> df = pd.DataFrame({"a": ["x", "y", "y"], "b": ["u", "u", "v"]})
    >>> rel = df.dp.release([("a", "b")], epsilon=1.0, random_state=0, domain={"a": ["x", "y"], "b": ["u", "v"]})
    >>> iv = release_interval(rel, ("a", "b"))
    >>> iv.attrs["method"], bool(((iv.upper - iv.lower) == 2 * 3).all())   # scale 1: q = 3 at 95%
    ('exact', True)
    >>> release_interval(rel, "a").attrs["method"]
    'normal'
    """
    level = check_level(level)
    key, values, variance, table = release._marginal_with_noise(attrs)
    values = np.asarray(values, dtype=np.float64).ravel()
    if table is not None:
        # the noise is integer noise on the table's lattice (granularity 1 for counts)
        g = getattr(table, "granularity", 1.0)
        q = noise_quantile(table.mechanism, table.scale / g, level)
        half, method = float(q) * g, "exact"
        coverage = float(noise_coverage(table.mechanism, table.scale / g, q))
    else:
        half, method, coverage = float(stats.norm.ppf(0.5 + level / 2.0) * math.sqrt(variance)), "normal", level
    frame = pd.DataFrame(
        {"estimate": values, "lower": values - half, "upper": values + half},
        index=release.series(attrs).index,
    )
    if clip:
        frame = frame.clip(lower=0.0)
    frame.attrs.update(level=level, method=method, coverage=coverage)
    return frame
