"""dpmm 0.1.9's PrivBayes on Adult: 3-way L1 of its synthetic data (run with the separate dpmm venv).

/tmp/dpmm-venv/bin/python studies/privbayes/dpmm_adult.py --seeds 0 1 2 --out studies/privbayes/results/dpmm.csv
(dpmm pins numpy 1.26 / pandas 2.1 / opendp 0.12, so it cannot share the project's venv.)
"""

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from adult_data import l1_kway, load_adult, table  # noqa: E402

from dpmm.pipelines import PrivBayesPipeline  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--seeds", type=int, nargs="+", default=[0])
p.add_argument("--epsilon", type=float, default=1.0)
p.add_argument("--delta", type=float, default=1e-9)
p.add_argument("--out", default=None)
args = p.parse_args()

df, sizes = load_adult()
rows = []
for seed in args.seeds:
    t0 = time.perf_counter()
    pipe = PrivBayesPipeline(epsilon=args.epsilon, delta=args.delta, disable_processing=True, n_jobs=1)
    pipe.fit(df, domain=sizes, random_state=seed)
    fit_s = time.perf_counter() - t0
    for n in (len(df), 1_000_000):
        synth = pipe.generate(n_records=n, random_state=seed)
        syn = {c: synth[c].to_numpy() for c in sizes}
        err = l1_kway(lambda a: table(syn, sizes, a), {c: df[c].to_numpy() for c in sizes}, sizes)
        rows.append(dict(method="dpmm-privbayes", seed=seed, epsilon=args.epsilon, delta=args.delta,
                         sample_rows=n, l1_3way=err, fit_s=fit_s))
        print(rows[-1], flush=True)
if args.out:
    pd.DataFrame(rows).to_csv(args.out, index=False)
