"""Private structure learning against the strongest baselines: rows for exact graph recovery, parameter error, time.

Models: ``random_pairwise_model(p, k, max_degree=3, eta=0.5)`` (about p edges, every node with at most 3
neighbours; Ising couplings ``A_ij = +-0.5``, k-state edges a random doubly centred block with
``max |W_ij| = 0.5``; zero fields), seed ``(seed, p, k, model)``; a fresh sample of every n from
``sample_pairwise_model`` (exact up to 2**20 states, Gibbs beyond). Every fit at total zCDP budget ``rho``.

Routes (an edge where the doubly centred ``max |W_ij|`` exceeds ``eta / 2 = 0.25`` unless stated):

* ``tables-mle``: discrete Gaussian release of all p(p-1)/2 two-way tables (``df.dp.release``), then
  ``PrivateMarkovEstimator(method="naive-mle")`` on the complete pairwise graph; only where its junction
  tree is exact and small (``k**p <= 2**16``).
* ``tables-icov``: the same release; moments of the one-hot (reference state dropped) indicators from the
  noisy tables (each divided by its own noisy total, clipped at 0), covariance eigenvalues floored at 1e-3
  of their mean, ``W_ij`` from the doubly centred ``-inverse covariance`` block (a mean-field edge score).
* ``tables-refit``: the icov edges, then ``naive-mle`` on that sparse graph from the same release; edges are
  the refit's (a subset of the icov ones), its parameters the MLE's. The two-stage tables route for large p.
  When the icov graph is too dense for an exact refit (a junction-tree clique above ``2**16`` cells) the icov
  answer stands (``used = icov``).
* ``sklearn``: non-private l1 logistic regressions (scikit-learn liblinear, penalty ``sqrt(log p / n) / 4``
  per row; for k > 2 one regression per pair of states, as the learners reduce them), symmetrised.
* ``fw-oracle``: ``PrivateIsingEstimator`` / ``PrivatePairwiseEstimator`` with the true ``width`` and ``eta``
  (Frank-Wolfe route forced where the learner has a ``route`` parameter), other settings default.
* ``default``: the same learners with no argument but ``random_state`` (their own threshold and route).

Metrics per fit: exact recovery (edge set equal to the truth), false positives/negatives, max parameter
error ``max |W_ij(a, b) - W_hat_ij(a, b)|`` over all pairs (for Ising this is ``max |A_ij - A_hat_ij|``), CPU
seconds (``time.process_time``, the release included). One row per fit is appended to
``results/<out>_runs.csv.gz`` as soon as it is done, keyed by (p, k, rho, n, model, route, seed and, for the
two learner routes, the library commit): a rerun skips finished fits. ``--summarise`` prints the markdown
tables (recovery per n, n50 / n90 by log-linear interpolation, error where recovered, CPU) and writes
``results/<out>_tables.md`` and ``results/<out>_recovery.png``.

Grid (in priority order; the whole grid does not fit in a few hours on 2 shared cores):
p = 10, 20 at k = 2; p = 50 (5 models); p = 10 at k = 3; p = 100 (5 models): rho in {0.1, 1, 10},
n in {1e3, 2e3, 5e3, 1e4, 3e4, 1e5} (also 500 at p = 10), 10 models per cell. ``--cells`` picks blocks.

Run:  python benchmarks/structure.py                      # the grid above, resumable
      python benchmarks/structure.py --cells 10:2 20:2    # only these (p:k) blocks
      python benchmarks/structure.py --summarise          # tables and plot from the cached rows
      python benchmarks/structure.py --quick              # a few seconds
"""

from __future__ import annotations

import gzip
import itertools
import math
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd

import harness
from harness import doubly_centred, sklearn_weights  # shared with structure_k3.py
import pgmpy_dp
from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.structure import PrivateIsingEstimator, PrivatePairwiseEstimator
from pgmpy_dp.testing.pairwise_models import model_edges, random_pairwise_model, sample_pairwise_model

