"""Privacy-budget allocation over the family tables of a Bayesian network.

[`error_optimal_allocation`][pgmpy_dp.estimators.allocation.error_optimal_allocation] is the data-independent
split. The rest is the data-dependent allocation of Roy Chowdhury, Rekatsinas and Jha (2020), section 3.3:
a small stage-I budget on a subsample estimates each node's parameter error (eq. 6) and importance
(eqs. 7-9); the rest is split to minimise their weighted sum (eq. 10). Plain arrays and a ``parents`` mapping.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..privacy.domain import Domain
from ..privacy.loss import LOSS_TYPES, PureDP
from ..privacy.parameters import check_epsilon, check_rho
from .conditionals import cpd_values

#: Exponent ``p`` of ``1/epsilon_i`` in each table's expected error, per loss (see error_optimal_allocation).
_LOSS_POWER = {"absolute": 1.0, "squared": 2.0}


def amplified_epsilon(epsilon: float, sample_rate: float) -> float:
    """Budget a mechanism may use on a Bernoulli(``sample_rate``) subsample to be ``epsilon``-DP overall.

    Inverse of the amplification-by-subsampling bound (Lemma 2.1):
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

    ``noisy_counts`` is the family table, node on axis 0; negative counts are clipped, the table
    rescaled by ``scale_to`` (``1/beta`` for a subsample) and counts floored at ``max(min_count, 1)``.
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

    For normalised CPDs eq. 8 has the closed form (``P(u)`` averaged over the parameters)

        ``Delta_i = (1 / |dom(pa_i)|) * mean over children Y of 1 / |dom(Y)|``,

    zero for leaves; it is exact and needs no inference.

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


def allocation_weights(parents: Mapping[str, Sequence[str]], domain: Domain) -> dict[str, float]:
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

    ``epsilon_i = epsilon * sqrt(costs[i]) / sum_j sqrt(costs[j])``: eq. 10 of the paper without
    its products over all other nodes, which overflow on large networks.

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


def error_optimal_allocation(
    cells: Sequence[float],
    total,
    loss: str = "absolute",
    weights: Sequence[float] | None = None,
    noise: str = "laplace",
) -> np.ndarray:
    """Split ``epsilon`` over tables of ``cells[i]`` cells to minimise their expected total noise error.

    The objective ``sum_i w_i c_i epsilon_i^(-p)`` (``p = 1`` for the absolute, 2 for the squared
    error of Laplace noise; half that for Gaussian noise in rho) is minimised on the total by
    ``epsilon_i ∝ (w_i c_i)^(1/(p+1))``: ``sqrt(w_i c_i)`` for the default (docs/bayesian.md).

    Parameters
    ----------
    cells : sequence of float
        Number of cells of each table (the weights' unit of error).
    total : float or PrivacyLoss
        Total budget to split: a number in the unit ``noise`` names, or a loss value
        (``PureDP``: split in epsilon; ``ZCDP`` or ``ApproxDP``: in rho).
    loss : {"absolute", "squared"}
        Which expected error to minimise (not the privacy loss).
    noise : {"laplace", "gaussian"}
        The mechanism of a number ``total`` (epsilon or rho); a loss value must agree with it.
    weights : sequence of float, optional
        Positive importance of each table's cells (default all one).

    Returns
    -------
    numpy.ndarray, the per-table epsilons or rhos (summing to ``total``).

    Examples
    --------
    >>> error_optimal_allocation([2, 8, 18], 1.0).round(4)
    array([0.1667, 0.3333, 0.5   ])
    >>> error_optimal_allocation([1, 8, 27], 1.0, loss="squared").round(4)
    array([0.1667, 0.3333, 0.5   ])
    >>> error_optimal_allocation([1, 8, 27], 1.0, noise="gaussian").round(4)  # rho ∝ c^(2/3)
    array([0.0714, 0.2857, 0.6429])
    >>> from pgmpy_dp.privacy.loss import ZCDP
    >>> error_optimal_allocation([1, 8, 27], ZCDP(1.0)).round(4)
    array([0.0714, 0.2857, 0.6429])
    """
    total, noise = _total_of(total, noise)
    if loss not in _LOSS_POWER:
        raise ValueError(f"loss must be one of {tuple(_LOSS_POWER)}, got {loss!r}")
    if noise not in ("laplace", "gaussian"):
        raise ValueError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")
    power = _LOSS_POWER[loss] / (2.0 if noise == "gaussian" else 1.0)
    a = np.asarray(cells, dtype=np.float64)
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != a.shape:
            raise ValueError(f"weights must have one entry per table ({a.size}), got shape {w.shape}")
        a = a * w
    if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"cells (times weights) must be a non-empty list of positive finite numbers, got {a!r}")
    total = check_epsilon(total, "total") if noise == "laplace" else check_rho(total, "total")
    root = a ** (1.0 / (power + 1.0))
    return total * root / root.sum()


def _total_of(total, noise: str) -> tuple[float, str]:
    """A loss value as the number it splits and its mechanism; a number is left to the caller's ``noise``."""
    if not isinstance(total, LOSS_TYPES):
        return total, noise
    implied = "laplace" if isinstance(total, PureDP) else "gaussian"
    if noise not in ("laplace", implied):
        raise ValueError(f"noise={noise!r} disagrees with the loss {total!r}; leave noise out with a loss value")
    return (total.epsilon if implied == "laplace" else total.rho), implied


def expected_noise_error(epsilons: Sequence[float], cells: Sequence[float], loss: str = "absolute",
                         weights: Sequence[float] | None = None, noise: str = "laplace") -> float:
    """The objective [`error_optimal_allocation`][pgmpy_dp.estimators.allocation.error_optimal_allocation] minimises, at the split ``epsilons``.

    Laplace of scale ``1 / epsilon_i``: ``E|noise| = 1 / epsilon_i``, ``E noise^2 = 2 / epsilon_i^2``;
    Gaussian of ``sigma_i = 1 / sqrt(2 rho_i)``: ``E|noise| = 1 / sqrt(pi rho_i)``, ``E noise^2 = 1 / (2 rho_i)``
    (continuous approximations of the discrete mechanisms).

    Examples
    --------
    >>> expected_noise_error([0.5, 0.5], [1, 1])
    4.0
    """
    e = np.asarray(epsilons, dtype=np.float64)
    a = np.asarray(cells, dtype=np.float64) * (1.0 if weights is None else np.asarray(weights, dtype=np.float64))
    if noise == "gaussian":
        per_cell = 1.0 / (2.0 * e) if loss == "squared" else 1.0 / np.sqrt(np.pi * e)
    else:
        per_cell = 2.0 / e**2 if loss == "squared" else 1.0 / e
    return float(np.sum(a * per_cell))


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
