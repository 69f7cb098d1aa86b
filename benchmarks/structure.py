"""Private structure learning of Ising and pairwise Markov networks: edge recovery and parameter error.

Models (``pgmpy_dp.structure.sampling.random_pairwise_model``): random sparse
graphs on ``p`` nodes, every node with at most ``max_degree`` neighbours; Ising
edges ``A_ij = +-eta`` (width ``lambda = max_degree * eta``), k-state edges a
random doubly centred matrix with ``max |W_ij| = eta``; zero node terms. Data are
exact samples (enumeration of the ``k**p`` states when at most 2**20, else Gibbs
sampling vectorised over 2,000 chains). Every run draws fresh data and noise
from the same model.

Methods, all with the same data-free edge rule (symmetrised weight above eta / 2):

* ``sklearn``: non-private l1-penalised logistic regression per node (per state
  pair for k > 2), scikit-learn's liblinear, penalty ``sqrt(log(p) / n) / 4``;
* ``fw-exact``: the same regressions by Frank-Wolfe without noise (isolates
  the optimisation error from the privacy noise);
* ``private-fw``: ``PrivateIsingEstimator`` / ``PrivatePairwiseEstimator`` at rho
  (``width = lambda``, ``eta``, ``n_iter = 50``);
* ``marginals``: all p(p-1)/2 two-way tables released with discrete Gaussian
  noise at the same rho (``df.dp.release(pairs, rho=rho)``, sigma
  ``sqrt(|C| / (2 rho))``); an edge where the noisy table's mutual information
  exceeds that of an isolated pair coupled at eta / 2; weights are the doubly
  centred log of the clipped noisy table (the *marginal*, not the conditional,
  association, so this route cannot tell direct from indirect dependence).

Metrics per run: precision, recall, exact recovery (learned edge set equals
the truth), and parameter error ``max_{i,j,a,b} |W_ij(a,b) - hat W_ij(a,b)|``.
Writes ``results/<out>.csv`` (means per cell; tracked with the plot), ``results/<out>_runs.csv``
(one row per run), ``results/<out>_n90.csv`` (smallest n with >= 90% exact
recovery) and ``results/<out>_recovery.png`` (exact recovery vs n at rho = 1).

Reduced grid (the default, ~10-15 min): Ising p = 10 with n = 300..3e4 and
rho = 0.01, 0.1, 1 (10 runs); Ising p = 20 (n = 1e3..3e4, rho = 0.1, 1; 10 runs) and
p = 50 (n = 3e3..3e4, rho = 1; 5 runs); pairwise k = 3, p = 10 (n = 1e3..1e5; 5 runs)
and k = 5, p = 8 (n = 3e3..1e5; 2 runs) at rho = 1. ``--high-n --out structure_highn``
runs ``GRID_HIGH_N`` (n up to 1e5, rho 0.1..10; ~12 min).

Run:  python benchmarks/structure.py            # reduced grid (below), ~12 min on 2 busy cores
      python benchmarks/structure.py --high-n --out structure_highn
      python benchmarks/structure.py --full     # p = 10, 20, 50; k = 2..5; n = 1e3..1e6; rho 0.1..10
      python benchmarks/structure.py --quick    # a few seconds
"""

from __future__ import annotations

import itertools
import math
import time
import warnings

import numpy as np
import pandas as pd

import harness
import pgmpy_dp  # noqa: F401  (registers df.dp)
from pgmpy_dp.structure import PrivateIsingEstimator, PrivatePairwiseEstimator
from pgmpy_dp.structure.frank_wolfe import _frank_wolfe_batch
from pgmpy_dp.structure.sampling import model_edges, random_pairwise_model, sample_pairwise_model

METHODS = ["sklearn", "fw-exact", "private-fw", "marginals"]
N_ITER = 50
HUGE_RHO = 1e12
# (p, k, n grid, rho grid, runs): the second reduced grid, at larger n and rho
GRID_HIGH_N = [
    (10, 2, [1000, 3000, 10000, 30000, 100000], [0.1, 1.0, 10.0], 10),
    (20, 2, [3000, 10000, 100000], [1.0], 3),
    (10, 3, [3000, 10000, 100000], [1.0], 3),
    (8, 5, [10000, 100000], [1.0], 2),
    (50, 2, [100000], [1.0], 1),
]  # non-private baselines run through the estimators' code path; nothing is released


