"""The public schema declared once: one error for every undeclared column, the template, the JSON file,
columns with bounds only or states to discover (issue 44, item 1)."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pgmpy.models import DiscreteBayesianNetwork

import pgmpy_dp  # noqa: F401  (registers df.dp)
from pgmpy_dp import DiscretePrivateMLE, PrivacyBudget, PrivateSynthesizer
from pgmpy_dp.privacy.domain import Domain, DomainError, SchemaError, UndeclaredColumnsError


def raw_frame(n=300, seed=0):
    """An Adult-like raw table: integer and float numbers, strings with missing values, a bool."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(17, 91, n),
        "gain": rng.exponential(1000.0, n).round(2),
        "job": np.where(rng.random(n) < 0.1, None, rng.choice(["clerk", "nurse", "smith"], n)).astype(object),
        "sex": rng.choice(["F", "M"], n),
        "owner": rng.random(n) < 0.5,
    })


SCHEMA = {
    "format": "pgmpy-dp/schema", "format_version": 1, "missing": "Missing",
    "columns": {
        "age": {"type": "numeric", "bounds": [17, 90], "integer": True, "n_bins": 8},
        "gain": {"type": "numeric", "bins": [0, 500, 2000, "inf"], "bounds": [0, 100000]},
        "job": {"type": "categorical", "states": ["clerk", "nurse", "smith"], "missing": True},
        "sex": {"type": "categorical", "states": ["F", "M"]},
        "owner": {"type": "categorical", "states": [False, True]},
    },
}


# -- every undeclared column in one error --------------------------------------------------------------
ENTRIES = {
    "release": lambda df, b: df.dp.release([("age", "job"), ("sex",)], epsilon=1.0, budget=b),
    "DiscretePrivateMLE": lambda df, b: DiscreteBayesianNetwork([("age", "job"), ("sex", "job")]).fit(
        df, estimator=DiscretePrivateMLE(epsilon=1.0, budget=b)),
    "PrivateSynthesizer": lambda df, b: PrivateSynthesizer(epsilon=1.0, delta=1e-9, budget=b,
                                                           show_progress=False).fit(df),
}


@pytest.mark.parametrize("entry", list(ENTRIES))
def test_one_error_lists_every_undeclared_column_with_a_template(entry):
    df = raw_frame()
    budget = PrivacyBudget(10.0)
    with pytest.raises(UndeclaredColumnsError) as info:
        ENTRIES[entry](df, budget)
    assert budget.spent == 0 and budget.ledger == ()
    used = ["age", "job", "sex"] if entry != "PrivateSynthesizer" else list(df.columns)
    assert info.value.columns == used
    message = str(info.value)
    assert f"{len(used)} columns have no public domain: 'age' (int64)" in message
    template = json.loads(info.value.template)
    assert list(template["columns"]) == used
    assert template["columns"]["age"] == {"type": "numeric", "bounds": [None, None], "integer": True}
    assert template["columns"]["job"] == {"type": "categorical", "states": None}
    assert info.value.template in message


def test_a_filled_template_is_the_schema_every_entry_point_takes(tmp_path):
    df = raw_frame()
    path = tmp_path / "schema.json"
    Domain.template(df, path=path)
    with pytest.raises(SchemaError, match=r"columns\.age\.bounds: .*fill in the public bounds.*columns\.job\.states: is null"):
        Domain.from_json(path)  # nulls left: every one named at once
    path.write_text(json.dumps(SCHEMA))
    budget = PrivacyBudget(10.0)
    with pytest.raises(DomainError, match=r"\['age'\] have no states yet"):
        df.dp.release([("age",)], epsilon=1.0, domain=path, budget=budget)
    assert budget.spent == 0
    binned = Domain.from_json(path).with_public_bins()
    rel = df.dp.release([("age", "job"), ("gain",)], epsilon=1.0, domain=binned, budget=budget, random_state=0)
    assert rel.domain["age"][0] == "[17, 26)" and rel.domain["job"][-1] == "Missing"
    for d in (path, str(path), binned):  # the columns a fit uses must be resolved, not the others
        bn = DiscreteBayesianNetwork([("sex", "job")]).fit(
            df[["sex", "job"]], estimator=DiscretePrivateMLE(epsilon=1.0, domain=d, random_state=0))
        assert bn.get_cpds("job").state_names["job"] == ["clerk", "nurse", "smith", "Missing"]


