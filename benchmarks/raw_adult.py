"""Issue 44's first target: a raw-typed Adult to a raw-typed synthetic table with only public facts declared,
against the hand-binned fit, at ``(epsilon, delta) = (1, 1e-9)``.

There is no raw Adult table here (``PGMPY_DP_ADULT``, default /work/shared/data, holds the private-pgm integer
codes), so a **raw-typed** Adult is built from the codes: the numeric columns (age, fnlwgt, capital-gain,
capital-loss, hours-per-week) stay integers (their codes, bounds ``(0, size - 1)`` from adult-domain.json); every
categorical column becomes strings (workclass code 3 -> ``"w3"``: the column's first letter and the code); about 2%
of occupation is set to NaN (fixed seed 12345). Both routes use ``PrivateSynthesizer(epsilon=1, delta=1e-9,
random_state=seed)`` with the default method and the same bin count:

- **A, only public facts declared** (three lines of user code): ``Domain(states, bounds=..., integer=...,
  missing={"occupation": ...}, n_bins=10)``; the categorical states are declared publicly from adult-domain.json
  (not discovered), the numeric columns' edges are chosen privately under ``schema_share`` (0.1) of the loss;
  ``fit(raw, domain=schema)`` then ``sample(n)`` decodes to integers within the private bins.
- **B, hand-binned**: the same declarations with public equal-width edges over the same bounds (``bins=``, the
  whole loss to the method); ``sample(n)`` decodes to integers within the equal-width bins.

Measured per seed: the mean 3-way L1 (sum of absolute differences of the normalised counts, 0..2) over 300 random
triples of the 14 columns (fixed seed 0), the decoded synthetic table and the real one both re-binned by the public
equal-width edges (NaN its own state); each numeric column's 1-D Wasserstein distance between the real column and
the decoded synthetic column; CPU seconds (``time.process_time``) and wall seconds per fit.

Run: ``cd benchmarks && PYTHONPATH=$PWD/.. python raw_adult.py`` (``--seeds 5``; a fit is 20-40 CPU-s);
writes ``benchmarks/results/raw_adult.csv`` (one row per seed and route, appended as each fit ends) and prints
mean +- standard error per route.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import wasserstein_distance

import harness
import pgmpy_dp
from pgmpy_dp.privacy.declarations import equal_width_edges

DATA = Path(os.environ.get("PGMPY_DP_ADULT", "/work/shared/data"))
NUMERIC = ("age", "fnlwgt", "capital-gain", "capital-loss", "hours-per-week")
MISSING = "Missing"


def raw_adult(sizes: dict) -> tuple[pd.DataFrame, dict]:
    """The raw-typed Adult (integers, strings, NaN in ~2% of occupation) and the categorical columns' public states."""
    codes = pd.read_csv(DATA / "adult.csv")
    raw, states = codes.copy(), {}
    for col in codes.columns:
        if col in NUMERIC:
            continue
        states[col] = [f"{col[0]}{k}" for k in range(sizes[col])]
        raw[col] = np.asarray(states[col], dtype=object)[codes[col].to_numpy()]
    nan = np.random.default_rng(12345).random(len(raw)) < 0.02
    raw.loc[nan, "occupation"] = np.nan
    return raw, states


def binned(frame: pd.DataFrame, states: dict, edges: dict) -> np.ndarray:
    """Each column as codes: numeric columns by the public equal-width edges, categoricals by their states, NaN last."""
    out = np.empty((len(frame), len(frame.columns)), dtype=np.int64)
    for j, col in enumerate(frame.columns):
        x = frame[col]
        if col in NUMERIC:
            e = np.asarray(edges[col])
            out[:, j] = np.clip(np.searchsorted(e, x.to_numpy(float), side="right") - 1, 0, len(e) - 2)
        else:
            code = pd.Categorical(x, categories=states[col]).codes.astype(np.int64)
            out[:, j] = np.where(code < 0, len(states[col]), code)
    return out


def l1_3way(real: np.ndarray, synth: np.ndarray, triples, sizes: np.ndarray) -> float:
    """Mean L1 distance of the normalised 3-way counts over ``triples``."""
    total = 0.0
    for t in triples:
        shape = sizes[list(t)]
        p = np.bincount(np.ravel_multi_index(real[:, t].T, shape), minlength=shape.prod()) / len(real)
        q = np.bincount(np.ravel_multi_index(synth[:, t].T, shape), minlength=shape.prod()) / len(synth)
        total += np.abs(p - q).sum()
    return total / len(triples)