ETA = 0.5
MAX_DEGREE = 3
ROUTES = ["tables-mle", "tables-icov", "tables-refit", "sklearn", "fw-oracle", "default"]
LEARNER_ROUTES = ("fw-oracle", "default")
#: the complete-graph MLE runs only while its single junction-tree clique is this small
MLE_CELLS = 2**16
RHOS = [0.1, 1.0, 10.0]
NS = [1000, 2000, 5000, 10000, 30000, 100000]
# (p, k, ns, models) in priority order
GRID = [
    (10, 2, [500, *NS], 10),
    (20, 2, NS, 10),
    (50, 2, NS, 5),
    (10, 3, NS, 10),
    (100, 2, NS, 5),
]
KEY = ["p", "k", "rho", "n", "model", "route", "seed", "lib"]
COLUMNS = [*KEY, "exact", "fp", "fn", "max_err", "cpu", "n_edges", "candidates", "n_iter", "used"]


def library_commit() -> str:
    """Short commit of the pgmpy_dp checkout in use ('+' when it has uncommitted changes), or its path."""
    root = Path(pgmpy_dp.__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "pgmpy_dp"], capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return root.name  # an exported snapshot: its folder names the commit
    return head + ("+" if dirty else "")


def seed_of(*parts) -> int:
    """One integer seed from a tuple of integers (independent streams per cell, model and budget)."""
    return int(np.random.SeedSequence([int(x) for x in parts]).generate_state(1)[0])


def true_width(W: np.ndarray, theta: np.ndarray) -> float:
    """``max_i sum_j max |W_ij| + max |theta_i|``; for an Ising model ``max_i sum_j |A_ij| + |theta_i|``."""
    return float((np.abs(W).max(axis=(2, 3)).sum(axis=1) + np.abs(theta).max(axis=1)).max())


# -- baseline routes: each returns doubly centred weights {(i, j): k x k} and an edge set --------------------
def _edges(weights: dict, threshold: float = ETA / 2) -> set:
    return {e for e, w in weights.items() if np.abs(w).max() > threshold}


def _pair_tables(release, cols):
    """``{(i, j): normalised noisy table}`` with negative noise clipped."""
    idx = {c: i for i, c in enumerate(cols)}
    out = {}
    for tab in release.tables:
        v = np.clip(np.asarray(tab.values, dtype=float), 0, None)
        out[idx[tab.attrs[0]], idx[tab.attrs[1]]] = v / max(v.sum(), 1.0)
    return out


def icov_weights(release, cols, k: int) -> dict:
    """Mean-field couplings ``-inv(Cov)`` of the indicators of states 1..k-1, from the noisy pair tables."""
    p = len(cols)
    tables = _pair_tables(release, cols)
    d = k - 1
    marg_sum, marg_cnt = np.zeros((p, d)), np.zeros(p)
    second = np.zeros((p * d, p * d))
    for (i, j), v in tables.items():
        second[i * d:(i + 1) * d, j * d:(j + 1) * d] = v[1:, 1:]
        second[j * d:(j + 1) * d, i * d:(i + 1) * d] = v[1:, 1:].T
        marg_sum[i] += v.sum(axis=1)[1:]
        marg_sum[j] += v.sum(axis=0)[1:]
        marg_cnt[i] += 1
        marg_cnt[j] += 1
    mean = (marg_sum / marg_cnt[:, None]).ravel()
    for i in range(p):  # indicators of one variable: E[z_a z_b] = P(a) if a == b else 0
        second[i * d:(i + 1) * d, i * d:(i + 1) * d] = np.diag(mean[i * d:(i + 1) * d])
    cov = second - np.outer(mean, mean)
    w, V = np.linalg.eigh(cov)
    prec = (V / np.clip(w, 1e-3 * max(w.mean(), 1e-12), None)) @ V.T
    out = {}
    for i, j in itertools.combinations(range(p), 2):
        block = np.zeros((k, k))
        block[1:, 1:] = -prec[i * d:(i + 1) * d, j * d:(j + 1) * d]
        out[i, j] = doubly_centred(block)
    return out


