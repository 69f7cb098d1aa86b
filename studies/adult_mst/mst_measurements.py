"""MST's measurements of the Adult census, and exact marginals of tree models fitted to them.

MST (McKenna, Miklau, Sheldon 2021), written from the paper, with the budget split
into three equal zCDP thirds:

1. every 1-way marginal, one Gaussian release at rho/3 (sigma = sqrt(3 d / (2 rho)) per cell);
2. a private maximum spanning tree: the weight of a pair (a, b) is the L1 distance
   between its true 2-way table and the independence estimate from the noisy 1-way
   marginals (sensitivity 1); Kruskal's algorithm picks each of the d - 1 edges among
   the pairs that join two components with the exponential mechanism at
   eps_i = sqrt(8 (rho/3) / (d - 1)) (an eps_i exponential mechanism is eps_i^2/8-zCDP);
3. the d - 1 tree tables, one Gaussian release at rho/3.

(epsilon, delta) = (1, 1e-9) is converted to rho by the tight conversion of Canonne,
Kamath and Steinke (2020), ``pgmpy_dp.privacy.budget.epsilon_delta_to_rho``, the
conversion MST's reference code uses: rho = 0.014973. (The classical
eps = rho + 2 sqrt(rho ln(1/delta)) would give rho = 0.011781.)

MST's domain compression (merging 1-way states whose noisy count is below 3 sigma
before selection) is NOT done: every estimator here sees the same uncompressed tables.

The measurements of one seed are cached in ``cache/seed<k>.pkl`` (not committed).
"""

from __future__ import annotations

import itertools
import json
import pickle
from functools import lru_cache
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd

import pgmpy_dp  # noqa: F401  (registers the df.dp accessor)
from pgmpy_dp.privacy.budget import epsilon_delta_to_rho
from pgmpy_dp.engine import project_simplex

DATA = Path("/work/shared/data")
HERE = Path(__file__).resolve().parent
CACHE = HERE / "cache"
EPSILON, DELTA = 1.0, 1e-9


@lru_cache(maxsize=1)
def load_adult() -> tuple[pd.DataFrame, dict[str, int]]:
    """The discretised Adult table (integer codes) and its public domain sizes."""
    sizes = json.loads((DATA / "adult-domain.json").read_text())
    df = pd.read_csv(DATA / "adult.csv")[list(sizes)]
    return df, sizes


def public_states(sizes: dict[str, int]) -> dict[str, list[int]]:
    return {a: list(range(k)) for a, k in sizes.items()}


def contingency(df: pd.DataFrame, sizes: dict[str, int], attrs) -> np.ndarray:
    """Exact count table over ``attrs`` (axes in that order)."""
    shape = tuple(sizes[a] for a in attrs)
    flat = np.ravel_multi_index(tuple(df[a].to_numpy() for a in attrs), shape)
    return np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape).astype(float)


def _exponential_mechanism(scores: np.ndarray, eps: float, rng: np.random.Generator) -> int:
    logits = 0.5 * eps * scores  # sensitivity 1, not monotone
    p = np.exp(logits - logits.max())
    return int(rng.choice(scores.size, p=p / p.sum()))


def select_tree(df, sizes, one_way: dict, rho_select: float, rng: np.random.Generator) -> list[tuple[str, str]]:
    """Private maximum spanning tree on the L1 error of the noisy-independence estimate."""
    attrs = list(sizes)
    n_est = float(np.mean([t.sum() for t in one_way.values()]))
    probs = {a: project_simplex(one_way[a] / n_est) for a in attrs}
    weight = {}
    for a, b in itertools.combinations(attrs, 2):
        indep = n_est * np.outer(probs[a], probs[b])
        weight[a, b] = float(np.abs(contingency(df, sizes, (a, b)) - indep).sum())
    eps = np.sqrt(8.0 * rho_select / (len(attrs) - 1))
    components = nx.utils.UnionFind(attrs)
    edges = []
    for _ in range(len(attrs) - 1):
        cand = [e for e in weight if components[e[0]] != components[e[1]]]
        e = cand[_exponential_mechanism(np.array([weight[c] for c in cand]), eps, rng)]
        components.union(*e)
        edges.append(e)
    return edges