def main(argv=None) -> None:
    ap = harness.parser(__doc__, out="raw_adult")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--bins", type=int, default=10)
    ap.add_argument("--triples", type=int, default=300)
    ap.add_argument("--share", type=float, default=0.1)
    ap.add_argument("--summary-only", action="store_true", help="only summarise the results file already written")
    args = harness.parse(ap, argv, seeds=1, triples=30)
    sizes = json.loads((DATA / "adult-domain.json").read_text())
    raw, states = raw_adult(sizes)
    bounds = {c: (0, sizes[c] - 1) for c in NUMERIC}
    edges = {c: equal_width_edges(bounds[c], args.bins, integer=True) for c in NUMERIC}
    every = {**{c: list(range(len(e) - 1)) for c, e in edges.items()}, **states}
    size = np.array([len(every[c]) + (c == "occupation") for c in raw.columns])
    real = binned(raw, states, edges)
    all_triples = list(itertools.combinations(range(len(raw.columns)), 3))
    pick = np.random.default_rng(0).choice(len(all_triples), min(args.triples, len(all_triples)), replace=False)
    triples = [list(all_triples[i]) for i in pick]
    path = harness.result_path(args.out)
    if args.summary_only:
        return summarize(path)
    path.unlink(missing_ok=True)
    for seed in range(args.seed, args.seed + args.seeds):
        for route in ("A public facts, private bins", "B hand-binned equal width"):
            cpu, wall = time.process_time(), time.perf_counter()
            if route.startswith("A"):  # the user's three lines
                schema = pgmpy_dp.Domain(states, bounds=bounds, integer=NUMERIC, missing={"occupation": MISSING},
                                         n_bins=args.bins)
                synth = pgmpy_dp.PrivateSynthesizer(epsilon=1.0, delta=1e-9, random_state=seed,
                                                    schema_share=args.share).fit(raw, domain=schema)
            else:
                schema = pgmpy_dp.Domain(states, bins=edges, bounds=bounds, integer=NUMERIC,
                                         missing={"occupation": MISSING})
                synth = pgmpy_dp.PrivateSynthesizer(epsilon=1.0, delta=1e-9, random_state=seed).fit(raw, domain=schema)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            sample = synth.sample(len(raw), random_state=seed)
            row = {"route": route, "seed": seed, "epsilon": 1.0, "delta": 1e-9, "n_bins_asked": args.bins,
                   "schema_share": args.share if route.startswith("A") else 0.0,
                   "method": getattr(synth, "method_", synth.method), "triples": len(triples),
                   "l1_3way": l1_3way(real, binned(sample, states, edges), triples, size),
                   "fit_cpu_s": cpu, "fit_wall_s": wall}
            for col in NUMERIC:
                row[f"w_{col}"] = wasserstein_distance(raw[col].to_numpy(float), sample[col].to_numpy(float))
                row[f"bins_{col}"] = len(synth.domain_.bins[col]) - 1
            harness.append_rows([row], path)
            print(f"seed {seed} {route}: L1 {row['l1_3way']:.4f}, {cpu:.1f} CPU-s", flush=True)
    print(f"wrote {path}")
    summarize(path)


def summarize(path: Path) -> None:
    """Mean +- standard error per route over the seeds in ``path``, and the two targets' ratios."""
    frame = pd.read_csv(path)
    frame = frame[frame.groupby("seed").route.transform("nunique") == 2]  # seeds with both routes only
    values = ["l1_3way", *[f"w_{c}" for c in NUMERIC], "fit_cpu_s"]
    grouped = frame.groupby("route")[values]
    mean, se = grouped.mean(), grouped.std() / np.sqrt(grouped.count())
    print(f"{len(frame.seed.unique())} seed(s), mean +- SE:")
    print(pd.DataFrame({v: [f"{m:.4g} +- {s:.2g}" for m, s in zip(mean[v], se[v])] for v in values},
                       index=mean.index).T.to_string())
    a, b = mean.iloc[0], mean.iloc[1]
    print(f"A / B 3-way L1: {a.l1_3way / b.l1_3way:.3f} (target <= 1.05)")
    paired = frame.pivot(index="seed", columns="route")
    for col in NUMERIC:
        lower = int((paired[f"w_{col}"].iloc[:, 0] < paired[f"w_{col}"].iloc[:, 1]).sum())
        print(f"{col}: A / B Wasserstein {a[f'w_{col}'] / b[f'w_{col}']:.3f} (target < 1), "
              f"A lower in {lower}/{len(paired)} seeds")


if __name__ == "__main__":
    main()
