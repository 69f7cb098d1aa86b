import numpy as np
import pytest

from pgmpy_dp.engine import JunctionTree, Measurement, cgm_em, laplace_log_likelihood
from pgmpy_dp.engine.cgm import LONG_M_STEP, SHORT_M_STEP, m_step_length


def noisy_tables(model, n, scale, seed):
    """The model's junction tree and its clique tables for n records plus Laplace noise of this scale."""
    domain, cliques, theta = model
    jt = JunctionTree(domain, cliques)
    marg, _ = jt.marginals(theta)
    rng = np.random.default_rng(seed)
    return jt, [Measurement(c, n * m + rng.laplace(0, scale, size=m.shape), scale) for c, m in zip(cliques, marg)]


def test_smoothed_laplace_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    y = rng.normal(0, 50, size=20)
    n = rng.normal(0, 50, size=20)
    ll, g, k = laplace_log_likelihood(y, n, scale=7.0, smoothing=1.0)
    for i in range(5):
        e = np.zeros_like(n)
        e[i] = 1e-5
        up, down = laplace_log_likelihood(y, n + e, 7.0)[0], laplace_log_likelihood(y, n - e, 7.0)[0]
        assert (up - down) / 2e-5 == pytest.approx(g[i], rel=1e-5, abs=1e-9)
        e[i] = 1e-2  # second differences need a larger step to beat rounding
        up, down = laplace_log_likelihood(y, n + e, 7.0)[0], laplace_log_likelihood(y, n - e, 7.0)[0]
        assert -(up - 2 * ll + down) / 1e-4 == pytest.approx(k[i], rel=1e-3, abs=1e-7)
    # far from the data the gradient is the paper's sign(y - n) / scale
    _, g_far, _ = laplace_log_likelihood(np.array([1e6, -1e6]), np.zeros(2), scale=2.0)
    np.testing.assert_allclose(g_far, [0.5, -0.5], rtol=1e-6)


@pytest.mark.parametrize("accelerate", [False, True])
def test_em_objective_never_decreases(loopy_model, accelerate):
    """Plain EM and SQUAREM (which keeps a jump only if the objective did not fall) are monotone."""
    n = 2000
    jt, meas = noisy_tables(loopy_model, n, 5.0, seed=1)
    res = cgm_em(jt, meas, n_records=n, regularization=1.0 / n, max_iter=15, accelerate=accelerate, warn=False)
    trace = np.array(res.log_likelihood)
    assert np.all(np.diff(trace) >= -1e-6 * np.abs(trace[:-1]).max())
    assert trace[-1] > trace[0]


def test_measurements_outside_every_clique_are_rejected():
    from pgmpy_dp.privacy.domain import Domain

    d = Domain({v: [0, 1] for v in "abc"})
    jt = JunctionTree(d, [("a", "b"), ("b", "c")])
    with pytest.raises(ValueError, match=r"\('a', 'c'\) is not contained in any model clique"):
        cgm_em(jt, [Measurement(("a", "c"), np.ones((2, 2)), 1.0)], n_records=4)


def test_gaussian_gradient_and_curvature_match_finite_differences():
    from pgmpy_dp.engine import gaussian_log_likelihood

    rng = np.random.default_rng(1)
    y, n = rng.normal(0, 30, size=10), rng.normal(0, 30, size=10)
    ll, g, k = gaussian_log_likelihood(y, n, sigma=4.0)
    for i in range(5):
        e = np.zeros_like(n)
        e[i] = 1e-3
        up, down = gaussian_log_likelihood(y, n + e, 4.0)[0], gaussian_log_likelihood(y, n - e, 4.0)[0]
        assert (up - down) / 2e-3 == pytest.approx(g[i], rel=1e-6)
        assert -(up - 2 * ll + down) / 1e-6 == pytest.approx(k[i], rel=1e-3)


def test_measurement_dispatches_on_its_noise_model():
    y = np.array([3.0, 0.0])
    lap = Measurement(("a",), y, 2.0)
    gau = Measurement(("a",), y, 2.0, noise="gaussian")
    assert lap.log_likelihood(np.zeros(2), smoothing=0)[0] == pytest.approx(-1.5)
    assert gau.log_likelihood(np.zeros(2))[0] == pytest.approx(-9.0 / 8.0)
    with pytest.raises(ValueError, match="noise must be one of"):
        Measurement(("a",), y, 2.0, noise="cauchy")


