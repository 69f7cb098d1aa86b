"""Every public entry point against bad input: a specific exception type and message, and nothing spent.

Structure (extend the lists, not the tests):

* ``ENTRY_POINTS``: callables ``call(df, epsilon, domain=None, budget=None)`` over
  the columns ``a``, ``b``, ``c`` of ``good_frame()`` (tables or a model that use
  all three, with ``b`` depending on ``a``). Every entry point meets every case
  in ``DATA_CASES`` and ``EPSILON_CASES`` and the hypothesis properties.
* ``DATA_CASES`` / ``EPSILON_CASES``: ``(id, frame or epsilon, domain, exception, message regex)``.
  A regex that lists alternatives covers entry points whose wording differs.
* ``VALID_EDGE_CASES``: inputs that look odd but are valid; every entry point must
  succeed and spend exactly its epsilon.
* ``MODEL_ENTRY_POINTS`` / ``MODEL_CASES``: model-structure cases (cyclic,
  disconnected, nodes missing from the data, families over the cell limit) for
  the BN and MN estimators: ``call(df, epsilon, model_spec, budget=None)``. A new
  estimator joins ``ENTRY_POINTS`` and ``MODEL_ENTRY_POINTS`` next to the two below.
* ``FUZZED``: the fuzzer's table, per public entry point and parameter: which values it
  accepts and a regex the error must match. Every value of ``JUNK_VALUES`` and values drawn
  by hypothesis that a parameter does not accept must be refused with a ``TypeError`` or
  ``ValueError`` naming it, raised by pgmpy_dp (not from inside numpy, pandas or pgmpy), with
  nothing spent. A new public parameter gets a ``FUZZED`` entry.
"""

from __future__ import annotations

import math
import os
import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import networkx as nx
import numpy as np
import pandas as pd
import pgmpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pgmpy_dp
from pgmpy_dp import (
    BudgetExceededError,
    CellLimitError,
    Domain,
    DomainError,
    MarginalRelease,
    PrivacyBudget,
    release_marginals,
)
from pgmpy_dp.privacy.mechanisms import MAX_SCALE
from pgmpy_dp.tables import release_from_codes

STATES = {"a": ["x", "y", "z"], "b": [0, 1], "c": [True, False]}
TABLES = [("a", "b"), ("c",)]


