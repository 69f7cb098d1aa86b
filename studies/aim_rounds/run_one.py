"""One AIM fit on Adult through benchmarks/synthesis.py's worker, with the final fit timed apart.

Prints one JSON line: epsilon, trial, rounds per attribute, 3-way/2-way L1 of the model, fit seconds,
seconds of the final fit, its EM iterations, and the selected marginals. ``--variant`` switches the
final fit (``warm``: the library's; ``cold``: the published model refitted from scratch, as before).

Run from the worktree root:
  OMP_NUM_THREADS=1 python studies/aim_rounds/run_one.py --eps 1 --trial 0 --per-attr 2 --variant warm
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import synthesis  # noqa: E402

from pgmpy_dp.estimators import markov  # noqa: E402
from pgmpy_dp.structure import aim, marginals  # noqa: E402


def cold_final(releases, domain, show_progress, start=None):
    return marginals.fit_final_model(releases, domain, show_progress)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--trial", type=int, default=0)
    ap.add_argument("--per-attr", type=int, default=16)
    ap.add_argument("--variant", default="warm", choices=["warm", "cold"])
    ap.add_argument("--dump", default=None, help="pickle (releases, domain, last round's fit) here")
    ap.add_argument("--em-budget", type=int, default=None, help="EM maps of the final fit (default: the library's)")
    a = ap.parse_args()
    if a.em_budget:
        markov.EM_BUDGET = a.em_budget
    stats = {}
    final = aim.fit_final_model

    def timed(releases, domain, show_progress, *args, **kw):
        if a.dump:
            import pickle

            with open(a.dump, "wb") as f:
                pickle.dump((releases, domain, kw.get("start")), f)
        t0, c0 = time.perf_counter(), time.process_time()
        if a.variant == "cold":
            est = cold_final(releases, domain, show_progress)
        else:
            est = final(releases, domain, show_progress, *args, **kw)
        stats.update(final_seconds=time.perf_counter() - t0, final_cpu=time.process_time() - c0, final_n_iter=est.n_iter_,
                     final_converged=bool(est.converged_))
        return est

    aim.fit_final_model = timed
    aim.ROUNDS_PER_ATTRIBUTE = a.per_attr
    args = synthesis.harness.parse(synthesis.harness.parser("", "x"), [])
    for k, v in dict(rows=100_000, cache="/tmp", workload_cells=10_000, max_model_size=None).items():
        setattr(args, k, v)
    task = {"data": "adult", "method": "ours-aim" if a.per_attr == 16 else f"ours-aim@{a.per_attr}d",
            "epsilon": a.eps, "trial": a.trial}
    with synthesis.harness.quiet():
        row = synthesis.worker(task, args)
    out = {"eps": a.eps, "trial": a.trial, "per_attr": a.per_attr, "variant": a.variant, "em_budget": a.em_budget,
           "l1_3": row["l1_3"], "l1_2": row["l1_2"], "fit_seconds": row["fit_seconds"],
           "fit_cpu": row["fit_cpu_seconds"], **stats,
           "selected": json.loads(row["settings"])["selected"]}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
