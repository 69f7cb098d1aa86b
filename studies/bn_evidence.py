"""Issue 12 (bn12h): summarise the runs of ``prior_weight="evidence"`` against the pre-stated rules.

The runs come from ``bn_accuracy.py`` with ``lik:evidence`` refitted to the default's own noisy tables
(paired). The rules are in ``benchmarks/rules/issue12_evidence.md``:

* pilot (``--rule pilot``, runs 0-4 of 9 cells, ``results/bn_accuracy_t1_runs.csv``):
  go on iff on query L1 ``lik:evidence`` is lower in >= 5 of 9 cells and significantly worse in no more
  cells than significantly better, and on joint KL and weighted CPD L1 significantly worse in <= 1 cell each;
* subset (``--rule subset --method lik:weight-x0.3``, runs 15-19 of the 18 cells at N = 1e4, epsilon
  0.1/0.5/1, ``results/bn_accuracy_t4_runs.csv``): rule 3 of that file, (a) no cell significantly worse on
  joint KL, weighted CPD L1 or query L1, (b) lower mean in at least half the cells per metric.

    python benchmarks/bn_evidence.py --rule pilot results/bn_accuracy_t1_runs.csv
    python benchmarks/bn_evidence.py --weights     # the weights the evidence chose (results/bn_evidence_weights.csv)

Issue 12, bn12m (the weight capped at Jeffreys' ``2 / pi**2``, ``lik:cap-jeffreys``; rule in
``benchmarks/rules/issue12_cap.md``):

    python benchmarks/bn_evidence.py --cap-weights  # which grid cells the cap changes (results/bn_cap_weights.csv)
    python benchmarks/bn_evidence.py --rule cap --method lik:cap-jeffreys results/bn_accuracy_u2_runs.csv
    python benchmarks/bn_evidence.py --cap-kl       # where the cap moves joint KL (results/bn_cap_kl_parts.csv)

Issue 12, bn12u (the weight capped at the uniform Dirichlet's ``6 / pi**2``, ``lik:cap-uniform``; rule in
``benchmarks/rules/issue12_uniform_cap.md``):

    python benchmarks/bn_evidence.py --rule uniform-cap --method lik:cap-uniform results/bn_accuracy_v1_runs.csv

Issue 12, bn12d (Dirichlet priors on the CPD columns, ``lik:dirichlet-x0.5``; rule in
``benchmarks/rules/issue12_dirichlet.md``, judged on the full grid's fresh runs 40-49):

    python benchmarks/bn_evidence.py --rule dirichlet --method lik:dirichlet-x0.5 \
        results/bn_accuracy_w1_runs.csv results/bn_accuracy_w2_runs.csv

Issue 12, bn12s (where the weight's cap binds, the better of two CGM-EM starts; ``rules/issue12_best_start.md``):

    python benchmarks/bn_evidence.py --rule best-start --method lik:dirichlet-best-at-cap results/bn_accuracy_x1_runs.csv

prints, per cell, the relative change of the mean against the default (``*``: beyond two paired
standard errors) for ``lik:evidence`` and any other method in the file (e.g. ``mbi``), the counts
the rule reads, and its verdict.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from bn_accuracy import paired  # noqa: E402

METRICS = ("joint_kl", "cpd_l1_weighted", "query_l1")


def change_table(runs: pd.DataFrame, method: str, baseline: str = "default") -> pd.DataFrame:
    """Per cell and metric: relative change of the mean against ``baseline``, and its significance."""
    rows = None
    for metric in METRICS:
        p = paired(runs, method, baseline, metric)
        p[metric] = 100 * p["diff"] / p["baseline"]
        p[metric + "_sig"] = (p["diff"] > 2 * p["se"]).astype(int) - (p["diff"] < -2 * p["se"]).astype(int)
        p = p[["network", "records", "epsilon", "runs", metric, metric + "_sig"]]
        rows = p if rows is None else rows.merge(p, on=["network", "records", "epsilon", "runs"])
    return rows


def markdown(table: pd.DataFrame, method: str) -> str:
    lines = [f"| network | N | eps | runs | {method}: joint KL | weighted CPD L1 | query L1 |", "|---|---:|---:|---:|---:|---:|---:|"]
    for _, r in table.iterrows():
        cells = [f"{r[m]:+.1f}%{'*' if r[m + '_sig'] else ''}" for m in METRICS]
        lines.append(f"| {r.network} | {r.records:.0e} | {r.epsilon:g} | {r.runs} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def counts(table: pd.DataFrame) -> dict:
    """Per metric: cells, lower mean, significantly better, significantly worse."""
    return {m: dict(cells=len(table), lower=int((table[m] < 0).sum()), better=int((table[m + "_sig"] < 0).sum()),
                    worse=int((table[m + "_sig"] > 0).sum())) for m in METRICS}


def pilot_verdict(c: dict) -> tuple[bool, str]:
    q = c["query_l1"]
    ok_q = q["lower"] >= 5 and q["worse"] <= q["better"]
    ok_kl, ok_cpd = c["joint_kl"]["worse"] <= 1, c["cpd_l1_weighted"]["worse"] <= 1
    text = (f"(i) query L1: lower in {q['lower']}/{q['cells']} (need >= 5), significantly worse {q['worse']} vs better "
            f"{q['better']}: {'holds' if ok_q else 'fails'}; (ii) significantly worse: joint KL {c['joint_kl']['worse']}, "
            f"weighted CPD L1 {c['cpd_l1_weighted']['worse']} (each <= 1): {'holds' if ok_kl and ok_cpd else 'fails'}")
    return ok_q and ok_kl and ok_cpd, text


def subset_verdict(c: dict) -> tuple[bool, str]:
    ok_a = all(c[m]["worse"] == 0 for m in METRICS)
    ok_b = all(2 * c[m]["lower"] >= c[m]["cells"] for m in METRICS)
    text = ("(a) significantly worse cells: " + ", ".join(f"{m} {c[m]['worse']}" for m in METRICS)
            + f" (need 0 each): {'holds' if ok_a else 'fails'}; (b) lower mean: "
            + ", ".join(f"{m} {c[m]['lower']}/{c[m]['cells']}" for m in METRICS)
            + f" (need at least half each): {'holds' if ok_b else 'fails'}")
    return ok_a and ok_b, text


#: the pilot's cells (network, records, epsilon)
PILOT_CELLS = [("insurance", 10_000, 0.1), ("insurance", 10_000, 0.5), ("insurance", 10_000, 1.0),
               ("sachs", 10_000, 0.1), ("sachs", 10_000, 0.5), ("alarm", 10_000, 0.1), ("child", 10_000, 1.0),
               ("hepar2", 10_000, 0.1), ("alarm", 100_000, 1.0)]


def chosen_weights(cells=PILOT_CELLS, run=0, seed=1) -> pd.DataFrame:
    """Per cell and family: the prefit evidence weight over the global one, on the default's tables of ``run``,
    with the true CPD's parent-weighted conditional entropy over ``log(states)`` (0: deterministic, 1: uniform)."""
    import numpy as np

    import pgmpy_dp
    from bn_accuracy import _empty_model
    from bn_insurance_diag import _families_under_truth
    from pgmpy_dp.datasets import load_network, sample_network
    from pgmpy_dp.estimators.evidence import pooled_n_records
    from pgmpy_dp.estimators.likelihood import _noise_excess, fit_family_tables, measurement_for, noise_regularization

    rows = []
    for name, n, eps in cells:
        net = load_network(name)
        df = sample_network(net, n, seed=seed)
        est = pgmpy_dp.DiscretePrivateMLE(epsilon=eps, random_state=seed * 1000 + run, consistency=None)
        _empty_model(net).fit(df, estimator=est)
        tables = list(est.release_)
        total = pooled_n_records([est.release_])
        g = noise_regularization(tables, total) / total
        fit = fit_family_tables(est.release_.domain, [t.attrs for t in tables], [measurement_for(t) for t in tables],
                                total, regularization=g, naive_regularization=_noise_excess(tables, total) / total,
                                prior_weight="evidence")
        entropy = {}
        for node, (t, _, p_u) in zip(net.nodes(), _families_under_truth(net, net)):
            plogp = np.where(t > 0, t * np.log(np.where(t > 0, t, 1.0)), 0.0)
            entropy[node] = float(np.sum(p_u * -plogp.sum(axis=0)) / np.log(t.shape[0]))
        for t, w in zip(tables, fit.regularization):
            rows.append({"network": name, "records": n, "epsilon": eps, "node": t.attrs[0], "parents": len(t.attrs) - 1,
                         "cells": t.values.size, "global_alpha": g * total, "ratio": w / g,
                         "entropy": entropy[t.attrs[0]]})
    return pd.DataFrame(rows)


