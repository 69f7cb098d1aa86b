"""The answer read directly off the released tables that measured all of its variables, with its noise band.

A supported answer ``P(q | e)`` has a released table holding ``q`` and ``e``: summed down to them, its
cells are the real data's counts plus independent noise of known variance, so the ratio
``A_s / D`` (the cells with ``q = s`` among those with ``e``) estimates the real data's answer with a
delta-method standard error. Several such tables combine by inverse variance. No model enters: the band
covers the real answer whatever the model got wrong (a selection that left a dependence out elsewhere, a
fit pulled by other tables), up to the normal approximation of a ratio (docs/intervals.md).
"""

from __future__ import annotations

import numpy as np
from scipy import special


def measured_answer(tables, domain, variables, evidence) -> tuple[np.ndarray, np.ndarray]:
    """``(estimate, sd)`` per joint state of ``variables`` from every unpooled table holding them and ``evidence``.

    Parameters
    ----------
    tables : iterable of NoisyTable
        The fit's released tables (over ``domain``'s states).
    domain : Domain
        The states of the tables' attributes.
    variables : list of str
        Query variables.
    evidence : dict
        ``{variable: state}``.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Flat over the joint states of ``variables``; ``sd`` is ``inf`` where no table informs the answer
        (none holds the variables, or the evidence's noisy count is not positive).

    Examples
    --------
    >>> from pgmpy_dp.privacy.domain import Domain
    >>> from pgmpy_dp.tables.artifact import NoisyTable
    >>> d = Domain({"a": [0, 1], "b": [0, 1]})
    >>> t = NoisyTable(("a", "b"), np.array([[300.0, 100.0], [50.0, 550.0]]), None, 2.0)
    >>> est, sd = measured_answer([t], d, ["b"], {"a": 0})
    >>> est.tolist(), bool(0 < sd[0] < 0.01)
    ([0.75, 0.25], True)
    """
    needed = set(variables) | set(evidence)
    k = int(np.prod(domain.shape(variables)))
    weight, total = np.zeros(k), np.zeros(k)
    for t in tables:
        if t.members is not None or not needed <= set(t.attrs):
            continue
        values = np.asarray(t.values, dtype=np.float64)
        dropped = tuple(i for i, a in enumerate(t.attrs) if a not in needed)
        cells = int(np.prod([values.shape[i] for i in dropped])) if dropped else 1
        kept = [a for a in t.attrs if a in needed]
        values = values.sum(axis=dropped) if dropped else values
        index = tuple(list(domain[a]).index(evidence[a]) if a in evidence else slice(None) for a in kept)
        rest = [a for a in kept if a not in evidence]
        counts = np.transpose(values[index], [rest.index(v) for v in variables]).ravel()
        counts = np.maximum(counts, 0.0)
        d = counts.sum()
        if not d > 0:
            continue
        p = counts / d
        var = cells * t.variance * ((1.0 - p) ** 2 + (k - 1) * p**2) / d**2
        var = np.maximum(var, 1e-12)
        weight += 1.0 / var
        total += p / var
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(weight > 0, total / weight, np.nan), np.where(weight > 0, 1.0 / np.sqrt(weight), np.inf)


def measured_band(estimate, sd, level: float) -> tuple[np.ndarray, np.ndarray]:
    """``estimate ± z sd`` clipped to ``[0, 1]`` (``[0, 1]`` where ``sd`` is infinite)."""
    z = float(special.ndtri(0.5 + level / 2.0))
    lower = np.where(np.isfinite(sd), np.clip(estimate - z * sd, 0.0, 1.0), 0.0)
    upper = np.where(np.isfinite(sd), np.clip(estimate + z * sd, 0.0, 1.0), 1.0)
    return lower, upper
