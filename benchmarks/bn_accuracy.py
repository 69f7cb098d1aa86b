"""Privacy-utility study of DiscretePrivateMLE against the TRUE generating network.

For each network (asia, sachs, child, alarm, insurance, hepar2 from pgmpy's
offline BIF files) and record count N: sample N records from the network, fit
the non-private MLE (pgmpy ``DiscreteMLE``), then for each epsilon and run fit

* ``D-Ind``: ``allocation="uniform", consistency="projection"`` (the baseline of
  Roy Chowdhury et al. 2020);
* ``data-dependent``: ``allocation="data-dependent", consistency="projection"``
  (the paper's method, the library default before this study);
* ``optimal+projection``: ``allocation="optimal", consistency="projection"``;
* ``default``: ``DiscretePrivateMLE(epsilon)`` as shipped
  (``allocation="optimal", consistency="likelihood"``, one table per family);
* ``mbi``: private-pgm (``pip install mbi``, the ``bench`` extra) fitted to the
  SAME noisy family tables as ``default`` (Gaussian loss, each table weighted by
  its noise standard deviation, mirror descent), CPDs read off its family marginals.

and measure, against the TRUE network,

* ``joint_kl``: ``KL(P_true || P_est)`` of the joint, exactly (chain rule over
  families, :func:`pgmpy_dp.evaluation.bayesian.joint_kl`);
* ``cpd_l1``: ``sum |P - P~|`` per CPD (summed over parent configurations), mean over nodes;
* ``cpd_l1_weighted``: the same with each parent configuration weighted by its
  true probability (what :func:`~pgmpy_dp.estimators.allocation.error_optimal_allocation` minimises);
* ``query_l1``: L1 error of ``--queries`` random marginal and as many conditional
  queries (1-2 variables, 1-2 evidence variables at a random record's values);

plus ``query_l1_mle``: the query L1 against the non-private MLE network (the
cost of privacy alone). Queries are drawn once per (network, N) and shared by
all fits. Rows go to ``results/<out>_runs.csv`` as they finish (one file per
process; pass ``--out`` to split a grid across processes), the means to
``results/<out>.csv`` and ``results/<out>.png``.

Every method's noise is drawn from ``random_state = 1000 * seed + run``, so
runs are paired: the default, ``optimal+projection`` and ``mbi`` share one set of noisy tables per
run. The summary reports mean +- standard error per cell, and per target the cells where the default's
mean is lower than D-Ind's (and mbi's), by more than two paired standard errors or not.

Full grid (6 networks x N in {1e4, 1e5} x 5 epsilons x 10 runs; split it across processes with --out):
    python benchmarks/bn_accuracy.py --runs 10
    python benchmarks/bn_accuracy.py --networks asia sachs --runs 10 --out bn_accuracy_a
    python benchmarks/bn_accuracy.py --out bn_accuracy --markdown --summarise results/bn_accuracy_*_runs.csv
Quick (asia at N = 1e4, epsilon 1, one run of every method, mbi with 100 iterations if installed):
    python benchmarks/bn_accuracy.py --quick

The tracked ``results/bn_accuracy.csv`` and ``bn_accuracy.png`` summarise the latest full grid (fresh runs
40-49, seed 1; D-Ind, the default, mbi, and ``previous default``: the default before the Dirichlet prior on
the CPD columns, the Gaussian prior on the log-potentials, on the same noisy tables).
"""

from __future__ import annotations

import importlib.util
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import harness
import pgmpy_dp
from pgmpy_dp.datasets import load_network, sample_network
from pgmpy_dp.estimators.conditionals import cpd_values
from pgmpy_dp.evaluation.bayesian import (
    answer_queries,
    cpd_errors,
    joint_kl,
    query_errors,
    random_queries,
    weighted_cpd_l1,
)

warnings.filterwarnings("ignore")
#: --data-per-run: run r of seed s samples its records with seed DATA_SEED_OFFSET + 1000 s + r (its noise: 1000 s + r)
DATA_SEED_OFFSET = 7_000_000
METHODS = ["D-Ind", "data-dependent", "optimal+projection", "default", "mbi"]
METRICS = ["joint_kl", "cpd_l1", "cpd_l1_weighted", "query_l1", "query_l1_mle"]
_SETTINGS = {
    "D-Ind": {"allocation": "uniform", "consistency": "projection"},
    "data-dependent": {"allocation": "data-dependent", "consistency": "projection"},
    "optimal+projection": {"allocation": "optimal", "consistency": "projection"},
    "default": {},
}


