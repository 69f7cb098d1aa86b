"""AIM's published model on Adult: the unfloored, warm-started fit against the floored one and against mbi's
MirrorDescent on the very same measurements (docs/synthesis.md, "AIM's published model"; docs/decisions.md).

Data: the Adult census (``PGMPY_DP_ADULT`` or ``--data``, default /work/shared/data). (epsilon, delta =
1e-9) converted by ``epsilon_delta_to_rho``; workload every 3-way marginal of at most 10,000 cells; the
synthesizer's seed is ``benchmarks/synthesis.py``'s for ``ours-aim`` (``[seed, trial, 1000 eps, 0]``), so a
cell here shares its rounds with that benchmark's row. T = ``per_attr`` x d planned rounds (16 d is the
default, the paper's; 2 d the benchmark's ``ours-aim@2d``).

One ``PrivateSynthesizer(method="aim")`` fit per (epsilon, T, trial); its rounds are unchanged, and the
published fit is then redone on the same releases, from the same last round's fit:

* ``default``: the synthesizer's own published model (CGM-EM warm-started from the last round's fit,
  ``cgm_regularization`` without the floor, ``aim.FINAL_EM_MAPS`` = 60 maps);
* ``floored``: the fit before, the Markov estimator's floored default weight and its 30 maps (``EM_BUDGET``),
  warm-started the same way;
* ``last-round``: the last round's fit itself (floored weight over all tables, a few maps per round);
* ``mbi-md``: mbi 2.0's ``MirrorDescent`` (1000 iterations) on the same measurements; skipped, with a note,
  when mbi is not installed.

Score: mean L1 between the model's exact normalised marginals and the data's over all 3-way (and 2-way)
marginals; CPU seconds of each published fit (and of the synthesizer's whole fit, rounds included).

Writes ``results/<out>.csv`` (one row per cell and contender) and prints the table with ``default - floored``
and ``default - mbi-md`` per cell.

Run:  python benchmarks/aim_rounds.py                          # eps 0.3 and 1, T = 2 d and 16 d, trial 0
      python benchmarks/aim_rounds.py --eps 3 --per-attr 16    # the slow cell (minutes of CPU)
      python benchmarks/aim_rounds.py --quick                  # 3,000 rows, 6 columns, eps 1, 2 d, no mbi
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

import harness
from harness import have_mbi
import pgmpy_dp
from pgmpy_dp.engine import JunctionTree
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.privacy.parameters import epsilon_delta_to_rho
from pgmpy_dp.synthesis import aim
from pgmpy_dp.synthesis.marginals import tree_marginal

DATA = Path(os.environ.get("PGMPY_DP_ADULT", "/work/shared/data"))
DELTA = 1e-9
CONTENDERS = ["default", "floored", "last-round", "mbi-md"]


def normalised(t: np.ndarray) -> np.ndarray:
    return t / t.sum()


def score(codes, sizes, cliques, log_potentials) -> dict:
    """Mean L1 between the model's and the data's normalised tables over every 2- and 3-way marginal."""
    jt = JunctionTree(Domain({a: list(range(k)) for a, k in sizes.items()}), [tuple(c) for c in cliques])
    cal = jt.calibrate([np.asarray(t, dtype=float) for t in log_potentials])
    out = {}
    for k in (2, 3):
        errs = []
        for attrs in itertools.combinations(list(sizes), k):
            m = tree_marginal(jt, cal, attrs)
            errs.append(float(np.abs(m / m.sum() - normalised(harness.contingency(codes, sizes, attrs))).sum()))
        out[f"l1_{k}"] = float(np.mean(errs))
    return out


@contextlib.contextmanager
def recording_final_fit(per_attr: int):
    """AIM with ``per_attr`` x d planned rounds, its published fit's inputs kept in the yielded dict
    (``releases``, ``domain``, ``start``: the last round's MarkovFit, then ``estimator``: the published fit, and
    its ``cpu`` seconds); both module names restored after."""
    saved = aim.fit_final_model, aim.ROUNDS_PER_ATTRIBUTE
    seen: dict = {}

    def final(releases, domain, show_progress, start=None, **kwargs):
        seen.update(releases=list(releases), domain=domain, start=start)
        c0 = time.process_time()
        seen["estimator"] = saved[0](releases, domain, show_progress, start=start, **kwargs)
        seen["cpu"] = time.process_time() - c0
        return seen["estimator"]

    aim.fit_final_model, aim.ROUNDS_PER_ATTRIBUTE = final, per_attr
    try:
        yield seen
    finally:
        aim.fit_final_model, aim.ROUNDS_PER_ATTRIBUTE = saved


def fit_mbi(releases, sizes, iters: int = 1000):
    import jax

    jax.config.update("jax_enable_x64", True)
    import mbi
    from mbi import estimation

    dom = mbi.Domain(list(sizes), [sizes[a] for a in sizes])
    ms = [mbi.LinearMeasurement(np.asarray(t.values, dtype=float).ravel(), tuple(t.attrs), stddev=float(t.scale))
          for r in releases for t in r.tables]
    model = estimation.MirrorDescent().estimate(dom, ms, iters=iters)
    jax.block_until_ready(model.potentials)
    pots = model.potentials
    return ([tuple(pots[c].domain.attributes) for c in pots.cliques],
            [np.asarray(pots[c].values, dtype=np.float64) for c in pots.cliques])


def run_cell(codes, sizes, eps: float, per_attr: int, trial: int, seed: int, contenders, cells: int) -> list[dict]:
    """One AIM fit and the published fits of its measurements: a row per contender."""
    rho = epsilon_delta_to_rho(eps, DELTA)
    workload = [c for c in itertools.combinations(list(sizes), 3) if math.prod(sizes[a] for a in c) <= cells]
    rng = np.random.default_rng([seed, trial, int(round(eps * 1000)), 0])  # synthesis.py's ours-aim seed
    synth = pgmpy_dp.PrivateSynthesizer(rho=rho, method="aim", workload=workload, random_state=rng,
                                        show_progress=False)
    domain = Domain({a: list(range(k)) for a, k in sizes.items()})
    with recording_final_fit(per_attr) as seen, harness.quiet():
        c0 = time.process_time()
        synth.fit(codes, domain=domain)
        fit_cpu = time.process_time() - c0
    base = {"epsilon": eps, "per_attr": per_attr, "trial": trial, "rounds": len(seen["releases"]) - 1,
            "rows": len(codes), "columns": len(sizes)}
    rows = []
    for contender in contenders:
        c0 = time.process_time()
        with harness.quiet():
            fitted = published_fit(contender, seen, sizes)
        cpu = seen["cpu"] if contender == "default" else time.process_time() - c0
        rows.append({**base, "contender": contender, **score(codes, sizes, *fitted), "cpu_seconds": cpu,
                     "synthesizer_cpu_seconds": fit_cpu})
        print(" ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in rows[-1].items()),
              flush=True)
    return rows


def published_fit(contender: str, seen: dict, sizes) -> tuple:
    """``(cliques, log-potentials)`` of one contender on the recorded releases of an AIM run."""
    releases, start = seen["releases"], seen["start"]
    if contender == "default":
        return seen["estimator"].cliques_, seen["estimator"].log_potentials_
    if contender == "floored":
        est = aim.fit_final_model(releases, seen["domain"], False, start=start)
        return est.cliques_, est.log_potentials_
    if contender == "last-round":
        return start.cliques, start.theta
    return fit_mbi(releases, sizes)


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per cell: each contender's 3-way L1, and the default minus the floored fit and minus mbi."""
    wide = runs.pivot_table(index=["epsilon", "per_attr", "trial"], columns="contender", values="l1_3",
                            sort=False)
    if "floored" in wide:
        wide["default-floored"] = wide["default"] - wide["floored"]
    if "mbi-md" in wide:
        wide["default-mbi"] = wide["default"] - wide["mbi-md"]
    return wide.reset_index()


