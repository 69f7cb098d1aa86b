"""Does the fix hurt where CGM-EM already wins? bnlearn networks as Markov networks.

For each network (asia, child, alarm), N in {1e3, 1e4} and a few seeds: sample N rows,
release every family table (child and parents) once with epsilon = 1 (discrete Laplace),
with ``--one-way`` also every attribute's own 1-way table in the same release (MST-style),
and fit the Markov network of the moral graph, cliques = the families, with

* ``default``: the library's defaults (every measured 1-way gets a potential of its own);
* ``edges``: the same fit without those potentials (the fit before; identical without ``--one-way``).

Score: the exact KL(true BN || fitted network), the BN written as a log-linear model
whose potentials are its log CPDs (Z = 1). Every variant is fitted to the same release.
(The results of the first version of this script, run at 1ed3dc3, are in
``results/synthetic*.csv``.)

    OMP_NUM_THREADS=1 nice -n 10 /work/venv/bin/python -m studies.adult_mst.synthetic_check --one-way \
        --networks child alarm asia --n 1000 10000 --seeds 0 1 2
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp  # noqa: F401  (df.dp accessor)
from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.datasets import load_network, sample_network
from pgmpy_dp.evaluation.markov import kl_divergence_potentials

from .fitting import timed_fit
from .mst_measurements import HERE


def truth(bn):
    """Families and log-CPDs of ``bn`` (axes: child, then parents in the CPD's order)."""
    cliques, theta = [], []
    for cpd in bn.get_cpds():
        cards = [len(cpd.state_names[v]) for v in cpd.variables]
        with np.errstate(divide="ignore"):
            theta.append(np.log(cpd.get_values().reshape(cards)))
        cliques.append(tuple(cpd.variables))
    return cliques, theta


def fit(variant: str, mn, release, families):
    """``default``: the library's fit; ``edges``: the same fit without the measured sub-sets' own potentials."""
    est = PrivateMarkovEstimator(show_progress=False)
    rules = {"measured_subcliques": lambda releases, cliques: []} if variant == "edges" else {}
    return est, timed_fit(est, mn, release, list(families), **rules)


def run(nets, ns, seeds, variants, one_way=False, out="synthetic") -> pd.DataFrame:
    rows = []
    for net in nets:
        bn = load_network(net)
        fam, theta_true = truth(bn)
        mn = DiscreteMarkovNetwork(bn.to_markov_model().edges())
        mn.add_nodes_from(bn.nodes())
        for n in ns:
            for seed in seeds:
                df = sample_network(bn, n, seed=seed)
                tables = list(fam)
                if one_way:  # MST-style: every attribute's own table too, in the same release
                    tables += [(v,) for v in bn.nodes() if (v,) not in fam]
                release = df.dp.release(tables, epsilon=1.0, random_state=seed, show_progress=False)
                for v in variants:
                    est, cpu = fit(v, mn, release, fam)
                    kl = kl_divergence_potentials(est.domain_, fam, theta_true, est.cliques_, est.log_potentials_)
                    rows.append(dict(network=net, N=n, seed=seed, variant=v, one_way=one_way, kl=kl, cpu_seconds=cpu,
                                     reg_cgm=est.regularization_["cgm-em"]))
                    print(f"{net:6s} N={n:>6d} seed={seed} {v:8s} KL={kl:.4f} cpu={cpu:.1f}s", flush=True)
                pd.DataFrame(rows).to_csv(HERE / "results" / f"{out}.csv", index=False)
    return pd.DataFrame(rows)


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    wide = df.pivot_table(index=["network", "N", "seed"], columns="variant", values="kl")
    out = []
    for (net, n), g in wide.groupby(level=[0, 1]):
        row = dict(network=net, N=n)
        for v in g.columns:
            row[v] = f"{g[v].mean():.4f} +- {g[v].sem():.4f}"
            if v != "edges":
                d = g[v] / g["edges"]
                row[f"{v}/edges"] = f"{d.mean():.3f} +- {d.sem():.3f}"
        out.append(row)
    return pd.DataFrame(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--networks", nargs="+", default=["asia", "child", "alarm"])
    p.add_argument("--n", type=int, nargs="+", default=[1000, 10000])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--variants", nargs="+", default=["edges", "default"], choices=["edges", "default"])
    p.add_argument("--one-way", action="store_true", help="also release every attribute's 1-way table (as MST does)")
    p.add_argument("--out", default="current_synthetic_one_way", help="results/<out>.csv")
    args = p.parse_args(argv)
    df = run(args.networks, args.n, args.seeds, args.variants, args.one_way, args.out)
    print(summarise(df).to_string(index=False))


if __name__ == "__main__":
    main()