def good_frame(n: int = 12, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({k: pd.Categorical(rng.choice(v, n), categories=v) for k, v in STATES.items()})


@dataclass(frozen=True)
class EntryPoint:
    name: str
    call: Callable  # call(df, epsilon, domain=None, budget=None) -> output
    is_accessor: bool = False  # ``df.dp...`` cannot even be reached from a non-DataFrame
    per_table: bool = False  # accepts a sequence of per-table epsilons
    expect: dict = field(default_factory=dict)  # model entry points: {case id: (exception, regex)} overrides


def _via_codes(df, eps, domain=None, budget=None):
    dom = Domain.from_dataframe(df, ["a", "b", "c"], domain)
    return release_from_codes(dom.encode(df, ["a", "b", "c"]), dom, TABLES, eps, budget=budget)


ENTRY_POINTS = [
    EntryPoint(
        "release_marginals",
        lambda df, eps, domain=None, budget=None: release_marginals(df, TABLES, eps, domain=domain, budget=budget),
        per_table=True,
    ),
    EntryPoint(
        "df.dp.release",
        lambda df, eps, domain=None, budget=None: df.dp.release(TABLES, eps, domain=domain, budget=budget),
        is_accessor=True,
        per_table=True,
    ),
    EntryPoint("Domain.from_dataframe + encode + release_from_codes", _via_codes, per_table=True),
]

#: Model-structure entry points: ``call(df, epsilon, model_spec, budget=None)`` with
#: ``model_spec = (edges, isolated nodes, domain or None)``; see MODEL_CASES below.
MODEL_ENTRY_POINTS: list[EntryPoint] = []

# -- estimators -------------------------------------------------------------------------------------
from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork  # noqa: E402

from pgmpy_dp import DiscretePrivateMLE, PrivateMarkovEstimator  # noqa: E402


def _bn_fit(df, eps, domain=None, budget=None, allocation="data-dependent"):
    est = DiscretePrivateMLE(epsilon=eps, allocation=allocation, domain=domain, budget=budget)
    return DiscreteBayesianNetwork([("a", "b"), ("b", "c")]).fit(df, estimator=est)


def _bn_model(df, eps, spec, budget=None, allocation="data-dependent"):
    edges, isolated, domain = spec
    model = DiscreteBayesianNetwork(edges)  # pgmpy itself refuses a cyclic graph here
    model.add_nodes_from(isolated)
    est = DiscretePrivateMLE(epsilon=eps, allocation=allocation, domain=domain, budget=budget)
    return model.fit(df, estimator=est)


def _mn_fit(df, eps, domain=None, budget=None):
    model = DiscreteMarkovNetwork([("a", "b"), ("b", "c")])
    return PrivateMarkovEstimator(method="naive-mle").fit(model, df, epsilon=eps, budget=budget, domain=domain).model_


def _mn_model(df, eps, spec, budget=None):
    edges, isolated, domain = spec
    model = DiscreteMarkovNetwork(edges)
    model.add_nodes_from(isolated)
    return PrivateMarkovEstimator(method="naive-mle").fit(model, df, epsilon=eps, budget=budget, domain=domain).model_


for _alloc in ("uniform", "data-dependent"):
    ENTRY_POINTS.append(
        EntryPoint(f"DiscretePrivateMLE({_alloc})", lambda *a, _al=_alloc, **k: _bn_fit(*a, allocation=_al, **k))
    )
    MODEL_ENTRY_POINTS.append(
        EntryPoint(
            f"DiscretePrivateMLE({_alloc})",
            lambda *a, _al=_alloc, **k: _bn_model(*a, allocation=_al, **k),
            expect={"cyclic": (Exception, r"(?i)not a valid edge list|cycle|loop")},
        )
    )
ENTRY_POINTS.append(EntryPoint("PrivateMarkovEstimator(naive-mle)", _mn_fit, per_table=True))
# a loopy undirected graph is a valid Markov network: it must fit
MODEL_ENTRY_POINTS.append(
    EntryPoint(
        "PrivateMarkovEstimator(naive-mle)",
        _mn_model,
        expect={
            "cyclic": (None, None),
            "node missing from the data": (DomainError, r"column\(s\) \['d'\] are not in the DataFrame"),
        },
    )
)


def _with(df, **changes):
    df = df.copy()
    for col, values in changes.items():
        df[col] = values
    return df


G = good_frame()
NAN_A = G.assign(a=G["a"].where(np.arange(len(G)) != 3))
OBJ = G.astype(object)
DUP = pd.concat([G, G[["a"]]], axis=1)
BIG_DOMAIN = {"a": list(range(4000)), "b": list(range(4000)), "c": STATES["c"]}
BIG = pd.DataFrame({"a": [0, 1], "b": [2, 3], "c": pd.Categorical([True, False], categories=STATES["c"])})

#: (id, frame, domain, exception type, message regex)
DATA_CASES = [
    ("NaN in categorical", NAN_A, None, DomainError, r"column 'a' has missing values \(NaN or None\)"),
    ("None in object column", _with(OBJ, a=["x", None] * 6), STATES, DomainError, r"column 'a' has missing value"),
    ("NaN in float column", _with(OBJ, b=[0.0, np.nan] * 6), STATES, DomainError, r"column 'b' has missing value"),
    ("pd.NA in nullable int", _with(OBJ, b=pd.array([0, None] * 6, dtype="Int64")), STATES, DomainError,
     r"column 'b' has missing value"),
    ("unknown value", _with(OBJ, a=["x", "w"] * 6), STATES, DomainError,
     r"column 'a' has values outside its declared domain \['x', 'y', 'z'\]; .*withheld"),
    ("category outside declared domain", _with(G, a=pd.Categorical(["x", "w"] * 6)), STATES, DomainError,
     r"column 'a' has values outside its declared domain \['x', 'y', 'z'\]; .*withheld"),
    ("bool for int domain", _with(OBJ, b=[True, False] * 6), {**STATES, "b": [2, 3]}, DomainError,
     r"column 'b' has values outside its declared domain \[2, 3\]"),
    ("unhashable values", _with(OBJ, a=pd.Series([["x"], "y"] * 6, dtype=object)), STATES, TypeError,
     r"column 'a' holds values that are not scalar states"),
    ("list-valued declared states", OBJ, {**STATES, "a": [["x", "y"], ["z"]]}, DomainError,
     r"attribute 'a' lists the state \['x', 'y'\], a list; a state must be a hashable scalar"),
    ("a list among declared states", OBJ, {**STATES, "a": ["x", ["y"], "z"]}, DomainError,
     r"attribute 'a' lists the state \['y'\], a list"),
    ("empty frame", G.iloc[:0], None, ValueError, r"(DataFrame is empty|data has no rows)"),
    ("domain names an absent column", G, {**STATES, "zz": [0, 1]}, DomainError,
     r"names column\(s\) \['zz'\] that are not in the DataFrame"),
    ("no columns", pd.DataFrame(index=range(3)), None, DomainError, r"\['a', 'b', 'c'\].* not (in the DataFrame|columns of the data)"),
    ("missing column", G.drop(columns="c"), None, DomainError, r"\['c'\].* not (in the DataFrame|columns of the data)"),
    ("int column without domain", _with(G, b=np.arange(12) % 2), None, DomainError, r"column 'b' has no public domain"),
    ("float column without domain", _with(G, b=np.arange(12) / 2), None, DomainError, r"column 'b' has no public domain"),
    ("bool column without domain", _with(G, c=np.arange(12) % 2 == 0), None, DomainError, r"column 'c' has no public domain"),
    ("string columns without domain", OBJ, None, DomainError,
     r"3 columns have no public domain: 'a' \(object\), 'b' \(object\), 'c' \(object\)"),
    ("datetime column without domain", _with(G, a=pd.date_range("2020", periods=12)), None, DomainError,
     r"column 'a' has no public domain"),
    ("duplicated column names", DUP, None, DomainError, r"duplicated column names \['a'\]"),
    # a schema (issue 44): unresolved columns, schema files that are not there or not valid
    ("bounds but no bins", _with(G, b=np.arange(12) % 2), Domain({k: STATES[k] for k in "ac"}, bounds={"b": (0, 1)}),
     DomainError, r"column\(s\) \['b'\] have no states yet.*with_public_bins"),
    ("states to discover", G, Domain({k: STATES[k] for k in "bc"}, discover=["a"]), DomainError,
     r"column\(s\) \['a'\] have no states yet.*marked discover"),
    ("schema file that does not exist", G, "no-such-schema.json", DomainError,
     r"domain=: no schema file 'no-such-schema.json'"),
    ("schema text that is not a schema", G, '{"format": "csv", "columns": {"a": {"type": "text"}}}', DomainError,
     r"format: must be 'pgmpy-dp/schema'.*format_version: must be an int.*columns\.a\.type"),
    ("table over the cell limit", BIG, BIG_DOMAIN, CellLimitError, r"16,000,000 cells .* more than the limit of 10,000,000"),
    ("dict instead of DataFrame", {"a": ["x"], "b": [0], "c": [True]}, None, TypeError, r"(expected a pandas DataFrame|must be a pandas DataFrame|or a pandas DataFrame), got dict"),
    ("ndarray instead of DataFrame", np.zeros((3, 3)), None, TypeError, r"DataFrame, got ndarray"),
]

#: (id, epsilon, exception type, message regex)
EPSILON_CASES = [
    ("zero", 0, ValueError, r"epsilon must be positive and finite, got 0"),
    ("negative", -1.0, ValueError, r"epsilon must be positive and finite, got -1"),
    ("inf", math.inf, ValueError, r"epsilon must be positive and finite, got inf"),
    ("-inf", -math.inf, ValueError, r"epsilon must be positive and finite"),
    ("nan", math.nan, ValueError, r"epsilon must be positive and finite, got nan"),
    ("str", "1.0", TypeError, r"epsilon must be a positive finite number, got '1.0' \(str\)"),
    ("bytes", b"1", TypeError, r"epsilon must be a positive finite number, got b'1' \(bytes\)"),
    ("None", None, TypeError, r"takes exactly one of epsilon= or rho=, got neither"),
    ("bool", True, TypeError, r"epsilon must be a positive finite number, got True \(bool\)"),
    ("numpy bool", np.bool_(True), TypeError, r"epsilon must be a positive finite number"),
    ("complex", 1 + 0j, TypeError, r"epsilon must be a positive finite number"),
    ("dict", {"a": 1.0}, TypeError, r"epsilon must be a positive finite number"),
    ("too small for exact noise", 1e-300, ValueError, r"too small: its noise scale"),
]

#: (id, frame, domain): valid, if unusual; every entry point must succeed.
VALID_EDGE_CASES = [
    ("one row", G.iloc[:1], None),
    ("all rows identical", pd.concat([G.iloc[:1]] * 5, ignore_index=True), None),
    ("duplicated and non-integer index", G.set_axis(["r"] * len(G)), None),
    ("extra unrelated raw columns", G.assign(age=np.arange(12), note="free text"), None),
    ("object columns with declared domain", OBJ, STATES),
    ("single-state domain", _with(OBJ, c=[True] * 12), {**STATES, "c": [True]}),
    ("categories in another order", G.astype({"a": pd.CategoricalDtype(["z", "y", "x"])}), None),
]


def _ids(cases):
    return [c[0] for c in cases]


@pytest.mark.parametrize(
    "entry, case",
    [(e, c) for c in DATA_CASES for e in ENTRY_POINTS if isinstance(c[1], pd.DataFrame) or not e.is_accessor],
    ids=lambda x: x.name if isinstance(x, EntryPoint) else x[0],
)
def test_bad_data(entry, case):
    _, df, domain, exc, message = case
    budget = PrivacyBudget(10.0)
    with pytest.raises(exc, match=message):
        entry.call(df, 1.0, domain=domain, budget=budget)
    assert budget.spent == 0 and budget.ledger == ()


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda e: e.name)
@pytest.mark.parametrize("case", EPSILON_CASES, ids=_ids(EPSILON_CASES))
def test_bad_epsilon(entry, case):
    _, eps, exc, message = case
    budget = PrivacyBudget(10.0)
    with pytest.raises(exc, match=message):
        entry.call(good_frame(), eps, budget=budget)
    assert budget.spent == 0 and budget.ledger == ()


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda e: e.name)
@pytest.mark.parametrize("case", VALID_EDGE_CASES, ids=_ids(VALID_EDGE_CASES))
def test_valid_edge_cases_succeed_and_spend_exactly_epsilon(entry, case):
    _, df, domain = case
    budget = PrivacyBudget(1.0)
    entry.call(df, Fraction(1, 2), domain=domain, budget=budget)  # any real number type is accepted
    assert budget.spent == 0.5 and len(budget.ledger) == 1


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda e: e.name)
@pytest.mark.parametrize("eps", [Fraction(1, 3), np.float32(0.25), np.int64(2), 1e-6, 1e4, 1e300], ids=str)
def test_any_positive_epsilon_type_and_size_is_spent_exactly(entry, eps):
    """Tiny (1e-6) and huge (1e4, 1e300: next to no privacy) epsilons are valid and spent exactly."""
    budget = PrivacyBudget(1e308)
    entry.call(good_frame(), eps, budget=budget)
    assert budget.spent == float(eps) and len(budget.ledger) == 1


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda e: e.name)
def test_budget_too_small_is_refused_before_anything_happens(entry):
    budget = PrivacyBudget(0.5)
    with pytest.raises(BudgetExceededError, match=r"exceeds the remaining budget 0.5 of 0.5"):
        entry.call(good_frame(), 1.0, budget=budget)
    assert budget.spent == 0


