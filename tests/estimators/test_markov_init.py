"""PrivateMarkovEstimator.fit(init=...): a start for the fit's own loop, never a different optimum."""

import warnings

import numpy as np
import pytest
from pgmpy.models import DiscreteMarkovNetwork

from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.synthesis.marginals import MarkovFit, measure, measured_cliques

N = 20_000
DOMAIN = Domain({"a": range(4), "b": range(4), "c": range(3), "d": range(5)})


@pytest.fixture(scope="module")
def releases():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, N)
    b = (a + rng.integers(0, 2, N)) % 4
    codes = {"a": a, "b": b, "c": (b + (rng.random(N) < 0.2)) % 3, "d": (rng.integers(0, 5, N) + a) % 5}
    return [
        measure(codes, DOMAIN, [("a",), ("b",), ("c",), ("d",)], 0.05, rng, "1-way"),
        measure(codes, DOMAIN, [("a", "b"), ("c", "b"), ("a", "d", "b")], 0.05, rng, "sets"),
    ]


def network(cliques):
    mn = DiscreteMarkovNetwork()
    mn.add_nodes_from(DOMAIN.attrs)
    mn.add_edges_from((c[i], c[j]) for c in cliques for i in range(len(c)) for j in range(i + 1, len(c)))
    return mn


def fitted_counts(releases, init, **kw):
    cliques = measured_cliques(releases)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = PrivateMarkovEstimator(show_progress=False, **kw).fit(network(cliques), releases, cliques=cliques, init=init)
    jt = JunctionTree(DOMAIN, est.cliques_)
    calibration = jt.calibrate(est.log_potentials_)
    return est, [N * jt.marginal(calibration, c) for c in cliques]


@pytest.mark.slow
def test_a_warm_start_reaches_the_cold_fits_optimum(releases):
    start = MarkovFit(DOMAIN, max_iter=2).fit(releases)  # a few EM maps on its own objective: a nearby point
    init = dict(zip(start.cliques, start.theta))
    cold, cold_counts = fitted_counts(releases, None, max_iter=1000)
    warm, warm_counts = fitted_counts(releases, init, max_iter=1000)
    assert cold.converged_ and warm.converged_
    assert warm.mle_n_iter_ == 0 < cold.mle_n_iter_  # the naive warm start was skipped
    sigma = min(t.scale for r in releases for t in r.tables)
    # EM stops once no count moves by more than 1e-3 noise scales per map; at a contraction rate of
    # up to 0.98 per map each fit is then within 0.05 sigma of the optimum, so the two within 0.1 sigma
    tolerance = 2 * 1e-3 / (1 - 0.98) * sigma
    assert max(np.abs(c - w).max() for c, w in zip(cold_counts, warm_counts)) < tolerance
    # and the start itself was not already there
    start_counts = [N * start.marginal(c) for c in measured_cliques(releases)]
    assert max(np.abs(c - s).max() for c, s in zip(cold_counts, start_counts)) > 2 * tolerance


def test_init_keys_in_any_axis_order_and_missing_cliques(releases):
    start = MarkovFit(DOMAIN, max_iter=2).fit(releases)
    init = dict(zip(start.cliques, start.theta))
    flipped = {c[::-1]: np.transpose(t) for c, t in init.items()}
    a, _ = fitted_counts(releases, init, max_iter=3)
    b, _ = fitted_counts(releases, flipped, max_iter=3)
    for x, y in zip(a.log_potentials_, b.log_potentials_):
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-12)
    # a clique missing from init starts at zero, which is another start than init's own
    partial = {c: t for c, t in init.items() if c != ("a", "d", "b")}
    c, _ = fitted_counts(releases, partial, max_iter=3)
    assert max(np.abs(x - y).max() for x, y in zip(a.log_potentials_, c.log_potentials_)) > 1e-3


def test_init_changes_nothing_when_absent(releases):
    a, _ = fitted_counts(releases, None, max_iter=3)
    cliques = measured_cliques(releases)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        b = PrivateMarkovEstimator(show_progress=False, max_iter=3).fit(network(cliques), releases, cliques=cliques)
    assert a.mle_n_iter_ == b.mle_n_iter_ > 0
    for x, y in zip(a.log_potentials_, b.log_potentials_):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize(
    "init, kw, error, match",
    [
        ([np.zeros(4)], {}, TypeError, "init must be a mapping"),
        ({("a", "c"): np.zeros((4, 3))}, {}, ValueError, r"\('a', 'c'\), which is not a clique"),
        ({("a", "b"): np.zeros((4, 3))}, {}, ValueError, r"init\[\('a', 'b'\)\] must be a finite array of shape \(4, 4\)"),
        ({("a", "b"): np.full((4, 4), np.nan)}, {}, ValueError, "finite array"),
        ({("a", "b"): np.zeros((4, 4))}, {"tied": [[("a", "b"), ("c", "b")]]}, ValueError, "init cannot be combined with tied"),
    ],
)
def test_init_errors_name_the_problem(releases, init, kw, error, match):
    cliques = measured_cliques(releases)
    with pytest.raises(error, match=match):
        PrivateMarkovEstimator(show_progress=False).fit(network(cliques), releases, cliques=cliques, init=init, **kw)
