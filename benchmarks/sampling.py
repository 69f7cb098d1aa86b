"""Speed of ``pgmpy_dp.sample``: a private Markov network of the Adult census and a Bayesian network, 1e6 rows.

The Markov network is a tree over the Adult columns (``PGMPY_DP_ADULT``, default /work/shared/data, holds
adult.csv and adult-domain.json; without it, 48,842 rows of the bnlearn network ``insurance`` stand in),
the edges those of the maximum spanning tree of the pairwise mutual information (chosen on the data, not
privately: only sampling is measured here), its potentials fitted by ``PrivateMarkovEstimator`` (naive MLE)
from one epsilon = 1 release of the edge tables. The second Markov network is the one ``PrivateSynthesizer(method="aim")`` fits at epsilon 1 (delta 1e-9),
whose cliques are AIM's selected marginals (up to three columns each). The Bayesian network is bnlearn's ``alarm``, sampled by
``pgmpy_dp.sample`` and by pgmpy's ``BayesianModelSampling.forward_sample`` in the same run. Each row of the
result also gives the largest gap between the sample's one-way marginals and the model's exact ones.

Seconds are wall-clock, CPU seconds the process's own (run with OMP_NUM_THREADS=1 for one core; on a
shared machine the CPU column is the one to read). Full run (1e6 rows, about a minute and a half on one core, most of it pgmpy's sampler):
``python benchmarks/sampling.py``; ``--quick`` samples 1e5 rows.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
from harness import parse, parser, quiet, timed, write_csv

import pgmpy_dp
from pgmpy_dp.datasets import load_network, sample_network

DATA = Path(os.environ.get("PGMPY_DP_ADULT", "/work/shared/data"))


def table(seed: int) -> tuple[str, pd.DataFrame, dict]:
    """The Adult census with its public domain, or a stand-in sampled from a bnlearn network."""
    if (DATA / "adult.csv").exists() and (DATA / "adult-domain.json").exists():
        sizes = json.loads((DATA / "adult-domain.json").read_text())
        df = pd.read_csv(DATA / "adult.csv", usecols=list(sizes))
        return "adult", df, {c: list(range(k)) for c, k in sizes.items()}
    print(f"no Adult data in {DATA}: using 48,842 rows of the bnlearn network insurance instead")
    df = sample_network("insurance", 48_842, seed=seed)
    return "insurance", df, {c: list(df[c].cat.categories) for c in df.columns}


def mutual_information_tree(df: pd.DataFrame, domain: dict) -> list[tuple[str, str]]:
    codes = {c: pd.Categorical(df[c], categories=domain[c]).codes.astype(np.int64) for c in df.columns}
    g = nx.Graph()
    for i, u in enumerate(df.columns):
        for v in df.columns[i + 1:]:
            joint = np.bincount(codes[u] * len(domain[v]) + codes[v], minlength=len(domain[u]) * len(domain[v]))
            p = joint.reshape(len(domain[u]), len(domain[v])) / len(df)
            outer = p.sum(1, keepdims=True) * p.sum(0, keepdims=True)
            live = p > 0
            g.add_edge(u, v, weight=float((p[live] * np.log(p[live] / outer[live])).sum()))
    return list(nx.maximum_spanning_tree(g).edges())


def max_marginal_gap(model, df: pd.DataFrame) -> float:
    gaps = []
    for v in df.columns:
        exact = pgmpy_dp.query(model, [v]).values
        gaps.append(np.abs(df[v].value_counts(normalize=True, sort=False).to_numpy() - exact).max())
    return float(max(gaps))


def main(argv=None) -> None:
    ap = parser(__doc__, out="sampling")
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows drawn per sampler")
    args = parse(ap, argv, rows=100_000)
    name, df, domain = table(args.seed)
    edges = mutual_information_tree(df, domain)
    estimator = pgmpy_dp.PrivateMarkovEstimator(method="naive-mle", random_state=args.seed, show_progress=False)
    with quiet():
        estimator.fit(_markov(edges, df.columns), df, epsilon=1.0, domain=domain)
    alarm = load_network("alarm")
    rows = []

    def record(model_name, model, sampler, run):
        cpu0 = time.process_time()
        sample, seconds = timed(run)
        rows.append({"model": model_name, "variables": len(sample.columns), "sampler": sampler, "rows": args.rows,
                     "seconds": round(seconds, 2), "cpu_seconds": round(time.process_time() - cpu0, 2), "rows_per_second": round(args.rows / seconds),
                     "max_1way_gap": round(max_marginal_gap(model, sample), 4)})
        print(rows[-1])

    record(f"{name} tree MN", estimator.model_, "pgmpy_dp.sample",
           lambda: pgmpy_dp.sample(estimator, args.rows, random_state=args.seed))
    synth = pgmpy_dp.PrivateSynthesizer(epsilon=1.0, delta=1e-9, method="aim", random_state=args.seed,
                                        show_progress=False)
    with quiet():
        synth.fit(df, domain=pgmpy_dp.Domain(domain))
    record(f"{name} AIM MN (epsilon 1)", synth.model_, "pgmpy_dp.sample",
           lambda: pgmpy_dp.sample(synth.model_, args.rows, random_state=args.seed))
    record("alarm BN", alarm, "pgmpy_dp.sample", lambda: pgmpy_dp.sample(alarm, args.rows, random_state=args.seed))
    record("alarm BN", alarm, "pgmpy forward_sample",
           lambda: sample_network(alarm, args.rows, seed=args.seed))
    write_csv(pd.DataFrame(rows), args.out)


def _markov(edges, columns):
    from pgmpy.models import DiscreteMarkovNetwork

    model = DiscreteMarkovNetwork(edges)
    model.add_nodes_from(columns)
    return model


if __name__ == "__main__":
    main()