def _model_from_tables(net, release, tables):
    """A pgmpy network on ``net``'s DAG whose CPDs are read off family count tables (axes: node, parents)."""
    from pgmpy.factors.discrete import TabularCPD

    model = harness.empty_model(net)
    cpds = []
    for t, table in zip(release, tables):
        node, *pa = t.attrs
        dom = release.domain
        cpds.append(TabularCPD(node, dom.size(node), cpd_values(table), evidence=pa or None,
                               evidence_card=[dom.size(p) for p in pa] or None,
                               state_names={v: list(dom[v]) for v in t.attrs}))
    model.add_cpds(*cpds)
    return model


def mbi_tables(release, iters):
    """private-pgm's estimate of every family table of ``release`` (Gaussian loss, weights 1/std)."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_compilation_cache", False)
    import mbi

    attrs = list(release.domain.attrs)
    domain = mbi.Domain(tuple(attrs), tuple(release.domain.size(a) for a in attrs))
    measurements = [
        mbi.LinearMeasurement(np.asarray(t.values, dtype=np.float64).ravel(), t.attrs,
                              stddev=float(np.sqrt(t.variance)))
        for t in release
    ]
    model = mbi.estimation.MirrorDescent().estimate(domain, measurements, iters=iters)
    return [np.clip(np.asarray(model.project(t.attrs).datavector(flatten=False)), 0, None) for t in release]


def study(name, n, args, out_path):
    from pgmpy.parameter_estimator import DiscreteMLE

    net = load_network(name)
    df = sample_network(net, n, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    queries = random_queries(net, df, args.queries, False, rng) + random_queries(net, df, args.queries, True, rng)
    true_answers = answer_queries(net, queries, show_progress=False)

    def reference_for(data, run):
        """The non-private MLE of ``data``, its row, and its answers to the queries."""
        reference = harness.empty_model(net).fit(data, estimator=DiscreteMLE(state_names=net.states))
        row = {"network": name, "records": n, "epsilon": np.inf, "method": "non-private MLE", "run": run,
               "joint_kl": joint_kl(net, reference), "cpd_l1": cpd_errors(reference, net)["l1"].mean(),
               "cpd_l1_weighted": weighted_cpd_l1(net, reference),
               "query_l1": query_errors(reference, true_answers, queries, False)["l1"].mean(),
               "query_l1_mle": 0.0, "fit_seconds": np.nan}
        return row, answer_queries(reference, queries, show_progress=False)

    if not args.data_per_run:
        mle_row, mle_answers = reference_for(df, 0)
        harness.append_rows([mle_row], out_path)
    for eps in args.epsilons:
        for run in range(args.first_run, args.runs):
            if args.data_per_run:
                # a fresh sample of the network per run (the queries stay those drawn above), so that a paired
                # difference's standard error covers the sampling of the records as well as the noise
                df = sample_network(net, n, seed=DATA_SEED_OFFSET + 1000 * args.seed + run)
                mle_row, mle_answers = reference_for(df, run)
                if eps == args.epsilons[0]:
                    harness.append_rows([mle_row], out_path)
            default_release = None
            for method in args.methods:
                t0 = time.perf_counter()
                if method == "mbi":
                    if default_release is None:
                        raise ValueError("put 'default' before 'mbi' in --methods: mbi uses the default's tables")
                    model = _model_from_tables(net, default_release, mbi_tables(default_release, args.mbi_iters))
                else:
                    est = pgmpy_dp.DiscretePrivateMLE(epsilon=eps, random_state=args.seed * 1000 + run,
                                                      **_SETTINGS[method])
                    model = harness.empty_model(net).fit(df, estimator=est)
                    if method == "default":
                        default_release = est.release_
                seconds = time.perf_counter() - t0
                row = {"network": name, "records": n, "epsilon": eps, "method": method, "run": run,
                       "joint_kl": joint_kl(net, model), "cpd_l1": cpd_errors(model, net)["l1"].mean(),
                       "cpd_l1_weighted": weighted_cpd_l1(net, model),
                       "query_l1": query_errors(model, true_answers, queries, False)["l1"].mean(),
                       "query_l1_mle": query_errors(model, mle_answers, queries, False)["l1"].mean(),
                       "fit_seconds": seconds}
                harness.append_rows([row], out_path)
                print(f"{name:9s} N={n:<7d} eps={eps:<4g} run={run} {method:18s} KL {row['joint_kl']:.4f} "
                      f"CPD-L1 {row['cpd_l1']:.4f} query-L1 {row['query_l1']:.4f} ({seconds:.1f}s)", flush=True)


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error of every metric per (network, records, epsilon, method), with the number of runs."""
    keys = ["network", "records", "epsilon", "method"]
    grouped = runs.groupby(keys, sort=False)[[*METRICS, "fit_seconds"]]
    summary = grouped.mean()
    summary = summary.join(grouped.sem()[METRICS].add_suffix("_se"))
    summary["runs"] = runs.groupby(keys, sort=False).size()
    return summary.reset_index()


