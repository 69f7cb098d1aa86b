"""Views of a release over reordered attributes or subsets of released tables (post-processing)."""

import numpy as np
import pandas as pd
import pytest

import pgmpy_dp  # noqa: F401
from pgmpy_dp.tables.artifact import MarginalRelease, NoisyTable
from pgmpy_dp.privacy import Domain

DOMAIN = Domain({"a": ["x", "y"], "b": ["u", "v", "w"], "c": ["p", "q"]})


def _release(*tables):
    return MarginalRelease(DOMAIN.project(["a", "b", "c"]), tables)


def test_reordered_attributes_transpose_the_table():
    t = NoisyTable(("a", "b"), np.arange(6.0).reshape(2, 3), epsilon=1.0, scale=1.0)
    rel = _release(t)
    s = rel.series(("b", "a"))
    assert s.index.names == ["b", "a"]
    assert s.loc[("w", "x")] == 2.0 and s.loc[("u", "y")] == 3.0
    f = rel.factor(("b", "a"))
    assert f.variables == ["b", "a"] and f.get_value(b="w", a="x") == 2.0
    assert list(rel.frame(("b", "a")).columns) == ["b", "a", "noisy_count"]


def test_subset_is_summed_out_and_several_tables_are_inverse_variance_weighted():
    ab = NoisyTable(("a", "b"), np.array([[1.0, 2, 3], [4, 5, 6]]), epsilon=1.0, scale=1.0)
    ac = NoisyTable(("c", "a"), np.array([[10.0, 20], [30, 40]]), epsilon=1.0, scale=2.0)
    rel = _release(ab, ac)
    from_ab, from_ac = np.array([6.0, 15.0]), np.array([40.0, 60.0])
    # a cell of the sum over b has 3 cells' variance; over c, 2 cells' of a 4x larger variance
    w_ab, w_ac = 1 / (3 * ab.variance), 1 / (2 * ac.variance)
    expected = (w_ab * from_ab + w_ac * from_ac) / (w_ab + w_ac)
    np.testing.assert_allclose(rel.series("a").to_numpy(), expected)
    np.testing.assert_allclose(rel.series("b").to_numpy(), [5.0, 7.0, 9.0])  # only (a, b) has b


def test_a_released_single_table_is_used_as_is():
    ab = NoisyTable(("a", "b"), np.ones((2, 3)), epsilon=1.0, scale=1.0)
    a = NoisyTable(("a",), np.array([7.0, 8.0]), epsilon=1.0, scale=1.0)
    assert _release(ab, a).series("a").tolist() == [7.0, 8.0]


def test_unknown_or_repeated_attributes_raise_key_error():
    rel = _release(NoisyTable(("a", "b"), np.ones((2, 3)), epsilon=1.0, scale=1.0))
    with pytest.raises(KeyError, match="no released table contains all of"):
        rel.series(("a", "c"))
    with pytest.raises(KeyError, match="names an attribute twice"):
        rel.series(("a", "a"))


def test_release_from_data_marginal_matches_the_noisy_table_sum():
    df = pd.DataFrame({"s": ["n", "y", "y"], "l": ["n", "n", "y"]}).astype(
        {"s": pd.CategoricalDtype(["y", "n"]), "l": pd.CategoricalDtype(["y", "n"])}
    )
    rel = df.dp.release([("s", "l")], epsilon=1.0, random_state=0)
    assert rel.series("s").tolist() == rel[("s", "l")].values.sum(axis=1).tolist()
