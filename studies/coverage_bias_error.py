"""The normal band with and without the bias's Monte Carlo error, scored on the same coverage rows (issue 14).

``query_interval``'s normal band is ``centre ± m s_hat`` with ``centre = 2 p_hat - mean(refits)``. Until
issue 14's twelfth round the multiplier ``m`` was Student's ``t`` for ``B - 1`` degrees of freedom; it is
now ``t sqrt(1 + 1/B)``, because the centre also carries the error of the bias, a mean of ``B`` refits
(benchmarks/rules/issue14_bias_error.md). Both bands are deterministic functions of a coverage row's
``estimate``, ``boot_mean``, ``boot_sd`` and ``n_refits``, so this script recomputes both for every
normal-band row of the given runs (whichever code wrote them), checks that one of them is the band
the run scored (``scored_is_old_or_new``), and prints coverage and mean width per (model, N, epsilon, kind).
``--rule`` applies the rule's parts (a)-(c) and the minimum of 30 repetitions per cell.

Run:  python benchmarks/coverage_bias_error.py cov14n_fresh --rule       # the judged fresh check
      python benchmarks/coverage_bias_error.py cov14k_run cov14m_run cov14n_child cov14n_alarm cov14n_alarm2

Runs older than the refits' moments (``results/coverage.csv.gz``) cannot be rescored: their clipped
bands do not give the centre back.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special

from pgmpy_dp.uncertainty import _band_t

RESULTS = Path(__file__).parent / "results"
CELL = ["model", "N", "epsilon"]
TARGET = (0.93, 0.97)


def read(name: str) -> pd.DataFrame:
    path = RESULTS / f"{name}.csv"
    if not path.exists():
        path = RESULTS / f"{name}.csv.gz"
    df = pd.read_csv(path)
    return df[(df["rule"] == "normal") & df["truth"].notna()].assign(run=name)


def bands(df: pd.DataFrame) -> pd.DataFrame:
    """Old (``t``) and new (``t sqrt(1 + 1/B)``) bands of each row, and whether each covers the truth."""
    if "boot_mean" not in df or df["boot_mean"].isna().any():
        raise SystemExit(f"run {df['run'].iat[0]!r} has rows without the refits' moments (boot_mean, boot_sd, "
                         "n_refits): it predates them, and its clipped bands cannot be rebuilt")
    b = df["n_refits"].to_numpy(dtype=int)
    old = special.stdtrit(np.maximum(b - 1, 1), 0.975) * df["boot_sd"]
    new = np.array([_band_t(int(n), 0.025) for n in b]) * df["boot_sd"]  # the library's own multiplier
    centre = 2 * df["estimate"] - df["boot_mean"]
    out = df.assign(
        old_lo=np.clip(centre - old, 0, 1), old_hi=np.clip(centre + old, 0, 1),
        new_lo=np.clip(centre - new, 0, 1), new_hi=np.clip(centre + new, 0, 1),
    )
    return _score(out)


def _score(out: pd.DataFrame) -> pd.DataFrame:
    eps = 1e-12
    return out.assign(
        old_cov=(out["truth"] >= out["old_lo"] - eps) & (out["truth"] <= out["old_hi"] + eps),
        new_cov=(out["truth"] >= out["new_lo"] - eps) & (out["truth"] <= out["new_hi"] + eps),
        old_w=out["old_hi"] - out["old_lo"], new_w=out["new_hi"] - out["new_lo"],
    )


def table(scored: pd.DataFrame) -> pd.DataFrame:
    g = scored.groupby(["run"] + CELL + ["kind"])
    out = pd.DataFrame({
        "reps": g["rep"].nunique(), "states": g.size(),
        "old": g["old_cov"].mean(), "new": g["new_cov"].mean(),
        "old_width": g["old_w"].mean(), "new_width": g["new_w"].mean(),
    })
    out["width_ratio"] = out["new_width"] / out["old_width"]
    covered = scored["covered"].astype(bool)
    # per row: the band the run scored is one of the two recomputed ones, for every row of the group
    out["scored_is_old_or_new"] = (
        scored.assign(old_ok=covered == scored["old_cov"], new_ok=covered == scored["new_cov"])
        .groupby(["run"] + CELL + ["kind"])[["old_ok", "new_ok"]].all().any(axis=1)
    )
    return out.reset_index()


def rule(t: pd.DataFrame, min_reps: int = 30) -> dict:
    inside = lambda c: (c >= TARGET[0]) & (c <= TARGET[1])  # noqa: E731
    left = inside(t["old"]) & ~inside(t["new"])
    parts = {
        "min_reps": int(t["reps"].min()),
        "finished": bool(t["reps"].min() >= min_reps),
        "a_pairs_leaving": int(left.sum()),
        "b_pairs_inside_old": int(inside(t["old"]).sum()),
        "b_pairs_inside_new": int(inside(t["new"]).sum()),
        "c_max_width_ratio": float(t["width_ratio"].max()),
    }
    parts["a"] = parts["a_pairs_leaving"] == 0
    parts["b"] = parts["b_pairs_inside_new"] >= parts["b_pairs_inside_old"]
    parts["c"] = parts["c_max_width_ratio"] <= 1.03
    parts["keep"] = parts["a"] and parts["b"] and parts["c"]
    return parts


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="coverage CSVs in results/, without .csv or .csv.gz")
    ap.add_argument("--rule", action="store_true", help="apply benchmarks/rules/issue14_bias_error.md's parts (a)-(c)")
    args = ap.parse_args(argv)
    t = table(pd.concat([bands(read(r)) for r in args.runs], ignore_index=True))
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print(t.round(4).to_string(index=False))
    if args.rule:
        for k, v in rule(t).items():
            print(f"{k}: {v}")


if __name__ == "__main__":
    main()
