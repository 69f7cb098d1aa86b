"""What the marginal-selection methods (MST, AIM) share: measuring, fitting, and reading the model.

A method alternates [`measure`][pgmpy_dp.synthesis.marginals.measure] (Gaussian noise), a
[`MarkovFit`][pgmpy_dp.synthesis.marginals.MarkovFit] of every measurement so far, and reading the model's
marginals ([`tree_marginal`][pgmpy_dp.synthesis.marginals.tree_marginal]); model sizes come from the public
clique list only ([`model_megabytes`][pgmpy_dp.synthesis.marginals.model_megabytes]).
"""

from __future__ import annotations

import math
import warnings
from collections import deque
from collections.abc import Sequence

import numpy as np

from ..engine import ConvergenceWarning, JunctionTree, triangulate
from ..estimators.evidence import pooled_n_records
from ..estimators.markov import PrivateMarkovEstimator
from ..estimators.markov_fit import EM_BUDGET, Evidence, fit_markov, fit_settings, start_potentials
from ..estimators.measurements import clique_measurements
from ..estimators.priors import cgm_regularization
from ..privacy.domain import Domain
from ..privacy.mechanisms import MAX_SCALE
from ..tables.counter import as_counter
from ..tables.release import release_counts

#: Bytes of one junction-tree cell (a float64).
BYTES_PER_CELL = 8


def measure(codes, domain: Domain, tables: Sequence[tuple[str, ...]], rho: float, rng, label: str):
    """One discrete Gaussian release of ``tables`` at a total ``rho`` (L2 sensitivity ``sqrt(len(tables))``).

    ``codes`` is a [`Counter`][pgmpy_dp.tables.counter.Counter] of the private rows, or their encoded codes.

    Examples
    --------
    >>> d = Domain({"a": [0, 1]})
    >>> rel = measure({"a": np.array([0, 1, 1])}, d, [("a",)], rho=0.5, rng=np.random.default_rng(0), label="a")
    >>> rel[("a",)].scale
    1.0
    """
    tables = list(tables)
    return release_counts(as_counter(codes, domain).tables(tables), domain, tables, rho=rho, random_state=rng, label=label)


def measured_cliques(releases) -> list[tuple[str, ...]]:
    """Every attribute set measured by ``releases``, once each, in measurement order.

    Examples
    --------
    >>> d = Domain({"a": [0, 1], "b": [0, 1]})
    >>> codes = {"a": np.array([0, 1]), "b": np.array([1, 1])}
    >>> rels = [measure(codes, d, [("a",), ("b",)], 1.0, np.random.default_rng(0), "1-way"),
    ...         measure(codes, d, [("b", "a")], 1.0, np.random.default_rng(0), "pair")]
    >>> measured_cliques(rels)
    [('a',), ('b',), ('b', 'a')]
    """
    seen, out = set(), []
    for r in releases:
        for t in r.tables:
            if frozenset(t.attrs) not in seen:
                seen.add(frozenset(t.attrs))
                out.append(tuple(t.attrs))
    return out


def model_megabytes(domain: Domain, cliques: Sequence[Sequence[str]]) -> float:
    """Size in megabytes (float64 cells of every clique of the triangulated model) of a Markov
    network over ``cliques``; public, as it depends on the clique list and the domain only.

    Examples
    --------
    >>> d = Domain({v: range(1024) for v in "abc"})
    >>> model_megabytes(d, [("a", "b"), ("b", "c")])
    16.0
    """
    return sum(math.prod(domain.shape(c)) for c in triangulate(domain, cliques)) * BYTES_PER_CELL / 2**20


