"""The peers of ``synthesis.py``: MST and AIM written from their papers on mbi 2.0's estimation engine.

private-pgm's pip package (``mbi``) ships the estimation engine (``Domain``, ``Dataset``,
``LinearMeasurement``, ``estimation.MirrorDescent``, ``junction_tree``) but not the mechanisms.
These functions follow the published steps:

* MST (McKenna, Miklau, Sheldon 2021): rho/3 for every 1-way marginal (Gaussian); the reference
  mechanism's domain compression (states whose noisy count is below 3 sigma merge into one "other"
  state); rho/3 for a maximum spanning tree chosen by Kruskal's algorithm with the exponential mechanism
  (score: L1 between the true 2-way table and the independence estimate from the noisy 1-ways); rho/3 for
  the tree's 2-way tables; one mirror-descent fit.
* AIM (McKenna, Mullins, Sheldon, Miklau 2022): every 1-way marginal first, then per round the
  exponential mechanism picks the candidate (downward closure of the workload, weights = overlap with the
  workload) with the largest ``w (||M(D) - M(p)||_1 - sqrt(2/pi) sigma n)``, among those that keep the
  junction tree under ``max_model_size * (budget used / budget)`` megabytes; Gaussian measurement;
  warm-started mirror-descent refit; sigma halves when the new marginal barely moved; the last round spends
  what is left.

The exponential mechanism is pgmpy_dp's (with the seeded generator, a Gumbel race), so both sides select
with the same sampler. Everything here works on integer codes ``0 .. size-1``.
"""

from __future__ import annotations

import itertools
import os

import numpy as np
import pandas as pd

from pgmpy_dp.engine import JunctionTree
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.privacy.selection import exponential_mechanism

os.environ.setdefault("JAX_ENABLE_COMPILATION_CACHE", "false")


class Marginals:
    """Any marginal of a model given as log-potentials over cliques, from one calibration of our junction tree.

    A set of attributes inside one tree clique is summed from its belief; otherwise the tree cliques that
    join the attributes (the tree pruned of leaves holding none of them) are contracted as
    ``prod P(C) / prod P(separator)``.
    """

    def __init__(self, sizes: dict[str, int], cliques, log_potentials) -> None:
        self.attrs = list(sizes)
        jt = JunctionTree(Domain({a: list(range(k)) for a, k in sizes.items()}), [tuple(c) for c in cliques])
        cal = jt.calibrate([np.asarray(t, dtype=float) for t in log_potentials])
        self.nodes = [tuple(n) for n in jt.nodes]
        self.belief = [np.exp(b) for b in cal.log_beliefs]
        self.adj: dict[int, set] = {i: set() for i in range(len(self.nodes))}
        self.sep: dict[tuple[int, int], tuple[tuple[str, ...], np.ndarray]] = {}
        for v, p in jt.parent.items():
            if p is None:
                continue
            self.adj[v].add(p)
            self.adj[p].add(v)
            s = tuple(a for a in self.nodes[v] if a in self.nodes[p])
            m = self._sum(v, s)
            inv = np.divide(1.0, m, out=np.zeros_like(m), where=m > 0)
            self.sep[v, p] = self.sep[p, v] = (s, inv)
        self.letters = {a: chr(ord("a") + i) if i < 26 else chr(ord("A") + i - 26) for i, a in enumerate(self.attrs)}

    def _sum(self, v: int, attrs) -> np.ndarray:
        node = self.nodes[v]
        b = self.belief[v].sum(axis=tuple(i for i, a in enumerate(node) if a not in attrs))
        kept = [a for a in node if a in attrs]
        return np.transpose(b, [kept.index(a) for a in attrs]) if kept else b

    def __call__(self, attrs) -> np.ndarray:
        attrs = tuple(attrs)
        hosts = [i for i, n in enumerate(self.nodes) if set(attrs) <= set(n)]
        if hosts:
            return self._sum(min(hosts, key=lambda i: self.belief[i].size), attrs)
        keep = set(range(len(self.nodes)))
        adj = {v: set(self.adj[v]) for v in keep}
        pruned = True
        while pruned:
            pruned = False
            for v in list(keep):
                if len(adj[v]) == 1:
                    (p,) = adj[v]
                    if not (set(self.nodes[v]) - set(self.sep[v, p][0])) & set(attrs):
                        keep.discard(v)
                        adj[p].discard(v)
                        del adj[v]
                        pruned = True
        ops, subs = [], []
        for v in keep:
            ops.append(self.belief[v])
            subs.append("".join(self.letters[a] for a in self.nodes[v]))
        for v in keep:
            for p in adj[v]:
                if v < p:
                    s, inv = self.sep[v, p]
                    ops.append(inv)
                    subs.append("".join(self.letters[a] for a in s))
        out = np.einsum(",".join(subs) + "->" + "".join(self.letters[a] for a in attrs), *ops, optimize="greedy")
        return out / out.sum()