def test_the_template_and_the_error_hold_no_value_of_the_data():
    secret = [f"secret-{i}-x7q" for i in range(6)]
    df = pd.DataFrame({
        "word": secret * 5, "code": pd.Series(secret * 5).astype("category"),
        "num": np.arange(30) + 987_650, "real": np.linspace(123.4567, 765.4321, 30),
    })
    with pytest.raises(UndeclaredColumnsError) as info:
        Domain.from_dataframe(df, domain={"code": secret})  # "code" declared: the others are listed
    texts = [str(info.value), Domain.template(df), Domain.template(df.drop(columns="code"))]
    for text in texts:
        for value in [*secret, "98765", "123.45", "765.43", "secret"]:
            assert value not in text, (value, text)
    # the categorical dtype's categories may come from the data: the template does not copy them
    assert json.loads(texts[1])["columns"]["code"] == {"type": "categorical", "states": None}


def test_declared_columns_are_filled_in_the_template():
    df = raw_frame()
    text = Domain.template(df, domain=Domain({"sex": ["F", "M"]}, bounds={"age": (17, 90)}, integer=["age"]))
    columns = json.loads(text)["columns"]
    assert columns["sex"] == {"type": "categorical", "states": ["F", "M"]}
    assert columns["age"] == {"type": "numeric", "bounds": [17, 90], "integer": True}
    assert columns["owner"] == {"type": "categorical", "states": [False, True]}  # a bool dtype says so


# -- the JSON file ---------------------------------------------------------------------------------
def _rich_domain():
    return Domain(
        {"sex": ["F", "M"], "pair": [(1, "a"), (2, "b")], "score": [0.5, 1.5], "flag": [True, False]},
        bins={"gain": [-math.inf, 0, 500, math.inf], "w": [0, 1.5, 3]},
        bounds={"gain": (-1e5, 1e5), "age": (17, 90), "hours": (1, 99)},
        integer=["age", "hours"], n_bins={"age": 8}, discover=["job"],
        missing={"sex": "Missing", "job": "Missing", "gain": "?"},
    )


def test_json_round_trip_keeps_every_declaration(tmp_path):
    d = _rich_domain()
    back = Domain.from_json(d.to_json())
    assert back == d and back.attrs == d.attrs
    for name in ("bins", "bounds", "integer", "discover", "n_bins", "missing", "unresolved"):
        assert getattr(back, name) == getattr(d, name), name
    d.to_json(tmp_path / "s.json")
    assert Domain.from_json(tmp_path / "s.json") == d
    text = json.loads(d.to_json())
    assert text["format"] == "pgmpy-dp/schema" and text["format_version"] == 1 and text["missing"] is None
    assert text["columns"]["gain"] == {"type": "numeric", "bins": ["-inf", 0, 500, "inf"], "bounds": [-100000, 100000],
                                       "missing": "?"}
    assert text["columns"]["job"] == {"type": "categorical", "discover": True, "missing": "Missing"}
    # one missing label for every column: the top-level label, and columns added from dtypes get it too
    single = Domain({"a": ["x"]}, bins={"b": [0, 1]}, missing="M")
    again = Domain.from_json(single.to_json())
    assert json.loads(single.to_json())["columns"]["a"] == {"type": "categorical", "states": ["x"], "missing": True}
    assert again == single
    df = pd.DataFrame({"a": ["x"], "b": [0.5], "c": pd.Categorical(["u"], categories=["u", "v"])})
    assert Domain.from_dataframe(df, domain=again)["c"] == ("u", "v", "M")


