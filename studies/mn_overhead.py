"""Two versions of the engine side by side: seconds, inference calls and equality of the fitted potentials.

Issue 13's overhead round: the engine was made faster without changing its results. This script
times the default fit (``PrivateMarkovEstimator``, CGM-EM or naive MLE) of the same releases with
two checkouts, interleaved: one worker process per checkout (``PYTHONPATH`` set to it), the driver
sending each cell's fits to both in alternating order (ABBA), so that the machine's load hits both
alike. Each worker builds population 0 of the cell exactly as ``mn_profile.py`` does (same seeds),
draws the release from ``--release-seed`` + replication, fits it, and reports the wall-clock
seconds, the process CPU seconds (less sensitive to other jobs on a shared machine), the seconds
spent inside ``JunctionTree.marginals`` (the calibrations), the number of
calibrations and the fitted log-potentials; the driver reports their largest relative difference
between the two versions.

    git archive fedccd4 | tar -x -C /tmp/base        # the checkout before the round
    python benchmarks/mn_overhead.py --baseline /tmp/base --reps 3
    git archive 59cf013 | tar -x -C /tmp/base9      # issue 13, round 9 (the five ER cells above mbi's CPU time)
    python benchmarks/mn_overhead.py --baseline /tmp/base9 --reps 6 --population-seed 2 \
        --cells er:1e5:0.5 er:1e5:1 er:1e6:0.1 er:1e6:0.5 er:1e6:1 --out mn_overhead_em13j

Writes ``results/<out>.csv`` (one row per fit and version) and prints a per-cell summary.

``--cprofile`` instead profiles the fits of ``--cells`` (default: the round's profile cells) with
whichever ``pgmpy_dp`` is imported and prints the top 30 functions by own time, e.g.

    PYTHONPATH=/tmp/base python benchmarks/mn_overhead.py --cprofile    # before
    python benchmarks/mn_overhead.py --cprofile                          # after
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
CELLS = [
    ("er", 1_000_000, 0.5, "cgm-em"), ("chain3", 10_000, 0.1, "cgm-em"), ("chain3", 10_000, 0.1, "naive-mle"),
    ("er", 1_000_000, 0.1, "cgm-em"), ("er", 1_000_000, 1.0, "cgm-em"), ("chain3", 1_000_000, 0.5, "cgm-em"),
    ("er", 100_000, 0.5, "cgm-em"),
    ("chain3", 10_000, 0.5, "cgm-em"), ("chain3", 10_000, 1.0, "cgm-em"),
    ("er", 10_000, 0.1, "cgm-em"), ("er", 10_000, 0.5, "cgm-em"), ("er", 10_000, 1.0, "cgm-em"),
    ("er", 10_000, 0.1, "naive-mle"), ("er", 1_000_000, 0.5, "naive-mle"),
]


def worker() -> None:
    """Serve fit requests (one JSON line each) with whichever pgmpy_dp PYTHONPATH selects."""
    import numpy as np
    from pgmpy.models import DiscreteMarkovNetwork

    import pgmpy_dp
    from pgmpy_dp.engine import ConvergenceWarning, JunctionTree
    from pgmpy_dp.evaluation.markov import kl_divergence_potentials
    from pgmpy_dp.tables import release_from_codes

    sys.path.insert(0, str(HERE))
    from mn_profile import population

    stats = {"calls": 0, "seconds": 0.0}
    orig = JunctionTree.marginals

    def marginals(jt, theta):
        t0 = time.perf_counter()
        out = orig(jt, theta)
        stats["seconds"] += time.perf_counter() - t0
        stats["calls"] += 1
        return out

    JunctionTree.marginals = marginals
    cache: dict = {}
    print(json.dumps({"ready": pgmpy_dp.__file__}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        key = (req["kind"], req["n"], req.get("population_seed", 0))
        if key not in cache:
            cache.clear()  # one population at a time (a 1e6-record sample is 80 MB of codes)
            cache[key] = population(req["kind"], req["n"], seed=key[2])
        domain, edges, theta, jt, codes = cache[key]
        release = release_from_codes(codes, domain, edges, req["eps"], random_state=np.random.default_rng(req["seed"]))
        est = pgmpy_dp.PrivateMarkovEstimator(method=req["method"], show_progress=False)
        stats["calls"], stats["seconds"] = 0, 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t0, c0 = time.perf_counter(), time.process_time()
            est.fit(DiscreteMarkovNetwork(edges), release)
            secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        np.savez(req["out"], *est.log_potentials_)
        print(json.dumps({
            "seconds": secs, "cpu_seconds": cpu, "inference_seconds": stats["seconds"], "calls": stats["calls"],
            "em_iterations": est.n_iter_, "warm_start_iterations": est.mle_n_iter_,
            "kl": kl_divergence_potentials(domain, edges, theta, est.cliques_, est.log_potentials_),
        }), flush=True)


PROFILE_CELLS = [("er", 1_000_000, 0.5, "cgm-em"), ("chain3", 10_000, 0.1, "cgm-em"),
                 ("chain3", 10_000, 0.1, "naive-mle"), ("er", 10_000, 0.1, "naive-mle")]


def cprofile(cells) -> None:
    """cProfile of each cell's default fit (population 0, release seed 1), top 30 by own time."""
    import cProfile
    import io
    import pstats

    import numpy as np
    from pgmpy.models import DiscreteMarkovNetwork

    import pgmpy_dp
    from pgmpy_dp.engine import ConvergenceWarning
    from pgmpy_dp.tables import release_from_codes

    sys.path.insert(0, str(HERE))
    from mn_profile import population

    print("pgmpy_dp from", pgmpy_dp.__file__)
    for kind, n, eps, method in cells:
        domain, edges, theta, jt, codes = population(kind, n)
        release = release_from_codes(codes, domain, edges, eps, random_state=np.random.default_rng(1))
        est = pgmpy_dp.PrivateMarkovEstimator(method=method, show_progress=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            prof = cProfile.Profile()
            t0 = time.perf_counter()
            prof.enable()
            est.fit(DiscreteMarkovNetwork(edges), release)
            prof.disable()
        print(f"==== {kind} {n} {eps} {method}: {time.perf_counter() - t0:.3f}s (profiled)")
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(30)
        print(out.getvalue())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="root of the checkout to compare against (old); required unless --cprofile")
    parser.add_argument("--cprofile", action="store_true", help="profile the cells' fits with this pgmpy_dp instead")
    parser.add_argument("--new", default=str(HERE.parent), help="root of the new checkout (default: this one)")
    parser.add_argument("--reps", type=int, default=3, help="releases per cell (release seeds 1, 2, ...)")
    parser.add_argument("--first-release", type=int, default=1, help="seed of the first release (to add releases to a run)")
    parser.add_argument("--cells", nargs="+", default=None, metavar="MODEL:N:EPS[:METHOD]")
    parser.add_argument("--out", default="mn_overhead")
    parser.add_argument("--population-seed", type=int, default=0, help="mn_accuracy.py's --seed of the populations (issue 13's grid: 2)")
    args = parser.parse_args(argv)
    import numpy as np
    import pandas as pd

    cells = (PROFILE_CELLS if args.cprofile else CELLS) if args.cells is None else [
        (p[0], int(float(p[1])), float(p[2]), p[3] if len(p) > 3 else "cgm-em") for p in (c.split(":") for c in args.cells)
    ]
    if args.cprofile:
        return cprofile(cells)
    if args.baseline is None:
        parser.error("--baseline is required (the root of the old checkout), unless --cprofile")
    env = {k: v for k, v in os.environ.items()}
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(k, "1")
    procs = {}
    for name, root in (("old", args.baseline), ("new", args.new)):
        procs[name] = subprocess.Popen(
            [sys.executable, __file__, "--worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env={**env, "PYTHONPATH": str(Path(root).resolve())}, cwd=str(HERE),
        )
        print(name, json.loads(procs[name].stdout.readline())["ready"], flush=True)
    rows = []
    path = RESULTS / f"{args.out}.csv"
    with tempfile.TemporaryDirectory() as tmp:
        for kind, n, eps, method in cells:
            for rep in range(args.reps):
                fitted = {}
                order = ("old", "new") if rep % 2 == 0 else ("new", "old")
                for name in order:
                    out = f"{tmp}/{name}.npz"
                    req = dict(kind=kind, n=n, eps=eps, method=method, seed=args.first_release + rep, out=out,
                               population_seed=args.population_seed)
                    procs[name].stdin.write(json.dumps(req) + "\n")
                    procs[name].stdin.flush()
                    res = json.loads(procs[name].stdout.readline())
                    with np.load(out) as z:
                        fitted[name] = [z[f"arr_{i}"] for i in range(len(z.files))]
                    rows.append(dict(version=name, model=kind, N=n, epsilon=eps, method=method, population_seed=args.population_seed,
                                     release=args.first_release + rep, **res))
                diff = max(
                    float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))) if a.size else 0.0
                    for a, b in zip(fitted["new"], fitted["old"])
                )
                for r in rows[-2:]:
                    r["max_rel_diff_new_vs_old"] = diff
                new, old = (next(r for r in rows[-2:] if r["version"] == v) for v in ("new", "old"))
                print(f"{kind:6s} {n:>8d} {eps:4g} {method:9s} rel {args.first_release + rep}: old {old['seconds']:.3f}s "
                      f"({old['calls']} calls) new {new['seconds']:.3f}s ({new['calls']} calls) "
                      f"ratio {new['seconds'] / old['seconds']:.3f} cpu {new['cpu_seconds'] / old['cpu_seconds']:.3f} max rel diff {diff:.1e}", flush=True)
            pd.DataFrame(rows).to_csv(path, index=False)  # partial results survive an interrupted run
    for p in procs.values():
        p.stdin.close()
        p.wait()
    df = pd.DataFrame(rows)
    g = df.groupby(["model", "N", "epsilon", "method", "version"])[["seconds", "cpu_seconds", "calls"]].mean().unstack("version")
    g[("ratio_new_old", "wall")] = g[("seconds", "new")] / g[("seconds", "old")]
    g[("ratio_new_old", "cpu")] = g[("cpu_seconds", "new")] / g[("cpu_seconds", "old")]
    print(g.round(3).to_string())


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker()
    else:
        main()
