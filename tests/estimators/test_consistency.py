import numpy as np
import pytest

from pgmpy_dp import Domain
from pgmpy_dp.estimators.consistency import (
    marginal_index,
    max_inconsistency,
    project_consistent,
)

ATTRS = [("a", "b"), ("b", "c"), ("c",), ("a", "d"), ("e",)]
SHAPES = {"a": 2, "b": 3, "c": 2, "d": 4, "e": 3}


def _tables(rng, loc=50.0, noise=10.0):
    return [rng.normal(loc, noise, size=[SHAPES[x] for x in t]) for t in ATTRS]


def test_marginal_index_agrees_with_numpy_sums():
    rng = np.random.default_rng(0)
    t = rng.random((2, 3, 4))
    idx = marginal_index(["x", "y", "z"], t.shape, ["z", "x"])
    np.testing.assert_allclose(np.bincount(idx, weights=t.ravel()), t.sum(axis=1).T.ravel())


@pytest.mark.parametrize("seed", range(3))
def test_projection_is_consistent_and_non_negative(seed):
    rng = np.random.default_rng(seed)
    noisy = _tables(rng, loc=5.0, noise=10.0)  # many negative cells
    assert max_inconsistency(ATTRS, noisy) > 1.0
    out = project_consistent(ATTRS, noisy, [1.0, 4.0, 2.0, 1.0, 9.0])
    assert all(o.shape == n.shape for o, n in zip(out, noisy))
    assert min(o.min() for o in out) >= 0
    total = out[0].sum()
    assert max_inconsistency(ATTRS, out) <= 1e-6 * total


