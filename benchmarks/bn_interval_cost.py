"""Cost of a first interval query on a private Bayesian network, by band, worker processes and CGM-EM budget.

``pgmpy_dp.query_interval`` on a fitted ``DiscretePrivateMLE`` refits the estimator ``n_samples`` times with
the fit's own parameters, ``max_iter`` included, so the first query of a fit costs about ``n_samples`` fits;
later queries of the same fit reuse the kept refits. The ``"response"`` band (the default) also measures the
estimator's response slope, which costs about as much again as the ``"normal"`` band's refits. This times
that first query on ``--network`` (``--records`` sampled rows, epsilon 1) for every combination of
``--intervals``, ``--n-jobs`` (the refits' fits in that many worker processes; the refits are the same either
way) and ``--max-iter`` (the fit's CGM-EM budget; ``0`` stands for the library's default), interleaved (one
round of every setting, then the next), best of ``--repeat``, each on a fresh fit so no kept refit answers.

Run:  python benchmarks/bn_interval_cost.py                          # asia: normal and response, 1 and 2 jobs
      python benchmarks/bn_interval_cost.py --max-iter 20 50 --intervals normal   # the CGM-EM budget
      python benchmarks/bn_interval_cost.py --quick                  # 2,000 rows, 5 refits, one process
Writes results/<out>.csv (default bn_interval_cost): seconds per setting and the ratio to the first setting.
"""

from __future__ import annotations

import pandas as pd

import harness
import pgmpy_dp


def main(argv=None) -> None:
    ap = harness.parser(__doc__, out="bn_interval_cost", seed=1)
    ap.add_argument("--network", default="asia")
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--intervals", nargs="+", default=["normal", "response"], choices=["normal", "response"])
    ap.add_argument("--max-iter", nargs="+", type=int, default=[0], help="the fit's max_iter; 0: the library default")
    ap.add_argument("--n-samples", type=int, default=30)
    ap.add_argument("--n-jobs", nargs="+", type=int, default=[1, 2], help="query_interval's n_jobs settings")
    ap.add_argument("--repeat", type=int, default=2)
    args = harness.parse(ap, argv, records=2_000, n_samples=5, n_jobs=[1], repeat=1)
    net, df = harness.network_sample(args.network, args.records, seed=args.seed)
    variable, evidence_var = list(net.nodes())[-1], list(net.nodes())[0]
    evidence = {evidence_var: net.states[evidence_var][0]}
    settings = [(band, m, j) for band in args.intervals for m in args.max_iter for j in args.n_jobs]
    best = dict.fromkeys(settings, float("inf"))
    for rep in range(args.repeat):
        for band, m, j in settings:
            budget = {"max_iter": m} if m else {}
            est = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, random_state=rep, show_progress=False, **budget)
            with harness.quiet():
                harness.empty_model(net).fit(df, estimator=est)
                _, seconds = harness.timed(lambda: pgmpy_dp.query_interval(  # noqa: B023  (called at once)
                    est, variable, evidence, n_samples=args.n_samples, random_state=rep, interval=band,  # noqa: B023
                    show_progress=False, n_jobs=j))  # noqa: B023
            best[band, m, j] = min(best[band, m, j], seconds)
            print(f"round {rep} {band} max_iter={m or 'default'} n_jobs={j}: first query_interval {seconds:.1f}s",
                  flush=True)
    base = best[settings[0]]
    rows = [{"network": args.network, "records": args.records, "n_samples": args.n_samples, "interval": band,
             "max_iter": m or "default", "n_jobs": j, "seconds": s, "ratio": s / base}
            for (band, m, j), s in best.items()]
    out = pd.DataFrame(rows)
    harness.write_csv(out, args.out)
    print(out.to_string(index=False))


if __name__ == "__main__":
    main()
