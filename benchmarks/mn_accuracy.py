"""Accuracy and speed of private Markov-network learning: Bernstein et al. (2017), section 4.1.

Models: 10-node third-order chains (edge i-j iff 1 <= |i-j| <= 3) and connected
Erdos-Renyi graphs (edge probability ``--er-p``), k = 10 states, every edge
potential drawn from Dirichlet(1) over its k^2 cells. For each model type and
population size N, ``--populations`` random models are drawn and N records
sampled exactly from each (junction-tree forward sampling); each population is
released ``--replications`` times per epsilon (all edge tables, sensitivity =
number of edges). Methods, each scored by the exact KL(true || learned):

* ``non-private``: MLE on the exact tables (L2 weight 1, the unit prior);
* ``naive-mle``: ``PrivateMarkovEstimator(method="naive-mle")`` with its defaults;
* ``cgm-em``: ``PrivateMarkovEstimator(method="cgm-em")`` with its defaults;
* ``random``: MLE of Dirichlet(1) random marginals (the uninformed reference; it
  ignores the data, so one draw per population is reported for all its releases);
* ``mbi-md`` and ``mbi-ig`` (with ``--mbi``, needs ``pip install -e ".[bench]"``): private-pgm's
  ``mbi`` 2.0 MirrorDescent (its recommended estimator, 1000 iterations) and InteriorGradient
  (its most accurate other estimator on a pilot cell; LBFGS and DualAveraging were far worse)
  on the SAME noisy tables, with each cell's noise std (the discrete Laplace std) and the same
  record count the CGM-EM fit uses as known total. mbi is jit-compiled by JAX: one untimed
  warm-up fit per population and estimator keeps compilation out of its seconds.

The methods run interleaved, release by release, so the seconds compare under the same load.

Seconds per fit are wall-clock times of ``fit(model, release)`` (the release is
made once, outside the timing); ``cpu_seconds`` is the process's CPU time over the same call (all its
threads: for mbi, JAX's too; run with ``XLA_FLAGS="--xla_cpu_multi_thread_eigen=false
intra_op_parallelism_threads=1"`` and the BLAS thread variables at 1 so that every method has one
core). While it runs, ``results/<out>_partial.csv`` holds the fits of every finished release.
Writes ``results/<out>.csv`` (one row per fit), ``results/<out>_summary.csv`` (means per cell) and
``results/<out>.png``, and prints the summary table. The tracked ``mn_accuracy.csv`` holds the latest
full grid (``--mbi mbi-md --seed 4 --populations 2 --replications 3``); in it the rows ``cgm-em-tol`` are
today's default (the warm start stopped at one noise scale) and ``cgm-em`` the default it replaced.

Run:  python benchmarks/mn_accuracy.py                 # N in 1e4..1e6, eps in 0.1, 0.5, 1
      python benchmarks/mn_accuracy.py --full          # adds eps = 0.01
      python benchmarks/mn_accuracy.py --quick         # chain3, N = 1e4, eps 1, one release
      python benchmarks/mn_accuracy.py --mbi --populations 3 --replications 3        # with mbi (both)
      python benchmarks/mn_accuracy.py --mbi mbi-md --populations 1 --replications 2 --out mn_accuracy_mbi
"""

from __future__ import annotations

import time
import warnings

import networkx as nx
import numpy as np
import pandas as pd
from pgmpy.models import DiscreteMarkovNetwork

import harness
from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree, fit_log_potentials
from pgmpy_dp.evaluation.markov import kl_divergence_potentials
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.tables import contingency_table, release_from_codes

METHODS = ["non-private", "naive-mle", "cgm-em", "random", "mbi-md", "mbi-ig"]


def mbi_fitter(domain: Domain, name: str):
    """A function fitting mbi's estimator ``name`` to a release; returns (cliques, log-potentials, seconds)."""
    import os

    os.environ.setdefault("JAX_ENABLE_COMPILATION_CACHE", "false")
    import jax

    jax.config.update("jax_enable_x64", True)  # mbi's advice for N > 1e5
    import mbi
    from mbi import estimation

    cls = {"mbi-md": estimation.MirrorDescent, "mbi-ig": estimation.InteriorGradient}[name]
    mdom = mbi.Domain(list(domain.attrs), [domain.size(a) for a in domain.attrs])

    def fit(release, total: float):
        ms = [
            mbi.LinearMeasurement(t.values.ravel(), t.attrs, stddev=float(np.sqrt(t.variance)))
            for t in release.tables
        ]
        loss = mbi.marginal_loss.from_linear_measurements(ms, mdom, norm="l2")
        t0, c0 = time.perf_counter(), time.process_time()
        model = cls().estimate(mdom, loss, known_total=total, iters=1000)
        jax.block_until_ready(model.potentials)  # JAX dispatches asynchronously
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0  # CPU: all of the process's threads
        cliques, theta = [], []
        for c in model.potentials.cliques:
            f = model.potentials[c]
            cliques.append(tuple(f.domain.attributes))
            theta.append(np.asarray(f.values, dtype=np.float64))
        return cliques, theta, secs, cpu

    return fit


