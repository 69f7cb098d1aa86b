"""Data-dependent privacy-budget allocation for Bayesian-network parameters.

Roy Chowdhury, Rekatsinas and Jha (2020), section 3.3: spend a small budget on a
subsample to estimate, per node, how noisy its conditional probability table
will be (eq. 6) and how much that node matters to inference (eq. 7: height,
out-degree and parameter sensitivity, eqs. 8-9); then split the remaining
budget to minimise the weighted sum of parameter errors (eq. 10).

Everything here is post-processing of public structure and of stage-I noisy
tables: it costs no budget. The functions work on plain arrays and a
``parents`` mapping, so they need no pgmpy objects.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..privacy.budget import check_epsilon
from ..privacy.domain import Domain
from .conditionals import cpd_values

__all__ = [
    "amplified_epsilon",
    "node_heights",
    "out_degrees",
    "parameter_error",
    "parameter_sensitivity",
    "allocation_weights",
    "optimal_allocation",
]


def amplified_epsilon(epsilon: float, sample_rate: float) -> float:
    """Budget a mechanism may use on a Bernoulli(``sample_rate``) subsample to be ``epsilon``-DP overall.

    Inverse of the amplification-by-subsampling bound (Lemma 2.1): running an
    ``e'``-DP mechanism on a subsample that keeps each record independently with
    probability ``beta`` is ``log(1 + beta (exp(e') - 1))``-DP, so
    ``e' = log(1 + (exp(epsilon) - 1) / beta)``.

    Examples
    --------
    >>> round(amplified_epsilon(0.1, 0.1), 4)
    0.7187
    >>> amplified_epsilon(0.5, 1.0)
    0.5
    """
    epsilon = check_epsilon(epsilon)
    if not 0 < sample_rate <= 1:
        raise ValueError(f"sample_rate must be in (0, 1], got {sample_rate!r}")
    if sample_rate == 1:
        return epsilon
    if epsilon < 1.0:
        return math.log1p(math.expm1(epsilon) / sample_rate)
    # the same quantity factored as exp(eps)/beta * (1 + (beta - 1) exp(-eps)): no overflow
    return epsilon - math.log(sample_rate) + math.log1p((sample_rate - 1.0) * math.exp(-epsilon))


def node_heights(parents: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """Length of the longest directed path from each node down to a leaf (leaves have height 0).

    Examples
    --------
    >>> node_heights({"a": [], "b": ["a"], "c": ["a", "b"]})
    {'a': 2, 'b': 1, 'c': 0}
    """
    children = _children(parents)
    heights: dict[str, int] = {}
    for node in reversed(_topological_order(parents)):
        heights[node] = 1 + max((heights[c] for c in children[node]), default=-1)
    return {node: heights[node] for node in parents}


def out_degrees(parents: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """Number of children of each node.

    Examples
    --------
    >>> out_degrees({"a": [], "b": ["a"], "c": ["a", "b"]})
    {'a': 2, 'b': 1, 'c': 0}
    """
    return {node: len(kids) for node, kids in _children(parents).items()}


def parameter_error(noisy_counts: np.ndarray, scale_to: float = 1.0, min_count: float = 1.0) -> float:
    """Estimated mean error, per unit of ``1/epsilon``, of a node's CPD parameters (eq. 6).

    ``noisy_counts`` is the node's family table with the node on axis 0 and its
    parents on the remaining axes. Negative counts are clipped to zero and the
    table rescaled by ``scale_to`` (``1/beta`` turns subsample counts into
    full-data counts); counts are floored at ``max(min_count, 1)`` inside the
    ``1/C^2`` terms so an empty parent configuration gives a large, finite error.

    Returns ``mean over cells of theta * sqrt(1/C[pa]^2 + 1/C[x, pa]^2)``.

    Examples
    --------
    >>> t = np.array([[90.0, 5.0], [10.0, 5.0]])    # node x 1 binary parent
    >>> round(parameter_error(t), 4)
    0.0618
    """
    noisy_counts = np.asarray(noisy_counts, dtype=np.float64)
    theta = cpd_values(noisy_counts)
    counts = np.clip(noisy_counts.reshape(theta.shape), 0, None) * scale_to
    parent_counts = counts.sum(axis=0)
    # a count below one record carries no information, however small the noise
    floor = max(float(min_count), 1.0)
    c = np.maximum(counts, floor)
    c_pa = np.maximum(parent_counts, floor)
    return float(np.mean(theta * np.sqrt(1.0 / c_pa**2 + 1.0 / c**2)))


def parameter_sensitivity(parents: Mapping[str, Sequence[str]], domain: Domain) -> dict[str, float]:
    """Mean sensitivity of each node's CPD parameters on its children's marginals (eqs. 8-9).

    Eq. 8 averages ``dP[Y = y] / dtheta[x | u]`` over the node's parameters
    ``(x, u)``, its children ``Y`` and their states ``y``. The derivative of the
    (multilinear) joint with respect to one CPD entry is ``P(u) P(y | x, u)``,
    and summing over ``y`` leaves ``P(u)``; averaging ``P(u)`` over all
    ``(x, u)`` gives ``1 / |dom(U)|`` whatever the CPDs are, as long as they are
    normalised. So for normalised (stage-I) parameters eq. 8 has the closed form

        ``Delta_i = (1 / |dom(pa_i)|) * mean over children Y of 1 / |dom(Y)|``,

    zero for leaves. We compute that form directly: it is exact, needs no
    inference, and ``tests/estimators/test_allocation.py`` checks it against
    finite-difference derivatives of brute-force marginals on random networks.

    Examples
    --------
    >>> d = Domain({"a": [0, 1], "b": [0, 1, 2], "c": [0, 1]})
    >>> parameter_sensitivity({"a": [], "b": ["a"], "c": ["a", "b"]}, d)
    {'a': 0.41666666666666663, 'b': 0.25, 'c': 0.0}
    """
    children = _children(parents)
    out = {}
    for node, pa in parents.items():
        kids = children[node]
        if not kids:
            out[node] = 0.0
            continue
        out[node] = float(np.mean([1.0 / domain.size(y) for y in kids]) / domain.cells(pa))
    return out


def allocation_weights(
    parents: Mapping[str, Sequence[str]], domain: Domain
) -> dict[str, float]:
    """Importance weight of each node, ``W_i = (h_i + 1)(o_i + 1)(Delta_i + 1)`` (eq. 7).

    Examples
    --------
    >>> d = Domain({"a": [0, 1], "b": [0, 1]})
    >>> allocation_weights({"a": [], "b": ["a"]}, d)
    {'a': 6.0, 'b': 1.0}
    """
    h, o, s = node_heights(parents), out_degrees(parents), parameter_sensitivity(parents, domain)
    return {n: (h[n] + 1) * (o[n] + 1) * (s[n] + 1.0) for n in parents}


def optimal_allocation(costs: Sequence[float], epsilon: float) -> np.ndarray:
    """Split ``epsilon`` to minimise ``sum_i costs[i] / epsilon_i`` subject to ``sum_i epsilon_i = epsilon``.

    The Lagrange condition ``costs[i] / epsilon_i^2 = lambda`` gives
    ``epsilon_i = epsilon * sqrt(costs[i]) / sum_j sqrt(costs[j])``. This is
    eq. 10 of the paper with ``c_i = 1 / costs[i]``, written without the
    products over all other nodes that overflow or underflow on large networks.

    Examples
    --------
    >>> optimal_allocation([1.0, 4.0, 4.0], 1.0)
    array([0.2, 0.4, 0.4])
    """
    costs = np.asarray(costs, dtype=np.float64)
    if costs.ndim != 1 or costs.size == 0 or not np.all(np.isfinite(costs)) or np.any(costs <= 0):
        raise ValueError(f"costs must be a non-empty list of positive finite numbers, got {costs!r}")
    epsilon = check_epsilon(epsilon)
    root = np.sqrt(costs)
    return epsilon * root / root.sum()


def _children(parents: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    children: dict[str, list[str]] = {node: [] for node in parents}
    for node, pa in parents.items():
        for p in pa:
            children[p].append(node)
    return children


def _topological_order(parents: Mapping[str, Sequence[str]]) -> list[str]:
    order: list[str] = []
    remaining = {n: set(p) for n, p in parents.items()}
    ready = [n for n, p in remaining.items() if not p]
    children = _children(parents)
    while ready:
        node = ready.pop()
        order.append(node)
        for c in children[node]:
            remaining[c].discard(node)
            if not remaining[c]:
                ready.append(c)
    if len(order) != len(parents):
        cyclic = sorted(n for n in parents if n not in order)
        raise ValueError(f"the graph has a directed cycle through {cyclic}; a Bayesian network must be a DAG")
    return order