class MarkovFit:
    """CGM-EM fits of a Markov network to a growing list of Gaussian releases.

    Each measured attribute set, 1-way tables included, gets its own potential; a refit starts from
    the previous log-potentials, a new clique's at zero. Each fit is
    [`fit_markov`][pgmpy_dp.estimators.markov_fit.fit_markov] with one floored L2 weight over all tables;
    ``scaled_regularization`` is the last fit's weight before the floor
    ([`cgm_regularization`][pgmpy_dp.estimators.priors.cgm_regularization]), for AIM's published model
    (docs/synthesis.md).

    Parameters
    ----------
    domain : Domain
        The public domain of every attribute of the model.
    max_iter : int
        EM maps per refit.
    m_step_iter : int, optional
        L-BFGS iterations per M-step (default: the engine's choice from the noise, see
        [`m_step_length`][pgmpy_dp.engine.cgm.m_step_length]).
    e_step_iter : int
        Largest number of belief-propagation sweeps per E-step (``nlbp_iter`` of
        [`cgm_em`][pgmpy_dp.engine.cgm.cgm_em]).
    """

    def __init__(
        self, domain: Domain, max_iter: int = EM_BUDGET, m_step_iter: int | None = None, e_step_iter: int = 10
    ) -> None:
        self.domain = domain
        self.max_iter = max_iter
        self.m_step_iter = m_step_iter
        self.e_step_iter = e_step_iter
        self.cliques: list[tuple[str, ...]] = []
        self.theta: list[np.ndarray] = []
        self.jt: JunctionTree | None = None
        self._calibration = None
        self._marginal_cache: dict = {}
        self.n_records = 0.0
        self.scaled_regularization = 0.0

    def fit(self, releases) -> MarkovFit:
        """Refit to all of ``releases``; returns self.

        Examples
        --------
        >>> d = Domain({"a": [0, 1], "b": [0, 1]})
        >>> rng = np.random.default_rng(0)
        >>> codes = {"a": rng.integers(0, 2, 1000), "b": rng.integers(0, 2, 1000)}
        >>> fit = MarkovFit(d).fit([measure(codes, d, [("a",), ("b",), ("a", "b")], 10.0, rng, "all")])
        >>> bool(abs(fit.marginal(("a",)).sum() - 1) < 1e-9), fit.marginal(("b", "a")).shape
        (True, (2, 2))
        """
        cliques = measured_cliques(releases)
        jt = JunctionTree(self.domain, cliques)
        evidence = Evidence(cliques, *clique_measurements(releases, cliques), pooled_n_records(releases))
        settings = fit_settings("cgm-em", evidence, max_iter=self.max_iter, per_clique=False,
                                m_step_iter=self.m_step_iter, e_step_iter=self.e_step_iter)
        # a refit starts from the previous potentials (new cliques at zero); the first from the naive stage
        init = start_potentials(dict(zip(self.cliques, self.theta)), cliques, self.domain) if self.cliques else None
        result = fit_markov(jt, evidence, settings, init=init)
        self.cliques, self.theta, self.jt, self.n_records = cliques, list(result.log_potentials), jt, evidence.n_records
        self.scaled_regularization = cgm_regularization(
            settings.naive_regularization, [m.scale for m in evidence.measurements]
        )
        self._calibration = jt.calibrate(self.theta)
        self._marginal_cache = {}
        return self

    def marginal(self, attrs: Sequence[str]) -> np.ndarray:
        """The fitted model's probability table over ``attrs`` (axes in ``attrs`` order)."""
        return tree_marginal(self.jt, self._calibration, attrs, self._marginal_cache)


def tree_marginal(jt: JunctionTree, calibration, attrs: Sequence[str], cache: dict | None = None) -> np.ndarray:
    """Marginal probabilities over ``attrs`` from a calibrated junction tree, in a clique or not.

    Outside every tree clique, the smallest subtree covering ``attrs`` (the root's belief times each
    other clique's belief given its separator with its parent) is eliminated leaf to root: each clique
    is summed down to its separator and the asked attributes, then multiplied into its parent. Every
    contraction names only the few attributes it touches, so the table may have any number of columns.
    ``cache``, a dict kept with one calibration, holds what many calls share (the tree's orders from each
    root, each clique's belief given its separator).

    Examples
    --------
    >>> d = Domain({v: [0, 1] for v in "abc"})
    >>> jt = JunctionTree(d, [("a", "b"), ("b", "c")])
    >>> copy = np.log([[0.9, 0.1], [0.1, 0.9]])
    >>> p = tree_marginal(jt, jt.calibrate([copy, copy]), ("a", "c"))
    >>> p.round(2)
    array([[0.41, 0.09],
           [0.09, 0.41]])
    """
    attrs = tuple(attrs)
    nodes = jt.nodes
    cache = {} if cache is None else cache
    if "sets" not in cache:
        cache["sets"] = [frozenset(n) for n in nodes]
    key = frozenset(attrs)
    if any(key <= n for n in cache["sets"]):
        return jt.marginal(calibration, attrs)
    root = min((i for i, n in enumerate(nodes) if attrs[0] in n), key=lambda i: math.prod(jt.shapes[i]))
    if ("order", root) not in cache:
        order, previous = _breadth_first(jt, root)
        cache["order", root] = order, previous, {v: i for i, v in enumerate(order)}
    order, previous, position = cache["order", root]
    keep = sorted(_covering_subtree(nodes, attrs, order, previous), key=position.__getitem__)
    factors = {}
    for v in keep:
        parent = None if v == root else previous[v]
        if ("factor", v, parent) not in cache:
            p = np.exp(calibration.log_beliefs[v])
            cache["factor", v, parent] = p if parent is None else _given_separator(p, nodes[v], nodes[parent])
        factors[v] = (cache["factor", v, parent], tuple(nodes[v]))
    wanted = set(attrs)
    for v in reversed(keep[1:]):  # children before parents: absorb each clique into its parent
        parent = previous[v]
        child = _sum_to(*factors[v], wanted | set(nodes[parent]))
        factors[parent] = _product(factors[parent], child)
    return _sum_to(*factors[root], wanted, out=attrs)[0]


