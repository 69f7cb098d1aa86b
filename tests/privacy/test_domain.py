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
    with pytest.raises(DomainError, match=r"column 'a' has missing value"):
        d.encode(pd.DataFrame({"a": ["x", None]}))
    with pytest.raises(DomainError, match=r"column 'a' has values outside its declared domain \['x', 'y'\]"):
        d.encode(pd.DataFrame({"a": ["x", "q"]}))


def test_out_of_domain_values_are_withheld_unless_asked_for(monkeypatch):
    d = Domain({"a": ["x", "y"]})
    frame = pd.DataFrame({"a": ["x", "secret-value-42", "secret-value-42"]})
    monkeypatch.delenv("PGMPY_DP_SHOW_VALUES", raising=False)
    with pytest.raises(DomainError, match=r"withheld.*PGMPY_DP_SHOW_VALUES=1") as info:
        d.encode(frame)
    # neither the value nor how many rows hold it: both are private
    assert "secret" not in str(info.value) and "2" not in str(info.value)
    monkeypatch.setenv("PGMPY_DP_SHOW_VALUES", "1")
    with pytest.raises(DomainError, match=r"\['secret-value-42'\]"):
        d.encode(frame)


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


@pytest.mark.parametrize(
    "states, bad",
    [([[1, 2], [3]], r"\[1, 2\], a list"), ([1, [2]], r"\[2\], a list"), ([{"x": 1}, 2], r"\{'x': 1\}, a dict"),
     ([{1, 2}], r"\{1, 2\}, a set")],
    ids=["lists", "a list among ints", "dict", "set"],
)
def test_an_unhashable_state_is_a_domain_error_naming_column_and_state(states, bad):
    # it was a raw "TypeError: unhashable type: 'list'"
    with pytest.raises(DomainError, match=rf"attribute 'c' lists the state {bad}; a state must be a hashable scalar"):
        Domain({"c": states})
    df = pd.DataFrame({"c": [1, 2]})
    with pytest.raises(DomainError, match=rf"attribute 'c' lists the state {bad}"):
        Domain.from_dataframe(df, domain={"c": states})


def test_a_tuple_state_is_hashable_and_kept():
    assert Domain({"c": [(1, 2), (3,)]})["c"] == ((1, 2), (3,))


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


# -- public bins, missing states, domain-input errors (issue 18 item 1, issue 17) -------------

import json  # noqa: E402
import warnings  # noqa: E402

import pgmpy_dp  # noqa: E402,F401  (registers df.dp)
from pgmpy_dp import PrivacyBudget  # noqa: E402
from pgmpy_dp.privacy.domain import DataDerivedDomainWarning, bin_labels  # noqa: E402


def test_bins_cut_at_public_edges_and_clamp_outside_values():
    d = Domain(bins={"age": [17, 25, 35, 91]})
    assert d["age"] == ("[17, 25)", "[25, 35)", "[35, 91)") and d.bins == {"age": (17.0, 25.0, 35.0, 91.0)}
    ages = pd.DataFrame({"age": [3, 17, 24.9, 25, 34, 35, 90, 91, 200]})
    # below the first edge -> first bin, at or above the last edge -> last bin (documented clamping)
    assert d.encode(ages)["age"].tolist() == [0, 0, 0, 1, 1, 2, 2, 2, 2]


def test_open_ended_bins_and_labels():
    assert bin_labels([-np.inf, 0, 1.5, np.inf]) == ("[-inf, 0)", "[0, 1.5)", "[1.5, inf)")


@pytest.mark.parametrize(
    "edges, message",
    [([1], "at least two edges"), ([1, 1], "strictly increasing"), ([2, 1], "strictly increasing"),
     ("abc", "list of public bin edges"), (["a", "b"], "must hold numbers"), ([0, np.nan], "strictly")],
)
def test_bad_bins(edges, message):
    with pytest.raises(DomainError, match=message):
        Domain(bins={"age": edges})


def test_binning_a_text_column_is_a_clear_error():
    d = Domain(bins={"age": [0, 10]})
    with pytest.raises(TypeError, match=r"column 'age' is binned .* non-numeric"):
        d.encode(pd.DataFrame({"age": ["old", "young"]}))


def test_states_and_bins_for_one_attribute_is_an_error():
    with pytest.raises(DomainError, match="both with states and with bins"):
        Domain({"age": [1, 2]}, bins={"age": [0, 1, 2]})


def test_missing_state_appended_or_reused_as_sentinel():
    d = Domain({"a": ["x", "y"], "b": ["u", "?"]}, missing={"a": "Missing", "b": "?"})
    assert d["a"] == ("x", "y", "Missing") and d["b"] == ("u", "?")
    df = pd.DataFrame({"a": ["x", None, np.nan], "b": [None, "u", "?"]})
    codes = d.encode(df)
    assert codes["a"].tolist() == [0, 2, 2] and codes["b"].tolist() == [1, 0, 1]
    cat = df.astype({"a": pd.CategoricalDtype(["y", "x"])})
    assert d.encode(cat)["a"].tolist() == [0, 2, 2]


def test_global_missing_state_extends_dtype_columns_and_bins():
    df = pd.DataFrame({"c": pd.Categorical(["p", None], categories=["p", "q"]), "n": [np.nan, 5]})
    d = Domain.from_dataframe(df, domain=Domain(bins={"n": [0, 10]}, missing="NA"))
    assert d["c"] == ("p", "q", "NA") and d["n"] == ("[0, 10)", "NA")
    assert d.encode(df)["c"].tolist() == [0, 2] and d.encode(df)["n"].tolist() == [1, 0]


