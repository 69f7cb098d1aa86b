import numpy as np
import pandas as pd
import pytest

from pgmpy_dp.privacy import CellLimitError, Domain, DomainError


def test_from_dataframe_uses_categories_not_data():
    df = pd.DataFrame({"a": pd.Categorical(["x"], categories=["x", "y", "z"])})
    assert Domain.from_dataframe(df)["a"] == ("x", "y", "z")


def test_explicit_domain_overrides_categories():
    df = pd.DataFrame({"a": pd.Categorical(["x"], categories=["x", "y"])})
    d = Domain.from_dataframe(df, domain={"a": ["y", "x", "w"]})
    assert d["a"] == ("y", "x", "w")
    assert d.encode(df)["a"].tolist() == [1]


def test_column_without_domain_is_rejected():
    df = pd.DataFrame({"age": [30, 40]})
    with pytest.raises(DomainError, match=r"column 'age' has no public domain.*astype"):
        Domain.from_dataframe(df)


def test_encode_rejects_nan_and_unknown_values():
    d = Domain({"a": ["x", "y"]})
    with pytest.raises(DomainError, match=r"column 'a' has 1 missing value"):
        d.encode(pd.DataFrame({"a": ["x", None]}))
    with pytest.raises(DomainError, match=r"column 'a' has value\(s\) \['q'\] outside"):
        d.encode(pd.DataFrame({"a": ["x", "q"]}))


def test_encode_categorical_with_matching_and_other_categories():
    d = Domain({"a": ["x", "y", "z"]})
    same = pd.DataFrame({"a": pd.Categorical(["z", "x"], categories=["x", "y", "z"])})
    other = pd.DataFrame({"a": pd.Categorical(["z", "x"], categories=["z", "x"])})
    assert d.encode(same)["a"].tolist() == [2, 0]
    assert d.encode(other)["a"].tolist() == [2, 0]


def test_integer_states_and_numpy_scalars():
    d = Domain({"n": np.arange(3)})
    assert d["n"] == (0, 1, 2) and type(d["n"][0]) is int
    assert d.encode(pd.DataFrame({"n": [2, 1]}))["n"].tolist() == [2, 1]


@pytest.mark.parametrize(
    "states, message",
    [([], "empty domain"), (["a", "a"], "lists a state twice"), ("abc", "must be a list"),
     ([1.0, float("nan")], "NaN")],
)
def test_bad_declarations(states, message):
    with pytest.raises(DomainError, match=message):
        Domain({"c": states})


def test_check_table_errors():
    d = Domain({"a": range(1000), "b": range(1000), "c": range(100)})
    with pytest.raises(DomainError, match=r"repeats column\(s\) \['a'\]"):
        d.check_table(("a", "a"))
    with pytest.raises(DomainError, match=r"names \['zz'\]"):
        d.check_table(("a", "zz"))
    with pytest.raises(CellLimitError, match="100,000,000 cells"):
        d.check_table(("a", "b", "c"))
    assert d.check_table("a") == ("a",)


def test_merge_conflict_names_attribute():
    with pytest.raises(DomainError, match="attribute 'a' has different states"):
        Domain({"a": [1, 2]}).merge(Domain({"a": [2, 1]}))