def win_counts(runs: pd.DataFrame, method: str, baseline: str) -> pd.DataFrame:
    """Per metric: cells where ``method`` has the lower mean, and where it is lower (higher) by more than two
    paired standard errors."""
    return harness.win_counts(runs, method, baseline, ("joint_kl", "cpd_l1", "cpd_l1_weighted", "query_l1"))


def paired_cells(runs: pd.DataFrame, method: str, baseline: str) -> pd.DataFrame:
    """Per cell and metric: ``method``'s mean change against ``baseline`` in percent of the baseline's mean,
    marked ``*`` where higher by more than two paired standard errors and ``-`` where lower by more."""
    table = None
    for metric in ("query_l1", "cpd_l1_weighted", "cpd_l1", "joint_kl", "query_l1_mle"):
        p = harness.paired(runs, method, baseline, metric)
        mark = np.where(p["diff"] > 2 * p["se"], "*", np.where(p["diff"] < -2 * p["se"], "-", ""))
        col = [f"{100 * d / b:+.1f}%{m}" for d, b, m in zip(p["diff"], p["baseline"], mark)]
        cells = p[["network", "records", "epsilon"]].assign(**{metric: col})
        table = cells if table is None else table.merge(cells, on=["network", "records", "epsilon"])
    return table


def plot(summary: pd.DataFrame, out: str) -> None:
    plt = harness.pyplot()
    if plt is None:
        return

    private = summary[np.isfinite(summary["epsilon"])]
    settings = list(dict.fromkeys(zip(private["network"], private["records"])))
    shown = ["joint_kl", "cpd_l1", "cpd_l1_weighted", "query_l1"]
    styles = {"D-Ind": "s--", "data-dependent": "^:", "optimal+projection": "d-.", "previous default": "v:",
              "default": "o-", "mbi": "x-"}
    fig, axes = plt.subplots(len(settings), len(shown), figsize=(3.6 * len(shown), 2.5 * len(settings)),
                             squeeze=False)
    for r, (name, n) in enumerate(settings):
        for c, metric in enumerate(shown):
            ax = axes[r, c]
            for method, style in styles.items():
                part = private[(private.network == name) & (private.records == n) & (private.method == method)]
                if len(part):
                    ax.plot(part["epsilon"], part[metric], style, label=method, ms=4)
            ax.set_yscale("log")
            ax.set_title(f"{name}, N={n:,}: {metric}", fontsize=9)
            ax.set_xlabel("epsilon")
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle("DiscretePrivateMLE: error against the true network (lower is better)")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / fig.get_figheight()))  # room for the title
    harness.save_figure(fig, out)


