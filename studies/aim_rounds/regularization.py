"""The published fit of one dumped AIM run (run_one.py --dump) at several L2 weights, scored on Adult.

  MAXIT=100 OMP_NUM_THREADS=1 python studies/aim_rounds/regularization.py /tmp/e1_2.pkl auto scaled 0.1 0.01

``auto``: the Markov estimator's floored default; ``scaled``: cgm_regularization without the floor;
a number: that weight for every clique. Warm-started from the dumped last round's fit, MAXIT EM maps.
"""
import json
import pickle
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
import synthesis  # noqa: E402
from peers_synthesis import Marginals  # noqa: E402
from pgmpy.models import DiscreteMarkovNetwork  # noqa: E402

from pgmpy_dp.estimators import markov  # noqa: E402
from pgmpy_dp.structure import marginals  # noqa: E402

releases, domain, fit = pickle.load(open(sys.argv[1], "rb"))
_, codes, sizes, states, _ = synthesis.load("adult", 0, 0, Path("/tmp"))
cl = marginals.measured_cliques(releases)
net = DiscreteMarkovNetwork(); net.add_nodes_from(domain.attrs)
net.add_edges_from((c[i], c[j]) for c in cl for i in range(len(c)) for j in range(i + 1, len(c)))
for reg in sys.argv[2:]:
    if reg == "scaled":
        from pgmpy_dp.estimators.measurements import clique_measurements
        from pgmpy_dp.estimators.evidence import pooled_n_records
        ms, ct = clique_measurements(releases, cl)
        n = pooled_n_records(releases)
        reg = markov.cgm_regularization(markov.auto_regularization([t for ts in ct for t in ts], n), [m.scale for m in ms])
    reg = reg if reg == "auto" else float(reg)
    c0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = markov.PrivateMarkovEstimator(inference="junction-tree", show_progress=False, regularization=reg, max_iter=int(__import__('os').environ.get('MAXIT', 100))).fit(net, releases, cliques=cl, init=dict(zip(fit.cliques, fit.theta)))
    s = synthesis.score(codes, sizes, [], model=Marginals(sizes, est.cliques_, est.log_potentials_))
    print(json.dumps({"dump": sys.argv[1], "reg": reg, "used": {k: (float(v) if not hasattr(v, "__len__") else [float(x) for x in v][:3]) for k, v in est.regularization_.items()}, "l1_3": round(s["l1_3"], 4), "n_iter": est.n_iter_, "cpu": round(time.process_time() - c0, 1)}), flush=True)
