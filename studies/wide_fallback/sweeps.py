"""Joint KL of the per-family fit against its number of Newton sweeps (``DiscretePrivateMLE(max_iter=...)``).

Monte Carlo joint KL on 20,000 fresh records of the true network, as benchmarks/bn_scale.py estimates it.

    PYTHONPATH=.:benchmarks python studies/wide_fallback/sweeps.py water 100000 20 100 400
"""

from __future__ import annotations

import sys
import time
import warnings

warnings.simplefilter("ignore")

import numpy as np  # noqa: E402

import bn_scale  # noqa: E402
import harness  # noqa: E402
import pgmpy_dp  # noqa: E402
from pgmpy_dp.datasets import load_network  # noqa: E402

if __name__ == "__main__":
    name, n, sweeps = sys.argv[1], int(sys.argv[2]), [int(x) for x in sys.argv[3:]]
    net = load_network(name)
    df = pgmpy_dp.sample(net, n, random_state=0)
    test = pgmpy_dp.sample(net, 20_000, random_state=1)
    truth = bn_scale.log_probability(net, test)
    for k in sweeps:
        est = pgmpy_dp.DiscretePrivateMLE(1.0, random_state=0, max_iter=k)
        t = time.process_time()
        model = harness.empty_model(net).fit(df, estimator=est)
        excess = truth - bn_scale.log_probability(model, test)
        print(f"{name} N={n} {k} sweeps ({est.consistency_}): fit {time.process_time() - t:.2f} CPU s, "
              f"KL {excess.mean():.4f} +- {excess.std(ddof=1) / np.sqrt(len(excess)):.3f}", flush=True)
