"""Seeded statistical check of PrivateMarkovEstimator: CGM-EM beats naive MLE at its defaults.

A small version of the benchmark of Bernstein et al. (section 4.1, ``benchmarks/mn_accuracy.py``):
an 8-node chain with edges between nodes up to two apart, 6 states, Dirichlet(1) edge potentials,
exact sampling; KL(true || learned) is computed exactly. Each setting averages several
releases of one population. N = 1e6 is the regime where a partially solved M-step once let
CGM-EM fall behind naive MLE.
"""

import warnings

import numpy as np
import pytest
from pgmpy.models import DiscreteMarkovNetwork

from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree
from pgmpy_dp.evaluation.markov import kl_divergence_potentials
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.tables import release_from_codes

NODES, K = 8, 6
EDGES = [(f"x{i}", f"x{j}") for i in range(NODES) for j in range(i + 1, NODES) if j - i <= 2]
RELEASES = 3


def _population(n_records: int, seed: int):
    rng = np.random.default_rng(seed)
    domain = Domain({f"x{i}": list(range(K)) for i in range(NODES)})
    theta = [np.log(rng.dirichlet(np.ones(K * K)).reshape(K, K)) for _ in EDGES]
    codes = JunctionTree(domain, EDGES).sample(theta, n_records, random_state=rng)
    return domain, theta, codes


# At N = 1e6 and epsilon = 1 both methods sit at the sampling error (a tie), so it is not tested.
@pytest.mark.parametrize("n_records, epsilon", [(10_000, 1.0), (1_000_000, 0.1)])
def test_cgm_em_has_lower_kl_than_naive_mle(n_records, epsilon):
    domain, theta, codes = _population(n_records, seed=n_records)
    model = DiscreteMarkovNetwork(EDGES)
    kl = {"naive-mle": [], "cgm-em": []}
    for seed in range(RELEASES):
        release = release_from_codes(codes, domain, EDGES, epsilon, random_state=seed)
        for method in kl:
            est = PrivateMarkovEstimator(method=method, show_progress=False)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                est.fit(model, release)
            kl[method].append(kl_divergence_potentials(domain, EDGES, theta, est.cliques_, est.log_potentials_))
    naive, cgm = np.mean(kl["naive-mle"]), np.mean(kl["cgm-em"])
    # measured: 0.091 vs 0.112 (N=1e4) and 0.0040 vs 0.0150 (N=1e6); ask for a clear 10% margin
    assert cgm < 0.9 * naive, f"CGM-EM mean KL {cgm:.4g} is not 10% below naive MLE's {naive:.4g}: {kl}"
