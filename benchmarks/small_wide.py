"""The synthesizer on wide tables: our default (AIM) against our MST on bnlearn networks of 56 and more columns.

Data: ``--rows`` (default 20,000) records forward-sampled from each of pgmpy's example networks
(``--nets``, default hailfinder with 56 columns and win95pts with 76), their states the public domain.
Budget: epsilon ``--eps`` (default 1) with delta 1e-9. Each method is one ``PrivateSynthesizer`` fit
(``random_state`` = trial); ``--max-seconds`` passes AIM's time cap (default: none, the default fit).

Score: mean L1 between the normalised 3-way tables of ``--rows`` synthetic records and of the data over 300
random triples (the same triples for every method of a network and trial); CPU seconds (``process_time``)
and wall seconds of the fit.

Writes ``results/<out>.csv`` (one row per network, method and trial) and prints it.

Run:  python benchmarks/small_wide.py                      # hailfinder and win95pts, AIM and MST, trial 0
      python benchmarks/small_wide.py --nets andes         # 223 binary columns
      python benchmarks/small_wide.py --quick              # 2,000 rows of hailfinder, AIM capped at 30 s
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from harness import network_sample, parse, parser, quiet, write_csv

from pgmpy_dp import Domain, PrivateSynthesizer


def three_way_l1(real: pd.DataFrame, synth: pd.DataFrame, dom: Domain, triples) -> float:
    """Mean L1 of the normalised 3-way tables of ``synth`` against ``real`` over ``triples``."""
    a, b = dom.encode(real, show_progress=False), dom.encode(synth, show_progress=False)
    errors = []
    for t in triples:
        shape = dom.shape(t)
        p = np.bincount(np.ravel_multi_index([a[v] for v in t], shape), minlength=int(np.prod(shape)))
        q = np.bincount(np.ravel_multi_index([b[v] for v in t], shape), minlength=int(np.prod(shape)))
        errors.append(np.abs(p / p.sum() - q / q.sum()).sum())
    return float(np.mean(errors))


def fit_and_score(df: pd.DataFrame, dom: Domain, method: str, eps: float, trial: int, triples, rows: int,
                  **extra) -> dict:
    """One seeded fit of ``method`` at ``(eps, 1e-9)``: its CPU and wall seconds and the 3-way L1 of ``rows`` synthetic records."""
    cpu, wall = time.process_time(), time.perf_counter()
    with quiet():
        s = PrivateSynthesizer(eps, delta=1e-9, method=method, random_state=trial, show_progress=False, **extra)
        s.fit(df, domain=dom)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    with quiet():
        synth = s.sample(rows, random_state=trial)
    return {"method": method, "ran": s.method_, "rounds": s.n_rounds_, "l1_3way": three_way_l1(df, synth, dom, triples),
            "cpu_s": round(cpu, 1), "wall_s": round(wall, 1)}


def run(net_name: str, rows: int, eps: float, trial: int, methods, max_seconds) -> list[dict]:
    net, df = network_sample(net_name, rows, seed=trial)
    dom = Domain({v: list(net.states[v]) for v in df.columns})
    rng = np.random.default_rng([trial, 300])
    triples = [tuple(rng.choice(list(df.columns), 3, replace=False)) for _ in range(300)]
    out = []
    for method in methods:
        extra = {"max_seconds": max_seconds} if method == "aim" and max_seconds else {}
        out.append({"net": net_name, "columns": df.shape[1], "rows": rows, "eps": eps, "trial": trial,
                    "max_seconds": max_seconds, **fit_and_score(df, dom, method, eps, trial, triples, rows, **extra)})
        print(out[-1], flush=True)
    return out


def main(argv=None) -> pd.DataFrame:
    ap = parser(__doc__, "small_wide")
    ap.add_argument("--nets", nargs="+", default=["hailfinder", "win95pts"])
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--trials", type=int, default=1)
    ap.add_argument("--methods", nargs="+", default=["mst", "aim"])
    ap.add_argument("--max-seconds", type=float, default=None)
    args = parse(ap, argv, nets=["hailfinder"], rows=2_000, max_seconds=30.0)
    rows = [r for net in args.nets for trial in range(args.seed, args.seed + args.trials)
            for r in run(net, args.rows, args.eps, trial, args.methods, args.max_seconds)]
    frame = pd.DataFrame(rows)
    write_csv(frame, args.out)
    print(frame.to_string(index=False))
    return frame


if __name__ == "__main__":
    main()
