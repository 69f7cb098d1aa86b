"""Does the proposed fix hurt where CGM-EM already wins? bnlearn networks as Markov networks.

For each network (asia, child, alarm), N in {1e3, 1e4} and a few seeds: sample N rows,
release every family table (child and parents) once with epsilon = 1 (discrete Laplace),
and fit the Markov network of the moral graph, cliques = the families, with

* ``current``: the library's defaults;
* ``nodes``: the proposed fix, the same fit with a node potential for every attribute
  that is not already a clique of its own (cliques = families + singletons);
  (with ``--one-way`` the node tables are released, so they are ordinary measurements);
* ``nodes-same``: ``nodes`` with the two weights of ``current`` (only the parametrisation differs);
* ``cgm0``: the alternative, CGM-EM's M-step weight set to 1e-4 (warm start unchanged).

Score: the exact KL(true BN || fitted network), the BN written as a log-linear model
whose potentials are its log CPDs (Z = 1). Every variant is fitted to the same release.

    OMP_NUM_THREADS=1 nice -n 10 /work/venv/bin/python -m studies.adult_mst.synthetic_check --seeds 0 1 2
    OMP_NUM_THREADS=1 nice -n 10 /work/venv/bin/python -m studies.adult_mst.synthetic_check --one-way \
        --seeds 0 1 2 3 4 5 --variants current nodes nodes-same --out synthetic_one_way
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp  # noqa: F401  (df.dp accessor)
from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.datasets import load_network, sample_network
from pgmpy_dp.estimators import markov as markov_module
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


class _Derived(markov_module._CliqueEstimate):
    """A node's table summed out of a family table: a warm-start target only, never a measurement."""


def _with_node_targets(original):
    """``_measurements`` for cliques that add node potentials no released table matches exactly.

    The measurements stay those of the released tables; a node clique without its own table gets,
    as its warm-start target, the sum of the first released table containing it (per-cell variance:
    the table's times the number of cells summed).
    """

    def measurements(releases, cliques, tied_idx=None):
        own = {t.attrs for r in releases for t in r.tables}
        extra = [i for i, c in enumerate(cliques) if len(c) == 1 and c not in own]
        kept = [c for i, c in enumerate(cliques) if i not in extra]
        ms, per = original(releases, kept, tied_idx)
        per = iter(per)
        out = []
        for i, c in enumerate(cliques):
            if i not in extra:
                out.append(next(per))
                continue
            t = next(t for r in releases for t in r.tables if c[0] in t.attrs)
            axis = t.attrs.index(c[0])
            other = tuple(a for a in range(t.values.ndim) if a != axis)
            summed = t.values.size // t.values.shape[axis]
            out.append([_Derived(t.values.sum(axis=other), t.variance * summed)])
        return ms, out

    return measurements


def _released_weights(original):
    """``auto_regularization`` over the released tables only (derived node targets left out)."""
    return lambda tables, n: original([t for t in tables if not isinstance(t, _Derived)], n)


def fit(variant: str, mn, release, families, nodes, weights=None):
    cliques = list(families)
    if variant.startswith("nodes"):
        singles = {c[0] for c in families if len(c) == 1}
        cliques += [(v,) for v in nodes if v not in singles]
    est = PrivateMarkovEstimator(show_progress=False)
    rules = {}
    if variant == "cgm0":
        rules["_cgm_weight"] = lambda prior, naive, scales: 1e-4
    if variant.startswith("nodes"):
        rules["_measurements"] = _with_node_targets(markov_module._measurements)
        rules["auto_regularization"] = _released_weights(markov_module.auto_regularization)
    if variant == "nodes-same":  # the current fit's two weights exactly: only the parametrisation differs
        rules["auto_regularization"] = lambda tables, n: weights["naive-mle"]
        rules["_cgm_weight"] = lambda prior, naive, scales: weights["cgm-em"]
    return est, timed_fit(est, mn, release, cliques, **rules)


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
                weights = None
                for v in variants:
                    est, cpu = fit(v, mn, release, fam, list(bn.nodes()), weights)
                    if v == "current":
                        weights = est.regularization_
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
            if v != "current":
                d = g[v] / g["current"]
                row[f"{v}/current"] = f"{d.mean():.3f} +- {d.sem():.3f}"
        out.append(row)
    return pd.DataFrame(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--networks", nargs="+", default=["asia", "child", "alarm"])
    p.add_argument("--n", type=int, nargs="+", default=[1000, 10000])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--variants", nargs="+", default=["current", "nodes", "cgm0"])
    p.add_argument("--one-way", action="store_true", help="also release every attribute's 1-way table (as MST does)")
    p.add_argument("--out", default="synthetic", help="results/<out>.csv")
    args = p.parse_args(argv)
    df = run(args.networks, args.n, args.seeds, args.variants, args.one_way, args.out)
    print(summarise(df).to_string(index=False))


if __name__ == "__main__":
    main()
