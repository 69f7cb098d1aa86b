"""CGM-EM's warm start from reconciled (consistent) tables: same EM fixed point, consistent targets."""

import warnings

import numpy as np
import pandas as pd
import pytest
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp.estimators.measurements as measurements
from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree, max_disagreement
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.tables import release_marginals

EDGES = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]  # one loop


def _frame(n, seed=0, k=3):
    rng = np.random.default_rng(seed)
    domain = Domain({v: list(range(k)) for v in "abcd"})
    theta = [np.log(rng.dirichlet(np.ones(k * k)).reshape(k, k)) for _ in EDGES]
    codes = JunctionTree(domain, EDGES).sample(theta, n, random_state=seed)
    return pd.DataFrame({v: pd.Categorical.from_codes(codes[v], categories=domain[v]) for v in domain.attrs})


def test_reconciled_targets_are_consistent_and_pool_repeated_releases():
    df = _frame(3000, seed=1)
    r1 = release_marginals(df, EDGES, epsilon=0.5, random_state=1)
    r2 = release_marginals(df, EDGES[:2], epsilon=0.5, random_state=2)
    _, per_clique = measurements.clique_measurements([r1, r2], EDGES)
    targets = measurements._reconciled_targets(EDGES, per_clique, 3000.0)
    assert all(np.all(t >= 0) and t.sum() == pytest.approx(1.0) for t in targets)
    assert max_disagreement(EDGES, targets) < 1e-10
    naive = measurements._naive_targets(EDGES, per_clique, 3000.0)
    assert max_disagreement(EDGES, naive) > 1e-3  # what reconciling removes


def test_tied_potentials_are_started_from_the_noisy_targets():
    """A time-homogeneous chain released as one pooled table: every member gets the pooled mean table,
    which reconciling would force to agree with itself across the chain's steps, so a tied fit is
    started from the noisy targets (``warm_start_`` reports it)."""
    from tests.estimators.test_markov_tied import CLIQUES, EDGES as CHAIN, sample

    df, domain, _, _ = sample(5000)
    est = PrivateMarkovEstimator(method="cgm-em", show_progress=False, max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(DiscreteMarkovNetwork(CHAIN), df, epsilon=1.0, domain={v: domain[v] for v in domain.attrs},
                cliques=CLIQUES, tied=[CHAIN])
    assert est.warm_start_ == "noisy"
    theta = est.log_potentials_
    for t in theta[2:]:
        np.testing.assert_allclose(t, theta[1])


def test_warm_start_used_is_reported():
    release = release_marginals(_frame(2000), EDGES, epsilon=1.0, random_state=4)
    for method, used in [("cgm-em", "reconciled"), ("naive-mle", None)]:
        est = PrivateMarkovEstimator(method=method, show_progress=False, max_iter=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(DiscreteMarkovNetwork(EDGES), release)
        assert est.warm_start_ == used
