"""Throughput of ``df.dp.release`` against the counting limit, side by side in one run.

For alarm-sampled data at 1e5 and 1e6 rows, times (best of ``--repeat``):

* ``release``: ``df.dp.release`` of all 37 alarm family tables (encoding, counting, noise);
* ``bincount``: a bare ``np.bincount`` per table over the mixed-radix index of pre-encoded
  integer codes (the limit: no validation, no encoding, no noise);
* ``groupby``: pandas ``df.groupby(family, observed=False).size()`` per table.

The 1e6-row frame repeats a 1e5-row sample ten times (counting cost does not
depend on the distribution and forward sampling 1e6 rows takes minutes).

Run:  python benchmarks/counting.py
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

import pgmpy_dp  # noqa: F401
from pgmpy_dp.datasets import load_network, sample_network

RESULTS = Path(__file__).parent / "results"


def best_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    args = parser.parse_args(argv)

    network = load_network("alarm")
    families = [(v, *sorted(network.get_parents(v))) for v in network.nodes()]
    base = sample_network(network, 100_000, seed=0)
    rows = []
    for n in args.rows:
        reps = -(-n // len(base))
        df = pd.concat([base] * reps, ignore_index=True).iloc[:n]
        codes = {c: df[c].cat.codes.to_numpy().astype(np.intp) for c in df.columns}
        card = {c: len(df[c].cat.categories) for c in df.columns}

        def bare():
            for fam in families:
                idx = codes[fam[0]].astype(np.int64)
                for a in fam[1:]:
                    idx = idx * card[a] + codes[a]
                np.bincount(idx, minlength=int(np.prod([card[a] for a in fam])))

        def release():
            df.dp.release(families, epsilon=1.0)

        def groupby():
            for fam in families:
                df.groupby(list(fam), observed=False).size()

        t = {name: best_time(fn, args.repeat) for name, fn in
             [("bincount", bare), ("release", release), ("groupby", groupby)]}
        rows.append(
            {
                "rows": n,
                "tables": len(families),
                **{f"{k}_s": v for k, v in t.items()},
                **{f"{k}_rows_per_s": n / v for k, v in t.items()},
                "release_vs_bincount": t["release"] / t["bincount"],
                "groupby_vs_release": t["groupby"] / t["release"],
            }
        )
    table = pd.DataFrame(rows)
    RESULTS.mkdir(exist_ok=True)
    table.to_csv(RESULTS / "counting.csv", index=False)
    cols = ["rows", "bincount_s", "release_s", "groupby_s", "release_vs_bincount", "groupby_vs_release"]
    print(table[cols].to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    print("\nrelease rows/s:", ", ".join(f"{r['rows']:.0e}: {r['release_rows_per_s']:.3g}" for r in rows))
    print("target: release within 2x of the bare bincount limit")


if __name__ == "__main__":
    main()
