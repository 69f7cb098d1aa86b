"""Individual-level releases: the cost of contribution bounding and its bias/noise trade-off.

Two measurements, on synthetic "users" with heavy-tailed activity (rows per user
1 + Pareto(1.2), capped at 200) whose behaviour depends on their activity: light
users favour the low states of a pair table (x, y), heavy users the high ones.

1. **Speed** (ratios, interleaved in one run): ``release_from_codes`` of 10 pairwise
   tables at record level, with ``contribution="normalize"`` and with ``"clip"``
   (``max_records_per_user=8``), on 1e5 and 1e6 rows; best of ``--repeat``.
2. **Accuracy**: total variation distance between the released (x, y) table
   (clipped at 0, normalised) and two targets: the distribution of *rows*
   (what a record-level analysis estimates) and the *per-individual average*
   (each user's own distribution, averaged over users: what normalisation
   estimates). Record level is listed for reference only: it protects one row,
   so a user with ``r`` rows is protected at ``r * epsilon``, not ``epsilon``.

Run:  python benchmarks/user_level.py            (about 3 minutes on 2 cores; ``--quick``: smaller sizes)
Writes benchmarks/results/user_level.csv: the speed rows (``experiment="speed"``) and the mean accuracy per
(users, epsilon, mode) over seeds (``experiment="accuracy"``).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

import harness
from pgmpy_dp import Domain
from pgmpy_dp.tables import release_from_codes

STATES = 6


def population(n_users: int, seed: int):
    """Codes of x and y plus the user code of every row, heavy-tailed activity."""
    rng = np.random.default_rng(seed)
    rows = np.minimum(1 + np.floor(rng.pareto(1.2, n_users)).astype(np.int64), 200)
    units = np.repeat(np.arange(n_users), rows)
    # heavier users lean towards the high states: a per-user tilt from log(activity)
    tilt = np.log(rows)[units] / np.log(200)
    base = np.arange(STATES) / (STATES - 1)
    logits = 3.0 * (tilt[:, None] - 0.3) * (base[None, :] - 0.5)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    x = (p.cumsum(axis=1) > rng.random(len(units))[:, None]).argmax(axis=1)
    y = np.where(rng.random(len(units)) < 0.7, x, rng.integers(0, STATES, len(units)))
    return {"x": x, "y": y}, units


def targets(codes, units):
    cell = codes["x"] * STATES + codes["y"]
    rows = np.bincount(cell, minlength=STATES * STATES) / len(cell)
    k = np.bincount(units)
    per_user = np.bincount(cell, weights=1.0 / k[units], minlength=STATES * STATES)
    return rows, per_user / per_user.sum()


def tv(table: np.ndarray, target: np.ndarray) -> float:
    p = np.clip(table.ravel(), 0, None)
    p = p / p.sum() if p.sum() > 0 else np.full(p.size, 1.0 / p.size)
    return 0.5 * float(np.abs(p - target).sum())


def speed(repeat: int, sizes, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    dom = Domain({f"v{i}": list(range(8)) for i in range(11)})
    tables = [(f"v{i}", f"v{i + 1}") for i in range(10)]
    out = []
    for n in sizes:
        codes = {a: rng.integers(0, 8, n) for a in dom.attrs}
        units = rng.integers(0, n // 20, n)
        modes = {
            "record": {},
            "normalize": {"units": units},
            "clip(8)": {"units": units, "contribution": "clip", "max_records_per_user": 8},
        }
        best = {m: np.inf for m in modes}
        for _ in range(repeat):  # interleaved: load changes hit every mode alike
            for m, kw in modes.items():
                t0 = time.perf_counter()
                release_from_codes(codes, dom, tables, 1.0, random_state=0, **kw)
                best[m] = min(best[m], time.perf_counter() - t0)
        for m in modes:
            out.append({"rows": n, "mode": m, "seconds": best[m], "ratio_to_record": best[m] / best["record"]})
    return pd.DataFrame(out)


def accuracy(seeds: int, users, first_seed: int = 0) -> pd.DataFrame:
    dom = Domain({"x": list(range(STATES)), "y": list(range(STATES))})
    modes = {
        "record (protects rows only)": {},
        "normalize": {"contribution": "normalize"},
        "clip(1)": {"contribution": "clip", "max_records_per_user": 1},
        "clip(4)": {"contribution": "clip", "max_records_per_user": 4},
        "clip(16)": {"contribution": "clip", "max_records_per_user": 16},
    }
    out = []
    for n_users in users:
        for seed in range(first_seed, first_seed + seeds):
            codes, units = population(n_users, seed)
            rows, per_user = targets(codes, units)
            for eps in (0.1, 1.0):
                for m, kw in modes.items():
                    extra = {"units": units, **kw} if kw else {}
                    rel = release_from_codes(codes, dom, [("x", "y")], eps, random_state=1000 + seed, **extra)
                    t = rel[("x", "y")].values
                    out.append({
                        "users": n_users, "rows": len(units), "seed": seed, "epsilon": eps, "mode": m,
                        "tv_rows": tv(t, rows), "tv_per_user": tv(t, per_user),
                    })
    return pd.DataFrame(out)


def main(argv=None):
    ap = harness.parser(__doc__, out="user_level")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--rows", type=int, nargs="+", default=[10**5, 10**6], help="rows of the speed measurement")
    ap.add_argument("--users", type=int, nargs="+", default=[10**3, 10**4, 10**5], help="users of the accuracy one")
    args = harness.parse(ap, argv, repeat=2, seeds=2, rows=[10**5], users=[10**3, 10**4])
    sp = speed(args.repeat, args.rows, args.seed)
    print(sp.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    acc = accuracy(args.seeds, args.users, args.seed)
    summary = acc.groupby(["users", "epsilon", "mode"], sort=False)[["tv_rows", "tv_per_user"]].mean().reset_index()
    summary["seeds"] = args.seeds
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    harness.write_csv(pd.concat([sp.assign(experiment="speed"), summary.assign(experiment="accuracy")],
                                ignore_index=True), args.out)


if __name__ == "__main__":
    main()
