"""CGM-EM with pooled measurements: one table measuring the sum of several cliques' tables."""

import numpy as np
import pytest

from pgmpy_dp.engine import JunctionTree, Measurement, cgm_em
from pgmpy_dp.privacy.domain import Domain

STEPS = 5
NODES = [f"x{i}" for i in range(1, STEPS + 1)]
EDGES = [(a, b) for a, b in zip(NODES, NODES[1:])]


def _chain(k=3, seed=0):
    rng = np.random.default_rng(seed)
    domain = Domain({v: list(range(k)) for v in NODES})
    cliques = [("x1",)] + EDGES
    node = rng.normal(size=k)
    edge = rng.normal(size=(k, k)) * 1.5
    theta = [node] + [edge] * len(EDGES)
    return domain, cliques, theta


def test_pooled_prediction_is_the_sum_of_member_tables():
    domain, cliques, theta = _chain()
    jt = JunctionTree(domain, cliques)
    mu, _ = jt.marginals(theta)
    pooled = Measurement(EDGES[0], np.zeros((3, 3)), 1.0, members=EDGES)
    fit = cgm_em(jt, [pooled, Measurement(("x1",), np.zeros(3), 1.0)], n_records=10.0, init=theta, max_iter=1, warn=False)
    # max_iter=1 still runs one EM step; recompute the prediction at theta directly instead
    fit_counts = fit.counts[0]
    assert fit_counts.shape == (3, 3)
    # the prediction at the true parameters: sum of edge marginals, times N
    jt_mu, _ = jt.marginals(fit.log_potentials)
    np.testing.assert_allclose(fit_counts, 10.0 * sum(jt_mu[1:]), rtol=1e-10)


@pytest.mark.slow
def test_noiseless_pooled_table_recovers_a_time_homogeneous_chain():
    """A nearly exact pooled edge table plus the x1 table identify the tied potential: EM recovers the marginals.

    Noise scale 10 on 1e5 records (the true tables, no noise drawn): from the uniform start, scales far
    below one record make the E-step stall (as for ordinary tables); the estimator starts from naive MLE.
    """
    domain, cliques, theta = _chain()
    jt = JunctionTree(domain, cliques)
    mu, _ = jt.marginals(theta)
    n = 1e5
    pooled = Measurement(EDGES[0], n * sum(mu[1:]), 10.0, members=EDGES)
    node = Measurement(("x1",), n * mu[0], 10.0)
    tied = [list(range(1, len(cliques)))]
    fit = cgm_em(jt, [pooled, node], n_records=n, tied=tied, max_iter=300, warn=False)
    got, _ = jt.marginals(fit.log_potentials)
    for a, b in zip(got, mu):
        np.testing.assert_allclose(a, b, atol=1e-4)
    # the tied potentials stay one array
    for t in fit.log_potentials[2:]:
        np.testing.assert_array_equal(t, fit.log_potentials[1])


def test_single_member_pooled_measurement_equals_the_ordinary_one():
    domain, cliques, theta = _chain()
    jt = JunctionTree(domain, cliques)
    mu, _ = jt.marginals(theta)
    rng = np.random.default_rng(3)
    n = 2000
    plain = [Measurement(c, n * m + rng.laplace(0, 4.0, size=m.shape), 4.0) for c, m in zip(cliques, mu)]
    pooled = [Measurement(m.attrs, m.values, m.scale, members=[m.attrs]) for m in plain]
    a = cgm_em(jt, plain, n_records=n, regularization=1e-3, max_iter=20, warn=False)
    b = cgm_em(jt, pooled, n_records=n, regularization=1e-3, max_iter=20, warn=False)
    assert a.n_iter == b.n_iter
    for x, y in zip(a.log_potentials, b.log_potentials):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


def test_pooled_member_outside_every_clique_is_rejected():
    domain, cliques, _ = _chain()
    jt = JunctionTree(domain, cliques)
    bad = Measurement(("x1", "x2"), np.ones((3, 3)), 1.0, members=[("x1", "x2"), ("x1", "x3")])
    with pytest.raises(ValueError, match=r"\('x1', 'x3'\) is not contained in any model clique"):
        cgm_em(jt, [bad], n_records=9.0, max_iter=2)


@pytest.mark.parametrize(
    "members, match",
    [([], "non-empty"), ([("x2", "x3")], "the first equal to attrs"), ([("x1", "x2"), ("x3",)], "length 2")],
)
def test_malformed_members_are_rejected(members, match):
    with pytest.raises(ValueError, match=match):
        Measurement(("x1", "x2"), np.ones((3, 3)), 1.0, members=members)


def test_pooled_member_with_another_shape_is_rejected():
    domain = Domain({"a": [0, 1], "b": [0, 1], "c": [0, 1, 2]})
    jt = JunctionTree(domain, [("a", "b"), ("b", "c")])
    bad = Measurement(("a", "b"), np.ones((2, 2)), 1.0, members=[("a", "b"), ("b", "c")])
    with pytest.raises(ValueError, match=r"measurement over \('b', 'c'\) has shape \(2, 2\), expected \(2, 3\)"):
        cgm_em(jt, [bad], n_records=4.0, max_iter=2)
