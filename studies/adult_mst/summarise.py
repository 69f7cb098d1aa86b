"""Tables for README.md from results/*.csv (and, with --tables, a per-tree-edge diagnosis of one seed).

    /work/venv/bin/python -m studies.adult_mst.summarise            # main table, per-attribute errors
    OMP_NUM_THREADS=1 /work/venv/bin/python -m studies.adult_mst.summarise --tables   # refits seed 0
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from .mst_measurements import HERE, contingency, load_adult, mst_measurements

RESULTS = HERE / "results"


def markdown(df: pd.DataFrame, index: bool = False) -> str:
    """A pipe table (pandas' to_markdown needs tabulate, which the venv lacks)."""
    if index:
        df = df.reset_index()
    fmt = lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def _pm(x: pd.Series) -> str:
    return f"{x.mean():.4f} +- {x.sem():.4f}" if len(x) > 1 else f"{x.mean():.4f}"


def main_table() -> pd.DataFrame:
    df = pd.concat([pd.read_csv(p) for p in sorted(RESULTS.glob("main*.csv")) if "marginals" not in p.name])
    df = df.drop_duplicates(["seed", "config"], keep="last")
    g = df.groupby("config")
    out = pd.DataFrame({
        "seeds": g.size(), "3-way L1": g.l1_3way.apply(_pm), "2-way L1": g.l1_2way.apply(_pm),
        "EM iters": g.n_iter.mean().round(0).astype(int), "CPU s": g.cpu_seconds.mean().round(1),
        "N used": g.n_records.mean().round(0).astype(int),
    })
    return out.sort_values("3-way L1")


def paired(pairs=(("cgm-em-nodes", "mbi-1000"), ("cgm-em-nodes-it100", "mbi-1000"), ("cgm-em", "mbi-1000"),
                   ("cgm-em-nodes", "cgm-em"))) -> pd.DataFrame:
    """Per-seed differences of 3-way and 2-way L1 between two configurations (same measurements)."""
    df = pd.concat([pd.read_csv(p) for p in sorted(RESULTS.glob("main*.csv")) if "marginals" not in p.name])
    df = df.drop_duplicates(["seed", "config"], keep="last").set_index(["config", "seed"])
    rows = []
    for a, b in pairs:
        seeds = sorted(set(df.loc[a].index) & set(df.loc[b].index))
        d3 = df.loc[a].loc[seeds].l1_3way - df.loc[b].loc[seeds].l1_3way
        d2 = df.loc[a].loc[seeds].l1_2way - df.loc[b].loc[seeds].l1_2way
        rows.append({"A - B": f"{a} - {b}", "seeds": len(seeds), "3-way": _pm(d3), "2-way": _pm(d2)})
    return pd.DataFrame(rows)


def per_attribute(configs=("cgm-em", "cgm-em-nodes", "mbi-1000")) -> pd.DataFrame:
    """Mean 2-way L1 over the 13 pairs holding each attribute, per configuration (mean over seeds)."""
    df = pd.concat([pd.read_csv(p) for p in sorted(RESULTS.glob("main*_marginals.csv.gz"))])
    df = df.drop_duplicates(["seed", "config", "attrs"], keep="last")
    df = df[df.config.isin(configs) & (df["attrs"].str.count(r"\|") == 1)]
    _, sizes = load_adult()
    rows = []
    for a, k in sizes.items():
        sub = df[df["attrs"].str.split("|").apply(lambda x: a in x)]
        rows.append({"attribute": a, "states": k, **sub.groupby("config").l1.mean().to_dict()})
    return pd.DataFrame(rows).sort_values("states", ascending=False)


def edge_tables(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per tree edge: cells, share of empty cells, and each fit's L1 and mass on the empty cells;
    per attribute: each fit's L1 on the 1-way marginal."""
    from .study import CONFIGS, fit_mbi, fit_ours

    df, sizes = load_adult()
    rel1, rel2, edges, _ = mst_measurements(seed)
    fits = {name: fit_ours([rel1, rel2], edges, sizes, CONFIGS[name])[0] for name in ("cgm-em", "cgm-em-nodes")}
    fits["mbi-1000"] = fit_mbi([rel1, rel2], edges, sizes, CONFIGS["mbi-1000"])[0]
    rows = []
    for e in edges:
        t = contingency(df, sizes, e)
        t /= t.sum()
        row = {"edge": " - ".join(e), "cells": t.size, "empty": round(float(np.mean(t == 0)), 2)}
        for name, pairs in fits.items():
            m = pairs[tuple(e)] if tuple(e) in pairs else pairs[tuple(e[::-1])].T
            m = np.clip(m, 0, None) / np.clip(m, 0, None).sum()
            row[f"L1 {name}"] = round(float(np.abs(m - t).sum()), 3)
            row[f"empty mass {name}"] = round(float(m[t == 0].sum()), 3)
        rows.append(row)
    ones = []
    for a, k in sizes.items():
        t = contingency(df, sizes, (a,))
        row = {"attribute": a, "states": k}
        for name, pairs in fits.items():
            e = next(e for e in pairs if a in e)
            m = np.clip(pairs[e], 0, None)
            m = m.sum(axis=1 - e.index(a))
            row[f"1-way L1 {name}"] = round(float(np.abs(m / m.sum() - t / t.sum()).sum()), 4)
        ones.append(row)
    return pd.DataFrame(rows), pd.DataFrame(ones)


def synthetic(name: str) -> pd.DataFrame | None:
    path = RESULTS / name
    if not path.exists():
        return None
    from .synthetic_check import summarise

    return summarise(pd.read_csv(path))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tables", action="store_true", help="refit seed 0 and print the per-edge diagnosis")
    args = p.parse_args(argv)
    print(markdown(main_table(), index=True))
    print()
    print(markdown(paired()))
    print()
    print(markdown(per_attribute()))
    for name in ("synthetic.csv", "synthetic_one_way.csv"):
        s = synthetic(name)
        if s is not None:
            print(f"\n{name}\n" + markdown(s))
    if args.tables:
        print()
        edges, ones = edge_tables()
        print(markdown(edges))
        print()
        print(markdown(ones))


if __name__ == "__main__":
    main()
