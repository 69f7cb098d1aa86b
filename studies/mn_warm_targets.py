"""CGM-EM from the noisy and from the reconciled warm start: KL and EM objective by EM length (issue 13, round 4).

For each cell (population 0 of ``mn_accuracy.py``'s grid, one release), fits
``PrivateMarkovEstimator(method="cgm-em")`` with both warm-start targets
(the estimator's ``warm_start=``: "noisy", each table projected on its own; "reconciled", the
tables first made consistent by ``engine.reconcile_tables``, the default since issue 13's round 7)
and EM capped at each of ``--iters`` iterations. Records the KL to the true model, the EM
objective ``F`` (the approximate log marginal likelihood minus the penalty, higher is better)
at the first and last iteration, and the seconds. Writes ``results/mn_warm_targets.csv``.

Run:  python benchmarks/mn_warm_targets.py
      python benchmarks/mn_warm_targets.py --targets reconciled --prior unresolved --out mn_warm_targets_cgm13e
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from pgmpy.models import DiscreteMarkovNetwork

from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.engine import ConvergenceWarning
from pgmpy_dp.evaluation.markov import kl_divergence_potentials
from pgmpy_dp.tables import release_from_codes

from mn_profile import population

RESULTS = Path(__file__).parent / "results"
CELLS = [("chain3", 100_000, 0.5), ("chain3", 100_000, 1.0)] + [
    (kind, 1_000_000, eps) for kind in ("chain3", "er") for eps in (0.1, 0.5, 1.0)
]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, nargs="+", default=[1, 30, 150])
    parser.add_argument("--out", default="mn_warm_targets")
    parser.add_argument(
        "--targets", nargs="+", choices=["noisy", "reconciled"], default=["noisy", "reconciled"],
        help="warm-start targets to compare (the estimator's warm_start=)",
    )
    parser.add_argument(
        "--prior", choices=["floored", "scaled", "unresolved"], default="scaled",
        help="CGM-EM's prior under regularization='auto' (the estimator's prior=; default scaled, the "
        "estimator's default before issue 13's round 7, as in rounds 4-6)",
    )
    parser.add_argument("--cells", nargs="+", default=None, metavar="MODEL:N:EPS", help="cells instead of CELLS")
    args = parser.parse_args(argv)
    rows = []
    cells = CELLS if args.cells is None else [
        (m, int(float(n)), float(e)) for m, n, e in (c.split(":") for c in args.cells)
    ]
    for kind, n, eps in cells:
        domain, edges, theta, _, codes = population(kind, n)
        release = release_from_codes(codes, domain, edges, eps, random_state=np.random.default_rng(1))
        for it in args.iters:
            for targets in args.targets:  # alternating: the seconds compare under the same load
                est = PrivateMarkovEstimator(
                    method="cgm-em", show_progress=False, max_iter=it, warm_start=targets, prior=args.prior
                )
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    t0 = time.perf_counter()
                    est.fit(DiscreteMarkovNetwork(edges), release)
                    secs = time.perf_counter() - t0
                row = dict(
                    prior=args.prior, lam_cgm=round(est.regularization_["cgm-em"], 4), model=kind, N=n, epsilon=eps, warm_targets=targets, max_iter=it, em_iterations=est.n_iter_,
                    kl=kl_divergence_potentials(domain, edges, theta, est.cliques_, est.log_potentials_),
                    objective_first=est.log_likelihood_[0], objective_last=est.log_likelihood_[-1],
                    warm_start_iterations=est.mle_n_iter_, seconds=round(secs, 3),
                )
                rows.append(row)
                print(row, flush=True)
    RESULTS.mkdir(exist_ok=True)
    pd.DataFrame(rows).to_csv(RESULTS / f"{args.out}.csv", index=False)


if __name__ == "__main__":
    main()
