"""Privacy-utility study of DiscretePrivateMLE (Roy Chowdhury et al. 2020, section 5).

For each network (asia, sachs, child, alarm from pgmpy's offline BIF files):
sample ``--records`` records, fit the non-private MLE network (the reference:
the metrics measure the cost of privacy, not of sampling), then for each
epsilon, allocation ("data-dependent" and the paper's "uniform" D-Ind
baseline) and run, fit a private network and measure

* parameter error: L1 ``sum |P - P~|`` and KL ``sum P~ log(P~/P)`` of each CPD
  against the reference's, averaged over nodes;
* inference error: the same two metrics on ``--queries`` random marginal and
  ``--queries`` random conditional queries (1-2 query variables, 1-2 evidence
  variables observed at the values of a random record), through pgmpy's
  VariableElimination;
* MAP agreement: share of ``--map-queries`` random MAP queries (1 to
  ``--map-vars`` = 5 query variables, 1-3 evidence variables) whose joint most
  probable assignment equals the reference's.

Queries are drawn once per network and shared by all fits. Writes
``results/bn_accuracy_runs.csv`` (one row per fit), ``results/bn_accuracy.csv``
(means) and ``results/bn_accuracy.png``; prints the table and the bars.

Run:  python benchmarks/bn_accuracy.py            (paper grid: 5 epsilons x 10 runs)
      python benchmarks/bn_accuracy.py --quick    (eps 1 and 3, 2 runs)
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

import pgmpy_dp
from pgmpy_dp.datasets import load_network, sample_network
from pgmpy_dp.evaluation.bayesian import (
    answer_queries,
    cpd_errors,
    map_agreement,
    map_answers,
    query_errors,
    random_queries,
)

warnings.filterwarnings("ignore", category=FutureWarning)
RESULTS = Path(__file__).parent / "results"
#: MAP agreement at epsilon = 1 reported by the paper (Table 1, "Our scheme").
PAPER_MAP_AT_1 = {"asia": 1.00, "sachs": 0.86, "child": 0.93, "alarm": 0.95}
METRICS = ["param_l1", "param_kl", "query_l1", "query_kl", "map"]


def _empty_model(net):
    from pgmpy.models import DiscreteBayesianNetwork

    model = DiscreteBayesianNetwork(net.edges())
    model.add_nodes_from(net.nodes())
    return model


def study(name, args, progress):
    from pgmpy.parameter_estimator import DiscreteMLE

    net = load_network(name)
    df = sample_network(net, args.records, seed=args.seed)
    reference = _empty_model(net).fit(df, estimator=DiscreteMLE(state_names=net.states))
    rng = np.random.default_rng(args.seed)
    queries = random_queries(reference, df, args.queries, False, rng) + random_queries(
        reference, df, args.queries, True, rng
    )
    map_queries = random_queries(reference, df, args.map_queries, True, rng, max_vars=args.map_vars, max_evidence=3)
    ref_answers, ref_map = answer_queries(reference, queries), map_answers(reference, map_queries)
    rows = []
    for eps in args.epsilons:
        for allocation in ("data-dependent", "uniform"):
            for run in range(args.runs):
                est = pgmpy_dp.DiscretePrivateMLE(
                    epsilon=eps, allocation=allocation, random_state=args.seed * 1000 + run
                )
                t0 = time.perf_counter()
                model = _empty_model(net).fit(df, estimator=est)
                seconds = time.perf_counter() - t0
                cpd = cpd_errors(model, reference)
                q = query_errors(model, ref_answers, queries)
                rows.append(
                    {
                        "network": name,
                        "epsilon": eps,
                        "allocation": allocation,
                        "run": run,
                        "param_l1": cpd["l1"].mean(),
                        "param_kl": cpd["kl"].mean(),
                        "query_l1": q["l1"].mean(),
                        "query_kl": q["kl"].mean(),
                        "map": map_agreement(model, ref_map, map_queries),
                        "fit_seconds": seconds,
                    }
                )
                progress.update()
    return rows


def plot(summary: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    networks = list(dict.fromkeys(summary["network"]))
    titles = {
        "param_l1": "CPD L1",
        "param_kl": "CPD KL",
        "query_l1": "query L1",
        "query_kl": "query KL",
        "map": "MAP agreement",
    }
    fig, axes = plt.subplots(len(networks), len(METRICS), figsize=(3.2 * len(METRICS), 2.6 * len(networks)),
                             squeeze=False)
    for r, name in enumerate(networks):
        for c, metric in enumerate(METRICS):
            ax = axes[r, c]
            for allocation, style in (("data-dependent", "o-"), ("uniform", "s--")):
                part = summary[(summary.network == name) & (summary.allocation == allocation)]
                ax.plot(part["epsilon"], part[metric], style, label=allocation)
            if metric != "map":
                ax.set_yscale("log")
            ax.set_title(f"{name}: {titles[metric]}", fontsize=10)
            ax.set_xlabel("epsilon")
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("DiscretePrivateMLE: error against the non-private MLE network (lower is better; MAP higher)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--networks", nargs="+", default=["asia", "sachs", "child", "alarm"])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 1.5, 2.0, 2.5, 3.0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=10)
    parser.add_argument("--map-queries", type=int, default=20)
    parser.add_argument("--map-vars", type=int, default=5, help="MAP queries ask for 1..this many variables")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="epsilon 1 and 3, 2 runs")
    parser.add_argument("--out", default="bn_accuracy")
    args = parser.parse_args(argv)
    if args.quick:
        args.epsilons, args.runs = [1.0, 3.0], 2

    total = len(args.networks) * len(args.epsilons) * 2 * args.runs
    rows = []
    with tqdm(total=total, desc="private fits", unit="fit") as progress:
        for name in args.networks:
            rows += study(name, args, progress)
    runs = pd.DataFrame(rows)
    RESULTS.mkdir(exist_ok=True)
    runs.to_csv(RESULTS / f"{args.out}_runs.csv", index=False)
    summary = runs.groupby(["network", "epsilon", "allocation"], sort=False)[[*METRICS, "fit_seconds"]].mean()
    summary = summary.reset_index()
    summary.to_csv(RESULTS / f"{args.out}.csv", index=False)
    plot(summary, RESULTS / f"{args.out}.png")

    pd.set_option("display.width", 160)
    print(f"\nmean over {args.runs} runs, {args.records:,} records, reference = non-private MLE network\n")
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"))

    print("\nbars")
    lo, hi = min(args.epsilons), max(args.epsilons)
    for name in args.networks:
        part = summary[summary.network == name].set_index(["epsilon", "allocation"])
        dd, uni = part.loc[(lo, "data-dependent")], part.loc[(hi, "uniform")]
        for metric in METRICS[:4]:
            ok = dd[metric] <= uni[metric]
            print(f"  {name:6s} {metric:9s} data-dependent@{lo:g} {dd[metric]:.4g} vs uniform@{hi:g} "
                  f"{uni[metric]:.4g}: {'met' if ok else 'NOT met'}")
        if lo == 1.0 and name in PAPER_MAP_AT_1:
            ok = dd["map"] >= PAPER_MAP_AT_1[name]
            print(f"  {name:6s} MAP agreement data-dependent@1 {dd['map']:.3f} vs paper "
                  f"{PAPER_MAP_AT_1[name]:.2f}: {'met' if ok else 'NOT met'}")
    print(f"\nwrote {RESULTS / (args.out + '.csv')}, {RESULTS / (args.out + '_runs.csv')}, "
          f"{RESULTS / (args.out + '.png')}")


if __name__ == "__main__":
    main()
