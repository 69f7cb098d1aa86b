"""``method="auto"`` (MST beyond 20 columns or below a noisy 20,000 records, else AIM) beside AIM and MST, in one run.

Tables (``--tables``): ``breast_cancer`` (scikit-learn's 569 rows, 31 columns; every feature in 10 equal-width
bins over its published range, as tests/synthesis/test_thin.py), ``adult1000``, ``adult2000``, ``adult5000``,
``adult10000`` (seeded subsamples of Adult, 14 columns, its public domain), ``hailfinder`` (20,000 records forward-sampled from bnlearn's
hailfinder, 56 columns; AIM capped by ``max_seconds`` = ``--cap``, default 120, passed to ``auto`` as well,
which runs MST there and leaves it unused) and ``adult`` (all 48,842 rows of Adult, uncapped).
Budget: epsilon ``--eps`` (default 1) with delta 1e-9; ``random_state`` = trial (the subsample's and the
network sample's seed too).

Score: mean L1 between the normalised 3-way tables of as many synthetic records as the table has and of
the data, over 300 random triples (the same for every method of a table and trial); CPU seconds
(``process_time``) and wall seconds of the fit.

Writes ``results/<out>.csv`` (one row per table, method and trial) and ``results/<out>_summary.csv`` (mean and
standard error per table and method; ``auto_ok``: auto's mean is within two standard errors of the
difference of the better of AIM and MST) and prints both.

Run:  python benchmarks/auto_rule.py --trials 2
      python benchmarks/auto_rule.py --quick        # breast cancer and hailfinder at 2,000 rows, 1 trial
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from harness import load_adult, network_sample, parse, parser, write_csv
from small_wide import fit_and_score

from pgmpy_dp import Domain

DATA = Path("/work/shared/data")


def load(table: str, trial: int, rows: int):
    """``(DataFrame, Domain, max_seconds for AIM)`` of one table."""
    if table == "breast_cancer":
        from sklearn import datasets

        bc = datasets.load_breast_cancer(as_frame=True)
        bins = {c: list(np.linspace(math.floor(bc.frame[c].min()), math.ceil(bc.frame[c].max()), 11))
                for c in bc.feature_names}
        return bc.frame[list(bc.feature_names) + ["target"]], Domain({"target": [0, 1]}, bins=bins)
    if table == "adult" or table.startswith("adult") and table[5:].isdigit():
        codes, sizes = load_adult(DATA, rows=int(table[5:]) if table != "adult" else None, seed=trial)
        return codes, Domain({a: list(range(k)) for a, k in sizes.items()})
    net, df = network_sample(table, rows, seed=trial)
    return df, Domain({v: list(net.states[v]) for v in df.columns})


def run(table: str, trial: int, eps: float, methods, cap: float, rows: int) -> list[dict]:
    df, dom = load(table, trial, rows)
    capped = table != "breast_cancer" and not table.startswith("adult")
    rng = np.random.default_rng([trial, 300])
    triples = [tuple(rng.choice(list(dom.attrs), 3, replace=False)) for _ in range(300)]
    out = []
    for method in methods:
        extra = {"max_seconds": cap} if capped and method in ("aim", "auto") else {}
        out.append({"table": table, "columns": len(dom.attrs), "rows": len(df), "eps": eps, "trial": trial,
                    "max_seconds": extra.get("max_seconds"),
                    **fit_and_score(df, dom, method, eps, trial, triples, len(df), **extra)})
        print(out[-1], flush=True)
    return out


def summarise(frame: pd.DataFrame) -> pd.DataFrame:
    g = frame.groupby(["table", "method"])["l1_3way"]
    s = pd.DataFrame({"mean": g.mean(), "se": g.std(ddof=1) / np.sqrt(g.count()), "n": g.count(),
                      "cpu_s": frame.groupby(["table", "method"])["cpu_s"].mean()}).reset_index()
    verdicts = []
    for table, t in s.groupby("table"):
        t = t.set_index("method")
        if not {"aim", "mst", "auto"} <= set(t.index):
            continue
        best = t.loc[["aim", "mst"], "mean"].idxmin()
        gap = t.loc["auto", "mean"] - t.loc[best, "mean"]
        tol = 2 * math.hypot(t.loc["auto", "se"], t.loc[best, "se"])
        verdicts.append({"table": table, "best": best, "auto_minus_best": gap, "two_se": tol, "auto_ok": bool(gap <= (tol if np.isfinite(tol) else 0.0))})
    columns = ["table", "best", "auto_minus_best", "two_se", "auto_ok"]  # none when a method was not run
    return s.merge(pd.DataFrame(verdicts, columns=columns), on="table", how="left")


def main(argv=None) -> pd.DataFrame:
    ap = parser(__doc__, "auto_rule")
    ap.add_argument("--tables", nargs="+", default=["breast_cancer", "adult1000", "adult2000", "adult5000",
                                                       "adult10000", "hailfinder", "adult"])
    ap.add_argument("--rows", type=int, default=20_000, help="records of a network sample")
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--methods", nargs="+", default=["aim", "mst", "auto"])
    ap.add_argument("--cap", type=float, default=120.0)
    args = parse(ap, argv, tables=["breast_cancer", "hailfinder"], rows=2_000, trials=1, cap=30.0)
    rows = [r for table in args.tables for trial in range(args.seed, args.seed + args.trials)
            for r in run(table, trial, args.eps, args.methods, args.cap, args.rows)]
    frame = pd.DataFrame(rows)
    write_csv(frame, args.out)
    summary = summarise(frame)
    write_csv(summary, args.out + "_summary")
    print(frame.to_string(index=False))
    print(summary.to_string(index=False))
    return frame


if __name__ == "__main__":
    main()
