"""Pooled tables: one released table holding the sum of same-shaped member tables (issue 16)."""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import pgmpy_dp
from pgmpy_dp import Domain, DomainError, MarginalRelease, Pooled, PrivacyBudget
from pgmpy_dp.tables import contingency_table, release_counts, release_from_codes
from pgmpy_dp.tables.pooled import pooled_counts
from pgmpy_dp.tables.schema import ReleaseFormatError

LOC = ["n", "a", "b"]
PUBLIC = {f"h{i}": LOC for i in range(4)}
CHAIN = [("h0", "h1"), ("h1", "h2"), ("h2", "h3")]


def chain_frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({f"h{i}": rng.choice(LOC, n) for i in range(4)})


def tiny():
    # hand-checked below: rows (h0, h1, h2)
    return pd.DataFrame({"h0": ["a", "b", "n"], "h1": ["b", "b", "n"], "h2": ["n", "a", "a"]})


def test_pooled_counts_are_the_sum_of_the_members_by_hand():
    rel = tiny().dp.release([Pooled([("h0", "h1"), ("h1", "h2")])], epsilon=1e9, domain=Domain(PUBLIC), random_state=0)
    t = rel[(("h0", "h1"), ("h1", "h2"))]
    # (h0,h1): (a,b) (b,b) (n,n); (h1,h2): (b,n) (b,a) (n,a); axes n, a, b
    expected = np.array([[1, 1, 0], [0, 0, 1], [1, 1, 1]], dtype=float)
    np.testing.assert_array_equal(t.values, expected)
    assert t.attrs == ("h0", "h1") and t.members == (("h0", "h1"), ("h1", "h2"))


def test_pooled_counts_match_contingency_tables():
    df = chain_frame()
    dom = Domain(PUBLIC)
    codes = dom.encode(df)
    total = sum(contingency_table(codes, dom, m) for m in CHAIN)
    np.testing.assert_array_equal(pooled_counts(codes, dom, CHAIN), total)


def test_sensitivity_is_len_members_and_every_cell_gets_the_same_scale():
    rel = chain_frame().dp.release([Pooled(CHAIN), "h0"], epsilon=2.0, domain=PUBLIC, random_state=0)
    pooled, node = rel.tables
    assert pooled.sensitivity == 3.0 and node.sensitivity == 1.0
    assert rel.sensitivity == 4.0 and rel.l2_sensitivity == pytest.approx(math.sqrt(10))
    # the total splits in proportion to sensitivity: 1.5 and 0.5, scale 4 / 2 everywhere
    assert [pooled.epsilon, node.epsilon] == pytest.approx([1.5, 0.5])
    assert [pooled.scale, node.scale] == pytest.approx([2.0, 2.0])
    assert pooled.scale == pytest.approx(pooled.sensitivity / pooled.epsilon)
    assert rel.epsilon == pytest.approx(2.0)


def test_per_table_epsilons_give_scale_len_members_over_epsilon():
    rel = chain_frame().dp.release([Pooled(CHAIN), "h0"], epsilon=[0.6, 0.4], domain=PUBLIC, random_state=0)
    assert [t.scale for t in rel.tables] == pytest.approx([3 / 0.6, 1 / 0.4])


def test_gaussian_pooled_table_is_calibrated_to_l2_sensitivity():
    rel = chain_frame().dp.release([Pooled(CHAIN), "h0"], rho=0.5, domain=PUBLIC, random_state=0)
    pooled, node = rel.tables
    sigma = math.sqrt(10) / math.sqrt(2 * 0.5)  # sqrt(3^2 + 1^2) / sqrt(2 rho), the same for every cell
    assert [pooled.scale, node.scale] == pytest.approx([sigma, sigma])
    assert pooled.rho == pytest.approx(0.5 * 9 / 10) and node.rho == pytest.approx(0.05)
    assert pooled.rho == pytest.approx(pooled.sensitivity**2 / (2 * pooled.scale**2))
    assert rel.rho == pytest.approx(0.5)


def test_members_with_different_states_are_refused_and_nothing_is_spent():
    df = chain_frame()
    df["h2"] = df["h2"].replace("b", "c")
    public = dict(PUBLIC, h2=["n", "a", "c"])
    budget = PrivacyBudget(1.0)
    with pytest.raises(DomainError, match=r"axis 1 of \('h0', 'h1'\) is 'h1' with states \['n', 'a', 'b'\].*'h2' with states \['n', 'a', 'c'\]"):
        df.dp.release([Pooled([("h0", "h1"), ("h1", "h2")])], epsilon=1.0, domain=public, budget=budget)
    assert budget.spent == 0


