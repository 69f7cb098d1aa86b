import numpy as np
import pytest

from pgmpy_dp.engine import JunctionTree, is_decomposable, triangulate
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.tables import contingency_table



def _assert_brute_force_marginals(jt, theta, brute_force):
    marg, log_z = jt.marginals(theta)
    exact, exact_log_z = brute_force(jt.domain, jt.cliques, theta)
    assert log_z == pytest.approx(exact_log_z, abs=1e-10)
    for c, m, e in zip(jt.cliques, marg, exact):
        assert m.shape == jt.domain.shape(c)
        np.testing.assert_allclose(m, e, atol=1e-12)


def test_marginals_and_log_partition_equal_brute_force(loopy_model, brute_force):
    domain, cliques, theta = loopy_model
    _assert_brute_force_marginals(JunctionTree(domain, cliques), theta, brute_force)


def test_attribute_order_inside_cliques_is_respected(brute_force):
    domain = Domain({"a": [0, 1], "b": [0, 1, 2], "c": [0, 1, 2, 3]})
    rng = np.random.default_rng(1)
    cliques = [("c", "a"), ("b", "c"), ("a", "b")]
    theta = [rng.normal(size=domain.shape(c)) for c in cliques]
    marg, log_z = JunctionTree(domain, cliques).marginals(theta)
    exact, exact_log_z = brute_force(domain, cliques, theta)
    assert log_z == pytest.approx(exact_log_z)
    for m, e in zip(marg, exact):
        np.testing.assert_allclose(m, e, atol=1e-12)


def test_disconnected_components_and_extreme_potentials(brute_force):
    domain = Domain({v: [0, 1, 2] for v in "abcd"})
    cliques = [("a", "b"), ("c", "d")]
    theta = [np.array([[800.0, -800.0, 0.0]] * 3), np.full((3, 3), -1000.0)]
    marg, log_z = JunctionTree(domain, cliques).marginals(theta)
    exact, exact_log_z = brute_force(domain, cliques, theta)
    assert np.isfinite(log_z) and log_z == pytest.approx(exact_log_z)
    for m, e in zip(marg, exact):
        np.testing.assert_allclose(m, e, atol=1e-12)


def test_decomposability_and_triangulation():
    d = Domain({v: [0, 1] for v in "abcde"})
    chain = [("a", "b"), ("b", "c"), ("c", "d")]
    assert is_decomposable(d, chain)
    assert not is_decomposable(d, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")])
    # the 4-cycle needs one chord: two 3-cliques
    assert sorted(len(c) for c in triangulate(d, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")])) == [1, 3, 3]


def test_exact_sampling_matches_marginals(loopy_model):
    domain, cliques, theta = loopy_model
    jt = JunctionTree(domain, cliques)
    marg, _ = jt.marginals(theta)
    n = 200_000
    codes = jt.sample(theta, n, random_state=0)
    assert set(codes) == set(domain.attrs)
    for c, m in zip(cliques, marg):
        emp = contingency_table(codes, domain, c) / n
        # binomial standard error bound: 5 sd of the largest cell
        assert np.max(np.abs(emp - m)) < 5 * np.sqrt(0.25 / n)


def _log_space_marginals(jt, theta):
    """The reference: marginals from the log-space calibration (one log-sum-exp per message)."""
    cal = jt.calibrate(theta)
    return [jt.marginal(cal, c) for c in jt.cliques], cal.log_z


@pytest.mark.parametrize("scale", [0.1, 3.0, 30.0])
def test_probability_space_marginals_equal_log_space_calibration(loopy_model, scale):
    """The fast path (exp once per clique, rescaled messages) gives the log-space answers."""
    rng = np.random.default_rng(7)
    domain = Domain({f"x{i}": list(range(k)) for i, k in enumerate([3, 4, 2, 5, 3, 4, 2])})
    chain = [(f"x{i}", f"x{j}") for i in range(7) for j in range(i + 1, 7) if j - i <= 2]
    for dom, cliques in [(loopy_model[0], loopy_model[1]), (domain, chain)]:
        jt = JunctionTree(dom, cliques)
        theta = [scale * rng.normal(size=dom.shape(c)) for c in cliques]
        assert jt._fast_marginals(jt._potentials(theta)) is not None  # the fast path did run
        marg, log_z = jt.marginals(theta)
        ref, ref_log_z = _log_space_marginals(jt, theta)
        assert log_z == pytest.approx(ref_log_z, rel=1e-12, abs=1e-9)
        for m, r in zip(marg, ref):
            np.testing.assert_allclose(m, r, rtol=1e-9, atol=1e-14)


def test_wide_or_zero_potentials_take_the_log_space_path(loopy_model, brute_force):
    domain, cliques, theta = loopy_model
    jt = JunctionTree(domain, cliques)
    zeros = [t.copy() for t in theta]
    zeros[0][0, :] = -np.inf  # exact zeros: a state the model rules out
    wide = [t.copy() for t in theta]
    wide[3][0, 0, 0] = -700.0  # one cell beyond the probability-space range
    for th in (zeros, wide):
        assert jt._fast_marginals(jt._potentials(th)) is None
        marg, log_z = jt.marginals(th)
        exact, exact_log_z = brute_force(domain, cliques, th)
        assert log_z == pytest.approx(exact_log_z)
        for m, e in zip(marg, exact):
            np.testing.assert_allclose(m, e, atol=1e-12)


def test_shared_partial_sums_give_the_brute_force_marginals(brute_force):
    """A third-order chain: 4-attribute tree cliques each host several edges, so the output plan
    sums 3-attribute marginals once and the edges from those (the path the 2-3 chain above never takes)."""
    rng = np.random.default_rng(3)
    domain = Domain({f"x{i}": list(range(k)) for i, k in enumerate([2, 3, 2, 3, 2, 3])})
    names = list(domain.attrs)
    cliques = [(names[i], names[j]) for i in range(6) for j in range(i + 1, 6) if j - i <= 3]
    cliques[1] = cliques[1][::-1]  # one edge in reversed attribute order: the final transposition
    cliques.append(("x2",))  # a singleton summed from a tree clique too
    jt = JunctionTree(domain, cliques)
    assert any(target >= 0 for steps in jt._outputs for _, _, target, _ in steps)  # an intermediate was planned
    _assert_brute_force_marginals(jt, [rng.normal(size=domain.shape(c)) for c in cliques], brute_force)
