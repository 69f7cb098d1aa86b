"""The wide-network fallback of DiscretePrivateMLE against the exact likelihood fit and the projection.

For each network and N: sample N records from the true network, time pgmpy's DiscreteMLE on them, then for
each run fit (same seed, hence the same noisy tables) ``exact`` (the default where the junction tree fits),
``local`` (the per-family fallback, forced by lowering likelihood.MAX_CLIQUE_CELLS) and ``projection``.
Accuracy against the TRUE network: joint KL (exact by the chain rule where a junction tree of the true
network fits, else a Monte Carlo estimate on M fresh records of the truth: the mean of
log p_true(x) - log p_est(x), both with KL_SMOOTHING as in joint_kl) and the CPD L1 weighted by the truth's
parent probabilities (exact or on the same M records).

    PYTHONPATH=. python studies/wide_fallback/compare.py --networks alarm hailfinder --n 100000 --runs 2
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

warnings.simplefilter("ignore")

import pgmpy_dp  # noqa: E402
from pgmpy_dp.datasets import load_network, sample_network  # noqa: E402
from pgmpy_dp.estimators import likelihood  # noqa: E402
from pgmpy_dp.evaluation.bayesian import KL_SMOOTHING, joint_kl, weighted_cpd_l1  # noqa: E402


def _families(net):
    out = []
    for node in net.nodes():
        cpd = net.get_cpds(node)
        ev = list(cpd.variables[1:])
        order = sorted(ev)
        vals = cpd.values  # axes (node, *ev)
        vals = np.transpose(vals, [0] + [1 + ev.index(p) for p in order])
        out.append((node, order, vals))
    return out


def mc_metrics(truth, estimate, sample: pd.DataFrame):
    """Monte Carlo joint KL and weighted CPD L1 on records of the truth."""
    est = {n: (o, v) for n, o, v in _families(estimate)}
    kl, l1s = 0.0, []
    for node, order, t in _families(truth):
        o, e = est[node]
        assert o == order
        k = t.shape[0]
        st = truth.get_cpds(node).state_names
        idx = tuple(pd.Categorical(sample[v], categories=st[v]).codes for v in [node, *order])
        ts, es = ((1 - KL_SMOOTHING) * x + KL_SMOOTHING / k for x in (t, e))
        kl += float(np.mean(np.log(ts[idx]) - np.log(es[idx])))
        cols = idx[1:]
        diff = np.abs(t - e).sum(axis=0)
        l1s.append(float(np.mean(diff[cols])) if cols else float(diff))
    return kl, float(np.mean(l1s))


def main(argv=None):
    from pgmpy.parameter_estimator import DiscreteMLE
    from pgmpy.models import DiscreteBayesianNetwork

    ap = argparse.ArgumentParser()
    ap.add_argument("--networks", nargs="+", default=["alarm", "hailfinder", "win95pts"])
    ap.add_argument("--n", type=int, nargs="+", default=[100_000])
    ap.add_argument("--epsilon", type=float, nargs="+", default=[1.0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--methods", nargs="+", default=["exact", "local", "projection"])
    ap.add_argument("--mc", type=int, default=50_000)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    rows = []
    limit = likelihood.MAX_CLIQUE_CELLS
    for name in args.networks:
        truth = load_network(name)
        fams = [(n, *sorted(truth.get_parents(n))) for n in truth.nodes()]
        dom = pgmpy_dp.Domain({n: list(truth.get_cpds(n).state_names[n]) for n in truth.nodes()})
        exact_ok = likelihood.exact_clique_cells(dom, fams) <= limit
        mc = None if exact_ok else sample_network(truth, args.mc, seed=999)
        for n in args.n:
            df = sample_network(truth, n, seed=1)
            t = time.perf_counter()
            DiscreteBayesianNetwork(truth.edges()).fit(df, estimator=DiscreteMLE(state_names=truth.states))
            t_mle = time.perf_counter() - t
            for eps in args.epsilon:
                for run in range(args.runs):
                    for method in args.methods:
                        if method == "exact" and not exact_ok:
                            continue
                        likelihood.MAX_CLIQUE_CELLS = 0 if method == "local" else limit
                        est = pgmpy_dp.DiscretePrivateMLE(
                            epsilon=eps, random_state=1000 + run,
                            consistency="projection" if method == "projection" else "likelihood")
                        t = time.perf_counter()
                        model = DiscreteBayesianNetwork(truth.edges())
                        model.add_nodes_from(truth.nodes())
                        model.fit(df, estimator=est)
                        secs = time.perf_counter() - t
                        if exact_ok:
                            kl, l1 = joint_kl(truth, model), weighted_cpd_l1(truth, model)
                        else:
                            kl, l1 = mc_metrics(truth, model, mc)
                        row = dict(network=name, n=n, epsilon=eps, run=run, method=method, used=est.consistency_,
                                   joint_kl=kl, wcpd_l1=l1, seconds=secs, mle_seconds=t_mle, ratio=secs / t_mle,
                                   kl_exact=exact_ok)
                        rows.append(row)
                        print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()),
                              flush=True)
    likelihood.MAX_CLIQUE_CELLS = limit
    out = pd.DataFrame(rows)
    if args.out:
        out.to_csv(args.out, index=False)
    print(out.groupby(["network", "n", "epsilon", "method"])[["joint_kl", "wcpd_l1", "seconds", "ratio"]].mean()
          .to_string(float_format=lambda x: f"{x:.4g}"))


if __name__ == "__main__":
    main()
