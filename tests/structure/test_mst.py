"""MST's steps: pair scores, the private spanning tree, the whole run."""

import itertools
import math

import numpy as np
import pytest

from pgmpy_dp import Domain
from pgmpy_dp.privacy import selection
from pgmpy_dp.structure import mst
from pgmpy_dp.tables.counting import contingency_table


def tree_data(n=3000, seed=0):
    """A chain a - b - c - d of noisy copies plus an independent e (3 states)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = np.where(rng.random(n) < 0.85, a, rng.integers(0, 3, n))
    c = np.where(rng.random(n) < 0.85, b, rng.integers(0, 3, n))
    d = np.where(rng.random(n) < 0.85, c, rng.integers(0, 3, n))
    e = rng.integers(0, 3, n)
    return {"a": a, "b": b, "c": c, "d": d, "e": e}, Domain({v: [0, 1, 2] for v in "abcde"})


def test_pair_scores_are_l1_to_independence():
    codes, dom = tree_data()
    probs = {v: np.bincount(codes[v], minlength=3) / 3000 for v in dom.attrs}
    scores = mst.pair_scores(codes, dom, probs, 3000.0)
    assert list(scores) == list(itertools.combinations(dom.attrs, 2))
    exact = contingency_table(codes, dom, ("a", "b"))
    assert scores[("a", "b")] == pytest.approx(np.abs(exact - np.outer(exact.sum(1), exact.sum(0)) / 3000).sum())
    assert scores[("a", "b")] > 10 * scores[("a", "e")]


def test_select_tree_spends_rho_and_is_a_spanning_tree(monkeypatch):
    eps = []
    real = selection.exponential_mechanism
    monkeypatch.setattr(mst, "exponential_mechanism", lambda s, e, sens=1.0, rng=None: eps.append(e) or real(s, e, sens, rng))
    attrs = list("abcde")
    scores = {p: float(i) for i, p in enumerate(itertools.combinations(attrs, 2))}
    tree = mst.select_tree(attrs, scores, 0.3, np.random.default_rng(0))
    assert len(tree) == 4 and len(eps) == 4
    assert math.isclose(sum(selection.exponential_mechanism_rho(e) for e in eps), 0.3, rel_tol=1e-12)
    joined = {"a"}
    for _ in range(4):  # connected, hence a tree with 4 edges on 5 nodes
        joined |= {v for p in tree if set(p) & joined for v in p}
    assert joined == set(attrs)


def test_run_mst_recovers_the_chain():
    codes, dom = tree_data()
    releases = []
    model, out, selected = mst.run_mst(codes, dom, rho=1.0, rng=np.random.default_rng(1), releases=releases)
    assert out == releases and len(out) == 2
    assert {frozenset(p) for p in selected} >= {frozenset("ab"), frozenset("bc"), frozenset("cd")}
    assert [t.attrs for t in out[0].tables] == [(v,) for v in "abcde"]
    assert [t.attrs for t in out[1].tables] == selected
    assert sorted(model.nodes()) == list("abcde")
    assert {tuple(f.scope()) for f in model.get_factors()} >= {(v,) for v in "abcde"}  # node potentials


def test_check_mst_needs_two_columns():
    with pytest.raises(Exception, match="at least two columns"):
        mst.check_mst(Domain({"a": [0, 1]}), 1.0)
    mst.check_mst(Domain({"a": [0, 1], "b": [0, 1]}), 1.0)