def tree_cells(p: int, k: int, edges) -> int:
    """Cells of the largest clique of a (min-fill) junction tree of the graph ``edges`` on ``p`` nodes."""
    import networkx as nx
    from networkx.algorithms.approximation import treewidth_min_fill_in

    g = nx.Graph(list(edges))
    if g.number_of_edges() == 0:
        return k
    return k ** (treewidth_min_fill_in(g)[0] + 1)


def mle_weights(release, cols, edges) -> dict:
    """Naive-MLE pairwise potentials on ``edges`` (index pairs) from the noisy tables, doubly centred."""
    from pgmpy.models import DiscreteMarkovNetwork

    if not edges:
        return {}
    mn = DiscreteMarkovNetwork()  # isolated nodes left out: the release has no one-way table of them
    mn.add_edges_from([(cols[i], cols[j]) for i, j in edges])
    with harness.quiet():
        est = PrivateMarkovEstimator(method="naive-mle", show_progress=False).fit(mn, release)
    idx = {c: i for i, c in enumerate(cols)}
    out = {}
    for clique, t in zip(est.cliques_, est.log_potentials_):
        if len(clique) == 2:
            i, j = idx[clique[0]], idx[clique[1]]
            t = np.asarray(t) if i < j else np.asarray(t).T
            out[min(i, j), max(i, j)] = doubly_centred(t)
    return out


def learner(route: str, k: int, width: float, seed):
    cls = PrivateIsingEstimator if k == 2 else PrivatePairwiseEstimator
    if route == "default":
        return cls(random_state=seed)
    est = cls(width=width, eta=ETA, random_state=seed)
    if "route" in est.get_params():
        est.set_params(route="frank-wolfe")
    return est


def learner_weights(est, cols) -> tuple[dict, set]:
    idx = {c: i for i, c in enumerate(cols)}
    weights = {}
    for (a, b), w in est.weights_.items():
        i, j = idx[a], idx[b]
        weights[min(i, j), max(i, j)] = doubly_centred(np.asarray(w) if i < j else np.asarray(w).T)
    edges = {(min(idx[a], idx[b]), max(idx[a], idx[b])) for a, b in est.edges_}
    return weights, edges


def score(weights: dict, edges: set, W: np.ndarray) -> dict:
    truth = set(model_edges(W))
    err = 0.0
    for i, j in itertools.combinations(range(W.shape[0]), 2):
        w = weights.get((i, j))
        err = max(err, float(np.abs(W[i, j] - (0.0 if w is None else w)).max()))
    return {"exact": int(edges == truth), "fp": len(edges - truth), "fn": len(truth - edges), "max_err": err}


# -- the grid ------------------------------------------------------------------------------------------------
class Cache:
    """Per-fit rows in a gzip CSV: loaded once, appended fit by fit."""

    def __init__(self, path: Path):
        self.path = path
        self.frame = pd.read_csv(path, dtype={"lib": str}) if path.exists() else pd.DataFrame(columns=KEY)
        self.done = {tuple(r) for r in self.frame[KEY].astype(str).itertuples(index=False)}

    def has(self, row: dict) -> bool:
        return tuple(str(row[c]) for c in KEY) in self.done

    def add(self, row: dict) -> None:
        new = not self.path.exists()
        with gzip.open(self.path, "at") as fh:
            pd.DataFrame([row]).reindex(columns=COLUMNS).to_csv(fh, header=new, index=False)
        self.done.add(tuple(str(row[c]) for c in KEY))


def compact(path: Path) -> pd.DataFrame:
    """Rewrite the cache as one gzip stream (appending adds one small stream per fit) and return its rows.

    The file is replaced atomically; a fit appended by a concurrent run between the read and the
    replacement is lost from the cache and simply rerun next time."""
    runs = pd.read_csv(path, dtype={"lib": str}).drop_duplicates(KEY, keep="last")
    tmp = path.with_name(path.name + ".tmp")
    runs.to_csv(tmp, index=False, compression={"method": "gzip", "mtime": 0})
    os.replace(tmp, path)
    return runs


