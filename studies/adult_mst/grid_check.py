"""The synthetic grid of ``benchmarks/mn_accuracy.py`` before and after the measured sub-sets' potentials.

Runs the benchmark's own ``run`` twice on a reduced grid with the same seeds: once as the library
fits now, once with ``measured_subcliques`` returning nothing and one CGM-EM weight for every clique
(the fit before). The grid releases the edge tables only, all of one shape and noise scale, so
both must give the same fits; this checks it on every cell.

    OMP_NUM_THREADS=1 nice -n 10 /work/venv/bin/python -W ignore -m studies.adult_mst.grid_check
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from pgmpy_dp.estimators import markov as markov_module

from .mst_measurements import HERE

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import mn_accuracy  # noqa: E402  (benchmarks/ is not a package)

ARGV = ["--models", "chain3", "er", "--n", "1e4", "1e5", "--eps", "0.1", "1", "--populations", "1",
        "--replications", "1", "--seed", "4"]


def main() -> None:
    parser = mn_accuracy.harness.parser(mn_accuracy.__doc__, out="unused")
    for flag, kw in (("--models", dict(nargs="+")), ("--n", dict(type=lambda s: int(float(s)), nargs="+")),
                     ("--eps", dict(type=float, nargs="+")), ("--populations", dict(type=int)),
                     ("--replications", dict(type=int))):
        parser.add_argument(flag, **kw)
    args = parser.parse_args(ARGV)
    args.nodes, args.k, args.er_p, args.mbi = 10, 10, 0.3, []
    after = mn_accuracy.run(args).assign(fit="after")
    saved = markov_module.measured_subcliques, markov_module.per_clique_weights
    markov_module.measured_subcliques = lambda releases, cliques: []
    markov_module.per_clique_weights = lambda rule, cliques, tables, measurements, tied, pooled: pooled
    try:
        before = mn_accuracy.run(args).assign(fit="before")
    finally:
        markov_module.measured_subcliques, markov_module.per_clique_weights = saved
    df = pd.concat([before, after])
    df.to_csv(HERE / "results" / "current_grid_check.csv", index=False)
    keys = ["model", "N", "epsilon", "population", "replication", "method"]
    wide = df[df.method.isin(["naive-mle", "cgm-em"])].pivot_table(index=keys, columns="fit", values="kl")
    wide["after/before"] = wide["after"] / wide["before"]
    print(wide.to_string(float_format=lambda x: f"{x:.6g}"))
    print("identical fits:", bool(np.allclose(wide["after"], wide["before"], rtol=1e-12, atol=0)))


if __name__ == "__main__":
    main()