def _nonprivate(base, solver):
    """An estimator class whose regressions are solved without noise (same reconstruction and edge rule)."""

    class NonPrivate(base):
        def _run(self, X, Y, allowed, radius, rho_problem, rng, charge):
            if solver == "fw-exact":
                return _frank_wolfe_batch(X, Y, radius, self.n_iter, None, allowed, None), None
            from sklearn.linear_model import LogisticRegression

            n = X.shape[0]
            out = np.zeros((X.shape[1], Y.shape[1]))
            alpha = math.sqrt(math.log(max(allowed.shape[0], 3)) / n) / 4
            for c in range(Y.shape[1]):
                rows = np.flatnonzero(Y[:, c] != 0)
                cols = np.flatnonzero(allowed[:, c])
                Xc = X[rows][:, cols]
                y = Y[rows, c]
                if len(np.unique(y)) < 2:
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    clf = LogisticRegression(
                        l1_ratio=1.0, C=1.0 / (alpha * len(rows)), fit_intercept=False, solver="liblinear",
                        tol=1e-4, max_iter=1000,
                    ).fit(Xc, y)
                out[cols, c] = clf.coef_[0]
            return out, None

    return NonPrivate


def _marginals_route(df, rho, eta, seed):
    """Edges and weights from Gaussian-noise two-way tables and their noisy mutual information."""
    attrs = list(df.columns)
    pairs = list(itertools.combinations(attrs, 2))
    release = df.dp.release(pairs, rho=rho, random_state=seed, show_progress=False)
    k = len(df[attrs[0]].cat.categories)
    # threshold: mutual information of an isolated pair whose doubly centred coupling is eta / 2
    s = np.array([-1.0, 1.0]) if k == 2 else np.linspace(-1, 1, k)
    ref = np.exp(eta / 2 * np.outer(s, s))
    mi_ref = _mutual_information(ref)
    weights, edges = {}, []
    for a, b in pairs:
        t = np.clip(release[(a, b)].values, 0, None) + 0.5  # clip the noise's negatives, then a half count
        logt = np.log(t)
        weights[a, b] = logt - logt.mean(0, keepdims=True) - logt.mean(1, keepdims=True) + logt.mean()
        if _mutual_information(t) > mi_ref:
            edges.append((a, b))
    return edges, weights


def _mutual_information(table):
    p = table / table.sum()
    pa, pb = p.sum(1, keepdims=True), p.sum(0, keepdims=True)
    return float(np.sum(p * (np.log(p) - np.log(pa) - np.log(pb))))


def _score(edges, weights, W, names):
    truth = set(model_edges(W, names))
    found = set(edges)
    tp = len(truth & found)
    err = 0.0
    for i, j in itertools.combinations(range(len(names)), 2):
        err = max(err, float(np.abs(weights[names[i], names[j]] - W[i, j]).max()))
    return {
        "precision": tp / len(found) if found else 1.0,
        "recall": tp / len(truth) if truth else 1.0,
        "exact": float(found == truth),
        "param_error": err,
    }


def run_cell(p, k, n, rhos, runs, max_degree, eta, seed, rows, methods):
    W, theta = random_pairwise_model(p, k=k, max_degree=max_degree, eta=eta, seed=seed)
    width = max_degree * eta
    names = [f"x{i}" for i in range(p)]
    base = PrivateIsingEstimator if k == 2 else PrivatePairwiseEstimator
    for run in range(runs):
        df = sample_pairwise_model(W, theta, n, seed=[seed, n, run])
        for method in methods:
            cell_rhos = rhos if method in ("private-fw", "marginals") else [None]
            for rho in cell_rhos:
                t0 = time.perf_counter()
                if method == "marginals":
                    edges, weights = _marginals_route(df, rho, eta, seed=run)
                else:
                    cls = base if method == "private-fw" else _nonprivate(base, method)
                    est = cls(width=width, eta=eta, n_iter=N_ITER, random_state=np.random.default_rng([seed, run]))
                    try:
                        est.fit(df, rho=rho if rho is not None else HUGE_RHO)
                    except ValueError as exc:  # too few rows for the lower bound: recorded, not scored
                        print(f"  skipped {method} p={p} k={k} n={n} rho={rho}: {exc}")
                        continue
                    edges, weights = est.edges_, est.weights_
                seconds = time.perf_counter() - t0
                row = {"p": p, "k": k, "n": n, "rho": rho, "method": method, "run": run, "seconds": seconds}
                row.update(_score(edges, weights, W, names))
                rows.append(row)


def n90(summary: pd.DataFrame) -> pd.DataFrame:
    """Smallest n in the grid with exact recovery >= 0.9, per (p, k, rho, method)."""
    out = []
    for key, g in summary.groupby(["p", "k", "rho", "method"], dropna=False):
        ok = g.loc[g["exact"] >= 0.9, "n"]
        grid = sorted(g["n"])
        out.append(dict(zip(["p", "k", "rho", "method"], key), n90=int(ok.min()) if len(ok) else None,
                        n_max_tried=int(grid[-1])))
    return pd.DataFrame(out)