def run_cell(p, k, n, model, routes, seed, lib, cache, log):
    W, theta = random_pairwise_model(p, k=k, max_degree=MAX_DEGREE, eta=ETA, seed=seed_of(seed, p, k, model))
    cols = [f"x{i}" for i in range(p)]
    width = true_width(W, theta)
    df = None
    for rho in RHOS:
        release = None
        for route in routes:
            rho_r = math.inf if route == "sklearn" else rho
            if route == "sklearn" and rho != RHOS[0]:
                continue
            if route == "tables-mle" and k**p > MLE_CELLS:
                continue
            key = dict(p=p, k=k, rho=rho_r, n=n, model=model, route=route, seed=seed,
                       lib=lib if route in LEARNER_ROUTES else "-")
            if cache.has(key):
                continue
            if df is None:
                df = sample_pairwise_model(W, theta, n, seed=seed_of(seed, p, k, model, n))
            noise_seed = seed_of(seed, p, k, model, n, round(1000 * rho))
            t0 = time.process_time()
            extra = {}
            if route.startswith("tables"):
                if release is None:
                    pairs = list(itertools.combinations(cols, 2))
                    tr = time.process_time()
                    release = df.dp.release(pairs, rho=rho, random_state=noise_seed, show_progress=False)
                    t_release = time.process_time() - tr
                    t0 = tr
                else:
                    t0 -= t_release  # every tables route pays for the release
                if route == "tables-mle":
                    weights = mle_weights(release, cols, list(itertools.combinations(range(p), 2)))
                    edges = _edges(weights)
                else:
                    weights = icov_weights(release, cols, k)
                    edges = _edges(weights)
                    if route == "tables-refit":
                        extra["candidates"] = len(edges)
                        if tree_cells(p, k, edges) <= MLE_CELLS:
                            weights = mle_weights(release, cols, sorted(edges))
                            edges = _edges(weights)
                        else:  # too dense to refit exactly: the icov answer stands (and is wrong)
                            extra["used"] = "icov"
            elif route == "sklearn":
                codes = np.column_stack([df[c].cat.codes.to_numpy() for c in cols]).astype(np.intp)
                weights = sklearn_weights(codes, k)
                edges = _edges(weights)
            else:
                est = learner(route, k, width, noise_seed).fit(df, rho=rho)
                weights, edges = learner_weights(est, cols)
                extra.update(n_iter=getattr(est, "n_iter_", None), used=getattr(est, "route_", "fw"))
            cpu = time.process_time() - t0
            row = {**key, **score(weights, edges, W), "cpu": round(cpu, 4), "n_edges": len(model_edges(W)), **extra}
            row["max_err"] = round(row["max_err"], 5)
            cache.add(row)
            log(f"p={p} k={k} n={n} model={model} rho={rho_r:g} {route}: exact={row['exact']} "
                f"err={row['max_err']:.3f} cpu={cpu:.2f}")


# -- summary ---------------------------------------------------------------------------------------------------
def interpolate_n(ns, rates, level) -> str:
    """Smallest n at which the recovery rate reaches ``level`` (log-linear between grid points)."""
    ns, rates = np.asarray(ns, float), np.asarray(rates, float)
    if rates[0] >= level:
        return f"<= {ns[0]:,.0f}"
    for a in range(len(ns) - 1):
        if rates[a] < level <= rates[a + 1]:
            f = (level - rates[a]) / (rates[a + 1] - rates[a])
            return f"{math.exp(math.log(ns[a]) + f * math.log(ns[a + 1] / ns[a])):,.0f}"
    return f"> {ns[-1]:,.0f}"