# -- release-specific arguments ---------------------------------------------------------------------

RELEASE_CASES = [
    ("tables is a str", dict(tables="a"), TypeError, r"tables must be a list of attribute tuples"),
    ("tables is a tuple", dict(tables=("a", "b")), TypeError, r"tables must be a list of attribute tuples"),
    ("table is an int", dict(tables=[5]), TypeError, r"each table must be a column name or a tuple of column names, got 5"),
    ("no tables", dict(tables=[]), ValueError, r"no tables requested"),
    ("empty table", dict(tables=[()]), DomainError, r"a table must name at least one attribute"),
    ("repeated column", dict(tables=[("a", "a")]), DomainError, r"repeats column\(s\) \['a'\]"),
    ("repeated table", dict(tables=[("a",), ("a",)]), DomainError, r"requested twice"),
    ("too many per-table epsilons", dict(epsilon=[0.5, 0.5, 0.5]), ValueError, r"got 3 per-table epsilons for 2 tables"),
    ("per-table epsilon NaN", dict(epsilon=[0.5, math.nan]), ValueError, r"epsilon for table \('c',\) must be positive"),
    ("per-table epsilon str", dict(epsilon=[0.5, "x"]), TypeError, r"epsilon for table \('c',\) must be a positive"),
    ("max_cells below table", dict(max_cells=5), CellLimitError, r"6 cells .* limit of 5"),
    ("n_records NaN", dict(n_records=math.nan), ValueError, r"n_records must be a finite non-negative count"),
    ("n_records negative", dict(n_records=-3), ValueError, r"n_records must be a finite non-negative count"),
    ("n_records str", dict(n_records="12"), TypeError, r"n_records must be a number"),
    ("budget not a PrivacyBudget", dict(budget=1.0), TypeError, r"budget must be a pgmpy_dp.PrivacyBudget or None, got float"),
    ("random_state str", dict(random_state="seed"), TypeError, r"random_state must be None, a non-negative int seed"),
    ("random_state bool", dict(random_state=False), TypeError, r"random_state must be .* got False \(bool\)"),
    ("max_cells str", dict(max_cells="10"), TypeError, r"max_cells must be a positive int, got .10."),
    ("max_cells zero", dict(max_cells=0), ValueError, r"max_cells must be a positive int, got 0"),
    ("domain states a str", dict(domain={"a": "xyz"}), DomainError, r"states of attribute 'a' must be a list of values"),
    ("domain with NaN state", dict(domain={"a": ["x", "y", "z", math.nan]}), DomainError, r"lists NaN as a state"),
    ("domain with repeated state", dict(domain={"a": ["x", "x", "y", "z"]}), DomainError, r"lists a state twice: \['x'\]"),
    ("domain with empty states", dict(domain={"a": []}), DomainError, r"attribute 'a' has an empty domain"),
]


@pytest.mark.parametrize("call", [release_marginals, lambda df, *a, **k: df.dp.release(*a, **k)], ids=["release_marginals", "df.dp.release"])
@pytest.mark.parametrize("case", RELEASE_CASES, ids=_ids(RELEASE_CASES))
def test_bad_release_arguments(call, case):
    _, changes, exc, message = case
    kwargs = dict(tables=TABLES, epsilon=1.0)
    kwargs.update(changes)
    spend = PrivacyBudget(10.0)
    kwargs.setdefault("budget", spend)
    with pytest.raises(exc, match=message):
        call(good_frame(), kwargs.pop("tables"), kwargs.pop("epsilon"), **kwargs)
    assert spend.spent == 0


# -- release_from_codes: codes and weights that used to be miscounted silently -----------------------


def _codes(**override):
    codes = {"a": np.array([0, 1, 2, 0]), "b": np.array([1, 0, 1, 1]), "c": np.array([0, 0, 1, 1])}
    codes.update(override)
    return codes


CODE_CASES = [
    ("code above the domain", _codes(b=np.array([1, 0, 2, 1])), {}, DomainError, r"codes of 'b' must be in \[0, 2\) .*values withheld"),
    ("negative code", _codes(a=np.array([0, -1, 2, 0])), {}, DomainError, r"codes of 'a' must be in \[0, 3\)"),
    ("ragged codes", _codes(c=np.array([0])), {}, ValueError, r"codes of 'c' have another number of rows than those of the other attributes"),
    ("float codes", _codes(a=np.array([0.0, 1, 2, 0])), {}, TypeError, r"codes of 'a' must be a 1-D integer array"),
    ("missing codes", {"a": np.array([0, 1])}, {}, DomainError, r"no codes given for attribute\(s\) \['b', 'c'\]"),
    ("weights above 1", _codes(), dict(weights=np.array([1.0, 5.0, 0.0, 1.0])), ValueError, r"weights must be in \[0, 1\]"),
    ("negative weights", _codes(), dict(weights=np.array([1.0, -1.0, 0.0, 1.0])), ValueError, r"weights must be in \[0, 1\]"),
    ("NaN weights", _codes(), dict(weights=np.array([1.0, np.nan, 0.0, 1.0])), ValueError, r"weights must be in \[0, 1\]"),
    ("weights of wrong length", _codes(), dict(weights=np.ones(3)), ValueError, r"weights must be a 1-D array with one entry per row of the codes"),
    ("no rows", {k: v[:0] for k, v in _codes().items()}, {}, ValueError, r"the data has no rows"),
]


