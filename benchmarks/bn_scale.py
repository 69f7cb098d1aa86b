"""Wide networks: fit time against pgmpy's DiscreteMLE, and accuracy of the default against the projection.

For each bnlearn network (pigs, link, munin1, barley, mildew, diabetes, andes, hailfinder, water,
win95pts: hundreds of nodes or up to 547,158 CPD cells) and record count N, one process fits, on the
same sample and in the same run,

* ``pgmpy DiscreteMLE``: the non-private fit, the time reference (``ratio`` = CPU seconds / its CPU
  seconds: every fit runs single-threaded, and CPU time stays meaningful on a shared machine where wall
  time, also recorded, does not);
* ``default``: ``DiscretePrivateMLE(epsilon)`` as shipped (the likelihood fit, or its approximate
  fallback on networks whose exact junction tree is too large);
* ``projection``: ``DiscretePrivateMLE(epsilon, consistency="projection")`` (the same optimal
  allocation, tables made consistent by the weighted least-squares projection).

The private fits share their noise seed. Accuracy against the TRUE network:

* ``joint_kl``: ``KL(P_true || P_est)``, exactly by the chain rule over families
  (:func:`pgmpy_dp.evaluation.bayesian.joint_kl`) when the true network's junction tree fits in memory,
  otherwise estimated (``kl_kind = "sampled"``) as the mean of ``log P_true(x) - log P_est(x)`` over
  ``--kl-rows`` fresh records of the true network (``joint_kl_se`` its standard error); CPD columns are
  mixed with the same smoothing as the exact one;
* ``query_l1``: mean L1 error of ``--queries`` random marginal and as many conditional queries, answered
  by variable elimination in both networks, as ``bn_accuracy.py`` does (empty where it is out of reach).

Rows are appended to ``results/<out>_runs.csv`` as they finish (a later run replaces a row with the same
network, N and method); ``results/<out>.csv`` and ``results/<out>.md`` hold the latest row of each.

Run (the full grid: N = 1e5 for every network, then 1e4):
    python benchmarks/bn_scale.py
    python benchmarks/bn_scale.py --networks pigs mildew --records 100000 --methods default
Quick (win95pts at N = 1e4, every method):
    python benchmarks/bn_scale.py --quick
"""

from __future__ import annotations

import math
import time
import traceback

import numpy as np
import pandas as pd

import harness
import pgmpy_dp
from pgmpy_dp.datasets import load_network
from pgmpy_dp.evaluation.bayesian import (
    KL_SMOOTHING,
    answer_queries,
    joint_kl,
    query_errors,
    random_queries,
)

NETWORKS = ["pigs", "link", "munin1", "barley", "mildew", "diabetes", "andes", "hailfinder", "water", "win95pts"]
METHODS = ["pgmpy DiscreteMLE", "default", "projection"]
_SETTINGS = {"default": {}, "projection": {"consistency": "projection"}}
#: the largest junction-tree clique (cells) under which the joint KL and the queries are computed exactly
EXACT_CELLS = 20_000_000
COLUMNS = ["network", "nodes", "cpd_cells", "records", "epsilon", "method", "seconds", "cpu_seconds", "ratio", "joint_kl",
           "joint_kl_se", "kl_kind", "query_l1", "fitted_with", "error", "seed"]


def log_probability(model, df: pd.DataFrame) -> np.ndarray:
    """Per record of ``df``, ``log P_model(record)``, each CPD column mixed with ``KL_SMOOTHING`` of the
    uniform distribution (as ``joint_kl`` does), states matched by name."""
    out = np.zeros(len(df))
    for node in model.nodes():
        cpd = model.get_cpds(node)
        variables = list(cpd.variables)
        codes = []
        for v in variables:
            lookup = pd.Index(cpd.state_names[v]).get_indexer(df[v].cat.categories)
            codes.append(lookup[df[v].cat.codes.to_numpy()])
        values = cpd.get_values()
        values = (1 - KL_SMOOTHING) * values + KL_SMOOTHING / values.shape[0]
        column = np.ravel_multi_index(codes[1:], cpd.cardinality[1:]) if len(variables) > 1 else 0
        out += np.log(values[codes[0], column])
    return out


def exact_in_reach(net) -> bool:
    """Whether the true network's junction tree over its families stays under ``EXACT_CELLS`` per clique."""
    from pgmpy_dp.engine import JunctionTree
    from pgmpy_dp.privacy.domain import Domain

    domain = Domain({v: list(net.states[v]) for v in net.nodes()})
    families = [(v, *net.get_parents(v)) for v in net.nodes()]
    try:
        jt = JunctionTree(domain, families)
    except (ValueError, MemoryError):
        return False
    return max(math.prod(shape) for shape in jt.shapes) <= EXACT_CELLS