def test_cgm_em_with_gaussian_measurements_recovers_nearly_noiseless_counts():
    from pgmpy_dp.privacy.domain import Domain

    d = Domain({"a": [0, 1], "b": [0, 1]})
    jt = JunctionTree(d, [("a", "b")])
    y = Measurement(("a", "b"), np.array([[600.0, 100.0], [100.0, 200.0]]), scale=0.01, noise="gaussian")
    fit = cgm_em(jt, [y], n_records=1000, max_iter=500)
    np.testing.assert_allclose(fit.counts[0], y.values, atol=0.5)


@pytest.mark.slow
def test_count_rule_stops_when_the_counts_stop_moving(loopy_model):
    """count_tol stops EM long before the objective's relative change reaches rounding level, with
    counts within a small fraction of a noise scale of the fully converged ones (measured: 35-83
    against 517-1029 iterations, at most 0.054 scales apart, over three releases)."""
    n, scale = 5000, 5.0
    jt, meas = noisy_tables(loopy_model, n, scale, seed=1)
    common = dict(n_records=n, regularization=1.0 / n, max_iter=3000, tol=1e-300, warn=False)
    early = cgm_em(jt, meas, count_tol=1e-3, **common)
    full = cgm_em(jt, meas, count_tol=0, **common)
    assert early.converged and full.converged
    assert 5 * early.n_iter < full.n_iter
    assert max(float(np.max(np.abs(a - b))) for a, b in zip(early.counts, full.counts)) < 0.1 * scale


@pytest.mark.slow
def test_short_m_steps_reach_the_same_fixed_point(loopy_model):
    """A partial M-step (5 L-BFGS iterations, the short length) changes EM's path, not its fixed point:
    run to convergence, 5 and 20 iterations per M-step give the same counts and objective."""
    n, scale = 5000, 5.0
    jt, meas = noisy_tables(loopy_model, n, scale, seed=3)
    common = dict(n_records=n, regularization=1.0 / n, max_iter=3000, tol=1e-12, count_tol=1e-6, warn=False)
    short = cgm_em(jt, meas, m_step_iter=5, **common)
    long = cgm_em(jt, meas, m_step_iter=20, **common)
    assert short.converged and long.converged
    assert max(float(np.max(np.abs(a - b))) for a, b in zip(short.counts, long.counts)) < 1e-3 * scale
    assert short.log_likelihood[-1] == pytest.approx(long.log_likelihood[-1], rel=1e-8)


def test_m_step_length_switches_where_noise_and_counts_weigh_the_same():
    """Short M-steps exactly when every table's typical cell count times its noise curvature is below 1:
    Gaussian noise of std sigma on a 4-cell table switches at N = 4 sigma^2, the smoothed Laplace at
    N = 4 smoothing scale^2; the most informative table decides, and masked cells do not count."""
    sigma = 10.0
    g = Measurement(("a", "b"), np.zeros((2, 2)), sigma, noise="gaussian")
    assert m_step_length([g], 0.99 * 4 * sigma**2) == SHORT_M_STEP
    assert m_step_length([g], 1.01 * 4 * sigma**2) == LONG_M_STEP
    lap = Measurement(("a", "b"), np.zeros((2, 2)), 3.0)
    assert m_step_length([lap], 0.99 * 4 * 9.0 * 2.0, smoothing=2.0) == SHORT_M_STEP
    assert m_step_length([lap], 1.01 * 4 * 9.0 * 2.0, smoothing=2.0) == LONG_M_STEP
    noisy = Measurement(("a", "b"), np.zeros((2, 2)), 1e3)
    assert m_step_length([noisy, g], 1e3) == LONG_M_STEP  # g's cells are stiff at N = 1000
    half = Measurement(("a", "b"), np.zeros((2, 2)), sigma, noise="gaussian", mask=np.array([[True, True], [False, False]]))
    assert m_step_length([half], 1.01 * 2 * sigma**2) == LONG_M_STEP  # 2 observed cells share the records
    crowded = Measurement(("a", "b"), np.zeros((2, 2)), 1e4)  # noise-dominated, but 4,000 records a cell
    assert m_step_length([crowded], 16_000) == LONG_M_STEP