@pytest.mark.parametrize("case", CODE_CASES, ids=_ids(CODE_CASES))
def test_bad_codes(case):
    _, codes, kwargs, exc, message = case
    budget = PrivacyBudget(1.0)
    with pytest.raises(exc, match=message):
        release_from_codes(codes, Domain(STATES), TABLES, 1.0, budget=budget, **kwargs)
    assert budget.spent == 0


def test_zero_one_weights_are_accepted():
    rel = release_from_codes(_codes(), Domain(STATES), [("a",)], 1e6, weights=np.array([1.0, 0.0, 1.0, 0.5]))
    np.testing.assert_allclose(rel[("a",)].values, [1.5, 0, 1], atol=1e-3)  # huge epsilon: noise is 0


# -- properties (hypothesis) -----------------------------------------------------------------------

EPSILON_VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-5, 5),
    st.fractions(),
    st.text(max_size=3),
    st.none(),
    st.booleans(),
    st.lists(st.floats(0.1, 1.0), max_size=2).map(tuple),
)


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda e: e.name)
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(eps=EPSILON_VALUES)
def test_any_epsilon_either_spends_exactly_it_or_is_refused_with_a_clear_error(entry, eps):
    budget = PrivacyBudget(1e308)
    def number(e):
        return isinstance(e, (int, float, Fraction)) and not isinstance(e, bool) and math.isfinite(e) and e > 0

    per_table = isinstance(eps, tuple)
    if per_table:
        valid = entry.per_table and len(eps) == len(TABLES) and all(number(e) and 1 / e <= MAX_SCALE for e in eps)
    else:
        valid = number(eps) and len(TABLES) / float(eps) <= MAX_SCALE
    # below 1e-6 an entry point may refuse (how much noise it needs depends on its tables)
    borderline = valid and not per_table and float(eps) < 1e-6
    if valid and not borderline:
        entry.call(good_frame(), eps, budget=budget)
        assert budget.spent == pytest.approx(math.fsum(eps) if per_table else float(eps), rel=1e-15)
        return
    try:
        entry.call(good_frame(), eps, budget=budget)
    except (TypeError, ValueError) as exc:
        assert "epsilon" in str(exc)
        assert budget.spent == 0
    else:
        assert borderline, f"epsilon={eps!r} was accepted"
        assert budget.spent == pytest.approx(float(eps), rel=1e-15)


@st.composite
def frames_with_one_bad_cell(draw):
    n = draw(st.integers(1, 25))
    rows = {k: draw(st.lists(st.sampled_from(v), min_size=n, max_size=n)) for k, v in STATES.items()}
    col = draw(st.sampled_from(sorted(STATES)))
    row = draw(st.integers(0, n - 1))
    bad = draw(st.sampled_from([None, np.nan, pd.NA, "unknown", 17, 2.5]))
    values = list(rows[col])
    values[row] = bad
    rows[col] = pd.Series(values, dtype=object)
    return pd.DataFrame(rows), col, bad


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda e: e.name)
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(case=frames_with_one_bad_cell())
def test_one_bad_cell_anywhere_is_named_and_spends_nothing(entry, case):
    df, col, bad = case
    budget = PrivacyBudget(1.0)
    if bad is None or bad is pd.NA or (isinstance(bad, float) and math.isnan(bad)):
        message = rf"column '{col}' has missing value"
    else:
        message = rf"column '{col}' has values outside its declared domain"
    with pytest.raises(DomainError, match=message) as info:
        entry.call(df, 0.5, domain=STATES, budget=budget)
    assert budget.spent == 0
    if not (bad is None or bad is pd.NA or isinstance(bad, float)):
        assert repr(bad) not in str(info.value)  # the private value is withheld


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda e: e.name)
@settings(max_examples=15, deadline=None, derandomize=True)
@given(n=st.integers(1, 30), seed=st.integers(0, 2**32 - 1))
def test_any_valid_frame_is_released_with_the_full_domain_shape(entry, n, seed):
    budget = PrivacyBudget(1.0)
    out = entry.call(good_frame(n, seed), 1.0, budget=budget)
    assert budget.spent == 1.0
    if isinstance(out, pgmpy_dp.MarginalRelease):
        assert [t.values.shape for t in out.tables] == [(3, 2), (2,)]


# -- model structure (estimators) ------------------------------------------------------------------

#: (id, edges, isolated nodes, domain override, exception type or None for "must succeed", message regex)
MODEL_CASES = [
    ("cyclic", [("a", "b"), ("b", "c"), ("c", "a")], [], None, ValueError, r"(?i)(cycle|loop)"),
    ("disconnected", [("a", "b")], ["c"], None, None, None),
    ("node missing from the data", [("a", "b"), ("b", "d")], [], None, DomainError, r"\['d'\] are not columns of the data"),
    ("family over the cell limit", [("a", "b")], ["c"], BIG_DOMAIN, CellLimitError, r"16,000,000 cells"),
]

# An entry point's ``expect`` overrides a case's expected exception (e.g. a loopy MN is valid).
if MODEL_ENTRY_POINTS:

    @pytest.mark.parametrize("entry", MODEL_ENTRY_POINTS, ids=lambda e: e.name)
    @pytest.mark.parametrize("case", MODEL_CASES, ids=_ids(MODEL_CASES))
    def test_model_structure(entry, case):
        _, edges, isolated, domain, exc, message = case
        exc, message = entry.expect.get(case[0], (exc, message))
        df = BIG if domain is BIG_DOMAIN else good_frame()
        budget = PrivacyBudget(1.0)
        if exc is None:
            entry.call(df, 1.0, (edges, isolated, domain), budget=budget)
            assert budget.spent == 1.0
            return
        with pytest.raises(exc, match=message):
            entry.call(df, 1.0, (edges, isolated, domain), budget=budget)
        assert budget.spent == 0


def test_record_count_estimate_with_a_noiseless_table():
    """Regression: a table with zero noise variance (huge epsilon) made the estimate 0/0 = NaN."""
    rel = good_frame().dp.release([("a",), ("b",)], [1e300, 1.0])
    assert rel.n_records_estimate == 12.0


# -- regressions: raw errors that used to escape -------------------------------------------------------


@pytest.mark.parametrize("entry", [e for e in ENTRY_POINTS if e.per_table], ids=lambda e: e.name)
def test_per_table_epsilons_whose_sum_overflows_are_refused(entry):
    """[1e308, 1e308] used to be released and then raise OverflowError when the budget summed it."""
    budget = PrivacyBudget(1e308)
    with pytest.raises(ValueError, match=r"per-table epsilons \[1e\+308, 1e\+308\] sum to more than the largest"):
        entry.call(good_frame(), [1e308, 1e308], budget=budget)
    assert budget.spent == 0 and budget.ledger == ()


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda e: e.name)
def test_a_subnormal_epsilon_split_over_tables_is_refused(entry):
    """5e-324 over several tables underflows to 0 per table: it used to divide by zero."""
    budget = PrivacyBudget(1.0)
    with pytest.raises(ValueError, match=r"epsilon .*(too small|must be positive and finite, got 0.0)"):
        entry.call(good_frame(), 5e-324, budget=budget)
    assert budget.spent == 0 and budget.ledger == ()