def make_graph(kind: str, n_nodes: int, rng: np.random.Generator, er_p: float) -> list[tuple[str, str]]:
    names = [f"x{i}" for i in range(n_nodes)]
    if kind == "chain3":
        return [(names[i], names[j]) for i in range(n_nodes) for j in range(i + 1, n_nodes) if j - i <= 3]
    if kind == "er":
        while True:
            g = nx.gnp_random_graph(n_nodes, er_p, seed=int(rng.integers(2**31)))
            if nx.is_connected(g):
                return [(names[min(u, v)], names[max(u, v)]) for u, v in sorted(g.edges())]
    raise ValueError(f"unknown model kind {kind!r}; use 'chain3' or 'er'")


def run(args) -> pd.DataFrame:
    rows = []
    k = args.k
    domain = Domain({f"x{i}": list(range(k)) for i in range(args.nodes)})
    for kind in args.models:
        for n in args.n:
            for pop in range(args.populations):
                rng = np.random.default_rng([args.seed, args.models.index(kind), n, pop])  # stable across runs
                edges = make_graph(kind, args.nodes, rng, args.er_p)
                theta = [np.log(rng.dirichlet(np.ones(k * k)).reshape(k, k)) for _ in edges]
                jt = JunctionTree(domain, edges)
                codes = jt.sample(theta, n, random_state=rng)
                exact = [contingency_table(codes, domain, e) for e in edges]
                model = DiscreteMarkovNetwork(edges)

                def kl(cliques, th):
                    return kl_divergence_potentials(domain, edges, theta, cliques, th)

                t0 = time.perf_counter()
                nonpriv = fit_log_potentials(jt, exact, regularization=1.0 / n, warn=False)
                t_np = time.perf_counter() - t0
                kl_np = kl(edges, nonpriv.log_potentials)
                # the random reference ignores the data: one draw per population serves every release
                t0 = time.perf_counter()
                rand = [rng.dirichlet(np.ones(k * k)).reshape(k, k) for _ in edges]
                rfit = fit_log_potentials(jt, rand, regularization=1.0 / n, warn=False)
                t_rand = time.perf_counter() - t0
                kl_rand = kl(edges, rfit.log_potentials)
                mbi_fits = {name: mbi_fitter(domain, name) for name in args.mbi}
                warmed: set = set()
                for eps in args.eps:
                    for rep in range(args.replications):
                        release = release_from_codes(codes, domain, edges, eps, random_state=rng)
                        base = dict(model=kind, N=n, epsilon=eps, population=pop, replication=rep,
                                    edges=len(edges), treewidth=max(len(c) for c in jt.nodes) - 1)
                        rows.append({**base, "method": "non-private", "kl": kl_np, "seconds": t_np, "n_iter": nonpriv.n_iter})
                        methods = ("naive-mle", "cgm-em")
                        for method in methods:
                            est = PrivateMarkovEstimator(method=method, show_progress=False)
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore", ConvergenceWarning)
                                t0, c0 = time.perf_counter(), time.process_time()
                                est.fit(model, release)  # the fitted state is read off the estimator
                                secs, cpu = time.perf_counter() - t0, time.process_time() - c0
                            rows.append({**base, "method": method, "kl": kl(est.cliques_, est.log_potentials_),
                                         "seconds": secs, "cpu_seconds": cpu, "n_iter": est.n_iter_,
                                         "converged": est.converged_})
                        rows.append({**base, "method": "random", "kl": kl_rand, "seconds": t_rand, "n_iter": rfit.n_iter})
                        total = est.n_records_  # the record count CGM-EM used: mbi's known total
                        for name, fit in mbi_fits.items():
                            if name not in warmed:  # compile outside the timing
                                fit(release, total)
                                warmed.add(name)
                            cl, th, secs, cpu = fit(release, total)
                            rows.append({**base, "method": name, "kl": kl(cl, th), "seconds": secs, "cpu_seconds": cpu,
                                         "n_iter": 1000})
                        done = rows[-2 - len(methods) - len(mbi_fits):]
                        print(
                            f"{kind:6s} N={n:>8,d} eps={eps:<5g} pop={pop} rep={rep}  "
                            + "  ".join(f"{r['method']}: KL={r['kl']:.4f} ({r['seconds']:.2f}s)" for r in done),
                            flush=True,
                        )
                        if getattr(args, "partial", None) is not None:  # every finished release, so a stopped run keeps its fits
                            pd.DataFrame(rows).to_csv(args.partial, index=False)
    return pd.DataFrame(rows)


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["model", "N", "epsilon", "method"], sort=True)
    summary = g.agg(kl=("kl", "mean"), kl_sd=("kl", "std"), seconds=("seconds", "mean"), fits=("kl", "size")).reset_index()
    wide = summary.pivot_table(index=["model", "N", "epsilon"], columns="method", values=["kl", "seconds"])
    wide.columns = [f"{a}_{b}" for a, b in wide.columns]
    wide = wide.reset_index()
    wide["cgm_over_naive_time"] = wide["seconds_cgm-em"] / wide["seconds_naive-mle"]
    wide["cgm_below_naive"] = wide["kl_cgm-em"] < wide["kl_naive-mle"]
    for name in ("mbi-md", "mbi-ig"):
        if f"kl_{name}" in wide:
            wide[f"cgm_over_{name}_time"] = wide["seconds_cgm-em"] / wide[f"seconds_{name}"]
            wide[f"cgm_kl_le_{name}"] = wide["kl_cgm-em"] <= wide[f"kl_{name}"]
    return wide


