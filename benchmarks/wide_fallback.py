"""The wide-network fallback of ``DiscretePrivateMLE`` (``local-likelihood``) against the exact likelihood fit
and the projection, and the junction-tree sizes that choose between them (docs/decisions.md, "wide networks").

For each network and N: sample N records of the true network (seed 1), time pgmpy's ``DiscreteMLE`` on them,
then for each run fit, from the same noisy tables (``random_state = 1000 + run``):

* ``exact``: the likelihood fit on the exact junction tree (the total-cell rule lifted, so it runs wherever
  the largest clique fits);
* ``local``: the per-family fallback, forced by setting ``likelihood.MAX_CLIQUE_CELLS`` to 0;
* ``projection``: ``consistency="projection"``.

Accuracy against the TRUE network: joint KL (exact by the chain rule where the truth's junction tree fits,
else a Monte Carlo estimate on ``--mc`` fresh records of the truth: the mean of log p_true(x) - log p_est(x),
both smoothed with ``KL_SMOOTHING`` as in ``joint_kl``) and the CPD L1 weighted by the truth's parent
probabilities. ``--trees`` prints instead, per network, the CPD cells, the largest clique and the total cells
of the triangulated moral graph's cliques, and the route ``DiscretePrivateMLE`` takes.

Run:  python benchmarks/wide_fallback.py --networks alarm hailfinder win95pts andes pigs --n 100000
      python benchmarks/wide_fallback.py --trees
      python benchmarks/wide_fallback.py --quick        # asia at 2,000 rows, every method: seconds
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

import harness
import pgmpy_dp
from pgmpy_dp.datasets import load_network, sample_network
from pgmpy_dp.estimators import likelihood
from pgmpy_dp.evaluation.bayesian import KL_SMOOTHING, joint_kl, weighted_cpd_l1

TREE_NETWORKS = ["asia", "child", "alarm", "insurance", "hailfinder", "win95pts", "andes", "pigs", "water",
                 "diabetes", "mildew", "barley", "munin1", "link"]
METHODS = ["exact", "local", "projection"]


def _domain_and_families(net):
    domain = pgmpy_dp.Domain({v: list(net.states[v]) for v in net.nodes()})
    return domain, [(v, *sorted(net.get_parents(v))) for v in net.nodes()]


def tree_rows(networks) -> pd.DataFrame:
    """The junction-tree size of the exact fit on each network, read off its graph and declared states."""
    rows = []
    for name in networks:
        domain, families = _domain_and_families(load_network(name))
        largest, total = likelihood.exact_tree_cells(domain, families)
        exact = largest <= likelihood.MAX_CLIQUE_CELLS and total <= likelihood.MAX_EXACT_CELLS
        rows.append({"network": name, "nodes": len(families), "cpd_cells": sum(domain.cells(f) for f in families),
                     "largest_clique": largest, "tree_cells": total,
                     "route": "likelihood" if exact else "local-likelihood"})
    return pd.DataFrame(rows)


def _families(net):
    out = []
    for node in net.nodes():
        cpd = net.get_cpds(node)
        ev = list(cpd.variables[1:])
        order = sorted(ev)
        out.append((node, order, np.transpose(cpd.values, [0] + [1 + ev.index(p) for p in order])))
    return out


def mc_metrics(truth, estimate, sample: pd.DataFrame) -> tuple[float, float]:
    """Monte Carlo joint KL and weighted CPD L1 on records of the truth."""
    est = {n: (o, v) for n, o, v in _families(estimate)}
    kl, l1s = 0.0, []
    for node, order, t in _families(truth):
        o, e = est[node]
        assert o == order
        k = t.shape[0]
        states = truth.get_cpds(node).state_names
        idx = tuple(pd.Categorical(sample[v], categories=states[v]).codes for v in [node, *order])
        ts, es = ((1 - KL_SMOOTHING) * x + KL_SMOOTHING / k for x in (t, e))
        kl += float(np.mean(np.log(ts[idx]) - np.log(es[idx])))
        diff = np.abs(t - e).sum(axis=0)
        l1s.append(float(np.mean(diff[idx[1:]])) if idx[1:] else float(diff))
    return kl, float(np.mean(l1s))


def fit(truth, df, method: str, epsilon: float, seed: int):
    """One private fit under ``method``'s route; the module limits are restored afterwards."""
    from pgmpy.models import DiscreteBayesianNetwork

    limits = likelihood.MAX_CLIQUE_CELLS, likelihood.MAX_EXACT_CELLS
    if method == "local":
        likelihood.MAX_CLIQUE_CELLS = 0
    elif method == "exact":
        likelihood.MAX_EXACT_CELLS = float("inf")
    try:
        est = pgmpy_dp.DiscretePrivateMLE(epsilon=epsilon, random_state=seed,
                                          consistency="projection" if method == "projection" else "likelihood")
        model = DiscreteBayesianNetwork(truth.edges())
        model.add_nodes_from(truth.nodes())
        start = time.perf_counter()
        model.fit(df, estimator=est)
        return model, est.consistency_, time.perf_counter() - start
    finally:
        likelihood.MAX_CLIQUE_CELLS, likelihood.MAX_EXACT_CELLS = limits