def accuracy(net, model, exact: bool, test: pd.DataFrame, true_logp: np.ndarray, queries, true_answers) -> dict:
    if exact:
        row = {"joint_kl": joint_kl(net, model), "joint_kl_se": 0.0, "kl_kind": "exact"}
    else:
        excess = true_logp - log_probability(model, test)
        row = {"joint_kl": float(excess.mean()), "joint_kl_se": float(excess.std(ddof=1) / np.sqrt(len(excess))),
               "kl_kind": "sampled"}
    row["query_l1"] = (query_errors(model, true_answers, queries, False)["l1"].mean() if queries else np.nan)
    return row


def study(name: str, n: int, args, runs_path) -> None:
    from pgmpy.parameter_estimator import DiscreteMLE

    net = load_network(name)
    df = pgmpy_dp.sample(net, n, random_state=args.seed)
    test = pgmpy_dp.sample(net, args.kl_rows, random_state=args.seed + 1)
    exact = exact_in_reach(net)
    true_logp = None if exact else log_probability(net, test)
    queries, true_answers = [], []
    if exact and args.queries:
        rng = np.random.default_rng(args.seed)
        queries = random_queries(net, df, args.queries, False, rng) + random_queries(net, df, args.queries, True, rng)
        true_answers = answer_queries(net, queries, show_progress=False)
    facts = {"network": name, "nodes": len(net.nodes()), "cpd_cells": sum(c.values.size for c in net.get_cpds()),
             "records": n, "epsilon": args.epsilon, "seed": args.seed}
    base = None
    for method in ["pgmpy DiscreteMLE", *[m for m in args.methods if m != "pgmpy DiscreteMLE"]]:
        row = {**facts, "method": method, "error": ""}
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            with harness.quiet():
                if method == "pgmpy DiscreteMLE":
                    model = harness.empty_model(net).fit(df, estimator=DiscreteMLE(state_names=net.states))
                else:
                    est = pgmpy_dp.DiscretePrivateMLE(args.epsilon, random_state=args.seed, **_SETTINGS[method])
                    model = harness.empty_model(net).fit(df, estimator=est)
            row.update(seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0)
        except Exception as exc:  # a benchmark records a failed fit and goes on
            row.update(seconds=np.nan, cpu_seconds=np.nan, error=f"{type(exc).__name__}: {str(exc)[:160]}")
            traceback.print_exc(limit=2)
        if method == "pgmpy DiscreteMLE":
            base = row["cpu_seconds"]
        row["ratio"] = row["cpu_seconds"] / base
        if method != "pgmpy DiscreteMLE" and not row["error"]:
            # whatever the estimator reports about how it fitted (the fallback it chose, if any)
            row["fitted_with"] = "; ".join(f"{k}={getattr(est, k)}" for k in ("consistency_",)
                                           if hasattr(est, k))
            with harness.quiet():
                row.update(accuracy(net, model, exact, test, true_logp, queries, true_answers))
        if method == "pgmpy DiscreteMLE" or args.methods == ["pgmpy DiscreteMLE"] or method in args.methods:
            harness.append_rows([{c: row.get(c, "") for c in COLUMNS}], runs_path)
        print(f"{name:10s} N={n:<7d} {method:18s} {row['seconds']:8.2f}s ({row['cpu_seconds']:.2f} CPU s) ratio {row['ratio']:6.2f} "
              f"KL {row.get('joint_kl', np.nan):.4g} ({row.get('kl_kind', '')}) query-L1 {row.get('query_l1', np.nan):.4g}"
              f" {row['error']}", flush=True)


def warm_up() -> None:
    """Fit asia once with every method: imports and first-call caches stay out of the timings."""
    from pgmpy.parameter_estimator import DiscreteMLE

    net = load_network("asia")
    df = pgmpy_dp.sample(net, 1000, random_state=0)
    with harness.quiet():
        harness.empty_model(net).fit(df, estimator=DiscreteMLE(state_names=net.states))
        for settings in _SETTINGS.values():
            harness.empty_model(net).fit(df, estimator=pgmpy_dp.DiscretePrivateMLE(1.0, random_state=0, **settings))


def latest(runs: pd.DataFrame) -> pd.DataFrame:
    """The last row of each (network, records, method, seed); rows from before the seed was recorded ran seed 0."""
    runs = runs.assign(seed=runs["seed"].fillna(0).astype(int)) if "seed" in runs else runs.assign(seed=0)
    return runs.drop_duplicates(["network", "records", "method", "seed"], keep="last", ignore_index=True)


