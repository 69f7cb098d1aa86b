"""Reconciled clique tables: consistent on every separator, unchanged when already consistent, fit exactly."""

import numpy as np
import pytest

from pgmpy_dp.engine import JunctionTree, fit_log_potentials, max_disagreement, reconcile_tables
from pgmpy_dp.engine.factor import marginal
from pgmpy_dp.engine.reconcile import separators
from pgmpy_dp.privacy.domain import Domain


def _decomposable():
    domain = Domain({v: list(range(k)) for v, k in zip("abcde", [2, 3, 4, 2, 3])})
    return domain, [("a", "b"), ("b", "c", "d"), ("d", "e"), ("c", "d")]


def _noisy(jt, theta, n, scales, rng):
    """Counts of the model's clique marginals at n records plus Laplace noise of the given scale per table."""
    mu, _ = jt.marginals(theta)
    return [n * m + rng.laplace(scale=s, size=m.shape) for m, s in zip(mu, scales)]


@pytest.mark.parametrize("kind", ["loopy", "decomposable"])
@pytest.mark.parametrize("scale", [0.5, 30.0])  # noise far below / comparable to the small cells (negatives)
def test_reconciled_tables_agree_on_every_separator(kind, scale, loopy_model):
    rng = np.random.default_rng(1)
    domain, cliques = (loopy_model[0], loopy_model[1]) if kind == "loopy" else _decomposable()
    jt = JunctionTree(domain, cliques)
    theta = [rng.normal(size=domain.shape(c)) for c in cliques]
    scales = scale * rng.uniform(0.5, 2.0, size=len(cliques))
    noisy = _noisy(jt, theta, 1000, scales, rng)
    assert max_disagreement(cliques, noisy) > scale  # the noise makes them disagree
    out = reconcile_tables(cliques, noisy, 2 * scales**2)
    totals = [float(t.sum()) for t in out]
    assert all(np.all(t >= 0) for t in out)
    assert max_disagreement(cliques, out) <= 1e-9 * max(totals)
    # every separator, checked directly (max_disagreement's own loop is what is under test above)
    for s in separators(cliques):
        ms = [marginal(t, c, s) for c, t in zip(cliques, out) if set(s) <= set(c)]
        for m in ms[1:]:
            np.testing.assert_allclose(m, ms[0], rtol=0, atol=1e-9 * max(totals))
    # close to the data: no cell moved by more than a few noise scales of its table
    moved = max(float(np.max(np.abs(a - b))) / s for a, b, s in zip(out, noisy, scales))
    assert moved < 10


@pytest.mark.parametrize("kind", ["loopy", "decomposable"])
def test_consistent_tables_come_back_unchanged(kind, loopy_model):
    rng = np.random.default_rng(2)
    domain, cliques = (loopy_model[0], loopy_model[1]) if kind == "loopy" else _decomposable()
    jt = JunctionTree(domain, cliques)
    mu, _ = jt.marginals([rng.normal(size=domain.shape(c)) for c in cliques])
    tables = [500.0 * m for m in mu]
    out = reconcile_tables(cliques, tables, rng.uniform(1.0, 5.0, size=len(cliques)))
    for a, b in zip(out, tables):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-10)


def test_one_separator_is_the_weighted_least_squares_solution():
    """Two tables sharing ``y``: the consensus is the inverse-variance mean of their y-marginals
    (each y-cell of a k-cell-wide table has k times the cell variance), and each table moves
    evenly over the cells behind a y-cell."""
    rng = np.random.default_rng(3)
    a = rng.uniform(20, 30, size=(3, 4))  # axes (x, y)
    b = rng.uniform(20, 30, size=(4, 5))  # axes (y, z)
    b *= a.sum() / b.sum()  # equal totals: only y disagrees
    va, vb = 2.0, 7.0
    ra, rb = reconcile_tables([("x", "y"), ("y", "z")], [a, b], [va, vb])
    ma, mb = a.sum(axis=0), b.sum(axis=1)
    wa, wb = 1 / (3 * va), 1 / (5 * vb)
    consensus = (wa * ma + wb * mb) / (wa + wb)
    np.testing.assert_allclose(ra.sum(axis=0), consensus, rtol=1e-12)
    np.testing.assert_allclose(ra - a, np.broadcast_to((consensus - ma) / 3, a.shape), rtol=1e-10)
    np.testing.assert_allclose(rb - b, np.broadcast_to(((consensus - mb) / 5)[:, None], b.shape), rtol=1e-10)