def test_the_documented_example_reads():
    d = Domain.from_json(json.dumps({
        "format": "pgmpy-dp/schema", "format_version": 1, "missing": "Missing",
        "columns": {"sex": {"type": "categorical", "states": ["F", "M"]},
                    "occupation": {"type": "categorical", "discover": True, "missing": True},
                    "age": {"type": "numeric", "bins": [17, 30, 45, 60, 91]},
                    "hours": {"type": "numeric", "bounds": [1, 99], "integer": True, "n_bins": 8}}}))
    assert d.attrs == ("sex", "occupation", "age", "hours") and d.unresolved == ("occupation", "hours")
    assert d.discover == ("occupation",) and d.integer == ("hours",) and d.n_bins == {"hours": 8}
    assert d.missing == {"occupation": "Missing"} and d["age"][0] == "[17, 30)"


@pytest.mark.parametrize("change, message", [
    (lambda s: s.update(format="other"), r"format: must be 'pgmpy-dp/schema'"),
    (lambda s: s.update(format_version=2), r"format_version: 2 is newer"),
    (lambda s: s.update(extra=1), r"\(root\): \['extra'\] are not schema fields"),
    (lambda s: s["columns"]["age"].update(bounds=[90, 17]), r"columns\.age\.bounds: must have low < high"),
    (lambda s: s["columns"]["age"].update(bounds="17-90"), r"columns\.age\.bounds: must be two finite numbers"),
    (lambda s: s["columns"]["age"].update(n_bins=0), r"columns\.age\.n_bins: must be a positive integer"),
    (lambda s: s["columns"]["gain"].update(bins=[0, 0, 1]), r"columns\.gain\.bins: must be strictly increasing"),
    (lambda s: s["columns"]["gain"].update(n_bins=3), r"columns\.gain\.n_bins: the bins already fix"),
    (lambda s: s["columns"]["sex"].update(states=["F", "F"]), r"columns\.sex\.states: lists a state twice"),
    (lambda s: s["columns"]["sex"].update(states=[{"x": 1}]), r"columns\.sex\.states: holds \[\{'x': 1\}\]"),
    (lambda s: s["columns"]["sex"].update(discover=True), r"columns\.sex: declares both states and discover"),
    (lambda s: s["columns"]["sex"].update(bins=[0, 1]), r"columns\.sex: \['bins'\] are not fields of a categorical"),
    (lambda s: s["columns"]["sex"].update(type="text"), r"columns\.sex\.type: must be \"categorical\" or \"numeric\""),
    (lambda s: s["columns"]["owner"].update(missing=[1]), r"columns\.owner\.missing: must be true, false"),
    (lambda s: s.update(missing=None), r"columns\.job\.missing: is true but the schema's \"missing\" label is null"),
    (lambda s: s["columns"].update(hours={"type": "numeric"}), r"columns\.hours: a numeric column needs"),
    (lambda s: s["columns"]["gain"].update(bounds=[600, 700]), r"columns: .*leave a bin of bins\['gain'\].* empty"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_a_tampered_schema_names_the_field(change, message):
    schema = json.loads(json.dumps(SCHEMA))
    change(schema)
    with pytest.raises(SchemaError, match=message):
        Domain.from_json(json.dumps(schema))


def test_every_problem_of_a_schema_is_named_at_once(tmp_path):
    schema = json.loads(json.dumps(SCHEMA))
    schema["format_version"] = "1"
    schema["columns"]["age"]["bounds"] = [None, 90]
    schema["columns"]["sex"]["states"] = []
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(schema))
    with pytest.raises(SchemaError) as info:
        Domain.from_json(path)
    assert [p.split(":")[0] for p in info.value.problems] == ["format_version", "columns.age.bounds", "columns.sex.states"]
    assert str(path) in str(info.value)


@pytest.mark.parametrize("source, message", [
    ("{not json", r"is not valid JSON"), ("[1, 2]", r"no schema file"), (b"[1]", r"must be a JSON object"),
    (3, r"must be JSON text or the path of a schema file, got int"),
])
def test_unreadable_sources(source, message):
    with pytest.raises(SchemaError, match=message):
        Domain.from_json(source)


def test_a_missing_schema_file_as_domain_names_the_parameter(tmp_path):
    budget = PrivacyBudget(1.0)
    with pytest.raises(SchemaError, match=r"^domain=: no schema file '.*nope\.json'"):
        raw_frame().dp.release([("sex",)], epsilon=1.0, domain=tmp_path / "nope.json", budget=budget)
    assert budget.spent == 0


# -- bounds, integer, discover, n_bins -------------------------------------------------------------
def test_unresolved_columns_are_refused_before_anything_is_charged():
    d = Domain({"sex": ["F", "M"]}, bounds={"age": (17, 90)}, discover=["job"], missing={"job": "?"})
    assert d.unresolved == ("age", "job") and "age" in d and len(d) == 3 and repr(d) == (
        "Domain(sex: 2, age: unresolved, job: unresolved)")
    with pytest.raises(DomainError, match=r"column\(s\) \['age', 'job'\] have no states yet.*nothing was spent.*"
                                          r"with_public_bins.*\['job'\] are marked discover"):
        d.encode(raw_frame())
    with pytest.raises(DomainError, match=r"\['age', 'job'\] have no states yet"):  # all of them, at once
        d.size("age")
    budget = PrivacyBudget(10.0)
    with pytest.raises(DomainError, match=r"\['age', 'job'\] have no states yet.*schema_share="):
        raw_frame().dp.release([("age",), ("job",)], epsilon=1.0, domain=d, budget=budget)
    assert budget.spent == 0 and budget.ledger == ()
    resolved = d.resolve(states={"job": ["clerk", "nurse", "smith"]}, bins={"age": [17, 50, 91]})
    assert resolved.attrs == d.attrs and resolved["job"] == ("clerk", "nurse", "smith", "?")
    assert resolved.unresolved == () and resolved.bounds == {"age": (17.0, 90.0)}
    with pytest.raises(DomainError, match=r"resolve names \['sex'\]"):
        d.resolve(states={"sex": ["F"]})


def test_public_equal_width_bins_from_bounds():
    d = Domain(bounds={"age": (17, 90), "x": (0.0, 1.0)}, integer=["age"], n_bins={"age": 4})
    with pytest.raises(DomainError, match=r"positive integer number of bins for \['x'\]"):
        d.with_public_bins()
    b = d.with_public_bins({"age": 4, "x": 2})
    assert b.bins == {"age": (17.0, 36.0, 54.0, 72.0, 91.0), "x": (0.0, 0.5, 1.0)}
    assert d.with_public_bins(3).bins["age"] == (17.0, 42.0, 66.0, 91.0)
    assert Domain(bounds={"k": (1, 3)}, integer=["k"]).with_public_bins(10).bins["k"] == (1.0, 2.0, 3.0, 4.0)
    frame = pd.DataFrame({"age": [17, 35, 36, 90, 99], "x": [0.0, 0.49, 0.5, 1.0, 2.0]})
    assert b.encode(frame)["age"].tolist() == [0, 0, 1, 3, 3] and b.encode(frame)["x"].tolist() == [0, 0, 1, 1, 1]


@pytest.mark.parametrize("kwargs, message", [
    (dict(bounds={"a": (5, 1)}), r"bounds\['a'\] must have low < high"),
    (dict(bounds={"a": (0, math.inf)}), r"bounds\['a'\] must be two finite numbers"),
    (dict(bounds={"a": 5}), r"bounds\['a'\] must be a pair"),
    (dict(states={"a": [1]}, bounds={"a": (0, 1)}), r"column 'a' is declared with states and with bounds"),
    (dict(states={"a": [1]}, integer=["a"]), r"integer= names 'a', which is not a numeric column"),
    (dict(integer="a"), r"integer= must be a list of column names"),
    (dict(states={"a": [1]}, discover=["a"]), r"discover= names 'a', which already has states"),
    (dict(bounds={"a": (0, 1)}, n_bins=0), r"n_bins\['a'\] must be a positive integer"),
    (dict(bins={"a": [0, 1]}, n_bins={"a": 3}), r"n_bins names 'a', which is not a column with bounds= and no bins="),
    (dict(bins={"a": [0, 1, 2]}, bounds={"a": (1.5, 3)}), r"bounds\['a'\] = \[1.5, 3.0\] leave a bin"),
    (dict(bins={"a": [0, 0.2, 0.5, 2]}, integer=["a"]), r"integer column 'a' has bins holding no integer: \['\[0.2, 0.5\)'\]"),
])
def test_bad_declarations_are_named_all_at_once(kwargs, message):
    states = kwargs.pop("states", None)
    with pytest.raises(DomainError, match=message):
        Domain(states, **kwargs)


def test_several_bad_declarations_in_one_error():
    with pytest.raises(DomainError, match=r"bounds\['a'\] must have low < high, got \[5, 1\]; integer= names 'z'"):
        Domain(bounds={"a": (5, 1)}, integer=["z"])


def test_redeclaring_a_domain_keeps_and_resolves_its_declarations():
    d = Domain({"s": ["x"]}, bounds={"age": (17, 90)}, integer=["age"], discover=["job"], n_bins=4)
    again = Domain(d, bins={"age": [17, 50, 91]})
    assert again.unresolved == ("job",) and again.integer == ("age",) and again.n_bins == {}
    assert Domain(d, missing="M").missing == {"s": "M", "age": "M", "job": "M"}
    assert d.project(["job", "s"]).attrs == ("job", "s") and d.project(["job"]).discover == ("job",)


def test_the_synthesizer_resolves_a_schema_file_privately_and_decodes_within_the_bounds(tmp_path):
    """bounds-only and discover columns of a schema file: private edges and keys (schema_share), raw values back."""
    schema = json.loads(json.dumps(SCHEMA))
    schema["columns"]["job"] = {"type": "categorical", "discover": True, "missing": True}
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    df = raw_frame(2000)
    synth = PrivateSynthesizer(epsilon=2.0, delta=1e-6, method="mst", random_state=0, show_progress=False)
    synth.fit(df, domain=path)
    dom = synth.domain_
    assert dom.unresolved == () and set(synth.schema_release_.edges) == {"age"} and set(synth.schema_release_.keys) == {"job"}
    assert dom.bounds["age"] == (17.0, 90.0) and "age" in dom.integer and dom["job"][-1] == "Missing"
    out = synth.sample(3000, random_state=0)
    assert out["age"].dtype == np.int64 and out["age"].between(17, 90).all()
    assert out["gain"].between(0, 100000).all() and out["job"].isna().any()
    assert set(out["job"].dropna()) <= {"clerk", "nurse", "smith", "Other"}


@st.composite
def domains(draw):
    """Random declarations: categorical states, binned and bounds-only numeric columns, discover, missing."""
    names = draw(st.lists(st.text("abcxyz", min_size=1, max_size=4), min_size=1, max_size=6, unique=True))
    states, bins, bounds, integer, discover, missing = {}, {}, {}, [], [], {}
    label = st.sampled_from(["Missing", "?", -1])
    for name in names:
        kind = draw(st.sampled_from(["states", "bins", "bounds", "discover"]))
        if kind == "states":
            states[name] = draw(st.lists(st.one_of(st.text(max_size=3), st.integers(-5, 5)), min_size=1, max_size=4,
                                         unique_by=lambda v: (type(v), v)))
        elif kind == "discover":
            discover.append(name)
        else:
            lo = draw(st.integers(-100, 100))
            hi = lo + draw(st.integers(1, 100))
            bounds[name] = (lo, hi)
            if kind == "bins":
                inner = draw(st.lists(st.integers(lo + 1, hi), max_size=3, unique=True))
                bins[name] = [lo, *sorted(inner), hi + 1]
            if draw(st.booleans()):
                integer.append(name)
        if draw(st.booleans()):
            missing[name] = draw(label)
    for name, values in states.items():  # a missing label may not also be a plain state
        if name in missing and missing[name] in values:
            del missing[name]
    return Domain(states, bins=bins, bounds=bounds, integer=integer, discover=discover, missing=missing)


@settings(max_examples=60, deadline=None)
@given(domains())
def test_any_domain_survives_the_json_round_trip(d):
    back = Domain.from_json(d.to_json())
    assert back == d and back.attrs == d.attrs
    for name in ("bins", "bounds", "integer", "discover", "n_bins", "missing", "unresolved"):
        assert getattr(back, name) == getattr(d, name), name
