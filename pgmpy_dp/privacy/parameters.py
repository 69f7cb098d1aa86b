"""The privacy parameters: checks of epsilon, rho and delta, and conversion between zCDP and (epsilon, delta)-DP.

[`rho_to_epsilon_delta`][pgmpy_dp.privacy.parameters.rho_to_epsilon_delta] is the tight conversion of
Canonne, Kamath and Steinke (2020); [`epsilon_delta_to_rho`][pgmpy_dp.privacy.parameters.epsilon_delta_to_rho]
inverts it.
"""

from __future__ import annotations

import math
import numbers
import sys

import numpy as np


def check_positive(value, name: str, example: str) -> float:
    """Return ``value`` as a float, or raise a clear error naming ``name``: TypeError unless a real number (booleans
    refused), ValueError unless positive and finite, suggesting ``name=example``.

    Examples
    --------
    >>> check_positive(2, "prior_strength", "1")
    2.0
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive finite number, got {value!r} ({type(value).__name__})")
    try:
        value = float(value)
    except OverflowError:  # an int beyond float64
        value = math.inf
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be positive and finite, got {value!r}; e.g. {name}={example}")
    return value


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float, or raise a clear error if it is not positive and finite.

    Examples
    --------
    >>> check_epsilon(1)
    1.0
    """
    return check_positive(epsilon, name, "1.0")


def check_rho(rho, name: str = "rho") -> float:
    """Return the zCDP parameter ``rho`` as a float, or raise a clear error if it is not positive and finite.

    Examples
    --------
    >>> check_rho(0.5)
    0.5
    """
    return check_positive(rho, name, "0.5")


def check_delta(delta, name: str = "delta") -> float:
    """Return ``delta`` as a float, or raise a clear error unless ``0 < delta < 1``.

    Examples
    --------
    >>> check_delta(1e-6)
    1e-06
    """
    if isinstance(delta, (bool, np.bool_)) or not isinstance(delta, numbers.Real):
        raise TypeError(f"{name} must be a number in (0, 1), got {delta!r} ({type(delta).__name__})")
    delta = float(delta)
    if not (0.0 < delta < 1.0):
        raise ValueError(f"{name} must be in (0, 1), got {delta!r}; e.g. {name}=1e-6 (well below 1/n)")
    return delta


# -- zCDP <-> (epsilon, delta) ----------------------------------------------------------------


def rho_to_epsilon_delta(rho: float, delta: float) -> float:
    """Smallest epsilon such that rho-zCDP implies (epsilon, delta)-DP, by the tight conversion.

    Uses Canonne, Kamath and Steinke (2020, Proposition 12 / Corollary 13):
    rho-zCDP implies (epsilon, delta)-DP for

    ``epsilon = min over alpha > 1 of
    alpha*rho + (log(1/delta) + (alpha-1) log(alpha-1) - alpha log(alpha)) / (alpha-1)``.

    The minimiser is the root of ``log(1/delta) - log(alpha) = rho (alpha-1)**2`` on ``(1, 1/delta)``, found
    by bisection; the result never exceeds the classical ``rho + 2 sqrt(rho log(1/delta))``.

    Examples
    --------
    >>> eps = rho_to_epsilon_delta(0.5, 1e-6)
    >>> round(eps, 4), eps < 0.5 + 2 * math.sqrt(0.5 * math.log(1e6))
    (5.2215, True)
    """
    rho = check_rho(rho)
    delta = check_delta(delta)
    log_inv = -math.log(delta)
    # g(lo) = log_inv > 0 and g(hi) < 0; a subnormal delta would make 1 / delta infinite
    lo, hi = 1.0, min(1.0 / delta, sys.float_info.max)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        # a product, not ** 2: it overflows to inf (a valid comparison) instead of raising
        if log_inv - math.log(mid) - rho * ((mid - 1.0) * (mid - 1.0)) > 0:
            lo = mid
        else:
            hi = mid
    alpha = hi  # just past the root: the objective is flat there, and alpha > 1 keeps it finite

    def objective(a: float) -> float:
        return a * rho + (log_inv + (a - 1.0) * math.log(a - 1.0) - a * math.log(a)) / (a - 1.0)

    eps = objective(alpha)
    return max(0.0, min(eps, rho + 2.0 * math.sqrt(rho * log_inv)))


def epsilon_delta_to_rho(epsilon: float, delta: float) -> float:
    """Largest rho whose tight conversion ([`rho_to_epsilon_delta`][pgmpy_dp.privacy.parameters.rho_to_epsilon_delta]) gives at most ``(epsilon, delta)``.

    Examples
    --------
    >>> rho = epsilon_delta_to_rho(1.0, 1e-6)
    >>> round(rho, 5), rho_to_epsilon_delta(rho, 1e-6) <= 1.0
    (0.02436, True)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    lo, hi = 0.0, epsilon
    while rho_to_epsilon_delta(hi, delta) <= epsilon:  # eps(rho) >= rho, so this ends quickly
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if rho_to_epsilon_delta(mid, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    if lo <= 0:
        raise ValueError(
            f"epsilon={epsilon!r} with delta={delta!r} allows no positive rho; raise epsilon or delta"
        )
    return lo
