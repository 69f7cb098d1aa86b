import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from pgmpy_dp.privacy import Domain
from pgmpy_dp.tables import contingency_table, contingency_tables


@st.composite
def frames(draw):
    n_cols = draw(st.integers(1, 4))
    sizes = [draw(st.integers(1, 5)) for _ in range(n_cols)]
    n_rows = draw(st.integers(1, 60))
    data = {
        f"c{i}": draw(st.lists(st.integers(0, k - 1), min_size=n_rows, max_size=n_rows))
        for i, k in enumerate(sizes)
    }
    domain = Domain({f"c{i}": [f"s{j}" for j in range(k)] for i, k in enumerate(sizes)})
    df = pd.DataFrame({c: [f"s{v}" for v in vals] for c, vals in data.items()})
    attrs = draw(st.permutations(list(domain.attrs)).map(lambda p: p[: max(1, len(p) - 1)]))
    return df, domain, list(attrs)


@settings(max_examples=150, deadline=None)
@given(frames())
def test_counts_match_groupby_with_all_zero_cells(case):
    df, domain, attrs = case
    codes = domain.encode(df)
    table = contingency_table(codes, domain, attrs)
    assert table.shape == domain.shape(attrs)
    full_index = pd.MultiIndex.from_product([domain[a] for a in attrs], names=attrs)
    expected = df.groupby(attrs).size().reindex(full_index, fill_value=0)
    np.testing.assert_array_equal(table.ravel(), expected.to_numpy())
    assert table.sum() == len(df)


@settings(max_examples=50, deadline=None)
@given(frames())
def test_two_way_counts_match_crosstab(case):
    df, domain, attrs = case
    if len(attrs) < 2:
        attrs = list(domain.attrs)[:2] if len(domain) >= 2 else attrs
    if len(attrs) < 2:
        return
    a, b = attrs[:2]
    ct = pd.crosstab(
        pd.Categorical(df[a], categories=domain[a]), pd.Categorical(df[b], categories=domain[b]), dropna=False
    )
    got = contingency_table(domain.encode(df), domain, [a, b])
    np.testing.assert_array_equal(got, ct.to_numpy())


def test_weights_count_a_subsample_and_many_tables():
    d = Domain({"a": [0, 1], "b": [0, 1, 2]})
    codes = {"a": np.array([0, 1, 1, 0]), "b": np.array([2, 2, 0, 1])}
    w = np.array([1.0, 0.0, 1.0, 1.0])
    np.testing.assert_array_equal(contingency_table(codes, d, ["a"], w), [2.0, 1.0])
    t_ab, t_ba = contingency_tables(codes, d, [("a", "b"), ("b", "a")])
    np.testing.assert_array_equal(t_ab, t_ba.T)
