"""Exact inference: triangulation, clique tree, calibrated log-space sum-product, sampling.

A [`JunctionTree`][pgmpy_dp.engine.junction_tree.JunctionTree] is built once per model structure (a domain and a list
of cliques); after that, [`JunctionTree.calibrate`][pgmpy_dp.engine.junction_tree.JunctionTree.calibrate] maps a list of
log-potentials (one dense array per model clique) to calibrated clique beliefs
and the log-partition function; the structure work is never repeated.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np

from ..privacy.domain import Domain
from .factor import align, log_marginal, logsumexp

#: Largest spread (max - min) of a tree clique's log-potentials for the probability-space path of
#: `JunctionTree.marginals` (``exp(-600)`` is 1e-261, far from underflow); wider cliques use log space.
_EXP_RANGE = 600.0
_TINY = 1e-250  # a belief whose total is below this has lost digits to underflow


# the ufuncs' reduce, called directly: a calibration of a small model is a hundred or so reductions on
# tiny arrays, where np.sum's Python wrapper costs as much as the arithmetic
_add, _maximum, _minimum = np.add.reduce, np.maximum.reduce, np.minimum.reduce


def _exp_each(psi: list[np.ndarray]) -> tuple[list[np.ndarray], float] | None:
    """Each clique's potential shifted by its maximum and exponentiated, and the sum of the maxima; None when a
    clique has -inf cells or spans more than `_EXP_RANGE`."""
    log_z, prob = 0.0, []
    for x in psi:
        top = float(_maximum(x, axis=None))
        if not math.isfinite(top) or top - float(_minimum(x, axis=None)) > _EXP_RANGE:
            return None
        e = np.subtract(x, top)
        prob.append(np.exp(e, out=e))
        log_z += top
    return prob, log_z


def _scaled_message(belief: np.ndarray, axes: tuple, shape: tuple) -> tuple[np.ndarray, float] | None:
    """The message a belief sends (summed over ``axes``, reshaped to ``shape``) divided by its largest entry, and that
    entry; None if the entry is not a positive finite number (the caller falls back to log space)."""
    m = _add(belief, axis=axes).reshape(shape) if axes else belief.reshape(shape)
    scale = float(_maximum(m, axis=None))
    if not (scale > 0 and math.isfinite(scale)):
        return None
    return (np.divide(m, scale, out=m) if axes else m / scale), scale


def as_cliques(domain: Domain, cliques: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
    """Validate ``cliques`` against ``domain`` and return them as tuples.

    Examples
    --------
    >>> as_cliques(Domain({"a": [0, 1], "b": [0, 1]}), [["a", "b"], "a"])
    [('a', 'b'), ('a',)]
    """
    out = []
    for c in cliques:
        c = (c,) if isinstance(c, str) else tuple(c)
        if not c:
            raise ValueError("a clique must name at least one attribute")
        missing = [a for a in c if a not in domain]
        if missing:
            raise ValueError(f"clique {c} names {missing}, which are not in the domain {list(domain.attrs)}")
        if len(set(c)) != len(c):
            raise ValueError(f"clique {c} repeats an attribute; name each attribute once")
        out.append(c)
    return out


def interaction_graph(domain: Domain, cliques: Sequence[Sequence[str]]) -> nx.Graph:
    """Undirected graph on every domain attribute, with an edge between attributes sharing a clique."""
    g = nx.Graph()
    g.add_nodes_from(domain.attrs)
    for c in cliques:
        g.add_edges_from((c[i], c[j]) for i in range(len(c)) for j in range(i + 1, len(c)))
    return g


def _elimination_cost(v, adj: dict, log_card: dict, position: dict) -> tuple:
    """Min-fill cost of eliminating ``v``: fill-in edges, then the log size of its table, then its position."""
    nb = adj[v]
    fill = sum(1 for x in nb for y in nb if x < y and y not in adj[x])
    return fill, log_card[v] + sum(log_card[u] for u in nb), position[v]


def _elimination_cliques(domain: Domain, adj: dict):
    """The clique each vertex forms when eliminated, in greedy min-fill order (``adj`` is consumed)."""
    log_card = {v: math.log(domain.size(v)) for v in adj}
    position = {a: i for i, a in enumerate(domain.attrs)}  # deterministic tie-breaking
    # eliminating v changes only the costs of its neighbours and of their neighbours: only those are recomputed
    costs = {v: _elimination_cost(v, adj, log_card, position) for v in adj}
    while adj:
        v = min(costs, key=costs.__getitem__)
        yield frozenset(adj[v] | {v})
        nb = adj.pop(v)
        del costs[v]
        for x in nb:
            adj[x] |= nb - {x}
            adj[x].discard(v)
        for w in set(nb).union(*(adj[x] for x in nb)):
            costs[w] = _elimination_cost(w, adj, log_card, position)


def triangulate(domain: Domain, cliques: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
    """Maximal cliques of a chordal completion, by greedy min-fill elimination.

    Ties are broken by the smallest table (product of cardinalities), which
    matters when attributes have different numbers of states.

    Examples
    --------
    >>> d = Domain({v: [0, 1] for v in "abcd"})
    >>> sorted(sorted(c) for c in triangulate(d, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]))
    [['a', 'b', 'd'], ['b', 'c', 'd']]
    """
    g = interaction_graph(domain, cliques)
    found: list[frozenset] = []
    for clique in _elimination_cliques(domain, {v: set(g[v]) for v in g}):
        if not any(clique <= f for f in found):
            found = [f for f in found if not f <= clique] + [clique]
    rank = {a: i for i, a in enumerate(domain.attrs)}
    return [tuple(sorted(c, key=rank.__getitem__)) for c in found]


def is_decomposable(domain: Domain, cliques: Sequence[Sequence[str]]) -> bool:
    """True when the cliques' maximal members are exactly the cliques of a chordal graph.

    Then the maximum-likelihood potentials have a closed form (ratios of clique
    and separator marginals).

    Examples
    --------
    >>> d = Domain({v: [0, 1] for v in "abc"})
    >>> is_decomposable(d, [("a", "b"), ("b", "c")]), is_decomposable(d, [("a", "b"), ("b", "c"), ("a", "c")])
    (True, False)
    """
    cliques = as_cliques(domain, cliques)
    used = {a for c in cliques for a in c}
    sub = domain.project([a for a in domain.attrs if a in used])
    given = {frozenset(c) for c in cliques}
    maximal = {c for c in given if not any(c < o for o in given)}
    return {frozenset(c) for c in triangulate(sub, cliques)} == maximal


def _rooted_tree(domain: Domain, nodes: list[tuple[str, ...]], root: int = 0) -> tuple[list[int], dict, dict]:
    """Maximum spanning tree on separator size (zero-weight edges join disconnected parts): BFS order, parents, children."""
    g = nx.Graph()
    g.add_nodes_from(range(len(nodes)))
    for i, j in itertools.combinations(range(len(nodes)), 2):
        sep = set(nodes[i]) & set(nodes[j])
        g.add_edge(i, j, weight=sum(math.log(domain.size(a)) for a in sep) + len(sep))
    tree = nx.maximum_spanning_tree(g) if len(nodes) > 1 else g
    order: list[int] = list(nx.bfs_tree(tree, root)) if len(nodes) > 1 else [0]
    parent: dict[int, int | None] = {root: None}
    edges = list(nx.bfs_edges(tree, root))
    parent.update((v, u) for u, v in edges)
    children: dict[int, list[int]] = {i: [] for i in range(len(nodes))}
    for u, v in edges:
        children[u].append(v)
    return order, parent, children


def _shape_in(attrs: Sequence[str], node: tuple[str, ...], domain: Domain) -> tuple[int, ...]:
    """The shape that makes an array over ``attrs`` (in ``node``'s axis order) broadcast against ``node``'s."""
    shape = [1] * len(node)
    for a in attrs:
        shape[node.index(a)] = domain.size(a)
    return tuple(shape)


def _sum_to(attrs: tuple[str, ...], clique: tuple[str, ...]) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    """The axes of an array over ``attrs`` to sum out for ``clique``, then the transposition (None: already in order)."""
    axes = tuple(i for i, a in enumerate(attrs) if a not in clique)
    kept = [a for a in attrs if a in clique]
    perm = tuple(kept.index(a) for a in clique)
    return axes, None if perm == tuple(range(len(perm))) else perm


def _shared_drop(attrs: tuple[str, ...], clique: set, pending: list[set]):
    """The attribute of ``attrs`` (not in ``clique``) whose removal keeps the most pending cliques, if 2 or more."""
    if len(attrs) - len(clique) < 2:
        return None
    scored = [(sum(r <= set(attrs) - {x} for r in pending), x) for x in attrs if x not in clique]
    count, x = max(scored, key=lambda t: t[0])
    return x if count >= 2 else None


def _inverse_cdf_draw(p: np.ndarray, rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Column drawn per row ``rows[k]`` of the (unnormalised) conditional table ``p`` at uniform ``u[k]``."""
    total = p.sum(axis=1, keepdims=True)
    p = np.where(total > 0, p / np.where(total > 0, total, 1.0), 1.0 / p.shape[1])
    cdf = np.cumsum(p, axis=1)
    cdf[:, -1] = 1.0
    # rows are offset by their index so one sorted array serves every conditional distribution
    flat = (cdf + np.arange(cdf.shape[0])[:, None]).ravel()
    pos = np.searchsorted(flat, rows + u, side="right") - rows * cdf.shape[1]
    return np.minimum(pos, cdf.shape[1] - 1)


@dataclass(frozen=True)
class Calibration:
    """Result of one calibration: normalised log-beliefs per tree clique and the log-partition function."""

    log_beliefs: list[np.ndarray]
    log_z: float


class JunctionTree:
    """A clique tree for the model with cliques ``cliques`` over ``domain``, ready to calibrate.

    Parameters
    ----------
    domain : Domain
        States of every attribute of the model. Attributes in no clique get a
        constant potential (they are independent and uniform).
    cliques : sequence of tuple of str
        Scopes of the model's log-potentials, in the order in which
        log-potential arrays are passed to [`calibrate`][pgmpy_dp.engine.junction_tree.JunctionTree.calibrate].

    Examples
    --------
    >>> d = Domain({"a": [0, 1], "b": [0, 1], "c": [0, 1]})
    >>> jt = JunctionTree(d, [("a", "b"), ("b", "c")])
    >>> theta = [np.log([[4.0, 1.0], [1.0, 4.0]]), np.zeros((2, 2))]
    >>> marg, log_z = jt.marginals(theta)
    >>> marg[0].round(2), round(float(np.exp(log_z)), 6)
    (array([[0.4, 0.1],
           [0.1, 0.4]]), 20.0)
    """

    def __init__(self, domain: Domain, cliques: Sequence[Sequence[str]]) -> None:
        self.domain = domain
        self.cliques = as_cliques(domain, cliques)
        self.nodes: list[tuple[str, ...]] = triangulate(domain, self.cliques)
        self.shapes = [domain.shape(c) for c in self.nodes]
        self.root = 0
        self.order, self.parent, self.children = _rooted_tree(domain, self.nodes, self.root)
        # host tree clique for each model clique: the smallest that contains it
        self.host: list[int] = [self._smallest_host(c) for c in self.cliques]
        self._message_plans()
        # per model clique: axes of its host to sum out, then the transposition
        self._out_axes = [_sum_to(self.nodes[h], c) for c, h in zip(self.cliques, self.host)]
        # per tree clique: the steps that sum its belief down to the model cliques it hosts
        self._outputs = [self._output_plan(v) for v in range(len(self.nodes))]
        self._potential_plans()

    def _smallest_host(self, attrs: Sequence[str]) -> int | None:
        """The smallest tree clique containing ``attrs`` (None if none does)."""
        hosts = [i for i, n in enumerate(self.nodes) if set(attrs) <= set(n)]
        return min(hosts, key=lambda i: math.prod(self.shapes[i])) if hosts else None

    def _neighbours(self, v: int) -> list[int]:
        return self.children[v] + ([] if self.parent[v] is None else [self.parent[v]])

    def _message_plans(self) -> None:
        """Per tree edge and direction, the axes a message sums out and the separator it keeps (log space), and
        the axes plus the shape that makes it broadcast into its receiver (probability space): per tree clique,
        the message to its parent (`_up`) and per child the message down to it (`_down`)."""
        self._drop, shape = {}, {}
        for v in self.order[1:]:
            for a, b in ((v, self.parent[v]), (self.parent[v], v)):
                sep = set(self.nodes[a]) & set(self.nodes[b])
                kept = tuple(x for x in self.nodes[a] if x in sep)
                self._drop[(a, b)] = (tuple(i for i, x in enumerate(self.nodes[a]) if x not in sep), kept)
                shape[(a, b)] = (self._drop[(a, b)][0], _shape_in(kept, self.nodes[b], self.domain))
        self._up = [None if self.parent[v] is None else shape[(v, self.parent[v])] for v in range(len(self.nodes))]
        self._down = [[(c, *shape[(v, c)]) for c in self.children[v]] for v in range(len(self.nodes))]

    def _potential_plans(self) -> None:
        """Per tree clique, the model cliques it hosts in model-clique order (index, axis order or None when already
        in host order, broadcast shape), and the tree cliques' spans in one flat array (for the batched maximum,
        minimum and exp)."""
        self._psi_plan: list[list] = [[] for _ in self.nodes]
        for i, (c, h) in enumerate(zip(self.cliques, self.host)):
            order = tuple(sorted(range(len(c)), key=lambda k: self.nodes[h].index(c[k])))
            same = order == tuple(range(len(order)))
            self._psi_plan[h].append((i, None if same else order, _shape_in(c, self.nodes[h], self.domain)))
        sizes = [math.prod(sh) for sh in self.shapes]
        ends = np.cumsum(sizes)
        self._flat_size = int(ends[-1]) if sizes else 0
        self._flat_spans = [(int(e - n), int(e)) for n, e in zip(sizes, ends)]
        self._flat_starts = np.array([a for a, _ in self._flat_spans], dtype=np.intp)

    def _output_plan(self, v: int) -> list[tuple[int, tuple[int, ...], int, tuple[int, ...] | None]]:
        """How tree clique ``v``'s belief is summed down to the model cliques it hosts.

        A list of steps ``(source, axes, target, perm)``: buffer ``source`` (0 is the belief) summed
        over ``axes`` gives buffer ``target``; ``target < 0`` means model clique ``-target - 1``,
        transposed by ``perm``. When several hosted cliques lie inside the belief minus one
        attribute, that smaller marginal is summed once and they are summed from it: on a
        third-order chain this halves the passes over the 4-attribute beliefs.
        """
        buffers: list[tuple[str, ...]] = [self.nodes[v]]
        wanted = [i for i, h in enumerate(self.host) if h == v]
        steps = []
        for k, i in enumerate(wanted):
            c, pending = set(self.cliques[i]), [set(self.cliques[o]) for o in wanted[k:]]
            while True:
                src = min((j for j, b in enumerate(buffers) if c <= set(b)), key=lambda j: len(buffers[j]))
                attrs = buffers[src]
                drop = _shared_drop(attrs, c, pending)
                if drop is None:
                    axes, perm = _sum_to(attrs, self.cliques[i])
                    steps.append((src, axes, -i - 1, perm))
                    break
                buffers.append(tuple(a for a in attrs if a != drop))
                steps.append((src, (attrs.index(drop),), len(buffers) - 1, None))
        return steps

    @property
    def max_cells(self) -> int:
        """Cells of the largest tree clique (what one calibration's cost scales with)."""
        return max(math.prod(s) for s in self.shapes)

    @property
    def total_cells(self) -> int:
        """Cells summed over all tree cliques."""
        return sum(math.prod(s) for s in self.shapes)

    def _potentials(self, log_potentials: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Each tree clique's log-potential: the sum of the model cliques it hosts, broadcast to its shape."""
        return self._flat_potentials(log_potentials)[0]

    def _flat_potentials(self, log_potentials: Sequence[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray]:
        """The tree cliques' log-potentials as views into one flat array (also returned), in `nodes` order.

        The hosted arrays are added in model-clique order straight into the flat array (the same
        additions as from zeros), so the fast path can treat all cliques in a few calls.
        """
        if len(log_potentials) != len(self.cliques):
            raise ValueError(f"expected {len(self.cliques)} log-potential arrays, got {len(log_potentials)}")
        flat = np.empty(self._flat_size)
        psi = []
        for full, plan, (start, stop) in zip(self.shapes, self._psi_plan, self._flat_spans):
            acc = flat[start:stop].reshape(full)
            if not plan:
                acc.fill(0.0)
            arrays = []
            for i, order, shape in plan:
                theta = np.asarray(log_potentials[i], dtype=np.float64)
                arrays.append((theta if order is None else theta.transpose(order)).reshape(shape))
            if len(arrays) == 1:
                np.copyto(acc, arrays[0])  # 0 + a (a clique smaller than its host: broadcast)
            elif arrays:
                np.add(arrays[0], arrays[1], out=acc)
                for a in arrays[2:]:
                    np.add(acc, a, out=acc)
            psi.append(acc)
        return psi, flat

    def _message(self, a: int, b: int, belief: np.ndarray) -> np.ndarray:
        axes, kept = self._drop[(a, b)]
        return align(logsumexp(belief, axis=axes) if axes else belief, kept, self.nodes[b])

    def calibrate(self, log_potentials: Sequence[np.ndarray]) -> Calibration:
        """Run sum-product (upward then downward pass) in log space.

        Parameters
        ----------
        log_potentials : sequence of numpy.ndarray
            One array per model clique, shaped ``domain.shape(clique)``.

        Returns
        -------
        Calibration
            Normalised log-beliefs of every tree clique (in `nodes` order) and ``log Z``.
        """
        psi = self._potentials(log_potentials)
        msg: dict[tuple[int, int], np.ndarray] = {}
        for v in self.order[:0:-1]:  # upward, leaves first
            msg[(v, self.parent[v])] = self._message(v, self.parent[v], self._collect(psi[v], msg, v, self.children[v]))
        for v in self.order:  # downward: what v sends c is everything v receives but from c
            for c in self.children[v]:
                msg[(v, c)] = self._message(v, c, self._collect(psi[v], msg, v, [o for o in self._neighbours(v) if o != c]))
        beliefs = [self._collect(psi[v], msg, v, self._neighbours(v)) for v in range(len(self.nodes))]
        zs = [float(logsumexp(b)) for b in beliefs]
        return Calibration([b - z for b, z in zip(beliefs, zs)], zs[self.root])

    @staticmethod
    def _collect(b: np.ndarray, msg: dict, v: int, sources: list[int]) -> np.ndarray:
        """``b`` plus the log-messages into ``v`` from ``sources``, added in that order."""
        for src in sources:
            b = b + msg[(src, v)]
        return b

    def _fast_marginals(self, psi: list[np.ndarray], flat: np.ndarray | None = None) -> tuple[list[np.ndarray], float] | None:
        """Sum-product in probability space with rescaled messages: model-clique marginals and ``log Z``.

        One ``exp`` per tree clique instead of a log-sum-exp per message: cliques are shifted by
        their maximum and upward messages divided by theirs, the logs going into ``log Z``. Returns
        ``None`` when that could lose mass: a clique whose finite log-potentials span more than
        `_EXP_RANGE`, or a message or marginal that came out all zero or non-finite. With ``flat``
        (the array `_flat_potentials` laid out, of which ``psi`` are views; both are overwritten)
        the maxima, minima and ``exp`` of all cliques take three calls.
        """
        # the arithmetic and its order are kept to the bit (tests/engine/test_reference_fits.py)
        start = self._exp_flat(psi, flat) if flat is not None and len(psi) > 1 else _exp_each(psi)
        if start is None:
            return None  # -inf cells (exact zeros) or a wide range: the log-space path is exact there
        prob, log_z = start
        upward = self._upward(prob, log_z)
        return None if upward is None else self._downward(prob, *upward)

    def _exp_flat(self, psi: list[np.ndarray], flat: np.ndarray) -> tuple[list[np.ndarray], float] | None:
        """`_exp_each` for the views ``psi`` of ``flat``, in place and batched (the same numbers)."""
        tops = np.maximum.reduceat(flat, self._flat_starts)
        if not np.isfinite(tops).all() or (tops - np.minimum.reduceat(flat, self._flat_starts) > _EXP_RANGE).any():
            return None
        # in place: the potentials are not needed again (the log-space fallback starts from the log-potentials)
        log_z = 0.0
        for top, x in zip(tops.tolist(), psi):
            np.subtract(x, top, out=x)
            log_z += top
        np.exp(flat, out=flat)
        return psi, log_z

    def _upward(self, prob: list[np.ndarray], log_z: float) -> tuple[list, list, float] | None:
        """Messages to the parents (each divided by its maximum, whose log joins ``log_z``), leaves first, and per
        tree clique its potential times its children's messages; None when a message is zero or not finite."""
        up: list = [None] * len(prob)  # up[c]: the message from c to its parent
        below: list = [None] * len(prob)  # a clique's potential times its children's messages
        for v in reversed(self.order):
            kids = self.children[v]
            b = prob[v]
            if kids:
                b = b * up[kids[0]]
                for c in kids[1:]:
                    np.multiply(b, up[c], out=b)
            below[v] = b
            if self._up[v] is not None:
                sent = _scaled_message(b, *self._up[v])
                if sent is None:
                    return None
                up[v], scale = sent
                log_z += math.log(scale)
        return up, below, log_z

    def _downward(self, prob: list, up: list, below: list, log_z: float) -> tuple[list[np.ndarray], float] | None:
        """The model cliques' marginals and ``log Z`` (the root's total joins it), root first."""
        out: list[np.ndarray] = [None] * len(self.cliques)  # type: ignore[list-item]
        down: list = [None] * len(prob)  # down[c]: the message from c's parent to c
        for v in self.order:
            # a new array: below[v] may be prob[v], needed again below
            b = below[v] if down[v] is None else below[v] * down[v]
            if v == self.root:
                total = float(_add(b, axis=None))
                if not (total > _TINY and math.isfinite(total)):
                    return None  # the mass underflowed (or overflowed): use the log-space path
                log_z += math.log(total)
            if not (self._emit(v, b, out) and self._send_down(v, b, prob, up, down)):
                return None
        return out, log_z

    def _emit(self, v: int, b: np.ndarray, out: list) -> bool:
        """Sum belief ``b`` of tree clique ``v`` down to the marginals it hosts, into ``out``; False on lost mass."""
        buffers = [b]
        for src, axes, target, perm in self._outputs[v]:
            m = _add(buffers[src], axis=axes) if axes else buffers[src]
            if target >= 0:
                buffers.append(m)
                continue
            total = float(_add(m, axis=None))
            if not (total > _TINY and math.isfinite(total)):
                return False
            m = np.divide(m, total, out=m) if axes else m / total
            out[-target - 1] = m if perm is None else np.transpose(m, perm)
        return True

    def _send_down(self, v: int, b: np.ndarray, prob: list, up: list, down: list) -> bool:
        """The messages from ``v`` (belief ``b``) to its children, into ``down``; False when one is zero or not finite."""
        scratch = None
        for c, axes, shape in self._down[v]:
            # the belief divided by what c sent: the product of everything else, without recomputing it
            if float(_minimum(up[c], axis=None)) > 0:
                if scratch is None:
                    scratch = np.empty_like(b)
                rest = np.divide(b, up[c], out=scratch)
            else:  # a zero in what c sent: recompute the product without it
                rest = prob[v]
                for o in self.children[v]:
                    if o != c:
                        rest = rest * up[o]
                if down[v] is not None:
                    rest = rest * down[v]
            sent = _scaled_message(rest, axes, shape)
            if sent is None:
                return False
            down[c] = sent[0]
        return True

    def marginals(self, log_potentials: Sequence[np.ndarray]) -> tuple[list[np.ndarray], float]:
        """Marginal probabilities of every model clique (axes in clique order) and ``log Z``.

        In probability space (`_fast_marginals`) when that is safe, else in log space
        ([`calibrate`][pgmpy_dp.engine.junction_tree.JunctionTree.calibrate]); the same numbers up to rounding.
        """
        fast = self._fast_marginals(*self._flat_potentials(log_potentials))
        if fast is not None:
            return fast
        cal = self.calibrate(log_potentials)
        probs = [np.exp(b) for b in cal.log_beliefs]  # one exp per tree clique, then plain sums
        out = []
        for h, (axes, perm) in zip(self.host, self._out_axes):
            m = probs[h].sum(axis=axes) if axes else probs[h]
            out.append(m if perm is None else np.transpose(m, perm))
        return out, cal.log_z

    def marginal(self, cal: Calibration, attrs: Sequence[str]) -> np.ndarray:
        """Marginal probabilities over ``attrs`` from a calibration, if some tree clique contains them."""
        h = self._smallest_host(attrs)
        if h is None:
            raise ValueError(f"no clique of the junction tree contains {tuple(attrs)}")
        return np.exp(log_marginal(cal.log_beliefs[h], self.nodes[h], attrs))

    def sample(
        self, log_potentials: Sequence[np.ndarray], n: int, random_state=None
    ) -> dict[str, np.ndarray]:
        """Draw ``n`` exact samples, as integer codes per attribute (the layout [`Domain.encode`][pgmpy_dp.privacy.domain.Domain.encode] returns).

        Forward sampling over the calibrated tree, root first, one inverse-CDF lookup per clique.

        Examples
        --------
        >>> d = Domain({"a": [0, 1], "b": [0, 1]})
        >>> jt = JunctionTree(d, [("a", "b")])
        >>> codes = jt.sample([np.array([[0.0, -np.inf], [-np.inf, 0.0]])], 1000, random_state=0)
        >>> bool(np.all(codes["a"] == codes["b"]))
        True
        """
        rng = np.random.default_rng(random_state)
        cal = self.calibrate(log_potentials)
        codes: dict[str, np.ndarray] = {}
        for v in self.order:
            self._draw_clique(cal.log_beliefs[v], self.nodes[v], codes, n, rng)
        for a in self.domain.attrs:  # attributes in no clique: uniform
            if a not in codes:
                codes[a] = rng.integers(0, self.domain.size(a), size=n).astype(np.intp)
        return {a: codes[a] for a in self.domain.attrs}

    def _draw_clique(self, log_belief: np.ndarray, attrs: tuple[str, ...], codes: dict, n: int, rng) -> None:
        """Draw the attributes of a tree clique not yet in ``codes``, given those already drawn, into ``codes``."""
        known = tuple(a for a in attrs if a in codes)
        free = tuple(a for a in attrs if a not in codes)
        if not free:
            return
        logp = np.transpose(log_belief, [attrs.index(a) for a in known + free])
        k_shape = self.domain.shape(known)
        f_shape = self.domain.shape(free)
        p = np.exp(logp.reshape(math.prod(k_shape), math.prod(f_shape)))
        rows = np.ravel_multi_index(tuple(codes[a] for a in known), k_shape) if known else np.zeros(n, dtype=np.intp)
        pos = _inverse_cdf_draw(p, rows, rng.random(n))
        for a, col in zip(free, np.unravel_index(pos, f_shape)):
            codes[a] = col.astype(np.intp)