def plot(summary, name, rho=1.0):
    """Exact recovery vs n: non-private baselines, private Frank-Wolfe at every rho, marginals at ``rho``."""
    plt = harness.pyplot()
    if plt is None:
        return
    import matplotlib.ticker

    cells = sorted(map(tuple, summary[["k", "p"]].drop_duplicates().values.tolist()))
    ncols = 3
    nrows = -(-len(cells) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.4 * ncols, 3.4 * nrows), squeeze=False)
    styles = {"sklearn": ("C0", "s", ":"), "fw-exact": ("C1", "^", "--"), "marginals": ("C3", "o", "-.")}
    for ax, (k, p) in zip(axes.ravel(), cells):
        sub = summary[(summary.p == p) & (summary.k == k)]
        for method, (color, marker, ls) in styles.items():
            m = sub[(sub.method == method) & ((sub.rho == rho) | sub.rho.isna())].sort_values("n")
            if len(m):
                ax.plot(m["n"], m["exact"], color=color, marker=marker, ls=ls, label=method)
        fw = sub[sub.method == "private-fw"]
        for shade, r in zip((1.0, 0.65, 0.4), sorted(fw.rho.unique(), reverse=True)):
            m = fw[fw.rho == r].sort_values("n")
            ax.plot(m["n"], m["exact"], color="C2", alpha=shade, marker="o", label=f"private-fw rho={r:g}")
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_ylim(-0.05, 1.05)
        ax.set_title(f"p={p}, k={k} (marginals at rho={rho:g})", fontsize=9)
        ax.set_xlabel("n")
        ax.set_ylabel("exact recovery rate")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes.ravel()[len(cells):]:
        ax.axis("off")
    fig.tight_layout()
    harness.save_figure(fig, name, dpi=110)


def main(argv=None):
    ap = harness.parser(__doc__, out="structure")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--high-n", action="store_true", help="the larger-n, larger-rho grid (use with --out structure_highn)")
    ap.add_argument("--eta", type=float, default=0.4)
    ap.add_argument("--max-degree", type=int, default=3)
    ap.add_argument("--replot", action="store_true", help="redraw the PNG from the summary CSV")
    args = harness.parse(ap, argv)
    if args.replot:
        plot(pd.read_csv(harness.result_path(args.out)), f"{args.out}_recovery")
        return
    if args.quick:
        # (p, k, n grid, rho grid, runs)
        grid = [(6, 2, [2000, 20000], [1.0], 2)]
    elif args.full:
        ns = [1000, 3000, 10000, 30000, 100000, 300000, 1000000]
        grid = [(p, 2, ns, [0.1, 1.0, 10.0], 10) for p in (10, 20, 50)]
        grid += [(10, k, ns[:-1], [0.1, 1.0, 10.0], 10) for k in (3, 4, 5)]
    else:
        grid = GRID_HIGH_N if args.high_n else [
            (10, 2, [300, 1000, 2000, 3000, 5000, 10000, 30000], [0.01, 0.1, 1.0], 10),
            (20, 2, [1000, 2000, 3000, 5000, 10000, 30000], [0.1, 1.0], 10),
            (50, 2, [3000, 10000, 30000], [1.0], 5),
            (10, 3, [1000, 3000, 10000, 30000, 100000], [1.0], 5),
            (8, 5, [3000, 10000, 30000, 100000], [1.0], 2),
        ]
    rows = []
    t0 = time.perf_counter()
    runs_path = harness.result_path(f"{args.out}_runs")
    for p, k, ns, rhos, runs in grid:
        for n in ns:
            run_cell(p, k, n, rhos, runs, args.max_degree, args.eta, args.seed + 1000 * p + k, rows, METHODS)
            print(f"p={p} k={k} n={n}: done ({time.perf_counter() - t0:.0f} s)", flush=True)
            pd.DataFrame(rows).to_csv(runs_path, index=False)  # partial results survive
    df = pd.DataFrame(rows)
    summary = (
        df.groupby(["p", "k", "n", "rho", "method"], dropna=False)[
            ["precision", "recall", "exact", "param_error", "seconds"]
        ]
        .mean()
        .reset_index()
    )
    summary["runs"] = df.groupby(["p", "k", "n", "rho", "method"], dropna=False).size().values
    harness.write_csv(summary, args.out)
    table = n90(summary)
    harness.write_csv(table, f"{args.out}_n90")
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(summary.round(3).to_string(index=False))
        print(table.to_string(index=False))
    plot(summary, f"{args.out}_recovery")
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
