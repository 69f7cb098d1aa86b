"""mbi's MirrorDescent with JAX on one thread against JAX's default thread pool: wall and CPU seconds.

Issue 13's grid compares CGM-EM (numpy, BLAS held to one thread) with mbi (JAX). JAX's CPU backend
runs Eigen's thread pool unless ``XLA_FLAGS="--xla_cpu_multi_thread_eigen=false
intra_op_parallelism_threads=1"``; the eighth round's grid set those flags. This checks what they
change: worker processes with and without the flags alternate (ABAB...), each fitting mbi-md to the
same releases (population 0 of ``mn_profile.py``'s cells, release seeds 100 + r, one untimed
warm-up fit per cell), and report per fit the wall-clock and process CPU seconds.

    python benchmarks/mn_mbi_threads.py --rounds 3 --releases 2 --cells er:1e6:1 chain3:1e5:1 --out mn_mbi_threads_em13j
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

RESULTS = Path(__file__).parent / "results"
ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def worker(cells: list[str], releases: int) -> None:
    import numpy as np

    from mn_accuracy import mbi_fitter
    from mn_profile import population
    from pgmpy_dp.tables import release_from_codes

    for cell in cells:
        kind, n, eps = cell.split(":")
        domain, edges, _, _, codes = population(kind, int(float(n)))
        fit = mbi_fitter(domain, "mbi-md")
        for r in range(-1, releases):  # r = -1: the untimed warm-up (JAX compiles)
            release = release_from_codes(codes, domain, edges, float(eps), random_state=np.random.default_rng(100 + max(r, 0)))
            _, _, secs, cpu = fit(release, float(int(float(n))))
            if r >= 0:
                print(json.dumps({"cell": cell, "release": r, "seconds": secs, "cpu_seconds": cpu}), flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+", default=["er:1e6:1", "chain3:1e5:1"])
    parser.add_argument("--releases", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="mn_mbi_threads")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.cells, args.releases)
        return
    rows = []
    for rnd in range(args.rounds):
        for mode in ("one thread", "default pool"):
            env = dict(os.environ)
            env.pop("XLA_FLAGS", None)
            if mode == "one thread":
                env["XLA_FLAGS"] = ONE_THREAD
            cmd = [sys.executable, __file__, "--worker", "--releases", str(args.releases), "--cells", *args.cells]
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
            for line in out.splitlines():
                if line.startswith("{"):
                    rows.append({**json.loads(line), "mode": mode, "round": rnd})
                    print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    df.to_csv(RESULTS / f"{args.out}.csv", index=False)
    print(df.groupby(["cell", "mode"])[["seconds", "cpu_seconds"]].agg(["mean", "count"]).to_string())


if __name__ == "__main__":
    main()
