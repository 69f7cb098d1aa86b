"""Discrete Gaussian releases: sampler cost, and accuracy against Laplace at the same (epsilon, delta).

1. Sampler cost per cell of the three discrete Gaussian paths and of OpenDP's discrete Laplace,
   timed side by side (interleaved repetitions, median), reported as ratios.
2. Accuracy on the Adult census data (the folder in ``PGMPY_DP_ADULT``, default /work/shared/data):
   all 2-way marginals of the first ``--attrs`` attributes released with discrete Laplace at ``epsilon`` (pure DP) and with
   discrete Gaussian at the largest rho whose tight conversion is (epsilon, delta)-DP; the mean
   L1 error per table (in records) over ``--reps`` releases. Laplace is also ``(epsilon, delta)``-DP,
   so the two give the same (epsilon, delta) guarantee; Laplace alone gives pure DP.

Run: ``python benchmarks/gaussian_release.py`` (about a minute; ``--quick``: fewer cells, attributes and
releases); writes ``benchmarks/results/gaussian_release.csv``.
"""

from __future__ import annotations

import itertools
import os
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

import harness
import pgmpy_dp  # noqa: F401
from pgmpy_dp import PrivacyBudget
from pgmpy_dp.privacy.mechanisms import discrete_gaussian_noise, discrete_laplace_noise

#: the folder holding adult.csv and adult-domain.json (not bundled with the package)
DATA = Path(os.environ.get("PGMPY_DP_ADULT", "/work/shared/data"))
DELTA = 1e-6


def sampler_costs(n_cells: int = 50_000, reps: int = 5) -> list[dict]:
    paths = {
        "gaussian opendp": lambda: discrete_gaussian_noise(n_cells, 10.0, sampler="opendp"),
        "gaussian rejection (numpy, OS entropy)": lambda: discrete_gaussian_noise(n_cells, 10.0, sampler="rejection"),
        "gaussian seeded": lambda: discrete_gaussian_noise(n_cells, 10.0, random_state=0),
        "laplace opendp": lambda: discrete_laplace_noise(n_cells, 10.0, sampler="opendp"),
    }
    times: dict[str, list[float]] = {k: [] for k in paths}
    for _ in range(reps):  # interleaved, so load affects every path alike
        for name, fn in paths.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    base = statistics.median(times["gaussian opendp"])
    return [
        {
            "experiment": "sampler",
            "method": name,
            "n_cells": n_cells,
            "us_per_cell": 1e6 * statistics.median(ts) / n_cells,
            "time_ratio_to_gaussian_opendp": statistics.median(ts) / base,
        }
        for name, ts in times.items()
    ]


def adult_frame(n_attrs: int) -> pd.DataFrame:
    import json

    sizes = json.loads((DATA / "adult-domain.json").read_text())
    # the attributes with at most 16 states: the public domain file declares them (states 0..size-1)
    cols = [c for c, k in sizes.items() if k <= 16][:n_attrs]
    df = pd.read_csv(DATA / "adult.csv", usecols=cols)
    return pd.DataFrame({c: pd.Categorical(df[c], categories=range(sizes[c])) for c in cols})


def accuracy(n_attrs: int, reps: int, seed: int, epsilons=(0.1, 1.0)) -> list[dict]:
    df = adult_frame(n_attrs)
    tables = list(itertools.combinations(df.columns, 2))
    dom = df.dp.domain()
    codes = dom.encode(df, list(df.columns))
    from pgmpy_dp.tables import contingency_table

    exact = {t: contingency_table(codes, dom, t) for t in tables}
    rows = []
    for eps in epsilons:
        rho = PrivacyBudget.from_epsilon_delta(eps, DELTA).total
        for mech, kwargs in (("discrete_laplace", {"epsilon": eps}), ("discrete_gaussian", {"rho": rho})):
            errs = []
            for r in range(reps):
                rel = df.dp.release(tables, random_state=seed + r, show_progress=False, **kwargs)
                errs.append(np.mean([np.abs(t.values - exact[t.attrs]).sum() for t in rel.tables]))
            rows.append(
                {
                    "experiment": "adult 2-way",
                    "method": mech,
                    "n_tables": len(tables),
                    "n_records": len(df),
                    "epsilon": eps,
                    "delta": DELTA,
                    "rho": rho if mech == "discrete_gaussian" else None,
                    "scale": rel.tables[0].scale,
                    "mean_l1_per_table": float(np.mean(errs)),
                }
            )
    return rows


def main(argv=None) -> None:
    ap = harness.parser(__doc__, out="gaussian_release")
    ap.add_argument("--cells", type=int, default=50_000, help="cells per sampler call")
    ap.add_argument("--timings", type=int, default=5, help="interleaved timing repetitions (median)")
    ap.add_argument("--attrs", type=int, default=8, help="Adult attributes whose 2-way tables are released")
    ap.add_argument("--reps", type=int, default=5, help="releases per (mechanism, epsilon)")
    args = harness.parse(ap, argv, cells=5_000, timings=2, attrs=4, reps=1)
    frame = pd.DataFrame(sampler_costs(args.cells, args.timings) + accuracy(args.attrs, args.reps, args.seed))
    harness.write_csv(frame, args.out)
    print(frame.to_string(index=False))


if __name__ == "__main__":
    main()
