"""Cost of a first interval query on a private Bayesian network, by the fit's CGM-EM budget.

``pgmpy_dp.query_interval`` on a fitted ``DiscretePrivateMLE`` refits the estimator
``n_samples`` times with the fit's own parameters, ``max_iter`` included (the default
``None`` runs the library's fixed budget), so the first query of a fit costs about
``n_samples`` fits; later queries of the same fit reuse the cached refits. This times that
first query on asia (``--records`` sampled rows, epsilon 1) for each ``--max-iter``,
interleaved (one round of every setting, then the next), best of ``--repeat``, each on a
fresh fit so the cache never answers.

``--n-jobs 1 2`` times the same first query with the refits' fits in that many worker processes
(``query_interval(n_jobs=...)``; the refits are the same either way), interleaved with the others.

Run:  python benchmarks/bn_interval_cost.py [--max-iter 20 50] [--repeat 2] [--out NAME]
      python benchmarks/bn_interval_cost.py --network child --max-iter 50 --n-jobs 1 2 --n-samples 30 --out bn_interval_jobs
(``bn_interval_cost_integ.csv``: the same script run against the refit path that re-runs only the
likelihood step on the engine's arrays, integ at aa62b88.)
Writes results/<out>.csv (default bn_interval_cost).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import pandas as pd

import pgmpy_dp
from pgmpy_dp.datasets import load_network, sample_network

RESULTS = Path(__file__).parent / "results"


def main(argv=None) -> None:
    from pgmpy.models import DiscreteBayesianNetwork

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--network", default="asia")
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--max-iter", nargs="+", type=int, default=[20, 50])
    ap.add_argument("--n-samples", type=int, default=30)
    ap.add_argument("--n-jobs", nargs="+", type=int, default=[1], help="query_interval's n_jobs settings")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", default="bn_interval_cost", help="results/<out>.csv")
    args = ap.parse_args(argv)
    net = load_network(args.network)
    df = sample_network(net, args.records, seed=1)
    variable, evidence_var = list(net.nodes())[-1], list(net.nodes())[0]
    evidence = {evidence_var: net.states[evidence_var][0]}
    settings = [(m, j) for m in args.max_iter for j in args.n_jobs]
    best = {k: float("inf") for k in settings}
    for rep in range(args.repeat):
        for m, j in settings:
            model = DiscreteBayesianNetwork(net.edges())
            model.add_nodes_from(net.nodes())
            est = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, max_iter=m, random_state=rep, show_progress=False)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(df, estimator=est)
                t0 = time.perf_counter()
                pgmpy_dp.query_interval(est, variable, evidence, n_samples=args.n_samples, random_state=rep,
                                        show_progress=False, n_jobs=j)
            seconds = time.perf_counter() - t0
            best[m, j] = min(best[m, j], seconds)
            print(f"round {rep} max_iter={m} n_jobs={j}: first query_interval {seconds:.1f}s", flush=True)
    base = best[settings[0]]
    rows = [{"network": args.network, "records": args.records, "n_samples": args.n_samples, "max_iter": m,
             "n_jobs": j, "seconds": s, "ratio": s / base} for (m, j), s in best.items()]
    out = pd.DataFrame(rows)
    RESULTS.mkdir(exist_ok=True)
    out.to_csv(RESULTS / f"{args.out}.csv", index=False)
    print(out.to_string(index=False))


if __name__ == "__main__":
    main()