def pooled(table: pd.DataFrame) -> pd.DataFrame:
    """One row per (network, records, method): the time's mean and range over the seeds run, the accuracy of
    the lowest seed (the one every method ran)."""
    table = table.sort_values("seed", kind="stable")
    return table.groupby(["network", "records", "method"], sort=False).agg(
        nodes=("nodes", "first"), cpd_cells=("cpd_cells", "first"), cpu_seconds=("cpu_seconds", "mean"),
        ratio=("ratio", "mean"), ratio_lo=("ratio", "min"), ratio_hi=("ratio", "max"), seeds=("seed", "nunique"),
        joint_kl=("joint_kl", "first"), joint_kl_se=("joint_kl_se", "first"), kl_kind=("kl_kind", "first"),
        query_l1=("query_l1", "first"), fitted_with=("fitted_with", "first"), error=("error", "first"),
    ).reset_index()


def markdown_table(table: pd.DataFrame) -> str:
    """The docs' table: times and ratios to DiscreteMLE (means over the seeds run; with several, the ratio's
    range), joint KL and query L1 of the default and the projection (the lowest seed)."""
    table = pooled(table)
    s = table.set_index(["network", "records", "method"])
    lines = ["| network | nodes | CPD cells | N | DiscreteMLE CPU s | default CPU s (ratio) | default fit | "
             "projection CPU s (ratio) | joint KL default | joint KL projection | query L1 default | query L1 projection |",
             "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|"]

    def cell(key, column, fmt):
        if key not in s.index:
            return "not run"
        v = s.loc[key]
        if isinstance(v.get("error"), str) and v["error"]:
            return v["error"].split(":")[0]
        if column == "time":
            spread = f", {v['ratio_lo']:.1f}-{v['ratio_hi']:.1f} over {v['seeds']} seeds" if v["seeds"] > 1 else ""
            return f"{v['cpu_seconds']:.1f} ({v['ratio']:.1f}x{spread})"
        if column == "fitted_with":
            return v["fitted_with"].replace("consistency_=", "")
        value = v.get(column)
        if value is None or pd.isna(value):
            return ""
        if column == "joint_kl" and v.get("kl_kind") == "sampled":
            return f"{value:{fmt}} ± {v['joint_kl_se']:.1g} (s)"
        return f"{value:{fmt}}"

    rank = {name: i for i, name in enumerate(NETWORKS)}
    cells = sorted(dict.fromkeys(zip(table["network"], table["records"])), key=lambda c: (-c[1], rank.get(c[0], 99)))
    for name, n in cells:
        mle = (name, n, "pgmpy DiscreteMLE")
        facts = s.loc[mle] if mle in s.index else table[(table.network == name)].iloc[0]
        lines.append(
            f"| {name} | {facts['nodes']} | {facts['cpd_cells']:,} | {n:.0e} | "
            + (f"{s.loc[mle]['cpu_seconds']:.1f}" if mle in s.index else "") + " | "
            + " | ".join([cell((name, n, "default"), "time", ""), cell((name, n, "default"), "fitted_with", ""),
                          cell((name, n, "projection"), "time", ""),
                          cell((name, n, "default"), "joint_kl", ".3g"), cell((name, n, "projection"), "joint_kl", ".3g"),
                          cell((name, n, "default"), "query_l1", ".3g"), cell((name, n, "projection"), "query_l1", ".3g")])
            + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = harness.parser(__doc__, out="bn_scale")
    ap.add_argument("--networks", nargs="+", default=NETWORKS)
    ap.add_argument("--records", nargs="+", type=int, default=[100_000, 10_000])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--methods", nargs="+", default=METHODS[1:], choices=METHODS[1:],
                    help="private fits to run (pgmpy's DiscreteMLE always runs: it is the time reference)")
    ap.add_argument("--queries", type=int, default=10)
    ap.add_argument("--kl-rows", type=int, default=20_000)
    ap.add_argument("--summarise", action="store_true", help="only rebuild the summary from the runs file")
    args = harness.parse(ap, argv, networks=["win95pts"], records=[10_000], kl_rows=5_000, queries=3)
    runs_path = harness.result_path(f"{args.out}_runs")
    if args.quick:
        runs_path.unlink(missing_ok=True)
    if not args.summarise:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1):  # single-threaded BLAS: CPU time then compares like with like
            warm_up()
            for n in args.records:  # by N first: the largest N of every network before the smaller one
                for name in args.networks:
                    study(name, n, args, runs_path)
    table = latest(pd.read_csv(runs_path, dtype={"error": str, "fitted_with": str, "kl_kind": str}).fillna(
        {"error": "", "fitted_with": "", "kl_kind": ""}))
    harness.write_csv(table, args.out)
    text = markdown_table(table)
    harness.result_path(args.out, ".md").write_text(text + "\n")
    print("\n" + text)
    private = pooled(table)
    private = private[private.method != "pgmpy DiscreteMLE"]
    worst = private.groupby("method")["ratio"].max()
    print("\nworst ratio to DiscreteMLE per method (target <= 3):", worst.round(2).to_dict())


if __name__ == "__main__":
    main()
