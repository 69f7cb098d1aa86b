"""Throughput of ``df.dp.release`` against the counting limit, side by side in one run.

For alarm-sampled data at 1e5 and 1e6 rows, times (best of ``--repeat``):

* ``release``: ``df.dp.release`` of all 37 alarm family tables (encoding, counting, noise);
* ``bincount``: a bare ``np.bincount`` per table over the mixed-radix index of pre-encoded
  integer codes (the limit: no validation, no encoding, no noise);
* ``groupby``: pandas ``df.groupby(family, observed=False).size()`` per table.

The 1e6-row frame repeats a 1e5-row sample ten times (counting cost does not
depend on the distribution and forward sampling 1e6 rows takes minutes).

Run:  python benchmarks/counting.py            (``--quick``: 2e4 rows, best of 2)
Writes ``results/counting.csv``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import harness
import pgmpy_dp  # noqa: F401  (registers df.dp)


def main(argv=None):
    ap = harness.parser(__doc__, out="counting")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    args = harness.parse(ap, argv, repeat=2, rows=[20_000])

    rows = []
    for n in args.rows:
        network, df = harness.network_sample("alarm", n, seed=args.seed)
        families = [(v, *sorted(network.get_parents(v))) for v in network.nodes()]
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

        t = {name: harness.best_time(fn, args.repeat) for name, fn in
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
    harness.write_csv(table, args.out)
    cols = ["rows", "bincount_s", "release_s", "groupby_s", "release_vs_bincount", "groupby_vs_release"]
    print(table[cols].to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    print("\nrelease rows/s:", ", ".join(f"{r['rows']:.0e}: {r['release_rows_per_s']:.3g}" for r in rows))
    print("target: release within 1.5x of the bare bincount limit at 1e6 rows")


if __name__ == "__main__":
    main()