def test_an_exact_table_wins_its_separators():
    a = np.array([[4.0, 6.0], [5.0, 5.0]])  # exact: y-marginal (9, 11)
    b = np.array([[7.0, 3.0], [6.0, 4.0]])  # noisy: y-marginal (10, 10)
    ra, rb = reconcile_tables([("x", "y"), ("y", "z")], [a, b], [0.0, 3.0])
    np.testing.assert_array_equal(ra, a)
    np.testing.assert_allclose(rb.sum(axis=1), [9.0, 11.0])


@pytest.mark.parametrize("kind", ["loopy", "decomposable"])
def test_the_fit_reproduces_reconciled_targets(kind, loopy_model):
    """Reconciled tables of a model's noisy counts (noise small next to the counts) are marginals
    the model can have: the unpenalised MLE reproduces them (closed form or L-BFGS)."""
    rng = np.random.default_rng(4)
    domain, cliques = (loopy_model[0], loopy_model[1]) if kind == "loopy" else _decomposable()
    jt = JunctionTree(domain, cliques)
    theta = [0.5 * rng.normal(size=domain.shape(c)) for c in cliques]
    noisy = _noisy(jt, theta, 1e5, np.full(len(cliques), 20.0), rng)
    targets = reconcile_tables(cliques, noisy, np.full(len(cliques), 800.0))
    if kind == "decomposable":
        targets = targets[:3]  # the separator clique ("c", "d") would make the closed form skip: drop it
        cliques = cliques[:3]
        jt = JunctionTree(domain, cliques)
    fit = fit_log_potentials(jt, targets, 0.0, max_iter=5000, tol=1e-10)
    assert fit.converged
    assert fit.method == ("closed-form" if kind == "decomposable" else "lbfgs")
    fitted, _ = jt.marginals(fit.log_potentials)
    # L-BFGS stops when float64 can no longer resolve a lower objective (O(1) per record): that is a
    # gradient, i.e. a marginal error, of about sqrt(machine epsilon) = 1.5e-8, which depends on the
    # CPU's summation order (2.4e-8 seen on one machine). Targets the model cannot have would miss by
    # about the noise per record, 20 / 1e5 = 2e-4: 1e-7 keeps three orders of magnitude between the two
    for f, t in zip(fitted, targets):
        np.testing.assert_allclose(f, t / t.sum(), rtol=0, atol=1e-7)


def test_a_clipped_empty_row_is_filled_from_the_consensus():
    """Consistent tables, but a's cells for y = 0 are all negative and b's are not: after clipping,
    a has no mass at y = 0 to rescale while b has some; a's empty cells get the consensus."""
    a = np.array([[-0.5, 10.0], [-0.5, 10.0]])  # axes (x, y): y-marginal (-1, 20)
    b = np.array([[3.0, -4.0], [10.0, 10.0]])  # axes (y, z): y-marginal (-1, 20)
    ra, rb = reconcile_tables([("x", "y"), ("y", "z")], [a, b], [1.0, 1.0])
    assert np.all(ra >= 0) and np.all(rb >= 0)
    assert max_disagreement([("x", "y"), ("y", "z")], [ra, rb]) < 1e-9
    assert ra[:, 0].sum() > 0  # the consensus gives y = 0 some mass, a's emptied column gets it


def test_bad_input_is_named():
    t = np.ones((2, 2))
    with pytest.raises(ValueError, match="one entry per table"):
        reconcile_tables([("a", "b")], [t, t], [1.0, 1.0])
    with pytest.raises(ValueError, match="2 axes, expected 3"):
        reconcile_tables([("a", "b", "c")], [t], [1.0])
    with pytest.raises(ValueError, match="NaN or infinite"):
        reconcile_tables([("a", "b")], [np.full((2, 2), np.nan)], [1.0])
    with pytest.raises(ValueError, match="variances"):
        reconcile_tables([("a", "b")], [t], [-1.0])


def test_separators_name_each_shared_set_once_whatever_the_scopes_order():
    # pairs (1, 2) and (2, 3) share {b, c}, listed as (b, c) in scope 1 and (c, b) in scope 2
    seps = separators([("b", "c", "x"), ("c", "b", "y"), ("c", "b", "z")])
    assert seps == [(), ("b", "c")]