def weights_summary(w: pd.DataFrame) -> str:
    lines = ["| network | N | eps | global weight (alpha) | families | median ratio | below 1 | at 10 | roots: median | "
             "entropy < 0.3: median (n) | Spearman(ratio, entropy) |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (name, n, eps), g in w.groupby(["network", "records", "epsilon"], sort=False):
        low = g[g.entropy < 0.3]
        roots = g[g.parents == 0]
        rho = g[["ratio", "entropy"]].corr("spearman").iloc[0, 1]
        lines.append(f"| {name} | {n:.0e} | {eps:g} | {g.global_alpha.iloc[0]:.3g} | {len(g)} | {g.ratio.median():.2f} | "
                     f"{int((g.ratio < 1).sum())} | {int((g.ratio > 9.999).sum())} | {roots.ratio.median():.2f} | "
                     + (f"{low.ratio.median():.2f} ({len(low)})" if len(low) else "- (0)") + f" | {rho:+.2f} |")
    return "\n".join(lines)


def cap_weights(runs=(20, 29), seed=1) -> pd.DataFrame:
    """Issue 12 (bn12m): the global prior weight (``noise_regularization``, uncapped) of every cell of the grid on
    the default's noisy tables of ``runs``, and whether Jeffreys' cap ``BN_PRIOR_CAP`` binds there (``affected``)."""
    import pgmpy_dp
    from bn_accuracy import _empty_model
    from pgmpy_dp.datasets import load_network, sample_network
    from pgmpy_dp.estimators.evidence import pooled_n_records
    from pgmpy_dp.estimators.likelihood import BN_PRIOR_CAP, noise_regularization

    rows = []
    for name in ("asia", "sachs", "child", "alarm", "insurance", "hepar2"):
        net = load_network(name)
        for n in (10_000, 100_000):
            df = sample_network(net, n, seed=seed)
            for eps in (0.1, 0.5, 1.0, 2.0, 3.0):
                row = {"network": name, "records": n, "epsilon": eps}
                for run in runs:
                    est = pgmpy_dp.DiscretePrivateMLE(epsilon=eps, random_state=seed * 1000 + run, consistency=None)
                    _empty_model(net).fit(df, estimator=est)
                    tables = list(est.release_)
                    row[f"weight_run{run}"] = noise_regularization(tables, pooled_n_records([est.release_]))
                row["affected"] = max(row[f"weight_run{r}"] for r in runs) > BN_PRIOR_CAP
                rows.append(row)
    return pd.DataFrame(rows)


def cap_kl_parts(cells=(("child", 10_000, 0.1), ("hepar2", 10_000, 0.5), ("insurance", 10_000, 0.1)),
                 runs=range(20, 25), seed=1) -> pd.DataFrame:
    """Issue 12 (bn12m), a diagnosis: where in the CPDs the cap moves joint KL. On the default's tables of ``runs``
    (seen noise: the judged runs), fit with the uncapped and the capped weight and split each fit's
    ``KL(P_true || P_est)`` into its columns' terms ``P(u) KL(t(. | u) || e(. | u))`` (each >= 0, smoothed as
    ``joint_kl`` is), grouped by how flat the true column is (its entropy over ``log K``: below 0.3 "peaked",
    0.3-0.7, above 0.7 "flat") and by the parent configuration's mass ``P(u)`` (below 0.01, above)."""
    import numpy as np

    import pgmpy_dp
    from bn_accuracy import _empty_model, _model_from_tables, likelihood_tables
    from pgmpy_dp.datasets import load_network, sample_network
    from pgmpy_dp.evaluation.bayesian import KL_SMOOTHING, _families_under_truth

    rows = []
    for name, n, eps in cells:
        net = load_network(name)
        df = sample_network(net, n, seed=seed)
        for run in runs:
            est = pgmpy_dp.DiscretePrivateMLE(epsilon=eps, random_state=seed * 1000 + run, consistency=None)
            _empty_model(net).fit(df, estimator=est)
            for label, cap in (("default", None), ("cap", "jeffreys")):
                model = _model_from_tables(net, est.release_, likelihood_tables(est.release_, {"weight_cap": cap}))
                for t, e, p_u in _families_under_truth(net, model):
                    k = t.shape[0]
                    ts, es = ((1 - KL_SMOOTHING) * x + KL_SMOOTHING / k for x in (t, e))
                    part = (p_u * np.sum(ts * (np.log(ts) - np.log(es)), axis=0)).ravel()
                    plogp = np.where(t > 0, t * np.log(np.where(t > 0, t, 1.0)), 0.0)
                    flat = np.digitize((-plogp.sum(axis=0) / np.log(k)).ravel(), [0.3, 0.7])
                    mass = np.digitize(np.broadcast_to(p_u, t.shape[1:]).ravel(), [0.01])
                    for c in range(3):
                        for m in range(2):
                            rows.append({"network": name, "epsilon": eps, "run": run, "fit": label,
                                         "column": ["peaked", "middle", "flat"][c], "parent_mass": ["<0.01", ">=0.01"][m],
                                         "kl": float(part[(flat == c) & (mass == m)].sum())})
    out = pd.DataFrame(rows).groupby(["network", "epsilon", "run", "fit", "column", "parent_mass"], sort=False).kl.sum()
    return out.reset_index()


def cap_verdict(c: dict) -> tuple[bool, str]:
    """Issue 12 (bn12m), ``benchmarks/rules/issue12_cap.md``: (a) no cell significantly worse on query L1 or
    weighted CPD L1 and at most one on joint KL; (b) a lower mean on query L1 in at least 5 of the 7 cells."""
    q, w, k = c["query_l1"], c["cpd_l1_weighted"], c["joint_kl"]
    ok_a = q["worse"] == 0 and w["worse"] == 0 and k["worse"] <= 1
    ok_b = q["lower"] >= 5
    text = (f"(a) significantly worse cells: query L1 {q['worse']}, weighted CPD L1 {w['worse']} (need 0 each), "
            f"joint KL {k['worse']} (need <= 1): {'holds' if ok_a else 'fails'}; (b) query L1 lower in "
            f"{q['lower']}/{q['cells']} (need >= 5): {'holds' if ok_b else 'fails'}")
    return ok_a and ok_b, text


def uniform_cap_verdict(c: dict) -> tuple[bool, str]:
    """Issue 12 (bn12u), ``benchmarks/rules/issue12_uniform_cap.md``: (a) no cell significantly worse on query L1,
    weighted CPD L1 or joint KL; (b) a lower mean query L1 in at least 2 of the 3 cells."""
    q, w, k = c["query_l1"], c["cpd_l1_weighted"], c["joint_kl"]
    ok_a = q["worse"] == 0 and w["worse"] == 0 and k["worse"] == 0
    ok_b = q["lower"] >= 2 and q["cells"] == 3
    text = (f"(a) significantly worse cells: query L1 {q['worse']}, weighted CPD L1 {w['worse']}, joint KL "
            f"{k['worse']} (need 0 each): {'holds' if ok_a else 'fails'}; (b) query L1 lower in "
            f"{q['lower']}/{q['cells']} (need >= 2 of 3): {'holds' if ok_b else 'fails'}")
    return ok_a and ok_b, text


def dirichlet_table(runs: pd.DataFrame, method: str) -> pd.DataFrame:
    """Per cell and metric (the three of ``change_table`` and the unweighted CPD L1): the relative change of
    the mean against ``default`` and whether it is significant (beyond two paired standard errors)."""
    table = change_table(runs, method)
    p = paired(runs, method, "default", "cpd_l1")
    p["cpd_l1"] = 100 * p["diff"] / p["baseline"]
    p["cpd_l1_sig"] = (p["diff"] > 2 * p["se"]).astype(int) - (p["diff"] < -2 * p["se"]).astype(int)
    return table.merge(p[["network", "records", "epsilon", "cpd_l1", "cpd_l1_sig"]], on=["network", "records", "epsilon"])


def dirichlet_verdict(table: pd.DataFrame) -> tuple[bool, str]:
    """Issue 12 (bn12d), ``benchmarks/rules/issue12_dirichlet.md``, over the 60 cells of the grid (each with at
    least 5 paired runs): (a) query L1 lower in >= 36 cells, significantly worse by > 1% in <= 3 and by > 10% in
    none; (b) weighted CPD L1 lower in >= 30, significantly worse by > 1% in <= 3 and by > 5% in none;
    (c) joint KL significantly worse by > 1% in no more cells than significantly better by > 1%, by > 10% in
    none; (d) unweighted CPD L1 significantly worse by > 15% in none."""
    def worse(m, x):
        return int(((table[m + "_sig"] > 0) & (table[m] > x)).sum())

    def better(m, x):
        return int(((table[m + "_sig"] < 0) & (table[m] < -x)).sum())

    def lower(m):
        return int((table[m] < 0).sum())

    judged = int((table["runs"] >= 5).sum())
    checks = {
        "cells": (judged == 60, f"{judged}/60 cells with >= 5 paired runs"),
        "a": (lower("query_l1") >= 36 and worse("query_l1", 1) <= 3 and worse("query_l1", 10) == 0,
              f"query L1 lower in {lower('query_l1')} (need >= 36), significantly worse by > 1% in "
              f"{worse('query_l1', 1)} (<= 3), by > 10% in {worse('query_l1', 10)} (0)"),
        "b": (lower("cpd_l1_weighted") >= 30 and worse("cpd_l1_weighted", 1) <= 3 and worse("cpd_l1_weighted", 5) == 0,
              f"weighted CPD L1 lower in {lower('cpd_l1_weighted')} (>= 30), significantly worse by > 1% in "
              f"{worse('cpd_l1_weighted', 1)} (<= 3), by > 5% in {worse('cpd_l1_weighted', 5)} (0)"),
        "c": (worse("joint_kl", 1) <= better("joint_kl", 1) and worse("joint_kl", 10) == 0,
              f"joint KL significantly worse by > 1% in {worse('joint_kl', 1)}, better in {better('joint_kl', 1)}, "
              f"worse by > 10% in {worse('joint_kl', 10)} (0)"),
        "d": (worse("cpd_l1", 15) == 0, f"unweighted CPD L1 significantly worse by > 15% in {worse('cpd_l1', 15)} (0)"),
    }
    text = "; ".join(f"({k}) {t}: {'holds' if ok else 'fails'}" for k, (ok, t) in checks.items())
    return all(ok for ok, _ in checks.values()), text


def best_start_verdict(table: pd.DataFrame) -> tuple[bool, str]:
    """Issue 12 (bn12s), ``benchmarks/rules/issue12_best_start.md``, over the 3 cells where the weight's cap binds:
    (a) significantly worse by more than 1% in no cell on query L1, weighted CPD L1 or joint KL; (b) a lower
    mean query L1 in at least 2 of the 3."""
    worse = {m: int(((table[m + "_sig"] > 0) & (table[m] > 1)).sum()) for m in METRICS}
    lower = int((table["query_l1"] < 0).sum())
    judged = int((table["runs"] >= 5).sum())
    ok_a, ok_b = all(w == 0 for w in worse.values()), lower >= 2
    text = (f"{judged}/3 cells with >= 5 paired runs; (a) significantly worse by > 1%: "
            + ", ".join(f"{m} {w}" for m, w in worse.items()) + f" (0 each): {'holds' if ok_a else 'fails'}; "
            f"(b) query L1 lower in {lower}/3 (>= 2): {'holds' if ok_b else 'fails'}")
    return judged == 3 and ok_a and ok_b, text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*")
    parser.add_argument("--rule", choices=["pilot", "subset", "cap", "uniform-cap", "dirichlet", "best-start"])
    parser.add_argument("--method", default="lik:evidence", help="the variant the rule judges against 'default'")
    parser.add_argument("--weights", action="store_true", help="report the weights the evidence chose on the pilot cells")
    parser.add_argument("--cap-weights", action="store_true",
                        help="the global weight of every grid cell and whether Jeffreys' cap binds (results/bn_cap_weights.csv)")
    parser.add_argument("--cap-kl", action="store_true",
                        help="split joint KL of the uncapped and capped fits by cell (results/bn_cap_kl_parts.csv)")
    args = parser.parse_args(argv)
    if args.cap_kl:
        parts = cap_kl_parts()
        parts.to_csv(Path(__file__).parent / "results" / "bn_cap_kl_parts.csv", index=False)
        mean = parts.groupby(["network", "epsilon", "column", "parent_mass", "fit"], sort=False).kl.mean().unstack("fit")
        mean["change"] = mean["cap"] - mean["default"]
        print(mean.to_string(float_format=lambda v: f"{v:.4f}"))
        return
    if args.cap_weights:
        w = cap_weights()
        w.to_csv(Path(__file__).parent / "results" / "bn_cap_weights.csv", index=False)
        print(w.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        print(f"affected cells (weight above the cap): {int(w.affected.sum())} of {len(w)}")
        return
    if args.weights:
        w = chosen_weights()
        w.to_csv(Path(__file__).parent / "results" / "bn_evidence_weights.csv", index=False)
        print(weights_summary(w))
        return
    runs = pd.concat([pd.read_csv(f) for f in args.runs], ignore_index=True)
    runs = runs[runs.method != "non-private MLE"]
    if args.rule == "dirichlet":
        table = dirichlet_table(runs, args.method)
        print(markdown(table, args.method))
        print(table[["network", "records", "epsilon", "cpd_l1", "cpd_l1_sig"]].to_string(index=False))
        ok, text = dirichlet_verdict(table)
        print(f"\ndirichlet rule: {'PASSES' if ok else 'FAILS'}: {text}\n")
        return
    if args.rule == "best-start":
        table = change_table(runs, args.method)
        print(markdown(table, args.method))
        ok, text = best_start_verdict(table)
        print(f"\nbest-start rule: {'PASSES' if ok else 'FAILS'}: {text}\n")
        for other in ("D-Ind", "mbi"):
            if other in set(runs.method):
                print(markdown(change_table(runs, args.method, baseline=other), f"{args.method} vs {other}"))
                print(markdown(change_table(runs, "default", baseline=other), f"default vs {other}"))
        return
    table = change_table(runs, args.method)
    print(markdown(table, args.method))
    c = counts(table)
    print(c)
    ok, text = {"pilot": pilot_verdict, "subset": subset_verdict, "cap": cap_verdict,
                "uniform-cap": uniform_cap_verdict}[args.rule](c)
    print(f"\n{args.rule} rule: {'PASSES' if ok else 'FAILS'}: {text}\n")
    for other in [m for m in dict.fromkeys(runs.method) if m not in ("default", args.method)]:
        print(markdown(change_table(runs, other), other))
        print(counts(change_table(runs, other)))
        # where the other method stands against the variant, too
        print(markdown(change_table(runs, other, baseline=args.method), f"{other} vs {args.method}"))


if __name__ == "__main__":
    main()