def plot(df: pd.DataFrame, name: str) -> None:
    plt = harness.pyplot()
    if plt is None:
        return

    kinds = list(dict.fromkeys(df["model"]))
    epss = sorted(df["epsilon"].unique())
    fig, axes = plt.subplots(len(kinds), len(epss), figsize=(3.2 * len(epss), 3.0 * len(kinds)), squeeze=False, sharey=True)
    means = df.groupby(["model", "epsilon", "method", "N"])["kl"].mean()
    shown = df[df["method"] != "random"]["kl"]
    ylim = (shown.min() / 2, shown.max() * 3)
    for i, kind in enumerate(kinds):
        for j, eps in enumerate(epss):
            ax = axes[i][j]
            for method in METHODS:
                try:
                    s = means.loc[(kind, eps, method)]
                except KeyError:
                    continue
                if method == "random":  # orders of magnitude above the others: say so instead of squashing them
                    ax.text(0.03, 0.97, f"random: KL {s.min():.3g}..{s.max():.3g}", transform=ax.transAxes,
                            va="top", fontsize=7, color="gray")
                    continue
                ax.plot(s.index, s.values, marker="o", label=method)
            ax.set_ylim(*ylim)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{kind}, eps={eps:g}")
            ax.set_xlabel("N")
            if j == 0:
                ax.set_ylabel("KL(true || learned)")
    axes[0][0].legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    harness.save_figure(fig, name, dpi=120)


def main(argv=None):
    parser = harness.parser(__doc__, out="mn_accuracy")
    parser.add_argument("--models", nargs="+", default=["chain3", "er"])
    parser.add_argument("--n", type=lambda s: int(float(s)), nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--eps", type=float, nargs="+", default=[0.1, 0.5, 1.0])
    parser.add_argument("--full", action="store_true", help="add epsilon = 0.01")
    parser.add_argument("--populations", type=int, default=2)
    parser.add_argument("--replications", type=int, default=2)
    parser.add_argument("--nodes", type=int, default=10)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--er-p", type=float, default=0.3)
    parser.add_argument("--from-csv", action="store_true", help="re-summarise and re-plot an earlier run")
    parser.add_argument(
        "--mbi", nargs="*", choices=["mbi-md", "mbi-ig"], default=None,
        help="add mbi's estimators (extra 'bench'); bare --mbi means both. mbi-ig takes ~40 s per fit here",
    )
    args = harness.parse(parser, argv, models=["chain3"], n=[10_000], eps=[1.0], populations=1, replications=1)
    if args.mbi is not None and not args.mbi:
        args.mbi = ["mbi-md", "mbi-ig"]
    args.mbi = args.mbi or []
    if args.full and 0.01 not in args.eps:
        args.eps = [0.01] + args.eps
    if args.from_csv:
        df = pd.read_csv(harness.result_path(args.out))
    else:
        args.partial = harness.result_path(f"{args.out}_partial")
        df = run(args)
        args.partial.unlink(missing_ok=True)
        harness.write_csv(df, args.out)
    summary = summarise(df)
    harness.write_csv(summary, f"{args.out}_summary")
    plot(df, args.out)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(summary.to_string(index=False, float_format=lambda x: f"{x:.4g}"))


if __name__ == "__main__":
    main()
