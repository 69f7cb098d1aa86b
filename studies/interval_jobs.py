"""Time of a first interval query by ``n_jobs`` (the refits' fits in worker processes), side by side.

For each model, one fit; then, interleaved for ``--repeat`` rounds, the first ``query_interval`` of that
fit with each ``--n-jobs`` setting (the kept refits are dropped before every call, so each call refits).
The refits are the same for every ``n_jobs`` (checked here on every call against the first setting's):
only the wall time differs. Markov networks as in ``benchmarks/coverage.py`` (``asia``, ``er-8``,
``chain-5``: CGM-EM defaults), Bayesian networks ``asia-bn``, ``child-bn``, ``alarm-bn``
(``DiscretePrivateMLE`` defaults).

Run:  python benchmarks/interval_jobs.py --models asia er-8 child-bn --n-jobs 1 2 --repeat 2 --out interval_jobs
Writes results/<out>.csv: best-of-rounds seconds per (model, n_jobs) and the ratio to the first setting.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import pgmpy_dp

from coverage import BN_MODELS, fitted_mn  # noqa: E402  (benchmarks/ on sys.path when run as a script)

RESULTS = Path(__file__).parent / "results"


def fitted(spec: str, n: int, eps: float, seed: int):
    """A fitted estimator and a query variable for ``spec``."""
    rng = np.random.default_rng(seed)
    if spec in BN_MODELS:
        from pgmpy.models import DiscreteBayesianNetwork

        from pgmpy_dp.datasets import load_network, sample_network

        truth = load_network(BN_MODELS[spec])
        df = sample_network(truth, n, seed=seed)
        est = pgmpy_dp.DiscretePrivateMLE(epsilon=eps, random_state=seed, show_progress=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            DiscreteBayesianNetwork(truth.edges()).fit(df, estimator=est)
        return est, list(truth.nodes())[-1]
    domain, *_, est = fitted_mn(spec, n, eps, rng)
    return est, list(domain.attrs)[-1]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["asia", "child-bn"])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--n-jobs", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--n-samples", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--out", default="interval_jobs")
    args = ap.parse_args(argv)
    rows = []
    for spec in args.models:
        est, x = fitted(spec, args.n, args.eps, args.seed)
        best = {j: float("inf") for j in args.n_jobs}
        reference = None
        for rnd in range(args.repeat):
            for j in args.n_jobs:
                est.__dict__.pop("_bootstrap_refits", None)  # refit on every call
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    iv = pgmpy_dp.query_interval(est, x, n_samples=args.n_samples, random_state=args.seed,
                                                 show_progress=False, n_jobs=j)
                seconds = time.perf_counter() - t0
                boot = iv.attrs["bootstrap"]
                reference = boot if reference is None else reference
                assert np.array_equal(boot, reference), f"{spec}: n_jobs={j} gave other refits"
                best[j] = min(best[j], seconds)
                print(f"{spec} round {rnd} n_jobs={j}: first query_interval {seconds:.1f}s", flush=True)
        base = best[args.n_jobs[0]]
        rows += [{"model": spec, "N": args.n, "epsilon": args.eps, "n_samples": args.n_samples, "n_jobs": j,
                  "seconds": s, "ratio": s / base} for j, s in best.items()]
    out = pd.DataFrame(rows)
    RESULTS.mkdir(exist_ok=True)
    out.to_csv(RESULTS / f"{args.out}.csv", index=False)
    print(out.to_string(index=False))


if __name__ == "__main__":
    main()
