"""Raw values back from sampled states (issue 44, item 4): numbers within their bins, NaN, dtypes."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pgmpy_dp.privacy.decode import decode, public_dtypes
from pgmpy_dp.privacy.domain import Domain


def _states(domain, col, codes):
    return pd.DataFrame({col: pd.Categorical.from_codes(codes, categories=list(domain[col]))})


@st.composite
def binned(draw):
    """A binned column: edges (maybe open-ended), bounds (maybe none), integer or not, and codes."""
    integer = draw(st.booleans())
    cuts = sorted(set(draw(st.lists(st.integers(-1000, 1000), min_size=2, max_size=6))))
    if len(cuts) < 2:
        cuts = [cuts[0], cuts[0] + 1]
    edges = [float(c) if integer else c / 7 for c in cuts]
    bounds = None
    if draw(st.booleans()):
        lo = draw(st.floats(edges[0] - 50, edges[1] - (1 if integer else 1e-6)))
        hi = draw(st.floats(edges[-2] + (0 if not integer else 0), edges[-2] + 50))
        lo = math.floor(lo) if integer else lo
        bounds = (lo, max(hi, lo + 1))
    if draw(st.booleans()):
        edges = [-math.inf, *edges[1:]] if len(edges) > 2 or bounds else edges
    if draw(st.booleans()):
        edges = [*edges[:-1], math.inf] if len(edges) > 2 or bounds else edges
    codes = draw(st.lists(st.integers(0, len(edges) - 2), min_size=1, max_size=40))
    return edges, bounds, integer, np.array(codes)


@settings(max_examples=150, deadline=None)
@given(binned(), st.integers(0, 2**32 - 1))
def test_a_value_drawn_in_a_bin_lies_in_it(case, seed):
    edges, bounds, integer, codes = case
    d = Domain(bins={"x": edges}, bounds=None if bounds is None else {"x": bounds}, integer=["x"] if integer else None)
    x = decode(_states(d, "x", codes), d, random_state=seed)["x"].to_numpy()
    # re-binning the value by the public edges gives its bin back ...
    assert d.encode(pd.DataFrame({"x": x}))["x"].tolist() == codes.tolist()
    lo, hi = np.asarray(edges)[codes], np.asarray(edges)[codes + 1]
    assert ((x >= lo) | np.isinf(lo)).all() and (x < hi).all()
    # ... within the bounds, integral for integer columns
    if bounds is not None:
        assert ((x >= bounds[0]) & (x <= bounds[1])).all()
    if integer:
        assert x.dtype == np.int64
    assert np.isfinite(x.astype(float)).all()


def test_values_are_drawn_uniformly_within_the_bin():
    d = Domain(bins={"x": [0, 10, 20]}, bounds={"x": (0, 15)})
    x = decode(_states(d, "x", np.ones(40_000, dtype=int)), d, random_state=1)["x"].to_numpy()
    # uniform on [10, 15): mean 12.5, sd 5 / sqrt(12); 6 standard errors
    assert abs(x.mean() - 12.5) < 6 * (5 / math.sqrt(12)) / math.sqrt(len(x))
    assert x.min() >= 10 and x.max() < 15
    k = Domain(bins={"k": [17, 20]}, integer=["k"])
    y = decode(_states(k, "k", np.zeros(30_000, dtype=int)), k, random_state=1)["k"]
    counts = y.value_counts().sort_index()
    assert counts.index.tolist() == [17, 18, 19]
    assert (abs(counts / len(y) - 1 / 3) < 6 * math.sqrt(2 / 9 / len(y))).all()


def test_open_edges_without_bounds_give_way_to_the_finite_edge():
    d = Domain(bins={"r": [-math.inf, 0, math.inf], "i": [-math.inf, 0, math.inf]}, integer=["i"])
    codes = np.array([0, 1])
    out = decode(pd.DataFrame({c: _states(d, c, codes)[c] for c in ("r", "i")}), d, random_state=0)
    assert out["i"].tolist() == [-1, 0] and out["r"][1] == 0.0 and -1e-300 < out["r"][0] < 0
    lone = Domain(bins={"z": [-math.inf, math.inf]})
    with pytest.raises(ValueError, match=r"column 'z' has the single bin \(-inf, inf\) and no bounds.*bounds="):
        decode(_states(lone, "z", np.zeros(3, dtype=int)), lone)


def test_missing_is_nan_and_dtypes_follow_the_declaration():
    d = Domain({"s": ["a", "b"], "n": [1, 2, 3], "f": [0.5, 1.5], "t": [True, False], "c": ["u", "v"], "m": [1, 2]},
               bins={"age": [17, 30, 91], "w": [0, 1, 2]}, bounds={"age": (17, 90)}, integer=["age", "w"],
               missing={"s": "?", "age": "?", "m": "?"})
    codes = {"s": [0, 2, 1], "n": [0, 1, 2], "f": [1, 0, 1], "t": [0, 1, 0], "c": [1, 0, 0], "m": [2, 0, 1],
             "age": [0, 2, 1], "w": [0, 1, 1]}
    frame = pd.DataFrame({c: pd.Categorical.from_codes(v, categories=list(d[c])) for c, v in codes.items()})
    out = decode(frame, d, random_state=0, dtypes={"c": pd.CategoricalDtype(["u", "v"]), "s": pd.StringDtype()})
    assert out["s"].dtype == pd.StringDtype() and out["s"].isna().tolist() == [False, True, False]
    assert out["n"].dtype == np.int64 and out["n"].tolist() == [1, 2, 3]
    assert out["f"].dtype == np.float64 and out["t"].dtype == bool and out["t"].tolist() == [True, False, True]
    assert out["c"].dtype == pd.CategoricalDtype(["u", "v"]) and out["c"].tolist() == ["v", "u", "u"]
    assert out["m"].dtype == np.float64 and out["m"].isna().tolist() == [True, False, False]  # ints with NaN
    assert out["age"].dtype == np.float64 and out["age"].isna().tolist() == [False, True, False]
    assert out["w"].dtype == np.int64
    assert list(out.columns) == list(frame.columns)


def test_decoding_is_reproducible_with_a_seed():
    d = Domain(bins={"x": [0, 1, 2]}, bounds={"x": (0, 2)})
    frame = _states(d, "x", np.arange(100) % 2)
    pd.testing.assert_frame_equal(decode(frame, d, random_state=7), decode(frame, d, random_state=7))
    assert not decode(frame, d, random_state=7).equals(decode(frame, d, random_state=8))


def test_states_outside_the_domain_are_refused():
    d = Domain({"a": ["x", "y"]})
    with pytest.raises(ValueError, match=r"column 'a' holds values that are not states of the domain"):
        decode(pd.DataFrame({"a": pd.Categorical(["z"])}), d)


def test_public_dtypes_reads_dtypes_only():
    df = pd.DataFrame({"c": pd.Categorical(["u"], categories=["u", "v"]), "s": pd.array(["a"], dtype="string"),
                       "o": pd.Series(["a"], dtype=object), "age": [30]})
    d = Domain({"c": ["u", "v"], "s": ["a"], "o": ["a"]}, bins={"age": [0, 50, 100]})
    assert set(public_dtypes(df, d)) == {"c", "s"}
