"""The naive-MLE solver, old against new: scipy's L-BFGS-B against Fisher-preconditioned L-BFGS.

Fits ``PrivateMarkovEstimator`` (``naive-mle`` and ``cgm-em``, defaults otherwise) on the
cells of ``mn_profile.py`` with each naive solver, alternating solver by solver within each
release so both see the same load. Counts the inference calls of the warm start (the naive
fit) and of the whole fit, and the KL of each fit to the true model:

    python benchmarks/mn_naive_solver.py --releases 2

Prints one line per fit and writes ``results/mn_naive_solver.csv``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp
import pgmpy_dp.estimators.markov as markov_module
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree
from pgmpy_dp.evaluation.markov import kl_divergence_potentials
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.tables import release_from_codes

from mn_accuracy import make_graph
from mn_profile import CELLS, Counter

RESULTS = Path(__file__).parent / "results"
SOLVERS = ("lbfgs", "fisher")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=2)
    parser.add_argument("--out", default="mn_naive_solver")
    args = parser.parse_args(argv)
    counter = Counter()
    rows = []
    k, nodes = 10, 10
    domain = Domain({f"x{i}": list(range(k)) for i in range(nodes)})
    for kind, n, eps in CELLS:
        rng = np.random.default_rng([0, ["chain3", "er"].index(kind), n, 0])  # population 0 of mn_accuracy.py
        edges = make_graph(kind, nodes, rng, 0.3)
        theta = [np.log(rng.dirichlet(np.ones(k * k)).reshape(k, k)) for _ in edges]
        jt = JunctionTree(domain, edges)
        codes = jt.sample(theta, n, random_state=rng)
        for r in range(args.releases):
            release = release_from_codes(codes, domain, edges, eps, random_state=np.random.default_rng([1, r]))
            for method in ("naive-mle", "cgm-em"):
                for solver in SOLVERS:
                    markov_module._NAIVE_SOLVER = solver
                    counter.reset()
                    est = pgmpy_dp.PrivateMarkovEstimator(method=method, show_progress=False)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", ConvergenceWarning)
                        t0 = time.perf_counter()
                        est.fit(DiscreteMarkovNetwork(edges), release)
                        secs = time.perf_counter() - t0
                    warm_s = counter.seconds.get("warm start", 0.0)
                    row = dict(
                        model=kind, N=n, epsilon=eps, release=r, method=method, solver=solver,
                        kl=kl_divergence_potentials(domain, edges, theta, est.cliques_, est.log_potentials_),
                        seconds=round(secs, 3), warm_start_calls=counter.calls.get("warm start", 0),
                        warm_start_inference_seconds=round(warm_s, 3),
                        total_calls=sum(counter.calls.values()), mle_iterations=est.mle_n_iter_,
                    )
                    rows.append(row)
                    print(row, flush=True)
    RESULTS.mkdir(exist_ok=True)
    pd.DataFrame(rows).to_csv(RESULTS / f"{args.out}.csv", index=False)


if __name__ == "__main__":
    main()
