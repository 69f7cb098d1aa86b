"""MST's steps: pair scores, the private spanning tree, the whole run."""

import itertools
import math

import numpy as np
import pytest

from pgmpy_dp import Domain
from pgmpy_dp.privacy import selection
from pgmpy_dp.synthesis import mst
from pgmpy_dp.synthesis.method import Measurements
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
    recorder = Measurements()
    model, out, selected = mst.run_mst(codes, dom, rho=1.0, rng=np.random.default_rng(1), recorder=recorder)
    assert out == recorder.releases and len(out) == 2 and recorder.selected == selected
    assert {frozenset(p) for p in selected} >= {frozenset("ab"), frozenset("bc"), frozenset("cd")}
    assert [t.attrs for t in out[0].tables] == [(v,) for v in "abcde"]
    assert [t.attrs for t in out[1].tables] == selected
    assert sorted(model.nodes()) == list("abcde")
    assert {tuple(f.scope()) for f in model.get_factors()} >= {(v,) for v in "abcde"}  # node potentials


def test_check_mst_needs_two_columns():
    with pytest.raises(Exception, match="at least two columns"):
        mst.check_mst(Domain({"a": [0, 1]}), 1.0)
    mst.check_mst(Domain({"a": [0, 1], "b": [0, 1]}), 1.0)


# -- compression of rare states ---------------------------------------------------------------------


def rare_data(n=3000, seed=0):
    """A chain a - b - c over 6 states: states 0 and 1 frequent, 2 to 4 a few records each, 5 never."""
    rng = np.random.default_rng(seed)
    a = rng.choice(6, n, p=[0.6, 0.397, 0.001, 0.001, 0.001, 0.0])
    b = np.where(rng.random(n) < 0.9, a, rng.integers(0, 2, n))
    c = np.where(rng.random(n) < 0.9, b, rng.integers(0, 2, n))
    return {"a": a, "b": b, "c": c}, Domain({v: list(range(6)) for v in "abc"})


def joint(model, domain):
    """The model's normalised joint over ``domain``'s attributes, axes in domain order."""
    product = model.get_factors()[0]
    for f in model.get_factors()[1:]:
        product = product * f
    product.normalize()
    return np.transpose(product.values, [product.variables.index(a) for a in domain.attrs])


def test_rare_states_merge_and_the_spend_still_adds_up(monkeypatch):
    eps = []
    real = selection.exponential_mechanism
    monkeypatch.setattr(mst, "exponential_mechanism", lambda s, e, sens=1.0, rng=None: eps.append(e) or real(s, e, sens, rng))
    codes, dom = rare_data()
    model, releases, selected = mst.run_mst(codes, dom, rho=1.0, rng=np.random.default_rng(0))
    oneway, twoway = releases
    assert oneway.domain == dom  # the 1-way release is over the declared states
    sigma = oneway.tables[0].scale
    for a in "abc":  # what merged is exactly what the noisy counts put below 3 sigma
        rare = tuple(s for s, y in zip(dom[a], oneway[(a,)].values) if y < 3 * sigma)
        assert len(rare) >= 2 and 5 in rare and 0 not in rare
        assert twoway.domain[a] == tuple(s for s in dom[a] if s not in rare) + (rare,)
    assert {frozenset(p) for p in selected} == {frozenset("ab"), frozenset("bc")}
    spent = math.fsum(r.rho for r in releases) + math.fsum(selection.exponential_mechanism_rho(e) for e in eps)
    assert len(eps) == 2 and math.isclose(spent, 1.0, rel_tol=1e-12)
    again = type(twoway).from_json(twoway.to_json())  # publishable: the merged states round-trip
    assert again == twoway and again.domain == twoway.domain
    for f in model.get_factors():  # the model is over the declared states
        assert all(list(f.state_names[v]) == list(dom[v]) for v in f.variables)


def test_the_expanded_model_is_the_merged_model_over_the_declared_states(monkeypatch):
    fitted = []
    real = mst.fit_final_model
    monkeypatch.setattr(mst, "fit_final_model", lambda *a: fitted.append(real(*a)) or fitted[-1])
    codes, dom = rare_data(seed=1)
    model, releases, _ = mst.run_mst(codes, dom, rho=1.0, rng=np.random.default_rng(1))
    merged_domain = releases[1].domain
    small = joint(fitted[0].model_, merged_domain)
    big = joint(model, dom)
    groups = {a: [merged_domain[a].index(s) if s in merged_domain[a] else len(merged_domain[a]) - 1
                  for s in dom[a]] for a in dom.attrs}
    summed = np.zeros(small.shape)
    np.add.at(summed, np.ix_(*groups.values()), big)
    np.testing.assert_allclose(summed, small, rtol=1e-12, atol=1e-15)
    # inside a group, shares in proportion to the clipped noisy counts plus one noise scale
    one = releases[0][("a",)]
    in_group = np.array(groups["a"]) == len(merged_domain["a"]) - 1
    weights = np.maximum(one.values[in_group], 0) + one.scale
    p_a = big.sum(axis=(1, 2))[in_group]
    assert len(set(np.round(weights, 6))) > 1  # unequal shares: the test tells them from equal ones
    np.testing.assert_allclose(p_a / p_a.sum(), weights / weights.sum(), rtol=1e-12)


def test_a_state_never_seen_has_probability_and_is_sampled():
    import warnings

    from pgmpy_dp import sample

    codes, dom = rare_data(seed=2)
    assert not (codes["a"] == 5).any()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing about the data reaches a warning
        model, _, _ = mst.run_mst(codes, dom, rho=1.0, rng=np.random.default_rng(2))
        rows = sample(model, 20_000, random_state=0)
    p5 = joint(model, dom).sum(axis=(1, 2))[5]
    assert p5 > 1e-4
    assert (rows["a"] == 5).sum() > 0
    assert list(rows["a"].cat.categories) == list(dom["a"])


def test_an_attribute_whose_states_all_merge_and_no_compression():
    rng = np.random.default_rng(3)
    codes = {"a": rng.integers(0, 2, 200), "b": rng.integers(0, 40, 200)}  # 5 records a state: all below 3 sigma
    dom = Domain({"a": [0, 1], "b": list(range(40))})
    model, releases, _ = mst.run_mst(codes, dom, rho=0.05, rng=np.random.default_rng(3))
    assert releases[1].domain["b"] == (tuple(range(40)),)
    one = releases[0][("b",)]
    weights = np.maximum(one.values, 0) + one.scale  # a one-state group: the shares are the marginal
    np.testing.assert_allclose(joint(model, dom).sum(axis=0), weights / weights.sum(), rtol=1e-9)
    _, plain, _ = mst.run_mst(codes, dom, rho=0.05, rng=np.random.default_rng(3), threshold=None)
    assert plain[1].domain == dom


def test_merged_label_never_spells_a_declared_state():
    from pgmpy_dp.synthesis.compression import Compression

    dom = Domain({"a": [(1, 2), 1, 2]})
    c = Compression(dom, {"a": [True, False, False]})
    assert c.merged_domain["a"] == ((1, 2), ((1, 2),))