@pytest.mark.parametrize(
    "members, error, match",
    [
        ([("h0", "h1"), ("h1",)], DomainError, "same number of attributes"),
        ([("h0", "h1"), ("h0", "h1")], DomainError, "listed twice"),
        ([], ValueError, "at least one member"),
        ("h0", TypeError, "list of attribute tuples"),
        ([("h0", 3)], TypeError, "tuple of column names"),
    ],
)
def test_bad_pooled_requests(members, error, match):
    with pytest.raises(error, match=match):
        Pooled(members)


def test_pooled_member_outside_the_frame_is_refused_before_spending():
    budget = PrivacyBudget(1.0)
    with pytest.raises(DomainError, match=r"\['h9'\]"):
        chain_frame().dp.release([Pooled([("h0",), ("h9",)])], epsilon=1.0, domain=PUBLIC, budget=budget)
    assert budget.spent == 0


def test_indexing_and_coexistence_with_the_first_members_ordinary_table():
    df = chain_frame()
    rel = df.dp.release([Pooled(CHAIN), ("h0", "h1")], epsilon=1e9, domain=PUBLIC, random_state=0)
    key = tuple(CHAIN)
    assert key in rel and Pooled(CHAIN) in rel and ("h0", "h1") in rel
    assert rel[key] is rel[Pooled(CHAIN)] is rel[[list(m) for m in CHAIN]]
    assert rel[key].values.sum() == 3 * len(df) and rel[("h0", "h1")].values.sum() == len(df)
    assert rel.attrs == [key, ("h0", "h1")]
    # an ordinary query never reads the pooled table (its cells hold every member's counts)
    np.testing.assert_array_equal(rel.series("h0").to_numpy(), rel[("h0", "h1")].values.sum(axis=1))
    with pytest.raises(KeyError, match="no table over"):
        rel[(("h1", "h2"), ("h0", "h1"))]  # members are ordered


def test_views_of_a_pooled_table_and_sub_axis_marginals():
    df = chain_frame()
    rel = df.dp.release([Pooled(CHAIN)], epsilon=1e9, domain=PUBLIC, random_state=0)
    key = tuple(CHAIN)
    s = rel.series(key)
    assert list(s.index.names) == ["h0", "h1"] and s.sum() == 3 * len(df)
    assert list(rel.frame(key).columns) == ["h0", "h1", "noisy_count"]
    assert rel.factor(key).variables == ["h0", "h1"]
    iv = rel.interval(key)
    assert iv.attrs["method"] == "exact" and list(iv.index.names) == ["h0", "h1"]
    # sub-axes of every member: the pooled marginal of the "from" states is the sum of the members' marginals
    sub = rel.series((("h0",), ("h1",), ("h2",)))
    expected = sum(df[a].value_counts().reindex(LOC).to_numpy() for a in ("h0", "h1", "h2"))
    np.testing.assert_array_equal(sub.to_numpy(), expected)
    assert list(sub.index.names) == ["h0"]
    swapped = rel.series((("h1", "h0"), ("h2", "h1"), ("h3", "h2")))
    np.testing.assert_array_equal(swapped.to_numpy(), rel[key].values.T.ravel())
    with pytest.raises(KeyError, match="no released pooled table"):
        rel.series((("h0",), ("h2",), ("h3",)))  # not the same axis of every member
    with pytest.raises(KeyError, match="no released table contains"):
        rel.series("h0")


def test_record_count_estimate_divides_a_pooled_total_by_its_members():
    df = chain_frame(n=500)
    rel = df.dp.release([Pooled(CHAIN)], epsilon=1e9, domain=PUBLIC, random_state=0)
    assert rel.n_records_estimate == pytest.approx(500)
    noisy = df.dp.release([Pooled(CHAIN), "h0"], epsilon=5.0, domain=PUBLIC, random_state=1)
    assert abs(noisy.n_records_estimate - 500) < 10 * math.sqrt(noisy.tables[1].variance * 3)


