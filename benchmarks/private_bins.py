"""Private bin edges (DP quantiles of the data mixed with the uniform) against equal-width public bins, on Adult.

For each numeric column (``age``, ``hours-per-week``, ``capital-gain``: the integer codes of the Adult file
in ``PGMPY_DP_ADULT``, default /work/shared/data, with the public bounds ``(0, size - 1)`` of its domain file)
and each seed: the edges are chosen by ``pgmpy_dp.privacy.discovery.private_bin_edges`` under the share of the
loss the synthesizer gives each column (``schema_share`` of the rho of ``(epsilon, delta)``, split over the three
columns), or are ``n_bins`` equal-width bins within the bounds; "plain quantiles" is the same mechanism with the
uniform's weight set to 0 (the variant not adopted). Each record is then replaced by an integer drawn
uniformly within its bin (the exact bin counts, so only the edges differ), and the 1-D Wasserstein distance of
the drawn column to the real one is measured. Reported: mean and standard deviation over the seeds, the ratio
private / equal-width, the bins that came back, CPU seconds of the edge choice.

Then the same through the synthesizer (``--synth``, the issue's target): MST at ``(epsilon, delta)`` on Adult
(``fnlwgt`` and ``capital-loss`` left out, the other columns declared from the domain file), once with the three
columns' edges chosen privately (``bounds=``, ``schema_share``; the rest of the loss to MST) and once with
equal-width public bins of the same count (the whole loss to MST); each synthetic record's bin of those columns is
decoded to an integer drawn uniformly within it, and its Wasserstein distance to the real column is measured.

Run: ``python benchmarks/private_bins.py`` (about a minute; ``--quick``: two seeds, one bin count);
writes ``benchmarks/results/private_bins.csv`` and ``benchmarks/results/private_bins_synth.csv``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import wasserstein_distance

import harness
from pgmpy_dp.privacy import discovery
from pgmpy_dp.privacy.discovery import private_bin_edges
from pgmpy_dp.privacy.loss import ZCDP, ApproxDP

DATA = Path(os.environ.get("PGMPY_DP_ADULT", "/work/shared/data"))
COLUMNS = ("age", "hours-per-week", "capital-gain")


def drawn_within_bins(x: np.ndarray, edges, rng: np.random.Generator) -> np.ndarray:
    """Each value replaced by an integer drawn uniformly within its bin ``[a, b)``."""
    edges = np.asarray(edges, dtype=float)
    b = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2)
    lo, hi = np.ceil(edges[b]), np.ceil(edges[b + 1]) - 1  # the integers of [a, b)
    return np.floor(lo + rng.random(x.size) * (hi - lo + 1))


def run(epsilon: float, delta: float, share: float, n_bins: int, seeds: int) -> list[dict]:
    sizes = json.loads((DATA / "adult-domain.json").read_text())
    df = pd.read_csv(DATA / "adult.csv", usecols=list(COLUMNS))
    per_column = ZCDP(share * ApproxDP(epsilon, delta).rho / len(COLUMNS))
    rows = []
    for col in COLUMNS:
        x = df[col].to_numpy(dtype=float)
        bounds = (0, sizes[col] - 1)
        equal = np.linspace(bounds[0], bounds[1] + 1, n_bins + 1)
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            cpu, wall = time.process_time(), time.perf_counter()
            edges = private_bin_edges(x, bounds, n_bins, per_column, integer=True, random_state=seed)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            adopted, discovery.UNIFORM_WEIGHT = discovery.UNIFORM_WEIGHT, 0.0
            try:
                plain = private_bin_edges(x, bounds, n_bins, per_column, integer=True, random_state=seed)
            finally:
                discovery.UNIFORM_WEIGHT = adopted
            for name, e in (("private mixed quantiles", edges), ("plain quantiles", plain), ("equal width", equal)):
                rows.append({
                    "column": col, "seed": seed, "epsilon": epsilon, "delta": delta, "schema_share": share,
                    "rho_column": per_column.rho, "n_bins_asked": n_bins, "edges": name, "n_bins": len(e) - 1,
                    "wasserstein": wasserstein_distance(x, drawn_within_bins(x, e, rng)),
                    "cpu_s": cpu if name == "private mixed quantiles" else float("nan"),
                    "wall_s": wall if name == "private mixed quantiles" else float("nan"),
                })
    return rows


def synth_run(epsilon: float, delta: float, share: float, n_bins: int, seeds: int) -> list[dict]:
    from pgmpy_dp import Domain
    from pgmpy_dp.synthesis.synthesizer import PrivateSynthesizer

    sizes = json.loads((DATA / "adult-domain.json").read_text())
    df = pd.read_csv(DATA / "adult.csv").drop(columns=["fnlwgt", "capital-loss"])
    states = {c: list(range(sizes[c])) for c in df.columns if c not in COLUMNS}

    class Schema(Domain):  # the declarations a schema makes: bounds and integer columns
        bounds = {c: (0, sizes[c] - 1) for c in COLUMNS}
        integer = set(COLUMNS)
        discover = set()

    Schema.n_bins = n_bins

    equal = {c: list(np.linspace(0, sizes[c], n_bins + 1)) for c in COLUMNS}
    rows = []
    for seed in range(seeds):
        for name, domain in (("private mixed quantiles", Schema(states)), ("equal width", Domain(states, bins=equal))):
            cpu, wall = time.process_time(), time.perf_counter()
            synth = PrivateSynthesizer(epsilon=epsilon, delta=delta, method="mst", random_state=seed,
                                       schema_share=share, show_progress=False).fit(df, domain=domain)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            sample = synth.sample(len(df), random_state=seed)
            rng = np.random.default_rng(seed)
            for col in COLUMNS:
                edges = synth.domain_.bins[col]
                index = pd.Categorical(sample[col], categories=synth.domain_[col]).codes
                mid = (np.asarray(edges[:-1]) + np.asarray(edges[1:])) / 2  # a value inside each bin
                drawn = drawn_within_bins(mid[index], edges, rng)
                rows.append({"column": col, "seed": seed, "epsilon": epsilon, "delta": delta, "schema_share": share,
                             "n_bins_asked": n_bins, "edges": name, "n_bins": len(edges) - 1,
                             "wasserstein": wasserstein_distance(df[col].to_numpy(float), drawn),
                             "fit_cpu_s": cpu, "fit_wall_s": wall})
    return rows


def main(argv=None) -> None:
    ap = harness.parser(__doc__, out="private_bins")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--bins", type=int, nargs="+", default=[5, 10, 20])
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-9)
    ap.add_argument("--share", type=float, default=0.1)
    ap.add_argument("--synth", action=argparse.BooleanOptionalAction, default=True,
                    help="also measure through the synthesizer (MST on Adult)")
    args = harness.parse(ap, argv, seeds=2, bins=[10])
    rows = [r for k in args.bins for r in run(args.epsilon, args.delta, args.share, k, args.seeds)]
    frame = pd.DataFrame(rows)
    harness.write_csv(frame, args.out)
    summary = frame.groupby(["column", "n_bins_asked", "edges"]).agg(
        wasserstein=("wasserstein", "mean"), sd=("wasserstein", "std"), bins=("n_bins", "mean"),
        cpu_s=("cpu_s", "mean")).reset_index()
    wide = summary.pivot(index=["column", "n_bins_asked"], columns="edges", values="wasserstein")
    wide["ratio private / equal"] = wide["private mixed quantiles"] / wide["equal width"]
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(wide.to_string(float_format=lambda v: f"{v:.3g}"))
    if args.synth:
        frame = pd.DataFrame([r for k in args.bins for r in synth_run(args.epsilon, args.delta, args.share, k,
                                                                       args.seeds)])
        harness.write_csv(frame, f"{args.out}_synth")
        wide = frame.pivot_table(index=["column", "n_bins_asked"], columns="edges", values="wasserstein")
        wide["ratio private / equal"] = wide["private mixed quantiles"] / wide["equal width"]
        paired = frame.pivot_table(index=["column", "n_bins_asked", "seed"], columns="edges", values="wasserstein")
        wide["private lower (seeds)"] = (paired["private mixed quantiles"] < paired["equal width"]).groupby(
            level=[0, 1]).sum()
        print("through the synthesizer (MST):")
        print(wide.to_string(float_format=lambda v: f"{v:.3g}"))
        print(f"fit CPU-s total {frame.drop_duplicates(['seed', 'edges', 'n_bins_asked']).fit_cpu_s.sum():.1f}")


if __name__ == "__main__":
    main()
