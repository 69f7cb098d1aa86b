"""Cost of one conditional query with its interval on the Adult AIM model (issue 46, target: 60 CPU-s).

One ``PrivateSynthesizer(method="aim", epsilon=1, delta=1e-9)`` fit of the whole Adult table (seed 0), then
``query_interval(synth, "income>50K", evidence={"education-num": 12})`` with each band, its refits not yet
kept (the first query of a fit pays for them). Before: a refit repeated the fit's two stages (the naive
stage, then 60 EM maps); now it starts CGM-EM at the fitted potentials for at most ``WARM_MAPS`` maps.
``--compare`` also times full refits of the same simulated tables and reports how closely the warm refits'
answers follow theirs (correlation and spread ratio of the deviations from the estimate, per query).

CPU seconds by ``time.process_time`` (this process, all threads); wall time beside it (the machine is shared).

Run:  python benchmarks/synth_interval_cost.py              # both bands, B = 30
      python benchmarks/synth_interval_cost.py --compare 8  # plus 8 full-vs-warm refits
Writes results/synth_interval_cost.csv (and results/synth_interval_warm.csv with --compare).
"""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path

import harness
import numpy as np
import pandas as pd

import pgmpy_dp
from pgmpy_dp.estimators.fitted import estimator_of
from pgmpy_dp.estimators.markov_fit import Evidence, fit_markov
from pgmpy_dp.estimators.measurements import clique_measurements
from pgmpy_dp.uncertainty import interval as interval_module
from pgmpy_dp.uncertainty import simulate

DATA = Path(os.environ.get("PGMPY_DP_ADULT", "/work/shared/data"))
QUERIES = [("income>50K", {"education-num": 12}), ("income>50K", {"sex": 0}), ("sex", {"hours-per-week": 39}),
           ("race", {"native-country": 1})]


def fit_adult(folder: Path, seed: int):
    codes, sizes = harness.load_adult(folder)
    domain = {c: list(range(k)) for c, k in sizes.items()}
    c0 = time.process_time()
    synth = pgmpy_dp.PrivateSynthesizer(epsilon=1.0, delta=1e-9, method="aim", random_state=seed,
                                        show_progress=False).fit(codes, domain=domain)
    return synth, time.process_time() - c0


def time_queries(synth, n_samples: int, seed: int) -> list[dict]:
    rows = []
    for band in ("normal", "response"):
        interval_module._KEPT.clear()  # the first query of the fit: its refits are drawn here
        c0, w0 = time.process_time(), time.time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            iv = pgmpy_dp.query_interval(synth, "income>50K", evidence={"education-num": 12}, interval=band,
                                         n_samples=n_samples, random_state=seed, show_progress=False)
        rows.append({"band": band, "n_samples": n_samples, "cpu_seconds": time.process_time() - c0,
                     "wall_seconds": time.time() - w0, "estimate": iv.estimate.iloc[1],
                     "lower": iv.lower.iloc[1], "upper": iv.upper.iloc[1], "supported": bool(iv.supported.iloc[1]),
                     "warm_maps": simulate.WARM_MAPS})
    return rows


def compare_refits(synth, n: int, seed: int) -> list[dict]:
    """Full refits (the fit's naive stage, then its EM budget) against warm ones, on the same simulated tables."""
    view = simulate.fit_view(synth.model_)
    est = estimator_of(synth.model_)
    fit, boots = simulate._simulate(view, n, np.random.default_rng(seed))
    engine = simulate.make_inference(view.domain, view.cliques, view.inference)

    def full(b):
        ev = Evidence(est.cliques_, *clique_measurements(b, est.cliques_, est.tied_), float(est.n_records_), est.tied_)
        return fit_markov(engine, ev, est.fit_settings_, naive_init=view.theta).log_potentials

    answers = [interval_module._answerer(view, [q], e) for q, e in QUERIES]
    out = {}
    for name, f in (("full", full), ("warm", fit)):
        c0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            thetas = [f(b) for b in boots]
        cpu = (time.process_time() - c0) / n
        out[name] = (cpu, np.array([[a(t)[1] for a in answers] for t in thetas]))
    estimate = np.array([a(view.theta)[1] for a in answers])
    rows = []
    for j, (q, e) in enumerate(QUERIES):
        dw, df = out["warm"][1][:, j] - estimate[j], out["full"][1][:, j] - estimate[j]
        rows.append({"query": f"P({q} = 1 | {e})", "refits": n, "full_cpu_per_refit": out["full"][0],
                     "warm_cpu_per_refit": out["warm"][0], "correlation": float(np.corrcoef(dw, df)[0, 1]),
                     "sd_ratio_warm_over_full": float(dw.std(ddof=1) / df.std(ddof=1)),
                     "full_sd": float(df.std(ddof=1)), "warm_maps": simulate.WARM_MAPS})
    return rows


def main(argv=None) -> None:
    ap = harness.parser(__doc__, out="synth_interval_cost")
    ap.add_argument("--data", type=Path, default=DATA, help="folder holding adult.csv and adult-domain.json")
    ap.add_argument("--n-samples", type=int, default=30)
    ap.add_argument("--compare", type=int, default=0, help="full-vs-warm refits to compare (0: none)")
    args = harness.parse(ap, argv)
    synth, fit_cpu = fit_adult(args.data, args.seed)
    rows = [dict(r, fit_cpu_seconds=fit_cpu) for r in time_queries(synth, args.n_samples, args.seed)]
    print(pd.DataFrame(rows).round(4).to_string(index=False))
    print("wrote", harness.write_csv(pd.DataFrame(rows), args.out))
    if args.compare:
        rows = compare_refits(synth, args.compare, args.seed)
        print(pd.DataFrame(rows).round(4).to_string(index=False))
        print("wrote", harness.write_csv(pd.DataFrame(rows), "synth_interval_warm"))


if __name__ == "__main__":
    main()