def _mbi():
    import jax

    jax.config.update("jax_enable_x64", True)  # mbi's advice for large record counts
    jax.config.update("jax_enable_compilation_cache", False)
    import mbi

    return mbi


def _measure(mbi, data, cliques, sigma: float, rng: np.random.Generator) -> list:
    out = []
    for cl in cliques:
        x = np.asarray(data.project(cl).datavector(), dtype=float)
        out.append(mbi.LinearMeasurement(x + rng.normal(0.0, sigma, x.size), tuple(cl), stddev=sigma))
    return out


class Compression:
    """MST's domain compression: per attribute, the states whose noisy 1-way count reached 3 sigma are kept,
    the others merge into one last state; ``expand`` maps results back to the original codes."""

    def __init__(self, sizes: dict[str, int], one_way: dict[str, np.ndarray], sigma: float) -> None:
        self.sizes = dict(sizes)
        self.keep = {a: one_way[a] >= 3 * sigma for a in sizes}
        self.new_sizes = {a: int(k.sum()) + int(not k.all()) for a, k in self.keep.items()}
        self.to_new = {}
        for a, k in self.keep.items():
            m = np.full(k.size, int(k.sum()), dtype=np.int64)
            m[k] = np.arange(int(k.sum()))
            self.to_new[a] = m

    def codes(self, data: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({a: self.to_new[a][data[a].to_numpy()] for a in self.sizes})

    def measurement(self, mbi, m):
        """A 1-way measurement re-expressed on the compressed domain (the merged cells summed, with the
        reference mechanism's rescaling so the noise stays sigma per entry)."""
        (a,) = m.clique
        k = self.keep[a]
        if k.all():
            return m
        y = np.asarray(m.noisy_measurement)
        extra = float((~k).sum())
        scale = np.ones(int(k.sum()) + 1)
        scale[-1] = 1.0 / np.sqrt(extra)
        y2 = np.append(y[k], y[~k].sum()) * scale

        def query(mu, scale=scale):
            return mu.datavector() * scale

        return mbi.LinearMeasurement(y2, (a,), stddev=m.stddev, query=query)

    def expand(self, cliques, log_potentials):
        """Log-potentials over the original codes: "other" spreads uniformly over the states it merged."""
        out_c, out_t = [], []
        for cl, t in zip(cliques, log_potentials):
            out_c.append(tuple(cl))
            out_t.append(np.asarray(t)[np.ix_(*[self.to_new[a] for a in cl])])
        for a, k in self.keep.items():
            if not k.all():
                out_c.append((a,))
                out_t.append(np.where(k, 0.0, -np.log((~k).sum())))
        return out_c, out_t

    def expand_codes(self, data: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
        out = {}
        for a, k in self.keep.items():
            kept, extra = np.flatnonzero(k), np.flatnonzero(~k)
            c = data[a].to_numpy()
            col = kept[np.minimum(c, max(kept.size - 1, 0))] if kept.size else np.zeros_like(c)
            other = c >= kept.size
            if extra.size and other.any():
                col = col.copy()
                col[other] = rng.choice(extra, int(other.sum()))
            out[a] = col
        return pd.DataFrame(out)


class MbiResult:
    """A fitted peer: log-potentials over the original codes, and a synthetic sample on demand."""

    def __init__(self, model, compression: Compression | None, info: dict) -> None:
        self.model = model
        self.compression = compression
        self.info = info

    def factors(self):
        pots = self.model.potentials
        cliques = [tuple(c) for c in pots.cliques]
        theta = [np.asarray(pots[c].values, dtype=float) for c in pots.cliques]
        if self.compression is not None:
            return self.compression.expand(cliques, theta)
        return cliques, theta

    def sample(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        """mbi's own synthetic data (randomised rounding of the model's marginals)."""
        df = pd.DataFrame(self.model.synthetic_data(rows=n).to_dict())
        if self.compression is not None:
            df = self.compression.expand_codes(df, rng)
        return df


def mst(data: pd.DataFrame, sizes: dict[str, int], rho: float, rng: np.random.Generator,
        iters: int = 10_000, compress: bool = True) -> MbiResult:
    """MST on mbi: ``data`` holds integer codes, ``sizes`` the public domain sizes."""
    mbi = _mbi()
    attrs = list(sizes)
    # each third is shared equally by its measurements: noise sigma * sqrt(count) on each
    sigma = np.sqrt(3.0 / (2.0 * rho))
    dom = mbi.Domain(attrs, [sizes[a] for a in attrs])
    sigma1 = sigma * np.sqrt(len(attrs))
    log1 = _measure(mbi, mbi.Dataset(data[attrs], dom), [(a,) for a in attrs], sigma1, rng)
    comp = None
    if compress:
        comp = Compression(sizes, {m.clique[0]: np.asarray(m.noisy_measurement) for m in log1}, sigma1)
        data = comp.codes(data)
        log1 = [comp.measurement(mbi, m) for m in log1]
        dom = mbi.Domain(attrs, [comp.new_sizes[a] for a in attrs])
    ds = mbi.Dataset(data[attrs], dom)
    est = mbi.estimation.MirrorDescent().estimate(dom, log1, iters=min(iters, 2500))
    # the model of 1-way measurements is a product: its 2-way marginals are outer products
    one = {a: np.asarray(est.project((a,)).datavector(), dtype=float) for a in attrs}
    total = float(est.total)
    weights = {}
    for a, b in itertools.combinations(attrs, 2):
        x = np.asarray(ds.project((a, b)).datavector(), dtype=float)
        weights[a, b] = float(np.abs(x - np.outer(one[a], one[b]).ravel() / total).sum())
    eps = np.sqrt(8.0 * (rho / 3.0) / (len(attrs) - 1))
    parent = {a: a for a in attrs}

    def root(a):
        while parent[a] != a:
            a = parent[a]
        return a

    tree = []
    for _ in range(len(attrs) - 1):
        cand = [e for e in weights if root(e[0]) != root(e[1])]
        e = cand[exponential_mechanism(np.array([weights[c] for c in cand]), eps, 1.0, rng=rng)]
        parent[root(e[0])] = root(e[1])
        tree.append(e)
    log2 = _measure(mbi, ds, tree, sigma * np.sqrt(len(tree)), rng)
    model = mbi.estimation.MirrorDescent().estimate(dom, log1 + log2, iters=iters)
    info = {"selected": tree, "iters": iters, "compressed": compress, "sigma_1way": float(sigma1), "sigma_2way": float(sigma * np.sqrt(len(tree))),
            "rho_spent": float(rho), "rounds": len(tree)}
    return MbiResult(model, comp, info)


def _downward_closure(cliques) -> list[tuple]:
    out = set()
    for cl in cliques:
        for r in range(1, len(cl) + 1):
            out.update(itertools.combinations(cl, r))
    return sorted(out, key=len)


def aim_candidates(workload) -> dict[tuple, float]:
    """AIM's candidates: the downward closure of the workload, each weighted by its overlap with it."""
    work = [(tuple(w[0]), float(w[1])) if isinstance(w[0], (tuple, list)) else (tuple(w), 1.0) for w in workload]
    return {cl: sum(wt * len(set(cl) & set(w)) for w, wt in work) for cl in _downward_closure([w for w, _ in work])}


def _projector(model, sizes):
    """The fitted mbi model's marginal counts (flattened like ``datavector``), computed by ``Marginals``.

    The same numbers as mbi's ``project``, which runs a JAX variable elimination per candidate; with a
    few hundred candidates per round that did not finish the first round in 12 minutes on the shared
    machine. This makes AIM-on-mbi faster than it is, never slower."""
    pots = model.potentials
    m = Marginals(sizes, [tuple(c) for c in pots.cliques], [np.asarray(pots[c].values, dtype=float) for c in pots.cliques])
    total = float(model.total)
    return lambda cl: total * m(cl).ravel()


def aim(data: pd.DataFrame, sizes: dict[str, int], rho: float, rng: np.random.Generator, workload,
        max_model_size: float = 80.0, rounds: int | None = None, iters: int = 1000, log=print) -> MbiResult:
    """AIM on mbi. ``max_model_size`` in megabytes of junction-tree cells (8 bytes each), as in the paper;
    ``rounds`` is AIM's T (default 16 d), which sets the initial per-round budget rho / T."""
    mbi = _mbi()
    from mbi import junction_tree

    attrs = list(sizes)
    dom = mbi.Domain(attrs, [sizes[a] for a in attrs])
    ds = mbi.Dataset(data[attrs], dom)
    candidates = aim_candidates(workload)
    answers: dict = {}

    def answer(cl):
        if cl not in answers:
            answers[cl] = np.asarray(ds.project(cl).datavector(), dtype=float)
        return answers[cl]

    T = rounds or 16 * len(attrs)
    sigma = np.sqrt(T / (2 * 0.9 * rho))
    eps = np.sqrt(8 * 0.1 * rho / T)
    ones = [cl for cl in candidates if len(cl) == 1]
    measurements = _measure(mbi, ds, ones, sigma, rng)
    rho_used = len(ones) * 0.5 / sigma**2
    md = mbi.estimation.MirrorDescent()
    model = md.estimate(dom, measurements, iters=iters)
    selected, t, done = [], 0, False
    while not done:
        t += 1
        if rho - rho_used < 2 * (0.5 / sigma**2 + eps**2 / 8):
            remaining = rho - rho_used
            sigma = np.sqrt(1 / (2 * 0.9 * remaining))
            eps = np.sqrt(8 * 0.1 * remaining)
            done = True
        rho_used += eps**2 / 8 + 0.5 / sigma**2
        limit = max_model_size * rho_used / rho
        free = set(_downward_closure(model.cliques))
        small = {cl: w for cl, w in candidates.items()
                 if cl in free or junction_tree.hypothetical_model_size(dom, list(model.cliques) + [cl]) <= limit}
        names = list(small)
        scores, sens = [], max(abs(small[c]) for c in names)
        project = _projector(model, sizes)
        for cl in names:
            bias = np.sqrt(2 / np.pi) * sigma * dom.size(cl)
            est = project(cl)
            scores.append(small[cl] * (np.abs(answer(cl) - est).sum() - bias))
        cl = names[exponential_mechanism(np.array(scores), eps, sens, rng=rng)]
        selected.append(cl)
        before = project(cl)
        measurements += _measure(mbi, ds, [cl], sigma, rng)
        model = md.estimate(dom, measurements, iters=iters, warm_start=model)
        after = _projector(model, sizes)(cl)
        log(f"  aim-mbi round {t}: {cl} sigma={sigma:.1f} used {rho_used / rho:.3f}")
        if np.abs(after - before).sum() <= sigma * np.sqrt(2 / np.pi) * dom.size(cl):
            sigma /= 2
            eps *= 2
    info = {"selected": selected, "iters": iters, "rounds": t, "T": T, "max_model_size_mb": max_model_size,
            "rho_spent": float(rho_used), "model_size_mb": float(junction_tree.hypothetical_model_size(dom, list(model.cliques)))}
    return MbiResult(model, None, info)
