"""The redesign changed no number of the adopted defaults: seeded fits, digests of their parameters.

Run from the root of a checkout, once at d3f200f (before the redesign) and once after, each with
an output path; the printed digests must agree, and so must the saved arrays:

    git worktree add /tmp/before d3f200f && (cd /tmp/before && python /path/to/this.py /tmp/before.npz)
    python studies/redesign/same_numbers.py /tmp/after.npz

Both runs printed the lines in same_numbers.txt (max absolute difference of the arrays: 0.0).
"""
import hashlib, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
import pgmpy_dp
from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork
from pgmpy.utils import get_example_model

def digest(arrays):
    h = hashlib.sha1()
    for a in arrays:
        h.update(np.round(np.asarray(a, dtype=float), 10).tobytes())
    return h.hexdigest()[:12]

out = {}
import atexit
atexit.register(lambda: np.savez(sys.argv[1], **out))
for name, n in [("asia", 10_000), ("alarm", 10_000), ("child", 5_000)]:
    df = pgmpy_dp.datasets.sample_network(name, n, seed=0)
    true = get_example_model(name)
    for alloc, cons in [("optimal", "likelihood"), ("uniform", "projection"), ("data-dependent", "likelihood")]:
        bn = DiscreteBayesianNetwork(true.edges()); bn.add_nodes_from(true.nodes())
        bn.fit(df, estimator=pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, allocation=alloc, consistency=cons, random_state=1))
        vals = [bn.get_cpds(v).get_values() for v in sorted(bn.nodes())]
        out[f"BN {name} {alloc}/{cons}"] = np.concatenate([np.ravel(v) for v in vals])
        print(f"BN {name} {alloc}/{cons}: {digest(vals)}  sum={sum(float(v.sum()) for v in vals):.6f}")
# Markov: asia as a pairwise MN, and a releases-first fit
df = pgmpy_dp.datasets.sample_network("asia", 10_000, seed=0)
edges = [("asia", "tub"), ("smoke", "lung"), ("smoke", "bronc"), ("tub", "either"), ("lung", "either"), ("either", "xray"), ("either", "dysp"), ("bronc", "dysp")]
for method in ["cgm-em", "naive-mle"]:
    for N in [1_000, 10_000]:
        est = pgmpy_dp.PrivateMarkovEstimator(method=method, random_state=2, show_progress=False)
        est.fit(DiscreteMarkovNetwork(edges), df.iloc[:N], epsilon=1.0)
        out[f"MN asia {method} {N}"] = np.concatenate([np.ravel(v) for v in est.log_potentials_])
        print(f"MN asia {method} N={N}: {digest(est.log_potentials_)}  n_iter={est.n_iter_}")
rel = df.dp.release([("smoke", "lung"), ("lung",), ("smoke",)], epsilon=1.0, random_state=3)
est = pgmpy_dp.PrivateMarkovEstimator(show_progress=False)
est.fit(DiscreteMarkovNetwork([("smoke", "lung")]), rel)
out["MN rel"] = np.concatenate([np.ravel(v) for v in est.log_potentials_])
print(f"MN release-first: {digest(est.log_potentials_)}")