def _sum_to(values: np.ndarray, labels: tuple[str, ...], keep: set, out: Sequence[str] | None = None):
    """``values`` over ``labels`` summed down to the labels in ``keep`` (in ``out``'s order if given)."""
    out = tuple(a for a in labels if a in keep) if out is None else tuple(out)
    local = {a: i for i, a in enumerate(dict.fromkeys(labels + out))}
    return np.einsum(values, [local[a] for a in labels], [local[a] for a in out]), out


def _product(left: tuple[np.ndarray, tuple], right: tuple[np.ndarray, tuple]):
    """The product of two factors ``(values, labels)``, over the union of their labels."""
    out = tuple(dict.fromkeys(left[1] + right[1]))
    local = {a: i for i, a in enumerate(out)}
    return np.einsum(left[0], [local[a] for a in left[1]], right[0], [local[a] for a in right[1]],
                     list(range(len(out)))), out


def _breadth_first(jt: JunctionTree, root: int) -> tuple[list[int], dict[int, int | None]]:
    """The tree's cliques in breadth-first order from ``root``, and each one's predecessor on the way."""
    adjacent: dict[int, list[int]] = {i: [] for i in range(len(jt.nodes))}
    for v, p in jt.parent.items():
        if p is not None:
            adjacent[v].append(p)
            adjacent[p].append(v)
    previous: dict[int, int | None] = {root: None}
    order = [root]
    queue = deque([root])
    while queue:
        v = queue.popleft()
        for u in adjacent[v]:
            if u not in previous:
                previous[u] = v
                order.append(u)
                queue.append(u)
    return order, previous


def _covering_subtree(nodes, attrs, order, previous) -> set[int]:
    """The smallest subtree holding ``order[0]`` (a clique of ``attrs[0]``) and a clique of every other attribute."""
    keep = {order[0]}
    for a in attrs[1:]:
        v = next(i for i in order if a in nodes[i])  # the nearest clique holding a
        while v not in keep:
            keep.add(v)
            v = previous[v]
    return keep


def _given_separator(p: np.ndarray, node, parent) -> np.ndarray:
    """A clique's belief ``p`` over ``node`` divided by its marginal on the separator with ``parent``."""
    sep = set(node) & set(parent)
    axes = tuple(i for i, a in enumerate(node) if a not in sep)
    total = p.sum(axis=axes, keepdims=True) if axes else p
    return np.divide(p, total, out=np.zeros_like(p), where=total > 0)


def clique_network(nodes, cliques):
    """A ``DiscreteMarkovNetwork`` over ``nodes`` in which every one of ``cliques`` is complete."""
    from pgmpy.models import DiscreteMarkovNetwork

    network = DiscreteMarkovNetwork()
    network.add_nodes_from(nodes)
    network.add_edges_from((c[i], c[j]) for c in cliques for i in range(len(c)) for j in range(i + 1, len(c)))
    return network


def fit_final_model(
    releases, domain: Domain, show_progress: bool, start: MarkovFit | None = None,
    regularization: float | str = "auto", max_iter: int | None = None,
):
    """The published model: a ``PrivateMarkovEstimator`` fit of every measured set, as a clique.

    ``start``, a [`MarkovFit`][pgmpy_dp.synthesis.marginals.MarkovFit] of the same releases, is where CGM-EM
    starts instead of the naive fit (same optimum, shorter way). ``regularization`` is the estimator's;
    ``max_iter`` a fixed budget of EM maps (not converging within it does not warn). Returns the fitted
    estimator, whose ``model_`` stands for it in ``pgmpy_dp.query`` and ``pgmpy_dp.query_interval``.
    """
    cliques = measured_cliques(releases)
    network = clique_network(domain.attrs, cliques)
    estimator = PrivateMarkovEstimator(
        inference="junction-tree", max_iter=max_iter, regularization=regularization, show_progress=show_progress
    )
    init = None if start is None else dict(zip(start.cliques, start.theta))
    with warnings.catch_warnings():
        if max_iter is not None:
            warnings.simplefilter("ignore", ConvergenceWarning)  # a budget, as the estimator's default
        return estimator.fit(network, releases, cliques=cliques, init=init)


def check_noise_scale(sigma: float, what: str) -> None:
    """Refuse, before anything is spent, a plan whose Gaussian noise scale no sampler supports.

    Examples
    --------
    >>> check_noise_scale(1e13, "MST's 1-way marginals")
    Traceback (most recent call last):
    ...
    ValueError: the budget is too small for MST's 1-way marginals: their noise scale 1e+13 exceeds the largest supported 1.09951e+12 (the tables would be pure noise); raise rho (or epsilon)
    """
    if not sigma <= MAX_SCALE:  # also catches an overflow to inf
        raise ValueError(
            f"the budget is too small for {what}: their noise scale {sigma:g} exceeds the largest supported "
            f"{MAX_SCALE:g} (the tables would be pure noise); raise rho (or epsilon)"
        )