RANDOM_STATE_CASES = [
    ("junk", TypeError, r"random_state must be None, a non-negative int seed or a numpy.random.Generator, got 'junk'"),
    (False, TypeError, r"got False \(bool\); a bool is not a seed"),
    (np.bool_(True), TypeError, r"got (np\.True_|True) \(bool_?\)"),
    (1.5, TypeError, r"random_state must be None, a non-negative int seed"),
    (-1, ValueError, r"random_state must be a non-negative int seed, got -1"),
    (np.random.RandomState(0), TypeError, r"\(RandomState\)"),
]


def _release_rs(df, rs, budget):
    return df.dp.release(TABLES, 1.0, budget=budget, random_state=rs)


def _bn_rs(df, rs, budget):
    est = DiscretePrivateMLE(epsilon=1.0, budget=budget, random_state=rs)
    return DiscreteBayesianNetwork([("a", "b"), ("b", "c")]).fit(df, estimator=est)


def _mn_rs(df, rs, budget):
    est = PrivateMarkovEstimator(method="naive-mle", random_state=rs, show_progress=False)
    return est.fit(DiscreteMarkovNetwork([("a", "b"), ("b", "c")]), df, epsilon=1.0, budget=budget)


def _mn_rs_from_release(df, rs, budget):
    release = df.dp.release([("a", "b"), ("b", "c")], 1.0, random_state=0)
    est = PrivateMarkovEstimator(method="naive-mle", random_state=rs, show_progress=False)
    return est.fit(DiscreteMarkovNetwork([("a", "b"), ("b", "c")]), release)


def _sample_rs(df, rs, budget):
    from pgmpy.factors.discrete import DiscreteFactor

    mn = DiscreteMarkovNetwork([("a", "b")])
    mn.add_factors(DiscreteFactor(["a", "b"], [2, 2], [1.0, 2.0, 3.0, 4.0]))
    return pgmpy_dp.sample(mn, 5, random_state=rs)


@pytest.mark.parametrize(
    "call",
    [_release_rs, _bn_rs, _mn_rs, _mn_rs_from_release, _sample_rs],
    ids=["release", "DiscretePrivateMLE", "PrivateMarkovEstimator(df)", "PrivateMarkovEstimator(release)", "sample"],
)
@pytest.mark.parametrize("case", RANDOM_STATE_CASES, ids=["str", "False", "np.True_", "float", "negative", "RandomState"])
def test_bad_random_state_is_refused_by_every_entry_point(call, case):
    value, exc, message = case
    budget = PrivacyBudget(1.0)
    with pytest.raises(exc, match=message):
        call(good_frame(), value, budget)
    assert budget.spent == 0


@pytest.mark.parametrize("call", [_release_rs, _bn_rs, _mn_rs], ids=["release", "DiscretePrivateMLE", "PrivateMarkovEstimator"])
@pytest.mark.parametrize("value", [None, 0, np.int64(3), 2**70, np.random.default_rng(1)], ids=["None", "0", "np.int64", "2**70", "Generator"])
def test_valid_random_states_are_accepted(call, value):
    budget = PrivacyBudget(1.0)
    call(good_frame(), value, budget)
    assert budget.spent == 1.0


def test_same_seed_same_release():
    a, b = (good_frame().dp.release(TABLES, 1.0, random_state=7) for _ in range(2))
    assert a == b


@pytest.mark.parametrize(
    "model, name",
    [
        (DiscreteBayesianNetwork([("a", "b"), ("b", "c")]), r"got DiscreteBayesianNetwork; .*to_markov_model\(\)"),
        (nx.Graph([("a", "b"), ("b", "c")]), r"got Graph"),
        (nx.DiGraph([("a", "b")]), r"got DiGraph"),
        (None, r"got NoneType"),
        ([("a", "b")], r"got list"),
    ],
    ids=["BayesianNetwork", "networkx Graph", "networkx DiGraph", "None", "edge list"],
)
def test_markov_estimator_refuses_other_models_before_spending(model, name):
    budget = PrivacyBudget(1.0)
    with pytest.raises(TypeError, match=r"model must be a pgmpy DiscreteMarkovNetwork, " + name):
        PrivateMarkovEstimator(method="naive-mle").fit(model, good_frame(), epsilon=1.0, budget=budget)
    assert budget.spent == 0


# -- the fuzzer: every public entry point, every parameter ------------------------------------------
#
# Each case is (entry point, parameter, value). A value the parameter accepts is skipped; any
# other must raise a TypeError or ValueError (DomainError, CellLimitError, ReleaseFormatError are
# ValueErrors; from_json may raise an OSError for a path) whose message names the parameter (or
# the column), raised by pgmpy_dp itself rather than from deep inside numpy, pandas or pgmpy,
# with nothing spent.

_FOREIGN = tuple(os.path.dirname(m.__file__) + os.sep for m in (np, pd, pgmpy, nx))


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating, Fraction)) and not isinstance(v, (bool, np.bool_))


def _finite(v) -> bool:
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


def _positive(v) -> bool:
    return _is_number(v) and _finite(v) and v > 0


def _int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _epsilon_ok(v) -> bool | None:
    """None: an epsilon so small that refusing it ("too small") is as right as accepting it."""
    if not _positive(v):
        return False
    return True if float(v) >= 1e-6 else None


def _random_state_ok(v) -> bool:
    return v is None or (_int(v) and v >= 0) or isinstance(v, np.random.Generator)


def _domain_ok(v) -> bool | None:
    """None: a non-mapping domain, whose validation belongs to helper ux18 (see the xfail test below).

    Keys that are not columns of the data are refused; a column's entry must list all its states.
    """
    if v is None:
        return True
    if not isinstance(v, dict):
        return None
    return all(k in STATES and isinstance(s, list) and set(STATES[k]) <= set(s) for k, s in v.items())


def _tables_ok(v) -> bool:
    if not isinstance(v, list) or not v:
        return False
    tables = [(t,) if isinstance(t, str) else t for t in v]
    if not all(isinstance(t, tuple) and t and all(a in STATES for a in t) and len(set(t)) == len(t) for t in tables):
        return False
    return len(set(tables)) == len(tables)


MARKOV_EDGES = [("a", "b"), ("b", "c")]
_MODEL_JUNK = [DiscreteBayesianNetwork(MARKOV_EDGES), nx.Graph(MARKOV_EDGES)]

#: values tried for every parameter (plus hypothesis' own numbers and strings)
JUNK_VALUES = [
    None, True, False, np.bool_(True), 0, -1, 1, 2, 3, 10**400, np.int64(-3), 0.5, -0.5, 1e-300, np.float64(np.nan),
    math.nan, math.inf, -math.inf, 1 + 0j, Fraction(1, 3), "", "junk", "a", "auto", b"x", [], [1], ["a"], [("a", "b")],
    [("a", "zz")], [("a", "a")], [()], ("a", "b"), {}, {"a": 1}, {"a": ["x"]}, {"zz": [1]}, object(),
    np.zeros(2), pd.Series([1.0]), *_MODEL_JUNK,
]


