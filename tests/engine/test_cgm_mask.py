"""CGM-EM with masked measurements: cells a table does not observe are left to the model."""

import numpy as np
import pytest

from pgmpy_dp.engine import JunctionTree, Measurement, cgm_em
from pgmpy_dp.privacy.domain import Domain

MASK = np.array([[False, True], [True, True]])  # cell (0, 0) is unobserved


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_masked_cell_adds_no_likelihood_gradient_or_curvature(noise):
    rng = np.random.default_rng(0)
    values = rng.normal(50.0, 5.0, size=(2, 2))
    n = rng.uniform(10.0, 90.0, size=(2, 2))
    m = Measurement(("a", "b"), values, 2.0, noise=noise, mask=MASK)
    other = values.copy()
    other[0, 0] = -1e6  # any value in the masked cell: the likelihood must not see it
    m2 = Measurement(("a", "b"), other, 2.0, noise=noise, mask=MASK)
    ll, g, k = m.log_likelihood(n)
    ll2, g2, k2 = m2.log_likelihood(n)
    assert ll == ll2
    np.testing.assert_array_equal(g, g2)
    np.testing.assert_array_equal(k, k2)
    assert g[0, 0] == 0.0 and k[0, 0] == 0.0
    # the observed cells score exactly as in an unmasked table
    full_ll, full_g, full_k = Measurement(("a", "b"), values, 2.0, noise=noise).log_likelihood(n)
    np.testing.assert_allclose(g[MASK], full_g[MASK])
    np.testing.assert_allclose(k[MASK], full_k[MASK])
    single = Measurement(("c",), values[0, :1], 2.0, noise=noise).log_likelihood(n[0, :1])[0]
    assert ll == pytest.approx(full_ll - single)


def test_all_true_mask_is_the_unmasked_measurement():
    assert Measurement(("a",), np.zeros(2), 1.0, mask=np.ones(2, dtype=bool)).mask is None


@pytest.mark.parametrize(
    "mask",
    [np.array([1, 0]), np.ones(3, dtype=bool), np.zeros(2, dtype=bool)],
    ids=["not-boolean", "wrong-shape", "nothing-observed"],
)
def test_bad_mask_is_refused_naming_the_table(mask):
    with pytest.raises(ValueError, match=r"measurement over \('a',\): mask must be a boolean array"):
        Measurement(("a",), np.zeros(2), 1.0, mask=mask)


def test_em_fills_a_masked_cell_from_the_other_measurements():
    """The (a, b) table's (0, 0) cell is released as 0 but unobserved; the a-table identifies it as 400."""
    domain = Domain({"a": [0, 1], "b": [0, 1]})
    jt = JunctionTree(domain, [("a", "b")])
    truth = np.array([[400.0, 100.0], [100.0, 400.0]])
    released = truth.copy()
    released[0, 0] = 0.0  # what a release that skips the (0, 0) cell publishes
    a_table = Measurement(("a",), truth.sum(axis=1), 1.0)
    masked = cgm_em(jt, [Measurement(("a", "b"), released, 1.0, mask=MASK), a_table], n_records=1000, max_iter=500)
    plain = cgm_em(jt, [Measurement(("a", "b"), released, 1.0), a_table], n_records=1000, max_iter=500, warn=False)
    # noise scale 1: the masked fit recovers every cell to well under a record per cell of noise x 10
    np.testing.assert_allclose(masked.counts[0], truth, atol=10.0)
    # reading the skipped cell as a zero count pulls it far away from the truth
    assert plain.counts[0][0, 0] < 300.0


@pytest.mark.slow
def test_masked_pooled_cell_of_a_tied_chain_is_recovered_when_the_record_count_is_known():
    """A pooled transition table whose (0, 0) cell is unobserved, plus the x1 table, over N known records
    (the setting of clipped, skipped counts with a public N): EM recovers the chain, (0, 0) included."""
    steps = [f"x{i}" for i in range(1, 6)]
    edges = list(zip(steps, steps[1:]))
    cliques = [("x1",)] + edges
    domain = Domain({v: [0, 1, 2] for v in steps})
    rng = np.random.default_rng(0)
    theta = [rng.normal(size=3)] + [rng.normal(size=(3, 3)) * 1.5 + 2.0 * np.eye(3)] * len(edges)
    jt = JunctionTree(domain, cliques)
    mu, _ = jt.marginals(theta)
    n = 1e5
    pooled_truth = n * sum(mu[1:])
    released = pooled_truth.copy()
    released[0, 0] = 0.0
    mask = np.ones((3, 3), dtype=bool)
    mask[0, 0] = False
    tied = [list(range(1, len(cliques)))]
    node = Measurement(("x1",), n * mu[0], 10.0)
    # start near the truth (the estimator starts from naive MLE): the uniform start stalls at these scales
    init = [t + rng.normal(scale=0.3, size=t.shape) for t in theta[:1]] + [theta[1] + rng.normal(scale=0.3, size=(3, 3))] * len(edges)
    fit = cgm_em(jt, [Measurement(edges[0], released, 10.0, members=edges, mask=mask), node], n_records=n,
                 tied=tied, init=init, max_iter=300, warn=False)
    assert fit.counts[0][0, 0] == pytest.approx(pooled_truth[0, 0], rel=1e-3)
    # exact tables: what is left is the smoothed likelihood's flat top, a fraction of the noise scale 10
    np.testing.assert_allclose(fit.counts[0], pooled_truth, rtol=1e-3, atol=2.0)
    unmasked = cgm_em(jt, [Measurement(edges[0], released, 10.0, members=edges), node], n_records=n,
                      tied=tied, init=init, max_iter=300, warn=False)
    assert unmasked.counts[0][0, 0] < 0.5 * pooled_truth[0, 0]  # read as a zero count, the cell collapses