def markdown(frame: pd.DataFrame, index: bool = True) -> str:
    """A pipe table (no optional dependency)."""
    if index:
        frame = frame.reset_index()
    cells = [[str(c) for c in frame.columns]] + [["-" if pd.isna(v) else str(v) for v in r] for r in frame.values]
    lines = ["| " + " | ".join(r) + " |" for r in cells]
    lines.insert(1, "|" + "---|" * len(frame.columns))
    return "\n".join(lines)


def label_libraries(runs: pd.DataFrame) -> pd.DataFrame:
    """Float rho; learner routes measured on several library commits get the commit in their label."""
    runs = runs.copy()
    runs["rho"] = runs["rho"].astype(float)
    runs["lib"] = runs["lib"].astype(str)
    for route in LEARNER_ROUTES:
        mine = runs.route == route
        if runs.loc[mine, "lib"].nunique() > 1:
            runs.loc[mine, "route"] = route + "@" + runs.loc[mine, "lib"]
    return runs


def headline(runs: pd.DataFrame, n_time: int = 10000) -> pd.DataFrame:
    """One row per (p, k, rho): n50 of every route, then its mean CPU seconds at ``n_time`` rows."""
    private = runs[~np.isinf(runs.rho)]
    routes = [r for r in runs.route.unique()]
    order = sorted(routes, key=lambda r: (ROUTES.index(r.split("@")[0]), r))
    rows = []
    for (k, p, rho), block in private.groupby(["k", "p", "rho"]):
        row = {"p": p, "k": k, "rho": f"{rho:g}"}
        for route in order:
            g = block[block.route == route] if route != "sklearn" else runs[
                (runs.p == p) & (runs.k == k) & (runs.route == "sklearn")]
            cell = g.groupby("n")["exact"].agg(["mean", "size"])
            row[f"n50 {route}"] = interpolate_n(cell.index, cell["mean"], 0.5) if len(cell) else ""
        for route in order:
            g = block[block.route == route] if route != "sklearn" else runs[
                (runs.p == p) & (runs.k == k) & (runs.route == "sklearn")]
            t = g[g.n == n_time].cpu
            row[f"CPU {route}"] = f"{t.mean():.2f}" if len(t) else ""
        models = block.groupby(["route", "n"]).size()
        row["models"] = f"{models.min()}-{models.max()}" if models.nunique() > 1 else str(models.iloc[0])
        rows.append(row)
    return pd.DataFrame(rows)


def summarise(runs: pd.DataFrame) -> str:
    """Markdown: per (p, k) the n50 / n90 table, recovery per n, error where recovered, CPU."""
    runs = label_libraries(runs)
    out = ["## Headline: rows for 50% exact recovery (n50) and CPU seconds per fit at n = 10,000\n",
           markdown(headline(runs), index=False) + "\n"]
    for (p, k), block in runs.groupby(["p", "k"]):
        out.append(f"## p = {p}, k = {k}\n")
        rows = []
        for (rho, route), g in block.groupby(["rho", "route"]):
            cell = g.groupby("n").agg(rate=("exact", "mean"), fits=("exact", "size"))
            rec = g[g.exact == 1].groupby("n")["max_err"].mean()
            big = g[g.n == g.n.max()]
            rows.append({"rho": "non-private" if math.isinf(rho) else f"{rho:g}", "route": route,
                         "n50": interpolate_n(cell.index, cell.rate, 0.5),
                         "n90": interpolate_n(cell.index, cell.rate, 0.9),
                         "models": f"{cell.fits.min()}-{cell.fits.max()}" if cell.fits.nunique() > 1
                         else str(cell.fits.iloc[0]),
                         "n range": f"{cell.index.min():,}-{cell.index.max():,}",
                         "err (recovered, largest n)": f"{rec.iloc[-1]:.3f} @ {rec.index[-1]:,}" if len(rec) else "-",
                         "CPU s (largest n)": f"{big.cpu.mean():.2f}"})
        out.append(markdown(pd.DataFrame(rows), index=False) + "\n")
        rate = block.pivot_table(index=["rho", "route"], columns="n", values="exact", aggfunc="mean")
        out.append("Exact recovery rate per n:\n\n" + markdown(rate.round(2)) + "\n")
        err = block[block.exact == 1].pivot_table(index=["rho", "route"], columns="n", values="max_err",
                                                  aggfunc="mean")
        out.append("Mean max parameter error over the fits that recovered the graph:\n\n"
                   + markdown(err.round(3)) + "\n")
    return "\n".join(out)