def _huge_int(v) -> bool:
    return _int(v) and abs(v) > float(np.finfo(np.float64).max)


def _array_like(v) -> bool:
    return isinstance(v, (np.ndarray, pd.Series))


@dataclass(frozen=True)
class Fuzzed:
    """One parameter of one entry point: which values it accepts and how an error must name it."""

    valid: Callable  # value -> True (accepted), False (must be refused), None (skip: either is right)
    names: str  # regex the error message must match


def _good_mn_release():
    return good_frame(50, 1).dp.release(MARKOV_EDGES, 1.0, random_state=0)


def _call_release(params, budget):
    p = dict(tables=TABLES, epsilon=1.0, domain=None, budget=budget, random_state=None, max_cells=10**7, n_records=None)
    p.update(params)
    return good_frame().dp.release(p.pop("tables"), p.pop("epsilon"), show_progress=False, **p)


def _call_bn(params, budget):
    p = dict(epsilon=1.0, budget=budget)
    fit = {"model": DiscreteBayesianNetwork(MARKOV_EDGES), "data": good_frame()}
    p.update(params)
    for k in fit:
        fit[k] = p.pop(k, fit[k])
    return DiscretePrivateMLE(**p).fit(fit["model"], fit["data"])


def _call_mn(params, budget):
    init = dict(method="naive-mle", show_progress=False)
    fit = dict(model=DiscreteMarkovNetwork(MARKOV_EDGES), data=good_frame(), epsilon=1.0, budget=budget)
    for k, v in params.items():
        (fit if k in ("model", "data", "epsilon", "budget", "domain", "cliques", "tied") else init)[k] = v
    if not isinstance(fit["data"], pd.DataFrame) and "epsilon" not in params and "budget" not in params:
        fit.pop("epsilon"), fit.pop("budget")  # a release has already been paid for
    model, data = fit.pop("model"), fit.pop("data")
    return PrivateMarkovEstimator(**init).fit(model, data, **fit)


def _call_from_json(params, budget):
    return MarginalRelease.from_json(params["source"])


_BUDGET = Fuzzed(lambda v: v is None or isinstance(v, PrivacyBudget), r"budget")
_RANDOM_STATE = Fuzzed(_random_state_ok, r"random_state")
_EPSILON = Fuzzed(_epsilon_ok, r"epsilon")

FUZZED = {
    "release": (_call_release, {
        "tables": Fuzzed(_tables_ok, r"table"),
        "epsilon": _EPSILON,
        "domain": Fuzzed(_domain_ok, r"domain|states of attribute 'a'|column 'a'"),
        "budget": _BUDGET,
        "random_state": _RANDOM_STATE,
        "max_cells": Fuzzed(lambda v: _int(v) and v >= 6, r"max_cells"),
        "n_records": Fuzzed(lambda v: v is None or (_is_number(v) and not isinstance(v, Fraction) and _finite(v) and v >= 0),
                            r"n_records"),
    }),
    "DiscretePrivateMLE": (_call_bn, {
        "epsilon": _EPSILON,
        "allocation": Fuzzed(lambda v: isinstance(v, str) and v in ("optimal", "data-dependent", "uniform"),
                             r"allocation"),
        "stage1_fraction": Fuzzed(lambda v: _positive(v) and v < 1, r"stage1_fraction"),
        "sample_rate": Fuzzed(lambda v: _positive(v) and v <= 1, r"sample_rate"),
        "consistency": Fuzzed(
            lambda v: isinstance(v, str) and v in ("likelihood", "projection"),
            r"consistency"),
        "domain": Fuzzed(_domain_ok, r"domain|states of attribute 'a'|column 'a'"),
        "budget": _BUDGET,
        # random_state: see test_bad_random_state_is_refused_by_every_entry_point
        "model": Fuzzed(lambda v: isinstance(v, DiscreteBayesianNetwork), r"model"),
        "data": Fuzzed(lambda v: False, r"data|DataFrame"),
    }),
    "PrivateMarkovEstimator": (_call_mn, {
        "method": Fuzzed(lambda v: isinstance(v, str) and v in ("cgm-em", "naive-mle"), r"method"),
        "max_iter": Fuzzed(lambda v: v is None or (_int(v) and v >= 1), r"max_iter"),
        "tol": Fuzzed(lambda v: _positive(v) and not isinstance(v, Fraction), r"tol"),
        "regularization": Fuzzed(
            lambda v: (isinstance(v, str) and v == "auto") or (_is_number(v) and not isinstance(v, Fraction)
                                                                and _finite(v) and v >= 0),
            r"regularization",
        ),
        "inference": Fuzzed(lambda v: isinstance(v, str) and v in ("auto", "junction-tree", "loopy"), r"inference"),
        "random_state": _RANDOM_STATE,
        "model": Fuzzed(lambda v: isinstance(v, DiscreteMarkovNetwork), r"model"),
        "data": Fuzzed(lambda v: False, r"data"),
        "epsilon": _EPSILON,
        "budget": _BUDGET,
        "domain": Fuzzed(_domain_ok, r"domain|states of attribute 'a'|column 'a'"),
        "cliques": Fuzzed(lambda v: v is None, r"clique"),
        "tied": Fuzzed(lambda v: v is None or (isinstance(v, list) and not v), r"tied"),
    }),
    "MarginalRelease.from_json": (_call_from_json, {
        "source": Fuzzed(lambda v: False, r"source|field|release file"),
    }),
}

_VALUES = st.one_of(
    st.sampled_from(JUNK_VALUES),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**70), 2**70),
    st.text(max_size=6),
)


def _check_refusal(entry, param, value, budget):
    call, params = FUZZED[entry]
    spec = params[param]
    try:
        call({param: value}, budget)
    except (TypeError, ValueError, OSError) as exc:
        message = str(exc)
        assert re.search(spec.names, message), f"{entry}({param}={value!r}): message does not name it: {message}"
        deepest = traceback.extract_tb(exc.__traceback__)[-1].filename
        assert not deepest.startswith(_FOREIGN), f"{entry}({param}={value!r}) raised from {deepest}: {exc!r}"
        if isinstance(exc, OSError):
            assert entry == "MarginalRelease.from_json", f"{entry}({param}={value!r}): {exc!r}"
    else:
        raise AssertionError(f"{entry} accepted {param}={value!r}")
    assert budget.spent == 0 and budget.ledger == ()


@pytest.mark.parametrize(
    "entry, param", [(e, p) for e, (_, params) in FUZZED.items() for p in params], ids=lambda x: x
)
def test_every_junk_value_for_every_parameter(entry, param, tmp_path, monkeypatch):
    """The deterministic half of the fuzzer: every value of JUNK_VALUES the parameter does not accept."""
    monkeypatch.chdir(tmp_path)
    spec = FUZZED[entry][1][param]
    tried = 0
    for value in JUNK_VALUES:
        if spec.valid(value) is False and not isinstance(value, PrivacyBudget):
            _check_refusal(entry, param, value, PrivacyBudget(10.0))
            tried += 1
    assert tried > 0