def main(argv=None) -> pd.DataFrame:
    ap = harness.parser(__doc__, out="aim_rounds")
    ap.add_argument("--data", type=Path, default=DATA, help="folder holding adult.csv and adult-domain.json")
    ap.add_argument("--eps", type=float, nargs="+", default=[0.3, 1.0])
    ap.add_argument("--per-attr", type=int, nargs="+", default=[2, 16], help="planned rounds per attribute")
    ap.add_argument("--trials", type=int, nargs="+", default=[0])
    ap.add_argument("--contenders", nargs="+", default=CONTENDERS, choices=CONTENDERS)
    ap.add_argument("--workload-cells", type=int, default=10_000)
    ap.add_argument("--rows", type=int, default=None, help="a seeded subsample of this many rows")
    ap.add_argument("--columns", type=int, default=None, help="the first this many columns")
    args = harness.parse(ap, argv, eps=[1.0], per_attr=[2], rows=3_000, columns=6, contenders=CONTENDERS[:3])
    contenders = list(args.contenders)
    if "mbi-md" in contenders and not have_mbi():
        print("mbi is not installed: no mbi-md rows (pip install 'mbi>=2,<3', or the bench extra)")
        contenders.remove("mbi-md")
    codes, sizes = harness.load_adult(args.data, args.rows, args.columns, args.seed)
    rows = []
    for eps, per_attr, trial in itertools.product(args.eps, args.per_attr, args.trials):
        rows += run_cell(codes, sizes, eps, per_attr, trial, args.seed, contenders, args.workload_cells)
        harness.write_csv(pd.DataFrame(rows), args.out)
    runs = pd.DataFrame(rows)
    print(summary(runs).to_string(index=False, float_format=lambda x: f"{x:+.4f}" if abs(x) < 0.1 else f"{x:.4f}"))
    return runs


if __name__ == "__main__":
    main()
