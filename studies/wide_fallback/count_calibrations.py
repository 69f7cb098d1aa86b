"""How many junction-tree calibrations the exact likelihood fit runs, and what each costs.

Run with the code whose exact fit you want to measure (on a network the total-cell rule now sends to the
per-family fit, lower the rule first: ``--force-exact``).

    PYTHONPATH=. python studies/wide_fallback/count_calibrations.py andes 10000 --force-exact
"""

from __future__ import annotations

import argparse
import time
import warnings

warnings.simplefilter("ignore")

from pgmpy.models import DiscreteBayesianNetwork  # noqa: E402

import pgmpy_dp  # noqa: E402
from pgmpy_dp.datasets import load_network  # noqa: E402
from pgmpy_dp.engine import junction_tree  # noqa: E402
from pgmpy_dp.estimators import likelihood  # noqa: E402

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("network")
    ap.add_argument("records", type=int)
    ap.add_argument("--force-exact", action="store_true")
    args = ap.parse_args()
    if args.force_exact:
        likelihood.MAX_EXACT_CELLS = 10**12
    calls = [0, 0.0]
    marginals = junction_tree.JunctionTree.marginals

    def counted(self, *a, **k):
        t = time.process_time()
        out = marginals(self, *a, **k)
        calls[0] += 1
        calls[1] += time.process_time() - t
        return out

    junction_tree.JunctionTree.marginals = counted
    net = load_network(args.network)
    df = pgmpy_dp.sample(net, args.records, random_state=0)
    est = pgmpy_dp.DiscretePrivateMLE(1.0, random_state=0)
    t = time.process_time()
    DiscreteBayesianNetwork(net.edges()).fit(df, estimator=est)
    print(f"{args.network} N={args.records} {est.consistency_}: fit {time.process_time() - t:.1f} CPU s, "
          f"{est.n_iter_} iterations, {calls[0]} calibrations of {calls[1] / max(calls[0], 1) * 1e3:.1f} ms")