@pytest.mark.parametrize("entry", list(FUZZED))
@settings(
    max_examples=200, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_fuzz_every_parameter_of_every_entry_point(entry, data, tmp_path_factory):
    param = data.draw(st.sampled_from(sorted(FUZZED[entry][1])), label="param")
    value = data.draw(_VALUES, label="value")
    spec = FUZZED[entry][1][param]
    if param == "budget" and isinstance(value, PrivacyBudget):
        value = None
    if spec.valid(value) is not False:
        return  # accepted (tested elsewhere)
    budget = PrivacyBudget(10.0)
    cwd = os.getcwd()
    os.chdir(tmp_path_factory.getbasetemp())  # from_json treats most strings as paths
    try:
        _check_refusal(entry, param, value, budget)
    finally:
        os.chdir(cwd)


_DOMAIN_PARAMS = [("release", "domain"), ("DiscretePrivateMLE", "domain"), ("PrivateMarkovEstimator", "domain")]
_DOMAIN_VALUES = [
    ["a", "b"], [("a", ["x", "y", "z"])], "a", 3, Domain({"a": ["x", "y", "z"], "b": [0, 1], "c": [True, False]}),
]


@pytest.mark.parametrize("entry, param", _DOMAIN_PARAMS, ids=[f"{e}-{p}" for e, p in _DOMAIN_PARAMS])
@pytest.mark.parametrize("value", _DOMAIN_VALUES, ids=["list of names", "list of pairs", "str", "int", "Domain"])
def test_fuzz_domain_given_as_a_non_mapping(entry, param, value):
    """A ``Domain`` is documented to work; a list, str or int must be refused naming the parameter."""
    budget = PrivacyBudget(10.0)
    if isinstance(value, Domain):
        FUZZED[entry][0]({param: value}, budget)  # must succeed
        assert budget.spent == 1.0
        return
    _check_refusal(entry, param, value, budget)


_MULTI = good_frame().set_axis(pd.MultiIndex.from_tuples([("a", "x"), ("b", "x"), ("c", "x")]), axis=1)
_INTS = good_frame().set_axis([0, 1, 2], axis=1)
_INT_STATES = {0: STATES["a"], 1: STATES["b"], 2: STATES["c"]}
_COLUMN_CASES = {
    "release, MultiIndex columns": lambda b: _MULTI.dp.release([("a",)], 1.0, domain=STATES, budget=b),
    "MN, MultiIndex columns": lambda b: PrivateMarkovEstimator(method="naive-mle").fit(
        DiscreteMarkovNetwork([("a", "b")]), _MULTI, epsilon=1.0, domain=STATES, budget=b),
    "release, int column names": lambda b: _INTS.dp.release([(0, 1), (2,)], 1.0, domain=_INT_STATES, budget=b),
    "BN, int column names": lambda b: DiscreteBayesianNetwork([(0, 1), (1, 2)]).fit(
        _INTS, estimator=DiscretePrivateMLE(1.0, domain=_INT_STATES, budget=b)),
    "MN, int column names": lambda b: PrivateMarkovEstimator(method="naive-mle").fit(
        DiscreteMarkovNetwork([(0, 1), (1, 2)]), _INTS, epsilon=1.0, domain=_INT_STATES, budget=b),
}


@pytest.mark.parametrize("case", list(_COLUMN_CASES))
def test_fuzz_unusual_column_labels(case):
    """MultiIndex columns: a raw pandas AttributeError; int names: 'attribute 0 is not in the domain ['0', ...]'."""
    budget = PrivacyBudget(10.0)
    with pytest.raises((TypeError, ValueError)) as info:
        _COLUMN_CASES[case](budget)
    deepest = traceback.extract_tb(info.value.__traceback__)[-1].filename
    assert not deepest.startswith(_FOREIGN), f"raised from {deepest}: {info.value!r}"
    assert re.search(r"column.*(str|string|MultiIndex)", str(info.value)), str(info.value)
    assert budget.spent == 0


# -- structure learners ------------------------------------------------------------------------------
from pgmpy_dp import PrivateIsingEstimator, PrivatePairwiseEstimator  # noqa: E402
from pgmpy_dp import _memory  # noqa: E402
from pgmpy_dp.structure import NotFittedError  # noqa: E402

LEARNERS = [PrivateIsingEstimator, PrivatePairwiseEstimator]
_BINARY = {"b": [0, 1], "c": [True, False], "d": ["u", "v"]}


def _binary_frame(n=30):
    rng = np.random.default_rng(2)
    return pd.DataFrame({k: pd.Categorical(rng.choice(v, n), categories=v) for k, v in _BINARY.items()})


#: (id, estimator kwargs, fit kwargs, exception, regex): every learner, a zCDP budget, nothing spent.
LEARNER_CASES = [
    ("budget is a number", {}, dict(budget=5.0), TypeError, r"budget must be a pgmpy_dp.PrivacyBudget or None, got float"),
    ("budget is pure DP", {}, dict(budget=PrivacyBudget(5.0)), ValueError, r"spends rho \(zCDP\)"),
    ("n_iter 10**12", dict(n_iter=10**12), {}, ValueError, r"n_iter must be between 1 and 100,000"),
    ("n_iter 1e12", dict(n_iter=1e12), {}, TypeError, r"n_iter must be a positive integer, got 1000000000000.0 \(float\)"),
    ("n_iter zero", dict(n_iter=0), {}, ValueError, r"n_iter must be between 1"),
    ("domain names an absent column", {}, dict(domain={"zz": [0, 1]}), DomainError,
     r"names column\(s\) \['zz'\] that are not in the DataFrame"),
    ("single declared state", {}, dict(domain={"d": ["u"]}), DomainError,
     r"column 'd' declares a single state"),
    ("unknown value", {}, dict(data=_binary_frame().astype(object).assign(d=["u", "secret-42"] * 15),
                                domain=_BINARY), DomainError, r"column 'd' has values outside .*withheld"),
    ("empty frame", {}, dict(data=_binary_frame().iloc[:0]), ValueError, r"data has no rows; .*Nothing was charged"),
    ("empty frame, Frank-Wolfe", dict(route="frank-wolfe", width=1.0, n_iter=3), dict(data=_binary_frame().iloc[:0]),
     ValueError, r"data has no rows"),
    ("list-valued state", {}, dict(domain={"d": [["u"], ["v"]]}), DomainError, r"attribute 'd' lists the state \['u'\]"),
]


@pytest.mark.parametrize("cls", LEARNERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("case", LEARNER_CASES, ids=_ids(LEARNER_CASES))
def test_bad_learner_input_spends_nothing(cls, case):
    _, init, fit, exc, message = case
    budget = PrivacyBudget(rho=10.0)
    fit = {"data": _binary_frame(), "rho": 1.0, "budget": budget, **fit}
    spent_on = fit["budget"] if isinstance(fit["budget"], PrivacyBudget) else budget
    with pytest.raises(exc, match=message) as info:
        cls(**init).fit(fit.pop("data"), **fit)
    assert "secret" not in str(info.value)
    assert budget.spent == 0 and spent_on.spent == 0 and spent_on.pending == ()


def test_a_learner_too_large_for_memory_spends_nothing(monkeypatch):
    monkeypatch.setattr(_memory, "available_memory", lambda: 8 * 2**30)
    rng = np.random.default_rng(0)
    df = pd.DataFrame({c: rng.integers(0, 1000, 200) for c in "abc"}).astype(pd.CategoricalDtype(range(1000)))
    budget = PrivacyBudget(rho=100.0)
    with pytest.raises(ValueError, match=r"PrivatePairwiseEstimator would need about .* GiB"):
        PrivatePairwiseEstimator(route="frank-wolfe").fit(df, rho=100.0, budget=budget)
    assert budget.spent == 0 and budget.pending == ()


@pytest.mark.parametrize("cls", LEARNERS, ids=lambda c: c.__name__)
def test_learners_before_fit_and_bad_edges(cls):
    est = cls(n_iter=3, random_state=0)
    with pytest.raises(NotFittedError, match=r"not fitted yet; call fit\(data, rho=...\) before to_markov_network"):
        est.to_markov_network()
    with pytest.raises(ValueError, match=r"not fitted yet; call fit.* before epsilon_delta"):
        est.epsilon_delta(1e-6)
    est.fit(_binary_frame(), rho=1.0)
    with pytest.raises(ValueError, match=r"edge \('b', 'zz'\) names \['zz'\], not fitted column"):
        est.to_markov_network(edges=[("b", "zz")])
    with pytest.raises(TypeError, match=r"edges must be a list of \(column, column\) pairs, got str"):
        est.to_markov_network(edges="bc")


# -- budget files ------------------------------------------------------------------------------------
import json as _json  # noqa: E402


def _spent_file(tmp_path, total=1.0, rho=False):
    path = tmp_path / "budget.json"
    b = PrivacyBudget.open(path, rho=total) if rho else PrivacyBudget.open(path, total)
    with b.charge(0.5, "q"):
        pass
    return path, _json.loads(path.read_text())


def _edited(edit, rho=False):
    def make(tmp_path):
        path, record = _spent_file(tmp_path, rho=rho)
        edit(record)
        path.write_text(_json.dumps(record))
        return path
    return make


def _negative_ledger(r):
    r["ledger"][0].update(amount=-0.5, epsilon=-0.5, exact="-1/2")


def _negative_pending(r):
    r["pending"] = [{"id": "x", "exact": "-1/2", "label": "q", "time": "2026-01-01T00:00:00+00:00", "pid": os.getpid()}]


def _switched(r):
    r["accounting"] = "zcdp"


def _overspent(r):
    r["total"] = "1/4"


def _text(content):
    def make(tmp_path):
        path = tmp_path / "budget.json"
        path.write_text(content)
        return path
    return make


def _truncated(tmp_path):
    path, _ = _spent_file(tmp_path)
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    return path


#: (id, tmp_path -> path of a bad file, regex). Each is refused by open and from_json, naming the file.
BUDGET_FILE_CASES = [
    ("empty file", _text(""), r"empty, truncated or not JSON"),
    ("garbage", _text("\x00\x01 not json"), r"empty, truncated or not JSON"),
    ("truncated", _truncated, r"empty, truncated or not JSON"),
    ("another JSON document", _text('{"format": "x"}'), r"missing or wrong 'format' field"),
    ("negative ledger amount", _edited(_negative_ledger), r"ledger entry 'q' .* not a positive charge"),
    ("negative pending amount", _edited(_negative_pending), r"in-flight charge has a non-positive amount"),
    ("pure DP switched to zCDP", _edited(_switched), r"not a positive charge in rho, the unit of its zcdp"),
    ("zCDP switched to pure DP", _edited(lambda r: r.update(accounting="pure-dp"), rho=True),
     r"not a positive charge in epsilon, the unit of its pure-dp"),
    ("more spent than the total", _edited(_overspent), r"charges add up to more than its total"),
]


@pytest.mark.parametrize("case", BUDGET_FILE_CASES, ids=_ids(BUDGET_FILE_CASES))
def test_bad_budget_files_are_refused_naming_the_file(case, tmp_path):
    _, make, message = case
    path = make(tmp_path)
    before = path.read_bytes()
    for load in (PrivacyBudget.open, PrivacyBudget.from_json, lambda p: PrivacyBudget.open(p, 1.0)):
        with pytest.raises(ValueError, match=message) as info:
            load(path)
        assert str(path) in str(info.value)
    assert path.read_bytes() == before  # a refusal never rewrites the file


@pytest.mark.parametrize(
    "where, exc, message",
    [
        (lambda t: t, ValueError, r"is a directory, not a privacy budget file"),
        (lambda t: t / "no such folder" / "budget.json", ValueError, r"the folder of the budget file .* does not exist"),
        (lambda t: 123, TypeError, r"path must be a str or os.PathLike naming a budget file, got 123 \(int\)"),
        (lambda t: None, TypeError, r"path must be a str or os.PathLike.*NoneType"),
    ],
    ids=["directory", "missing parent folder", "int", "None"],
)
def test_budget_open_on_a_bad_path(where, exc, message, tmp_path):
    path = where(tmp_path)
    with pytest.raises(exc, match=message) as info:
        PrivacyBudget.open(path, 1.0)
    if isinstance(path, os.PathLike):
        assert str(path) in str(info.value)


def test_extreme_epsilon_delta_is_a_value_error_not_an_overflow():
    with pytest.raises(ValueError, match=r"epsilon=1e-300 with delta=1e-300 allows no positive rho"):
        PrivacyBudget.from_epsilon_delta(1e-300, 1e-300)


@pytest.mark.parametrize("eps, delta", [(1e-300, 1e-10), (1.0, 5e-324), (1e300, 1e-6)])
def test_extreme_but_valid_epsilon_delta_give_a_finite_budget(eps, delta):
    b = PrivacyBudget.from_epsilon_delta(eps, delta)
    assert b.accounting == "zcdp" and 0 < b.total < math.inf


# -- queries -----------------------------------------------------------------------------------------
def _query_model():
    from pgmpy.factors.discrete import DiscreteFactor

    mn = DiscreteMarkovNetwork([("a", "b")])
    mn.add_factors(DiscreteFactor(["a", "b"], [2, 2], [4.0, 1.0, 1.0, 4.0], state_names={"a": ["x", "y"], "b": [0, 1]}))
    return mn


@pytest.mark.parametrize(
    "variables, evidence, message",
    [
        (["Z"], None, r"variables names \['Z'\], not variables of the model; its variables are \['a', 'b'\]"),
        (["a"], {"Z": 1}, r"evidence names \['Z'\], not variables of the model"),
        (["a"], {"b": 7}, r"evidence b=7 is not a state of 'b'; its states are \[0, 1\]"),
        (["a"], {"a": "x"}, r"\['a'\] appear both as query variables and in evidence"),
        ([3], None, r"variables names \[3\]"),
    ],
    ids=["unknown variable", "unknown evidence variable", "unknown evidence state", "both", "non-str"],
)
def test_query_names_the_unknown_variable_or_state(variables, evidence, message):
    with pytest.raises(ValueError, match=message):
        pgmpy_dp.query(_query_model(), variables, evidence=evidence)