def mst_measurements(seed: int, epsilon: float = EPSILON, delta: float = DELTA):
    """(1-way release, tree release, tree edges, rho) of one MST run; cached per seed."""
    path = CACHE / f"seed{seed}_eps{epsilon:g}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    df, sizes = load_adult()
    rho = epsilon_delta_to_rho(epsilon, delta)
    rng = np.random.default_rng([seed, 36])
    domain = public_states(sizes)
    attrs = list(sizes)
    rel1 = df.dp.release([(a,) for a in attrs], rho=rho / 3, domain=domain, random_state=rng, show_progress=False)
    one_way = {t.attrs[0]: t.values for t in rel1.tables}
    edges = select_tree(df, sizes, one_way, rho / 3, rng)
    rel2 = df.dp.release(edges, rho=rho / 3, domain=domain, random_state=rng, show_progress=False)
    out = (rel1, rel2, edges, rho)
    CACHE.mkdir(exist_ok=True)
    path.write_bytes(pickle.dumps(out))
    return out


# -- exact marginals of a tree-structured model -----------------------------------------------


class TreeMarginals:
    """Any marginal of up to three attributes of a tree model, from its edge marginals.

    ``pairs[(a, b)]`` is the model's normalised table over a tree edge (axes a, b). For three
    attributes the tree has one node ``m`` on all three pairwise paths (the median), and
    ``p(a, b, c) = sum_m p(m) P(a | m) P(b | m) P(c | m)`` with ``P(x | m)`` the product of the
    edge conditionals along the path from ``m`` to ``x``.
    """

    def __init__(self, pairs: dict[tuple[str, str], np.ndarray]) -> None:
        self.pairs = {}
        for (a, b), t in pairs.items():
            t = np.clip(np.asarray(t, dtype=float), 0, None)
            t = t / t.sum()
            self.pairs[a, b], self.pairs[b, a] = t, t.T
        self.tree = nx.Graph(list(pairs))
        self.one = {}
        for (a, _), t in self.pairs.items():
            self.one.setdefault(a, t.sum(axis=1))
        self._cond: dict = {}

    def _step(self, u: str, v: str) -> np.ndarray:
        """P(v | u) as a |u| x |v| matrix (rows of impossible u are zero)."""
        t = self.pairs[u, v]
        pu = t.sum(axis=1, keepdims=True)
        return np.divide(t, pu, out=np.zeros_like(t), where=pu > 0)

    def cond(self, m: str, x: str) -> np.ndarray:
        if (m, x) not in self._cond:
            if m == x:
                self._cond[m, x] = np.eye(self.one[m].size)
            else:
                path = nx.shortest_path(self.tree, m, x)
                out = self._step(path[0], path[1])
                for u, v in zip(path[1:], path[2:]):
                    out = out @ self._step(u, v)
                self._cond[m, x] = out
        return self._cond[m, x]

    def marginal(self, attrs) -> np.ndarray:
        if len(attrs) == 1:
            return self.one[attrs[0]]
        if len(attrs) == 2:
            a, b = attrs
            return self.one[a][:, None] * self.cond(a, b)
        a, b, c = attrs
        on_all = set(nx.shortest_path(self.tree, a, b)) & set(nx.shortest_path(self.tree, b, c))
        on_all &= set(nx.shortest_path(self.tree, a, c))
        (m,) = on_all
        w = self.one[m][:, None, None] * self.cond(m, a)[:, :, None] * self.cond(m, b)[:, None, :]
        return np.tensordot(w, self.cond(m, c), axes=(0, 0))


@lru_cache(maxsize=1)
def true_marginals() -> dict[tuple[str, ...], np.ndarray]:
    """Normalised true 2-way and 3-way tables of Adult, keyed by attribute tuple."""
    df, sizes = load_adult()
    out = {}
    for k in (2, 3):
        for attrs in itertools.combinations(list(sizes), k):
            t = contingency(df, sizes, attrs)
            out[attrs] = t / t.sum()
    return out


def l1_errors(model: TreeMarginals) -> dict[tuple[str, ...], float]:
    """L1 distance between the model's and the true normalised table, for every 2- and 3-way marginal."""
    return {attrs: float(np.abs(model.marginal(attrs) - t).sum()) for attrs, t in true_marginals().items()}


if __name__ == "__main__":
    for s in range(3):
        rel1, rel2, edges, rho = mst_measurements(s)
        print(s, f"rho={rho:.6f}", [round(t.scale, 1) for t in rel2.tables[:1]], edges)