def test_missing_error_names_no_count():
    d = Domain({"a": ["x", "y"]})
    with pytest.raises(DomainError) as info:
        d.encode(pd.DataFrame({"a": ["x"] + [None] * 978}))
    assert "978" not in str(info.value) and "missing=" in str(info.value)


def test_missing_and_nan_state_declarations():
    with pytest.raises(DomainError, match="not in the domain"):
        Domain({"a": ["x"]}, missing={"b": "?"})
    with pytest.raises(DomainError, match="NaN"):
        Domain({"a": ["x"]}, missing=float("nan"))


def test_domain_reads_like_a_mapping_and_is_accepted_as_domain():
    d = Domain({"a": ["x", "y"]})
    assert dict(d.items()) == {"a": ("x", "y")} and list(d.keys()) == ["a"]
    df = pd.DataFrame({"a": ["x", "y", "x"]})
    assert Domain.from_dataframe(df, domain=d) == d
    assert df.dp.release(["a"], epsilon=1.0, domain=d, random_state=0).domain == d
    assert Domain(d) == d and Domain(d, missing="M")["a"] == ("x", "y", "M")


@pytest.mark.parametrize("domain", [["x", "y"], ("a", ["x"])])
def test_domain_given_as_a_list_names_the_parameter(domain):
    df = pd.DataFrame({"a": ["x", "y"]})
    budget = PrivacyBudget(1.0)
    with pytest.raises(TypeError, match=r"domain \(state_names for DiscretePrivateMLE\) must be a mapping .*e\.g\. \{"):
        df.dp.release(["a"], epsilon=0.5, domain=domain, budget=budget)
    assert budget.spent == 0


def test_non_str_and_multiindex_columns_get_a_clear_error():
    with pytest.raises(TypeError, match=r"column name\(s\) \[0, 1\] are not str.*df.columns.map\(str\)"):
        Domain.from_dataframe(pd.DataFrame({0: ["x"], 1: ["y"]}), domain={"0": ["x"]})
    multi = pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples([("a", "b"), ("a", "c")]))
    with pytest.raises(TypeError, match="MultiIndex columns; flatten them"):
        Domain.from_dataframe(multi, domain={"a": [1]})
    with pytest.raises(TypeError, match=r"attribute names must be str"):
        Domain({0: ["x"]})


def test_interval_states_fail_before_any_budget_is_spent():
    df = pd.DataFrame({"age": pd.cut([20, 30, 40], [0, 25, 50])})
    budget = PrivacyBudget(1.0)
    with pytest.raises(DomainError, match=r"attribute 'age' cannot be written to a JSON release.*bins="):
        df.dp.release(["age"], epsilon=0.5, budget=budget)
    assert budget.spent == 0


def test_binned_release_round_trips_through_json():
    df = pd.DataFrame({"age": [20, 31.5, None, 80], "sex": ["F", "M", "F", None]})
    dom = Domain({"sex": ["F", "M"]}, bins={"age": [17, 30, 60, 91]}, missing="Missing")
    rel = df.dp.release([("age", "sex")], epsilon=1.0, domain=dom, random_state=0)
    back = pgmpy_dp.MarginalRelease.from_json(rel.to_json())
    assert back == rel and json.loads(rel.to_json())["domain"][0][1][0] == "[17, 30)"


def test_warning_for_categories_read_from_the_data():
    sorted_observed = pd.DataFrame({"a": ["x", "y", "y"]}).astype("category")
    with pytest.warns(DataDerivedDomainWarning, match=r"\['a'\].*astype\('category'\)"):
        sorted_observed.dp.release(["a"], epsilon=1.0)
    unsorted = pd.DataFrame({"a": pd.Categorical(["x", "y"], categories=["y", "x"])})
    ordered = pd.DataFrame({"a": pd.Categorical(["x", "y"], categories=["x", "y"], ordered=True)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataDerivedDomainWarning)
        unsorted.dp.release(["a"], epsilon=1.0)  # astype('category') never makes unsorted categories
        ordered.dp.release(["a"], epsilon=1.0)  # nor ordered ones
        sorted_observed.dp.release(["a"], epsilon=1.0, domain={"a": ["x", "y"]})  # declared: silent


def test_the_warning_reads_the_dtype_never_the_values():
    # neighbouring frames with one dtype: one shows every category, the other leaves one unobserved;
    # the warning must fire on both (it used to fire only when every category occurred)
    dtype = pd.CategoricalDtype(["x", "y", "z"])
    every = pd.DataFrame({"a": pd.Categorical(["x", "y", "z"], dtype=dtype)})
    missing_one = every.iloc[:2]
    for frame in (every, missing_one):
        with pytest.warns(DataDerivedDomainWarning, match=r"\['a'\]"):
            Domain.from_dataframe(frame).encode(frame)
    # and it fires before encoding, so a frame that fails to encode warns too
    bad = pd.DataFrame({"a": pd.Categorical(["x", None], dtype=dtype)})
    with pytest.warns(DataDerivedDomainWarning), pytest.raises(DomainError, match="missing values"):
        Domain.from_dataframe(bad).encode(bad)


def test_frames_whose_producer_declares_the_dtypes_do_not_warn():
    df = pd.DataFrame({"a": ["x", "y", "y"]}).astype("category")
    df.attrs["pgmpy_dp_public_columns"] = ["a"]
    sampled = pgmpy_dp.datasets.sample_network("alarm", 500, seed=0)  # many sorted, fully observed dtypes
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataDerivedDomainWarning)
        df.dp.release(["a"], epsilon=1.0)
        sampled.dp.release(list(sampled.columns), epsilon=1.0)