def compare(name: str, args) -> list[dict]:
    from pgmpy.models import DiscreteBayesianNetwork
    from pgmpy.parameter_estimator import DiscreteMLE

    truth = load_network(name)
    domain, families = _domain_and_families(truth)
    largest, _ = likelihood.exact_tree_cells(domain, families)
    exact_ok = largest <= likelihood.MAX_CLIQUE_CELLS
    mc = None if exact_ok else sample_network(truth, args.mc, seed=999)
    rows = []
    for n in args.n:
        df = sample_network(truth, n, seed=1)
        start = time.perf_counter()
        DiscreteBayesianNetwork(truth.edges()).fit(df, estimator=DiscreteMLE(state_names=truth.states))
        t_mle = time.perf_counter() - start
        for eps in args.epsilon:
            for run in range(args.runs):
                for method in args.methods:
                    if method == "exact" and not exact_ok:
                        continue
                    model, used, secs = fit(truth, df, method, eps, 1000 + run)
                    kl, l1 = ((joint_kl(truth, model), weighted_cpd_l1(truth, model)) if exact_ok
                              else mc_metrics(truth, model, mc))
                    rows.append(dict(network=name, n=n, epsilon=eps, run=run, method=method, used=used,
                                     joint_kl=kl, wcpd_l1=l1, seconds=secs, mle_seconds=t_mle,
                                     ratio=secs / t_mle, kl_exact=exact_ok))
                    print(rows[-1], flush=True)
    return rows


def main(argv=None) -> pd.DataFrame:
    ap = harness.parser(__doc__, out="wide_fallback")
    ap.add_argument("--networks", nargs="+", default=["alarm", "hailfinder", "win95pts"])
    ap.add_argument("--n", type=int, nargs="+", default=[100_000])
    ap.add_argument("--epsilon", type=float, nargs="+", default=[1.0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--methods", nargs="+", choices=METHODS, default=METHODS)
    ap.add_argument("--mc", type=int, default=50_000, help="records of the truth for the Monte Carlo KL")
    ap.add_argument("--trees", action="store_true", help="only the junction-tree sizes of the networks")
    args = harness.parse(ap, argv, networks=["asia"], n=[2_000], mc=2_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if args.trees:
            out = tree_rows(args.networks if args.networks != ap.get_default("networks") else TREE_NETWORKS)
            harness.write_csv(out, f"{args.out}_trees")
            print(out.to_string(index=False))
            return out
        out = pd.DataFrame([row for name in args.networks for row in compare(name, args)])
    harness.write_csv(out, args.out)
    print(out.groupby(["network", "n", "epsilon", "method"])[["joint_kl", "wcpd_l1", "seconds", "ratio"]].mean()
          .to_string(float_format=lambda x: f"{x:.4g}"))
    return out


if __name__ == "__main__":
    main()
