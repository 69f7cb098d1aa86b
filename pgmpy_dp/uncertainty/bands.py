"""The two interval bands, as pure functions of the fit's answer and its refits' answers.

The "normal" band is the bias-corrected centre ``2 p_hat - mean(refits)`` plus the refits' spread;
the "response" band widens it by how much the answer follows its truth. See docs/intervals.md.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import special


def band_t(n_refits: int, alpha: float) -> float:
    """Half-width of a normal band in refit standard deviations: ``t * sqrt(1 + 1/B)`` for ``B`` refits.

    ``t`` is Student's with ``B - 1`` degrees of freedom; ``1/B``: the refits' mean's Monte Carlo error.

    Parameters
    ----------
    n_refits : int
        The number ``B`` of refits.
    alpha : float
        The probability outside the band on each side, ``(1 - level) / 2``.

    Examples
    --------
    >>> round(band_t(30, 0.025), 3)
    2.079
    """
    return float(special.stdtrit(max(n_refits - 1, 1), 1.0 - alpha)) * float(np.sqrt(1.0 + 1.0 / max(n_refits, 1)))


def normal_band(estimate, answers, level: float, widen: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The bias-corrected normal band per state: ``2 p_hat - mean ± widen * t * sd``, clipped to ``[0, 1]``.


    Parameters
    ----------
    estimate : numpy.ndarray
        The fitted answer per state, shape ``(k,)``.
    answers : numpy.ndarray
        The refits' answers, shape ``(n_refits, k)``; NaN answers are left out.
    level : float
        Wanted coverage of each state's band.
    widen : float
        Factor on the half-width (``response_factor``'s for the response band).

    Returns
    -------
    tuple of numpy.ndarray, ``(lower, upper)``, each of shape ``(k,)``.

    Examples
    --------
    Refits shifted upwards by 0.02 (the estimator's shrinkage): the band moves down by as much.

    >>> rng = np.random.default_rng(0)
    >>> refits = 0.22 + 0.02 * rng.standard_normal((200, 1))
    >>> lo, hi = normal_band(np.array([0.2]), refits, 0.95)
    >>> round(float((lo[0] + hi[0]) / 2), 2), round(float(hi[0] - lo[0]), 2)
    (0.18, 0.08)
    """
    estimate = np.asarray(estimate, dtype=np.float64).ravel()
    answers = np.asarray(answers, dtype=np.float64).reshape(-1, estimate.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: zero-probability evidence
        bias = np.nanmean(answers, axis=0) - estimate
        var = np.nanvar(answers, axis=0, ddof=1)
    centre = estimate - bias
    half = band_t(len(answers), (1.0 - level) / 2.0) * (np.sqrt(var) * widen)
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def response_factor(first_answers, second_answers) -> tuple[float, float]:
    """The response band's widening of the normal band, from the slope ``k`` of the answer on its truth.

    ``sqrt((2 - k)^2 + 1/B) / sqrt(1 + 1/B)``: when the mean answer moves as ``c + k p`` with the
    truth ``p``, the centre ``2 p_hat - mean(refits)`` has variance ``((2 - k)^2 + 1/B) s^2``. ``k`` is
    the least-squares slope, pooled over the states and clipped to ``[0, 1]``, of each refit's
    second-level answer on the refit's answer (docs/intervals.md).

    Parameters
    ----------
    first_answers : numpy.ndarray
        The refits' answers, shape ``(B, k)``.
    second_answers : numpy.ndarray
        Per refit, the answer of one refit drawn from it under common random numbers, same shape.

    Returns
    -------
    (float, float)
        The factor (at least 1) and the clipped slope; ``(1.0, 1.0)`` if the answers do not spread.

    Examples
    --------
    An estimator moving half as far as its truth:

    >>> rng = np.random.default_rng(0)
    >>> first = 0.4 + 0.05 * rng.standard_normal((30, 2))
    >>> factor, k = response_factor(first, 0.2 + 0.5 * first)
    >>> round(k, 2), round(factor, 2)
    (0.5, 1.49)
    """
    first = np.asarray(first_answers, dtype=np.float64)
    second = np.asarray(second_answers, dtype=np.float64).reshape(first.shape)
    if first.ndim != 2 or len(first) < 2:
        raise ValueError(f"first_answers must hold at least 2 refits' answers (B, k), got shape {first.shape}")
    ok = np.all(np.isfinite(first), axis=0) & np.all(np.isfinite(second), axis=0)
    x = first[:, ok] - first[:, ok].mean(axis=0)
    y = second[:, ok] - second[:, ok].mean(axis=0)
    sxx = float(np.sum(x * x))
    if not sxx > 0:
        return 1.0, 1.0
    # above 1 is noise (it would narrow the band); below 0 an answer moving against its truth
    k = min(max(float(np.sum(x * y)) / sxx, 0.0), 1.0)
    b = len(first)
    return float(np.sqrt(((2.0 - k) ** 2 + 1.0 / b) / (1.0 + 1.0 / b))), k