def plot(runs: pd.DataFrame, name: str) -> None:
    """Exact recovery against n per (p, k), one panel per rho."""
    plt = harness.pyplot()
    if plt is None:
        return
    import matplotlib.ticker

    runs = label_libraries(runs)
    # a learner measured on several library commits: its latest (last appended) solid, the older dashed
    latest = {r.split("@")[0]: r for r in runs.route}
    blocks = sorted(map(tuple, runs[["p", "k"]].drop_duplicates().values.tolist()), key=lambda b: (b[1], b[0]))
    fig, axes = plt.subplots(len(blocks), len(RHOS), figsize=(3.6 * len(RHOS), 2.8 * len(blocks)), squeeze=False)
    colours = dict(zip(ROUTES, ["C3", "C1", "C4", "C0", "C2", "k"]))
    for row, (p, k) in zip(axes, blocks):
        for ax, rho in zip(row, RHOS):
            sub = runs[(runs.p == p) & (runs.k == k) & ((runs.rho == rho) | np.isinf(runs.rho))]
            for route, g in sub.groupby("route"):
                r = g.groupby("n")["exact"].mean()
                family = route.split("@")[0]
                old = latest[family] != route
                ax.plot(r.index, r.values, marker=".", color=colours.get(family), label=route,
                        ls=":" if family == "sklearn" else "--" if old else "-", alpha=0.45 if old else 1.0)
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
            ax.set_ylim(-0.05, 1.05)
            ax.set_title(f"p={p}, k={k}, rho={rho:g}", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=6)
    for ax in axes[-1]:
        ax.set_xlabel("n", fontsize=8)
    for row in axes:
        row[0].set_ylabel("exact recovery", fontsize=8)
    fig.tight_layout()
    harness.save_figure(fig, name, dpi=80)


def main(argv=None):
    ap = harness.parser(__doc__, out="structure")
    ap.add_argument("--cells", nargs="+", help="blocks to run as p:k (default: the whole grid, in order)")
    ap.add_argument("--models", type=int, help="models per cell (default: the grid's)")
    ap.add_argument("--ns", type=int, nargs="+", help="row counts (default: the grid's)")
    ap.add_argument("--routes", nargs="+", default=ROUTES, choices=ROUTES)
    ap.add_argument("--summarise", action="store_true", help="only print and write the tables and the plot")
    args = harness.parse(ap, argv)
    path = harness.result_path(f"{args.out}_runs", ".csv.gz")
    if not args.summarise:
        grid = [(8, 2, [1000, 5000], 2)] if args.quick else GRID
        if args.cells:
            wanted = {tuple(int(x) for x in c.split(":")) for c in args.cells}
            grid = [g for g in grid if (g[0], g[1]) in wanted]
        lib = library_commit()
        cache = Cache(path)
        t_start = time.perf_counter()

        def log(msg):
            print(f"[{time.perf_counter() - t_start:7.0f} s] {msg}", flush=True)

        log(f"pgmpy_dp {pgmpy_dp.__file__} at {lib}")
        for p, k, ns, models in grid:
            for n in args.ns or ns:
                for model in range(args.models or models):
                    run_cell(p, k, n, model, args.routes, args.seed, lib, cache, log)
    # only the process that appended compacts: a --summarise beside a running grid must not replace its file
    runs = pd.read_csv(path, dtype={"lib": str}).drop_duplicates(KEY, keep="last") if args.summarise else compact(path)
    text = summarise(runs)
    print(text)
    (harness.RESULTS / f"{args.out}_tables.md").write_text(text)
    plot(runs, f"{args.out}_recovery")


if __name__ == "__main__":
    main()