def test_release_counts_and_codes_accept_pooled_requests():
    dom = Domain(PUBLIC)
    df = chain_frame()
    codes = dom.encode(df)
    exact = pooled_counts(codes, dom, CHAIN)
    a = release_counts({tuple(CHAIN): exact}, dom, [Pooled(CHAIN)], epsilon=1e9, random_state=0)
    b = release_from_codes(codes, dom, [Pooled(CHAIN)], epsilon=1e9, random_state=0)
    np.testing.assert_array_equal(a[tuple(CHAIN)].values, exact)
    np.testing.assert_array_equal(b[tuple(CHAIN)].values, exact)
    budget = PrivacyBudget(1.0)
    with pytest.raises(ValueError, match="no counts for table"):
        release_counts({("h0", "h1"): exact}, dom, [Pooled(CHAIN)], epsilon=1.0, budget=budget)
    assert budget.spent == 0


def test_json_round_trip_keeps_members():
    rel = chain_frame().dp.release([Pooled(CHAIN), ("h0", "h1")], epsilon=1.0, domain=PUBLIC, random_state=0)
    back = MarginalRelease.from_json(rel.to_json())
    assert back == rel and back[tuple(CHAIN)].members == tuple(CHAIN)
    art = rel.to_dict()
    assert art["format_version"] == 3 and art["tables"][0]["members"] == [list(m) for m in CHAIN]


def _artifact():
    return json.loads(chain_frame().dp.release([Pooled(CHAIN)], epsilon=1.0, domain=PUBLIC, random_state=0).to_json())


@pytest.mark.parametrize(
    "edit, field, match",
    [
        (lambda a: a["tables"][0].update(members=[["h1", "h2"], ["h0", "h1"]]), "tables[0].members[0]", "must equal"),
        (lambda a: a["tables"][0].update(members=[["h0", "h1"], ["h0", "h1"]]), "tables[0].members", "twice"),
        (lambda a: a["tables"][0].update(members=[["h0", "h1"], ["h2"]]), "tables[0].members[1]", "list of 2"),
        (lambda a: a["tables"][0].update(members=[["h0", "h1"], ["h1", "zz"]]), "tables[0].members[1]", "not an attribute"),
        (lambda a: a["tables"][0].update(members="h0"), "tables[0].members", "non-empty list"),
        (lambda a: a.update(format_version=2), "tables[0].members", "not part of format version 2"),
        (lambda a: a["tables"][0].update(granularity=0.3), "tables[0].granularity", "power of two"),
        (lambda a: a["tables"][0].update(granularity=0.5), "tables[0].granularity", "individual-normalised"),
    ],
)
def test_schema_refuses_bad_pooled_fields(edit, field, match):
    art = _artifact()
    edit(art)
    with pytest.raises(ReleaseFormatError, match=match) as info:
        MarginalRelease.from_dict(art)
    assert info.value.field == field


def test_schema_refuses_member_states_that_differ():
    art = _artifact()
    art["domain"] = [[a, (LOC if a != "h2" else ["n", "a", "c"])] for a, _ in art["domain"]]
    with pytest.raises(ReleaseFormatError, match="states differ") as info:
        MarginalRelease.from_dict(art)
    assert info.value.field == "tables[0].members[1]"


def test_bayesian_fit_from_release_ignores_pooled_tables_with_a_warning():
    from pgmpy.models import DiscreteBayesianNetwork

    df = chain_frame()
    rel = df.dp.release([Pooled(CHAIN), ("h0", "h1")], epsilon=2.0, domain=PUBLIC, random_state=0)
    with pytest.warns(UserWarning, match="ignores the pooled table"):
        est = pgmpy_dp.DiscretePrivateMLE().fit_release(DiscreteBayesianNetwork([("h0", "h1")]), rel)
    assert len(est.parameters_) == 2


def test_dask_refuses_pooled_tables():
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(chain_frame(), npartitions=2)
    budget = PrivacyBudget(1.0)
    with pytest.raises(NotImplementedError, match="Pooled tables are not supported on Dask"):
        ddf.dp.release([Pooled(CHAIN)], epsilon=1.0, domain=PUBLIC, budget=budget)
    assert budget.spent == 0


def test_pooled_is_hashable_and_compares_by_members():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Pooled(CHAIN, name="t") == Pooled(CHAIN) and len({Pooled(CHAIN), Pooled(CHAIN, name="x")}) == 1
    assert Pooled(CHAIN) != Pooled(CHAIN[:2])


def test_schema_checks_the_sensitivity_a_pooled_table_must_have():
    art = _artifact()
    t = art["tables"][0]
    t["sensitivity"], t["scale"] = 1.0, 1.0 / t["epsilon"]  # consistent with epsilon, but a record is in 3 members
    with pytest.raises(ReleaseFormatError, match="must be 3: a record is in each of its 3 members") as info:
        MarginalRelease.from_dict(art)
    assert info.value.field == "tables[0].sensitivity"
