"""Private selection: the exponential mechanism as report-noisy-max with Gumbel noise.

Choosing candidate ``i`` with probability proportional to ``exp(epsilon q_i / (2 sensitivity))`` is
``epsilon``-DP when every score moves by at most ``sensitivity``, and ``epsilon**2 / 8``-zCDP (Cesar and
Rogers 2021); Gumbel noise of scale ``2 sensitivity / epsilon`` and the argmax draw exactly that. By
default OpenDP's ``make_noisy_max`` runs the race exactly; a seeded generator uses numpy, for experiments only.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .parameters import check_epsilon


def exponential_mechanism_rho(epsilon: float) -> float:
    """zCDP cost ``epsilon**2 / 8`` of one ``epsilon``-DP exponential mechanism (Gumbel noisy max).

    Examples
    --------
    >>> exponential_mechanism_rho(2.0)
    0.5
    """
    return float(epsilon) ** 2 / 8.0


@functools.lru_cache(maxsize=64)
def opendp_noisy_max(relative_scale: float):
    """OpenDP's exact Gumbel noisy max over float scores of L-infinity sensitivity 1 (cached by scale).

    The returned measurement maps a list of scores to the index of the largest noisy score; its
    ``map(1.0)`` is the zCDP cost of one call.
    """
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp.m.make_noisy_max(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)),
        dp.linf_distance(T=float),
        dp.zero_concentrated_divergence(),
        scale=float(relative_scale),
    )


def exponential_mechanism(scores, epsilon: float, sensitivity: float = 1.0, rng=None) -> int:
    """Index of one candidate, chosen with probability proportional to ``exp(epsilon q / (2 sensitivity))``.

    Parameters
    ----------
    scores : sequence of float
        One finite score per candidate; higher is better.
    epsilon : float
        The pure-DP cost of this selection (its zCDP cost is ``epsilon**2 / 8``).
    sensitivity : float
        The most any score can move when one record is added or removed.
    rng : numpy.random.Generator, optional
        A seeded generator, for reproducible experiments only; ``None`` (the default) runs
        OpenDP's exact sampler from OS randomness.

    Returns
    -------
    int
        The index of the selected candidate.

    Examples
    --------
    >>> exponential_mechanism([0.0, 1e6, 0.0], epsilon=1.0)
    1
    >>> exponential_mechanism([0.0, 1e6], epsilon=1.0, rng=np.random.default_rng(0))
    1
    """
    epsilon = check_epsilon(epsilon)
    if not (isinstance(sensitivity, (int, float, np.integer, np.floating)) and sensitivity > 0
            and math.isfinite(sensitivity)):
        raise ValueError(f"sensitivity must be a positive finite number, got {sensitivity!r}")
    q = np.asarray(scores, dtype=float).ravel()
    if q.size == 0:
        raise ValueError("exponential_mechanism needs at least one candidate score")
    if not np.all(np.isfinite(q)):
        raise ValueError("every score given to exponential_mechanism must be finite (no NaN or inf)")
    # scores divided by the sensitivity have L-infinity sensitivity 1; Gumbel scale 2 / epsilon then
    relative_scale = 2.0 / epsilon
    q = q / float(sensitivity)
    if rng is not None:
        return int(np.argmax(q / relative_scale + rng.gumbel(size=q.size)))
    return int(opendp_noisy_max(relative_scale)(q.tolist()))