def markdown_table(summary: pd.DataFrame) -> str:
    """The docs' table: mean +- standard error of joint KL, query L1 and weighted CPD L1 per cell."""
    s = summary.set_index(["network", "records", "epsilon", "method"])
    cols = [("joint_kl", ("D-Ind", "previous default", "default", "mbi")),
            ("query_l1", ("D-Ind", "previous default", "default", "mbi")),
            ("cpd_l1_weighted", ("D-Ind", "default"))]
    head = "| network | N | eps | " + " | ".join(f"{m}: {k}" for m, ks in cols for k in ks) + " |"
    lines = [head, "|---|---:|---:|" + "---:|" * sum(len(ks) for _, ks in cols)]
    private = summary[np.isfinite(summary["epsilon"])]
    for (name, n, eps) in dict.fromkeys(zip(private["network"], private["records"], private["epsilon"])):
        cells = []
        for metric, methods in cols:
            values = {k: s.loc[(name, n, eps, k)] for k in methods if (name, n, eps, k) in s.index}
            best = min((v[metric] for v in values.values()), default=None)
            for k in methods:
                if k not in values:
                    cells.append("")
                    continue
                v = values[k]
                text = f"{v[metric]:.3g} ± {v[metric + '_se']:.1g}" if v["runs"] > 1 else f"{v[metric]:.3g}"
                cells.append(f"**{text}**" if v[metric] == best else text)
        lines.append(f"| {name} | {n:.0e} | {eps:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def targets(summary: pd.DataFrame, runs: pd.DataFrame | None = None) -> list[str]:
    """The issue's bars, checked on whatever grid was run."""
    lines = []
    s = summary.set_index(["network", "records", "epsilon", "method"])
    if runs is not None:
        for base in ("D-Ind", "mbi", "previous default"):
            if base in set(runs.method) and "default" in set(runs.method):
                lines.append(f"default vs {base} (paired, per (network, N, epsilon) cell):")
                lines.append(win_counts(runs, "default", base).to_string(index=False))
    reached = {m: 0 for m in ("joint_kl", "cpd_l1_weighted", "query_l1")}
    pairs = 0
    for (name, n) in dict.fromkeys(zip(summary["network"], summary["records"])):
        if (name, n, 1.0, "default") in s.index and (name, n, 2.0, "D-Ind") in s.index:
            d, b = s.loc[(name, n, 1.0, "default")], s.loc[(name, n, 2.0, "D-Ind")]
            pairs += 1
            got = [m for m in reached if d[m] <= b[m]]
            for m in got:
                reached[m] += 1
            lines.append(f"{name:9s} N={n:<7d} default@1 vs D-Ind@2: KL {d.joint_kl:.4g} vs {b.joint_kl:.4g}, "
                         f"weighted CPD-L1 {d.cpd_l1_weighted:.4g} vs {b.cpd_l1_weighted:.4g}, "
                         f"query-L1 {d.query_l1:.4g} vs {b.query_l1:.4g}: reached in {', '.join(got) or 'none'}")
    if pairs:
        lines.append("default@1 reaches D-Ind@2 on " + ", ".join(f"{m} {k}/{pairs}" for m, k in reached.items()))
    return lines


def main(argv=None):
    parser = harness.parser(__doc__, out="bn_accuracy", seed=1)
    parser.add_argument("--networks", nargs="+", default=["asia", "sachs", "child", "alarm", "insurance", "hepar2"])
    parser.add_argument("--records", nargs="+", type=int, default=[10_000, 100_000])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[0.1, 0.5, 1.0, 2.0, 3.0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--first-run", type=int, default=0,
                        help="start at this run (runs first-run .. runs-1: complete a cell that ran fewer runs)")
    parser.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS)
    parser.add_argument("--queries", type=int, default=10)
    parser.add_argument("--mbi-iters", type=int, default=1000)
    parser.add_argument("--data-per-run", action="store_true",
                        help="sample fresh records per run (default: one sample per network and N, shared by all runs, "
                             "so the runs vary only the noise)")
    parser.add_argument("--summarise", nargs="*", metavar="RUNS_CSV",
                        help="only summarise these runs files (default: results/<out>_runs.csv) and plot")
    parser.add_argument("--markdown", action="store_true", help="also print the docs' table")
    parser.add_argument("--paired-cells", nargs="*", metavar="BASELINE",
                        help="with --summarise: also print the default's change per cell against each BASELINE "
                             "(percent of its mean; * significantly higher, - significantly lower)")
    args = harness.parse(parser, argv, networks=["asia"], records=[10_000], epsilons=[1.0], runs=1, mbi_iters=100)
    if args.quick and args.methods == METHODS and importlib.util.find_spec("mbi") is None:
        args.methods = METHODS[:-1]
    runs_path = harness.result_path(f"{args.out}_runs")
    if args.summarise is None:
        runs_path.unlink(missing_ok=True)
        for name in args.networks:
            for n in args.records:
                study(name, n, args, runs_path)
        files = [runs_path]
    else:
        files = [Path(f) for f in args.summarise] or [runs_path]
    runs = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    # a (network, N, epsilon, method, run) run in several files (the non-private MLE row of every
    # file, D-Ind rerun beside a new default) is the same fit from the same seeds: keep one
    runs = runs.drop_duplicates(["network", "records", "epsilon", "method", "run"], ignore_index=True)
    summary = summarise(runs)
    harness.write_csv(summary, args.out)
    plot(summary, args.out)
    pd.set_option("display.width", 200)
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print("\n".join(["", "targets:"] + targets(summary, runs)))
    if args.markdown:
        print("\n" + markdown_table(summary))
    for baseline in args.paired_cells or []:
        print(f"\nthe default against {baseline}, per cell (paired):")
        print(paired_cells(runs, "default", baseline).to_string(index=False))


if __name__ == "__main__":
    main()