def test_projection_keeps_consistent_input_and_trusts_low_variance_tables():
    rng = np.random.default_rng(1)
    joint = rng.uniform(1, 10, size=(2, 3, 2, 4, 3))  # a joint over a..e; its marginals agree
    axes = "abcde"
    exact = [joint.sum(axis=tuple(i for i, x in enumerate(axes) if x not in t)) for t in ATTRS]
    out = project_consistent(ATTRS, exact, [1.0] * len(ATTRS))
    for o, e in zip(out, exact):
        np.testing.assert_allclose(o, e, rtol=1e-6)
    # perturb table 0; when it is precise (low variance), table 2's margin moves to it, not vice versa
    shifted = [t.copy() for t in exact]
    shifted[0] = shifted[0] * 1.0
    shifted[2] = shifted[2] + np.array([30.0, -30.0])
    precise = project_consistent(ATTRS, shifted, [1.0, 1e-4, 1e4, 1.0, 1.0])
    np.testing.assert_allclose(precise[2], exact[2], rtol=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("name, noise", [("child", 1.0), ("alarm", 1.0), ("alarm", 30.0)])
def test_dual_newton_projection_matches_clarabel_within_a_tiny_fraction_of_the_noise(name, noise):
    net, df, domain, families, exact = _family_counts(name, 10_000, seed=4)
    rng = np.random.default_rng(5)
    # Laplace scales of an epsilon = 1 release with epsilon_i proportional to cells_i^(1/3): many negative cells
    cells = np.array([t.size for t in exact], dtype=float)
    # noise = 30 (epsilon 1/30) drives most cells to zero: a large, degenerate active set
    scales = noise * np.sum(np.cbrt(cells)) / np.cbrt(cells)
    noisy = [t + rng.laplace(0.0, b, size=t.shape) for t, b in zip(exact, scales)]
    variances = list(2 * scales**2)
    fast = project_consistent(families, noisy, variances)
    reference = project_consistent(families, noisy, variances, solver="CLARABEL")
    gap = max(float(np.abs(f - r).max()) for f, r in zip(fast, reference))
    # the two solvers reach the same optimum: far below one noise standard deviation (at least 20 counts)
    assert gap < 1e-4 * float(np.sqrt(min(variances)))
    assert min(float(f.min()) for f in fast) >= 0
    assert max_inconsistency(families, fast) <= 1e-8 * fast[0].sum()


def test_projection_falls_back_to_clarabel_when_the_newton_method_gives_up(monkeypatch):
    from pgmpy_dp.estimators import consistency

    rng = np.random.default_rng(3)
    noisy = _tables(rng, loc=5.0, noise=10.0)
    variances = [1.0, 4.0, 2.0, 1.0, 9.0]
    monkeypatch.setattr(consistency, "_dual_newton", lambda *args, **kwargs: None)
    fallback = project_consistent(ATTRS, noisy, variances)
    monkeypatch.undo()
    direct = project_consistent(ATTRS, noisy, variances)
    for f, d in zip(fallback, direct):
        np.testing.assert_allclose(f, d, atol=1e-6)


def test_projection_of_tables_sharing_nothing_clips_each_table():
    out = project_consistent([("a",)], [np.array([3.0, -2.0, 1.0])], [1.0])
    np.testing.assert_array_equal(out[0], [3.0, 0.0, 1.0])


# -- the likelihood fit (pgmpy_dp.estimators.likelihood) ------------------------------------


def _families(net):
    return [(n, *sorted(net.get_parents(n))) for n in net.nodes()]


def _family_counts(name: str, n: int, seed: int):
    """A bnlearn network, ``n`` records sampled from it, their domain and exact family tables."""
    from pgmpy_dp.datasets import load_network, sample_network
    from pgmpy_dp.tables.counting import contingency_table

    net = load_network(name)
    df = sample_network(net, n, seed=seed)
    domain = Domain({v: list(net.states[v]) for v in net.nodes()})
    codes = domain.encode(df, list(net.nodes()))
    families = _families(net)
    return net, df, domain, families, [contingency_table(codes, domain, f) for f in families]


@pytest.mark.slow
def test_likelihood_fit_recovers_exact_tables_from_noiseless_measurements():
    from pgmpy_dp.engine import Measurement
    from pgmpy_dp.estimators.likelihood import fit_family_tables

    net, df, domain, families, exact = _family_counts("sachs", 3000, seed=2)
    # scale 1e-6: the likelihood pins every cell within about a millionth of a count
    measurements = [Measurement(f, t, 1e-6) for f, t in zip(families, exact)]
    fit = fit_family_tables(domain, families, measurements, n_records=len(df))
    for f, got, want in zip(families, fit.tables, exact):
        np.testing.assert_allclose(got, want, atol=1e-3, err_msg=str(f))
        assert np.all(got > 0)  # cells without records are tiny, never exactly zero


@pytest.mark.slow
@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_likelihood_fit_beats_each_noisy_table_alone_and_takes_both_noise_models(noise):
    from pgmpy_dp.engine import Measurement
    from pgmpy_dp.estimators.likelihood import fit_family_tables

    net, df, domain, families, exact = _family_counts("asia", 20000, seed=3)
    rng = np.random.default_rng(0)
    scale = 40.0
    draw = rng.laplace if noise == "laplace" else rng.normal
    noisy = [t + draw(0.0, scale, size=t.shape) for t in exact]
    fit = fit_family_tables(domain, families, [Measurement(f, y, scale, noise) for f, y in zip(families, noisy)],
                            n_records=len(df))
    raw = sum(float(np.abs(y - t).sum()) for y, t in zip(noisy, exact))
    fitted = sum(float(np.abs(g - t).sum()) for g, t in zip(fit.tables, exact))
    # tables over shared attributes pool their evidence: the fit is clearly closer than the raw tables
    assert fitted < 0.8 * raw
    assert all(np.isclose(g.sum(), len(df)) for g in fit.tables)


def test_likelihood_fit_names_an_unknown_prior():
    from pgmpy_dp.engine import Measurement
    from pgmpy_dp.estimators.likelihood import fit_family_tables

    d = Domain({"a": [0, 1]})
    with pytest.raises(ValueError, match="prior must be 'gaussian' or 'dirichlet', got 'flat'"):
        fit_family_tables(d, [("a",)], [Measurement(("a",), np.array([3.0, 1.0]), 1.0)], 4.0, prior="flat")
