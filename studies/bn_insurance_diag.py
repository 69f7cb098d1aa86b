"""Issue 12: where mbi beats the default's query L1 on insurance at 1e4 records (a diagnosis; no default changes).

On the grid (``docs/bayesian.md``) mbi, fitted to the default's own noisy family tables, has a lower query L1
than the default on insurance at 1e4, epsilon 0.1, 0.5 and 1. This script re-runs those cells on the grid's
sample, queries and noise (seed 1, runs ``0 .. --runs - 1``: the same as ``bn_accuracy.py``) and records,
for the default (``DiscretePrivateMLE(epsilon)``) and mbi on the same tables:

* per node: the parent-mass-weighted CPD L1 against the true network (what ``weighted_cpd_l1`` averages);
* per family table: how far the fitted counts are from the noisy measurement, as the root mean square of
  ``(fitted - noisy) / noise sd`` over the table's cells (about 1 for the true counts; below 1 the fit follows
  the noise, above 1 it leaves the measurement, e.g. under the prior), and the same for the true expected
  counts ``N P_true(family)`` as the reference;
* per query: its L1 error.

Writes ``results/bn_insurance_diag_nodes.csv`` and ``results/bn_insurance_diag_queries.csv`` and prints the
summary of ``docs/bayesian.md`` ("Why mbi wins query L1 on insurance"). ``--network`` runs another network into
``bn_NETWORK_diag_*.csv`` (sachs: ``docs/bayesian.md``, bn12m). Run (about 5 CPU minutes):

    python benchmarks/bn_insurance_diag.py --runs 4
    python benchmarks/bn_insurance_diag.py --summarise
    python benchmarks/bn_insurance_diag.py --network sachs --runs 10 --epsilons 0.1 0.5
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import pgmpy_dp
from bn_accuracy import _empty_model, _model_from_tables, mbi_tables
from pgmpy_dp.datasets import load_network, sample_network
from pgmpy_dp.evaluation.bayesian import (
    _families_under_truth,
    answer_queries,
    query_errors,
    random_queries,
)

warnings.filterwarnings("ignore")
RESULTS = Path(__file__).parent / "results"


def _true_family_counts(net, release, n):
    """``n P_true(family)`` for every table of ``release`` (axes in the table's order)."""
    parts = _families_under_truth(net, net)  # per node: CPD, itself, P(parents), in net.nodes() order
    joint = {}
    for node, (t, _, p_u) in zip(net.nodes(), parts):
        joint[node] = t * p_u[None, ...]  # P(node, parents): axes node, sorted parents
    return [n * joint[t.attrs[0]] for t in release]


def _z_rms(fitted, table):
    return float(np.sqrt(np.mean(((np.asarray(fitted) - table.values) / np.sqrt(table.variance)) ** 2)))


def run(args):
    net = load_network(args.network)
    df = sample_network(net, args.records, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    queries = random_queries(net, df, args.queries, False, rng) + random_queries(net, df, args.queries, True, rng)
    truth_answers = answer_queries(net, queries, show_progress=False)
    node_rows, query_rows = [], []
    for eps in args.epsilons:
        for r in range(args.runs):
            est = pgmpy_dp.DiscretePrivateMLE(epsilon=eps, random_state=args.seed * 1000 + r)
            t0 = time.perf_counter()
            default = _empty_model(net).fit(df, estimator=est)
            release = est.release_
            fitted = {"default": est._tables}  # the likelihood fit's family count tables (release order)
            seconds = {"default": time.perf_counter() - t0}
            t0 = time.perf_counter()
            fitted["mbi"] = mbi_tables(release, args.mbi_iters)
            seconds["mbi"] = time.perf_counter() - t0
            models = {"default": default, "mbi": _model_from_tables(net, release, fitted["mbi"])}
            true_counts = _true_family_counts(net, release, args.records)
            for method, model in models.items():
                parts = _families_under_truth(net, model)  # in net.nodes() order; the release is in the model's
                by_node = {t.attrs[0]: (t, f, c) for t, f, c in zip(release, fitted[method], true_counts)}
                for node, (t, e, p_u) in zip(net.nodes(), parts):
                    table, fit_t, true_t = by_node[node]
                    node_rows.append({
                        "epsilon": eps, "run": r, "method": method, "node": node, "parents": len(table.attrs) - 1,
                        "cells": table.values.size, "noise_sd": float(np.sqrt(table.variance)),
                        "wl1": float(np.sum(p_u * np.abs(t - e).sum(axis=0))),
                        "z_fit": _z_rms(fit_t, table), "z_truth": _z_rms(true_t, table),
                        "fit_total": float(np.sum(fit_t)), "seconds": seconds[method],
                    })
                errors = query_errors(model, truth_answers, queries, False)
                for i, (q, l1) in enumerate(zip(queries, errors["l1"])):
                    query_rows.append({"epsilon": eps, "run": r, "method": method, "query": i,
                                       "variables": " ".join(q.variables), "evidence": " ".join(q.evidence),
                                       "l1": float(l1)})
            print(f"eps={eps:g} run={r}: query L1 default {np.mean([x['l1'] for x in query_rows[-2 * len(queries):-len(queries)]]):.4f}"
                  f" mbi {np.mean([x['l1'] for x in query_rows[-len(queries):]]):.4f}", flush=True)
    pd.DataFrame(node_rows).to_csv(RESULTS / f"bn_{args.network}_diag_nodes.csv", index=False)
    pd.DataFrame(query_rows).to_csv(RESULTS / f"bn_{args.network}_diag_queries.csv", index=False)


def summarise(network="insurance"):
    pd.set_option("display.width", 200)
    nodes = pd.read_csv(RESULTS / f"bn_{network}_diag_nodes.csv")
    queries = pd.read_csv(RESULTS / f"bn_{network}_diag_queries.csv", keep_default_na=False)  # "" evidence: marginal
    q = queries.pivot_table(index=["epsilon", "run", "query", "variables", "evidence"], columns="method",
                            values="l1").reset_index()
    q["diff"] = q["default"] - q["mbi"]
    print("query L1 (mean over queries and runs) and the share of default - mbi from the 5 queries that contribute most:")
    for eps, g in q.groupby("epsilon"):
        per_query = g.groupby(["query", "variables", "evidence"])[["default", "mbi", "diff"]].mean()
        top = per_query.sort_values("diff", ascending=False).head(5)
        total = per_query["diff"].sum()
        print(f"\nepsilon {eps:g}: default {g['default'].mean():.4f}, mbi {g['mbi'].mean():.4f} "
              f"(difference {g['diff'].mean():+.4f}; default lower in {int((per_query['diff'] < 0).sum())} of "
              f"{len(per_query)} queries); top 5 carry {top['diff'].sum() / total:.0%} of the difference")
        print(top.round(4).to_string())
    n = nodes.pivot_table(index=["epsilon", "run", "node", "parents", "cells"], columns="method",
                          values=["wl1", "z_fit"]).reset_index()
    n.columns = ["_".join(c).strip("_") for c in n.columns]
    print("\nper node (mean over runs): weighted CPD L1 of each, and the fit's distance from its measurement (z rms)")
    for eps, g in n.groupby("epsilon"):
        per = g.groupby(["node", "parents", "cells"])[["wl1_default", "wl1_mbi", "z_fit_default", "z_fit_mbi"]].mean()
        per["wl1_diff"] = per["wl1_default"] - per["wl1_mbi"]
        print(f"\nepsilon {eps:g}: mean weighted CPD L1 default {per['wl1_default'].mean():.4f}, mbi {per['wl1_mbi'].mean():.4f};"
              f" default lower at {int((per['wl1_diff'] < 0).sum())} of {len(per)} nodes")
        print(per.sort_values("wl1_diff", ascending=False).head(6).round(4).to_string())
    # how deterministic each true CPD is: its parent-weighted conditional entropy over log(states), 0 to 1
    net = load_network(network)
    entropy = {}
    for node, (t, _, p_u) in zip(net.nodes(), _families_under_truth(net, net)):
        plogp = np.where(t > 0, t * np.log(np.where(t > 0, t, 1.0)), 0.0)
        entropy[node] = float(np.sum(p_u * -plogp.sum(axis=0)) / np.log(t.shape[0]))
    w = nodes.pivot_table(index=["epsilon", "node"], columns="method", values="wl1").reset_index()
    w["diff"], w["entropy"] = w["default"] - w["mbi"], w["node"].map(entropy)
    print("\nthe default's weighted CPD L1 excess over mbi against the true CPD's normalised conditional entropy:")
    for eps, g in w.groupby("epsilon"):
        low = g[g.entropy < 0.3]
        print(f"epsilon {eps:g}: Spearman {g[['diff', 'entropy']].corr('spearman').iloc[0, 1]:+.2f}; the {len(low)} nodes "
              f"below 0.3 carry {low['diff'].sum() / g['diff'].sum():.0%} of the excess (mean {low['diff'].mean():.4f} "
              f"against {g[g.entropy >= 0.3]['diff'].mean():.4f} at the other {int((g.entropy >= 0.3).sum())})")
    print("nodes below 0.3: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(entropy.items(), key=lambda kv: kv[1]) if v < 0.3))
    z = nodes.groupby(["epsilon", "method"])[["z_fit", "z_truth"]].median()
    print("\nmedian over tables and runs of the z rms (fit and true counts against the noisy tables):")
    print(z.round(3).to_string())
    big = nodes[nodes.cells >= 100].groupby(["epsilon", "method"])[["z_fit", "z_truth"]].median()
    print("\nthe same over the tables of 100 cells or more:")
    print(big.round(3).to_string())
    print("\nfit seconds (median):")
    print(nodes.drop_duplicates(["epsilon", "run", "method"]).groupby(["epsilon", "method"])["seconds"].median().round(1).to_string())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--network", default="insurance", help="results go to bn_NETWORK_diag_{nodes,queries}.csv")
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--epsilons", nargs="+", type=float, default=[0.1, 0.5, 1.0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--queries", type=int, default=10)
    parser.add_argument("--mbi-iters", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--summarise", action="store_true", help="only summarise the CSVs")
    args = parser.parse_args(argv)
    if not args.summarise:
        run(args)
    summarise(args.network)


if __name__ == "__main__":
    main()
