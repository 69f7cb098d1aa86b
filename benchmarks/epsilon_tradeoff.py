"""What epsilon buys on Adult: the synthesizer's 3-way L1 at epsilon 0.3, 1, 3 and 10 (delta 1e-9).

The table behind the trade-off in docs/choosing-epsilon.md. Data: the Adult census (``PGMPY_DP_ADULT`` or
``/work/shared/data``: 48,842 rows, 14 columns with their public domain). For each method and epsilon,
``PrivateSynthesizer(epsilon=eps, delta=1e-9, method=...)`` is fitted with a seeded generator. Score: the
L1 distance between normalised 3-way tables and the real table's (0 = the same, 2 = disjoint), averaged
over all 364 3-way marginals, for two synthetic tables drawn from the model: ``l1_3way`` has as many rows as
the real table (what a user of one synthetic table sees, its own sampling noise included) and
``l1_3way_model`` ten times as many (close to the model's own marginals). A non-private reference: the same
scores for resamples (with replacement) of the real table of the same two sizes, the floor that sampling
alone puts under each score.

Writes ``results/<out>.csv`` (one row per method, epsilon and seed; CPU seconds of each fit) and prints the
mean and range per cell.

Run:  python benchmarks/epsilon_tradeoff.py                  # aim and mst, seeds 0-1 (aim) / 0-2 (mst)
      python benchmarks/epsilon_tradeoff.py --methods mst    # MST only: about a minute
      python benchmarks/epsilon_tradeoff.py --quick          # 5,000 rows, MST, one seed
"""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

import harness
import pgmpy_dp

DATA = Path(os.environ.get("PGMPY_DP_ADULT", "/work/shared/data"))
EPSILONS = (0.3, 1.0, 3.0, 10.0)
DELTA = 1e-9
SEEDS = {"aim": (0, 1), "mst": (0, 1, 2)}


def three_way_l1(sample: pd.DataFrame, real: pd.DataFrame, sizes: dict) -> float:
    """Mean L1 between the normalised 3-way tables of ``sample`` and ``real`` over every triple."""
    triples = list(itertools.combinations(list(sizes), 3))
    total = 0.0
    for t in triples:
        p = harness.contingency(sample, sizes, t)
        q = harness.contingency(real, sizes, t)
        total += float(np.abs(p / p.sum() - q / q.sum()).sum())
    return total / len(triples)


def run(args) -> pd.DataFrame:
    real, sizes = harness.load_adult(DATA, rows=args.rows)
    domain = pgmpy_dp.Domain({a: list(range(k)) for a, k in sizes.items()})
    out = harness.result_path(args.out)
    if out.exists():
        out.unlink()
    rows = []
    def resample(k):
        return real.sample(k, replace=True, random_state=0).reset_index(drop=True)

    rows.append({"method": "resample (no privacy)", "epsilon": np.inf, "seed": 0,
                 "l1_3way": three_way_l1(resample(len(real)), real, sizes),
                 "l1_3way_model": three_way_l1(resample(10 * len(real)), real, sizes),
                 "fit_cpu_seconds": 0.0, "fit_seconds": 0.0})
    harness.append_rows(rows[-1:], out)
    for method in args.methods:
        for eps in args.epsilons:
            for seed in (args.seeds or SEEDS[method]):
                synth = pgmpy_dp.PrivateSynthesizer(epsilon=eps, delta=DELTA, method=method,
                                                    random_state=np.random.default_rng(seed), show_progress=False)
                t0, c0 = time.perf_counter(), time.process_time()
                with harness.quiet():
                    synth.fit(real, domain=domain)
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                large = synth.sample(10 * len(real), random_state=seed).apply(lambda c: c.astype(int))
                row = {"method": method, "epsilon": eps, "seed": seed,
                       "l1_3way": three_way_l1(large.iloc[: len(real)], real, sizes),
                       "l1_3way_model": three_way_l1(large, real, sizes),
                       "fit_cpu_seconds": cpu, "fit_seconds": wall, "rho": synth.rho_}
                print(f"{method} epsilon={eps:g} seed={seed}: 3-way L1 {row['l1_3way']:.4f} "
                      f"(10x sample {row['l1_3way_model']:.4f}), fit {cpu:.1f} CPU-s", flush=True)
                rows.append(row)
                harness.append_rows([row], out)
    return pd.DataFrame(rows)


def main(argv=None):
    ap = harness.parser(__doc__, "epsilon_tradeoff")
    ap.add_argument("--methods", nargs="+", default=["mst", "aim"], choices=["aim", "mst", "privbayes"])
    ap.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    ap.add_argument("--seeds", nargs="+", type=int, default=None, help="default: 0-1 for aim, 0-2 for mst")
    ap.add_argument("--rows", type=int, default=None, help="a seeded subsample of Adult")
    args = harness.parse(ap, argv, rows=5000, methods=["mst"], seeds=[0])
    runs = run(args)
    summary = runs.groupby(["method", "epsilon"], sort=False).agg(
        l1_3way=("l1_3way", "mean"), l1_min=("l1_3way", "min"), l1_max=("l1_3way", "max"),
        l1_3way_model=("l1_3way_model", "mean"),
        seeds=("seed", "count"), cpu_s=("fit_cpu_seconds", "mean"))
    print(summary.round(4).to_string())
    print(f"wrote {harness.result_path(args.out)}")


if __name__ == "__main__":
    main()