def _per_table_directions(measurements, hosts, cliques, domain, mu, n_records, smoothing):
    """The E-step's likelihood terms table by table (the loop _FlatTables replaces), as the reference."""
    from pgmpy_dp.engine.factor import align

    shapes = [domain.shape(c) for c in cliques]
    grad, stiff, toward = ([np.zeros(sh) for sh in shapes] for _ in range(3))
    n_meas = np.zeros(len(cliques))
    for parts in hosts:
        for _, h in parts:
            n_meas[h] += 1
    total = 0.0
    for m, parts in zip(measurements, hosts):
        n = n_records * sum(
            np.moveaxis(mu[h].sum(axis=tuple(i for i, a in enumerate(cliques[h]) if a not in attrs)),
                        [ [a for a in cliques[h] if a in attrs].index(a) for a in attrs], range(len(attrs)))
            for attrs, h in parts
        )
        ll, g, k = m.log_likelihood(n, smoothing)
        total += ll
        ratio = np.log(np.maximum(m.values, 0.5)) - np.log(np.maximum(n, 1e-300))
        if m.mask is not None:
            ratio = np.where(m.mask, ratio, 0.0)
        for attrs, h in parts:
            grad[h] = grad[h] + align(g, attrs, cliques[h])
            stiff[h] = stiff[h] + align(k * np.maximum(n, 0.0) / len(parts), attrs, cliques[h])
            toward[h] = toward[h] + align(ratio, attrs, cliques[h]) / n_meas[h]
    return total, grad, stiff, toward


@pytest.mark.parametrize("smoothing", [1.0, 0.5, 0])
@pytest.mark.parametrize("mixed", [False, True])
def test_flat_tables_match_the_tables_one_by_one(smoothing, mixed):
    """Predicted counts through one sparse map: the same likelihood, gradient, stiffness and log-ratio per clique
    cell as summing each table (pooled members, subsets of a clique, permuted axes, masks, Gaussian tables) alone."""
    from pgmpy_dp.engine.cgm import _FlatTables, _host_cliques
    from pgmpy_dp.privacy.domain import Domain

    rng = np.random.default_rng(5)
    domain = Domain({"a": [0, 1], "b": [0, 1, 2], "c": [0, 1], "d": [0, 1, 2, 3]})
    cliques = [("a", "b", "c"), ("c", "d"), ("a",)]
    noise = "gaussian" if mixed else "laplace"
    measurements = [
        Measurement(("c", "a"), rng.normal(30, 8, (2, 2)), 2.0),                          # a subset, permuted
        Measurement(("a", "b", "c"), rng.normal(10, 8, (2, 3, 2)), 3.0, noise=noise),       # the whole clique
        Measurement(("d", "c"), rng.normal(15, 8, (4, 2)), 1.5, mask=rng.random((4, 2)) < 0.6),
        # pooled over two members in one clique, one of them transposed: where a == c both land on one cell
        Measurement(("a", "c"), rng.normal(60, 8, (2, 2)), 2.5, members=[("a", "c"), ("c", "a")]),
        Measurement(("c",), rng.normal(50, 8, (2,)), 4.0, members=[("c",), ("a",)]),         # pooled over two cliques
    ]
    hosts = _host_cliques(cliques, measurements)
    mu = [rng.dirichlet(np.ones(int(np.prod(domain.shape(c))))).reshape(domain.shape(c)) for c in cliques]
    flat = _FlatTables(measurements, hosts, cliques, domain, smoothing, 100.0)
    total, grad, stiff, toward = flat.directions(mu)
    ref = _per_table_directions(measurements, hosts, cliques, domain, mu, 100.0, smoothing)
    assert total == pytest.approx(ref[0], rel=1e-12)
    assert flat.value(mu) == pytest.approx(ref[0], rel=1e-12)
    for got, want in zip((grad, stiff, toward), ref[1:]):
        for a, b in zip(got, want):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
