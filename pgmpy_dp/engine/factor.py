"""Array operations on dense log-space factors (attribute names plus an array of log-values).

Aligning axes to another attribute order, and log-sum-exp over axes (a marginal): small pure
functions, so that message passing can precompute the axis bookkeeping once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np



def logsumexp(values: np.ndarray, axis=None, keepdims: bool = False) -> np.ndarray:
    """``log(sum(exp(values)))`` over ``axis``, stable for large magnitudes and ``-inf`` entries.

    A lighter `scipy.special.logsumexp` (no weights, no signs), for many calls on small arrays.

    Examples
    --------
    >>> float(logsumexp(np.log([1.0, 3.0])))
    1.3862943611198906
    >>> logsumexp(np.array([-np.inf, -np.inf]))
    array(-inf)
    """
    values = np.asarray(values, dtype=np.float64)
    if axis is not None and not isinstance(axis, tuple):
        axis = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    if axis == ():
        return values.copy()
    m = np.max(values, axis=axis, keepdims=True)
    # an all -inf slice has max -inf; shift by 0 there so exp gives 0 instead of nan
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(values - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
    return out


def align(values: np.ndarray, attrs: Sequence[str], target: Sequence[str]) -> np.ndarray:
    """View ``values`` (axes ``attrs``) so that it broadcasts against an array with axes ``target``.

    ``attrs`` must be a subset of ``target``; missing axes get length 1.

    Examples
    --------
    >>> x = np.arange(6.0).reshape(2, 3)          # axes ("a", "b")
    >>> align(x, ("a", "b"), ("b", "c", "a")).shape
    (3, 1, 2)
    """
    order, shape = align_plan(attrs, target, values.shape)
    return (values if order is None else np.transpose(values, order)).reshape(shape)


def align_plan(attrs: Sequence[str], target: Sequence[str], sizes: Sequence[int]) -> tuple[tuple[int, ...] | None, tuple[int, ...]]:
    """How `align` moves an array with axes ``attrs`` (lengths ``sizes``): the axis order (None if unchanged)
    and the broadcast shape, for callers that align arrays of one layout many times.

    Examples
    --------
    >>> align_plan(("a", "b"), ("b", "c", "a"), (2, 3))
    ((1, 0), (3, 1, 2))
    """
    attrs = tuple(attrs)
    target = tuple(target)
    missing = [a for a in attrs if a not in target]
    if missing:
        raise ValueError(f"cannot align axes {attrs} to {target}: {missing} not in the target")
    order = sorted(range(len(attrs)), key=lambda i: target.index(attrs[i]))
    shape = [1] * len(target)
    for i in order:
        shape[target.index(attrs[i])] = sizes[i]
    return (None if order == list(range(len(order))) else tuple(order)), tuple(shape)


def log_marginal(values: np.ndarray, attrs: Sequence[str], keep: Sequence[str]) -> np.ndarray:
    """Log-sum-exp of ``values`` (axes ``attrs``) over everything but ``keep``, axes in ``keep`` order.

    Examples
    --------
    >>> logp = np.log(np.full((2, 3), 1 / 6))
    >>> np.exp(log_marginal(logp, ("a", "b"), ("b",))).round(3)
    array([0.333, 0.333, 0.333])
    """
    attrs = tuple(attrs)
    keep = tuple(keep)
    drop = tuple(i for i, a in enumerate(attrs) if a not in keep)
    out = logsumexp(values, axis=drop) if drop else values
    rest = [a for a in attrs if a in keep]
    return np.transpose(out, [rest.index(a) for a in keep])


def marginal(values: np.ndarray, attrs: Sequence[str], keep: Sequence[str]) -> np.ndarray:
    """Sum of ``values`` (axes ``attrs``) over everything but ``keep``, axes in ``keep`` order.

    The probability-space (or count-space) twin of [`log_marginal`][pgmpy_dp.engine.factor.log_marginal].

    Examples
    --------
    >>> counts = np.arange(6.0).reshape(2, 3)          # axes ("a", "b")
    >>> marginal(counts, ("a", "b"), ("b",))
    array([3., 5., 7.])
    >>> marginal(counts, ("a", "b"), ("b", "a")).shape  # kept axes follow ``keep``
    (3, 2)
    """
    attrs = tuple(attrs)
    keep = tuple(keep)
    drop = tuple(i for i, a in enumerate(attrs) if a not in keep)
    out = np.add.reduce(values, axis=drop) if drop else values
    rest = [a for a in attrs if a in keep]
    return out if rest == list(keep) else np.transpose(out, [rest.index(a) for a in keep])
