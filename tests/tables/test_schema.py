"""Release artifacts are validated on load: every bad field is named, nothing bad is built.

The fuzzer at the end tampers with and truncates real artifacts; every load must either
return a release that satisfies the invariants of a real one (and round-trips), or raise
:class:`ReleaseFormatError` naming a field related to the one that was changed.
"""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pgmpy_dp  # noqa: F401  (registers df.dp)
from pgmpy_dp import MarginalRelease
from pgmpy_dp.tables.schema import FORMAT, FORMAT_VERSION, MECHANISMS, ReleaseFormatError, validate_release_dict

STATES = {"a": ["x", "y", "z"], "b": [0, 1], "c": [True, False], "t": [(0, "lo"), (1, "hi"), ((2, 3), "nested")]}


def make_frame(n=50, seed=0):
    rng = np.random.default_rng(seed)
    cols = {}
    for k, v in STATES.items():
        codes = rng.integers(len(v), size=n)
        cols[k] = pd.Categorical.from_codes(codes, categories=pd.Index(v, tupleize_cols=False, dtype=object))
    return pd.DataFrame(cols)


REL = make_frame().dp.release([("a", "b"), ("c",), ("t", "a")], epsilon=0.7, random_state=1)
REL_DECLARED = make_frame().dp.release([("b",), ("c", "b")], epsilon=[0.2, 3.0], random_state=2, n_records=50)
ART = REL.to_dict()


def tampered(edit, art=ART):
    art = copy.deepcopy(art)
    edit(art)
    return art


def gaussian_artifact(sigma=2.0, sensitivity=1.0, epsilon=None):
    return {
        "format": FORMAT, "format_version": 2, "mechanism": "discrete_gaussian", "sampler": "opendp",
        "n_records": None, "domain": [["a", ["x", "y"]], ["b", [0, 1, 2]]],
        "tables": [
            {"attrs": ["a", "b"], "shape": [2, 3], "values": [1.0, 2, 3, 4, 5, -6], "mechanism": "discrete_gaussian",
             "scale": sigma, "sensitivity": sensitivity, "rho": sensitivity**2 / (2 * sigma**2), "epsilon": epsilon},
        ],
    }


# -- what round-trips --------------------------------------------------------------------------------


def test_tuple_states_round_trip():
    assert REL.domain["t"] == ((0, "lo"), (1, "hi"), ((2, 3), "nested"))
    back = MarginalRelease.from_json(REL.to_json())
    assert back == REL
    assert back.domain["t"] == REL.domain["t"] and isinstance(back.domain["t"][2][0], tuple)
    assert back.series(("t", "a")).index.equals(REL.series(("t", "a")).index)


@pytest.mark.parametrize("rel", [REL, REL_DECLARED], ids=["total epsilon", "per-table, declared n"])
def test_artifact_carries_format_and_version_and_round_trips(rel, tmp_path):
    art = rel.to_dict()
    assert art["format"] == FORMAT and art["format_version"] == FORMAT_VERSION == 3
    assert MarginalRelease.from_dict(art) == rel
    assert MarginalRelease.from_json(rel.to_json().encode()) == rel  # bytes are JSON text
    path = tmp_path / "release.json"
    rel.to_json(path)
    assert MarginalRelease.from_json(path) == rel
    assert MarginalRelease.from_json(str(path)) == rel


def test_artifacts_written_before_format_version_still_load():
    old = tampered(lambda a: a.update(version=a.pop("format_version")))
    assert MarginalRelease.from_dict(old) == REL


def test_validation_does_not_modify_its_input():
    art = copy.deepcopy(ART)
    validate_release_dict(art)
    assert art == ART


def test_gaussian_tables_validate_by_their_own_rules():
    out = validate_release_dict(gaussian_artifact())
    assert out["tables"][0]["rho"] == 1 / 8 and out["tables"][0]["epsilon"] is None
    assert validate_release_dict(gaussian_artifact(epsilon=0.9))["tables"][0]["epsilon"] == 0.9
    assert set(MECHANISMS) == {"discrete_laplace", "discrete_gaussian"}


def test_a_laplace_table_may_state_its_zcdp_cost():
    art = tampered(lambda a: [t.update(rho=t["epsilon"] ** 2 / 2) for t in a["tables"]])
    assert MarginalRelease.from_dict(art) == REL
    art["tables"][1]["rho"] *= 2
    with pytest.raises(ReleaseFormatError, match=r"'tables\[1\].rho' is .* costs epsilon\^2 / 2"):
        MarginalRelease.from_dict(art)


def test_mixed_release_names_each_tables_mechanism():
    gauss = gaussian_artifact()["tables"][0]
    art = tampered(lambda a: (a.update(mechanism="mixed"), [t.pop("mechanism") for t in a["tables"][1:]]))
    art["domain"] += [["g1", ["x", "y"]], ["g2", [0, 1, 2]]]
    art["tables"].append({**gauss, "attrs": ["g1", "g2"]})
    art.pop("epsilon")  # the Gaussian table has none, so neither has the release
    art["sensitivity"] = 4.0
    with pytest.raises(ReleaseFormatError, match=r"'tables\[1\].mechanism' is missing; it is required"):
        validate_release_dict(art)
    for t in art["tables"][1:3]:
        t["mechanism"] = "discrete_laplace"
    out = validate_release_dict(art)
    assert [t["mechanism"] for t in out["tables"]] == ["discrete_laplace"] * 3 + ["discrete_gaussian"]


# -- each kind of bad field ----------------------------------------------------------------------------

def _set(path, value):
    def edit(art):
        *head, last = path
        target = art
        for k in head:
            target = target[k]
        target[last] = value
    return edit


def _del(path):
    def edit(art):
        *head, last = path
        target = art
        for k in head:
            target = target[k]
        del target[last]
    return edit


# (id, edit, field named, message regex)
BAD = [
    ("negative scale", _set(["tables", 0, "scale"], -1.0), "tables[0].scale", r"positive finite number, got -1.0"),
    ("zero scale", _set(["tables", 0, "scale"], 0), "tables[0].scale", r"positive finite number, got 0"),
    ("NaN scale", _set(["tables", 0, "scale"], math.nan), "tables[0].scale", r"got nan"),
    ("inf scale", _set(["tables", 0, "scale"], math.inf), "tables[0].scale", r"got inf"),
    ("str scale", _set(["tables", 0, "scale"], "2"), "tables[0].scale", r"got '2' \(str\)"),
    ("bool sensitivity", _set(["tables", 0, "sensitivity"], True), "tables[0].sensitivity", r"got True \(bool\)"),
    ("scale inconsistent with epsilon", _set(["tables", 1, "scale"], 1.0), "tables[1].scale",
     r"is 1.0, but the Laplace mechanism at epsilon .* has scale sensitivity / epsilon"),
    ("epsilon inconsistent with scale", _set(["tables", 1, "epsilon"], 7.0), "tables[1].scale", r"at epsilon 7.0"),
    ("zero epsilon", _set(["tables", 1, "epsilon"], 0.0), "tables[1].epsilon", r"positive finite"),
    ("null epsilon of a Laplace table", _set(["tables", 1, "epsilon"], None), "tables[1].epsilon", r"got None"),
    ("sensitivity inconsistent with scale", _set(["tables", 2, "sensitivity"], 2.0), "tables[2].scale",
     r"sensitivity 2.0"),
    ("total epsilon inconsistent", _set(["epsilon"], 5.0), "epsilon", r"the tables' epsilons sum to"),
    ("total sensitivity inconsistent", _set(["sensitivity"], 1.0), "sensitivity", r"sensitivitys sum to 3"),
    ("unknown mechanism", _set(["mechanism"], "laplace"), "mechanism", r"'laplace' \(str\); known mechanisms"),
    ("unknown table mechanism", _set(["tables", 0, "mechanism"], "gaussian"), "tables[0].mechanism", r"known"),
    ("table mechanism disagrees", _set(["tables", 0, "mechanism"], "discrete_gaussian"), "tables[0].mechanism",
     r"the release says every table is 'discrete_laplace'"),
    ("mixed but one mechanism", _set(["mechanism"], "mixed"), "mechanism", r"is 'mixed', but every table uses"),
    ("shape disagrees with the domain", _set(["tables", 0, "shape"], [2, 3]), "tables[0].shape",
     r"is \[2, 3\], but the domain gives \['a', 'b'\] the shape \[3, 2\]"),
    ("values of another length", _set(["tables", 1, "values"], [1.0]), "tables[1].values", r"has 1 entries, .* 2 cells"),
    ("NaN count", _set(["tables", 0, "values", 4], math.nan), "tables[0].values[4]", r"finite number, got nan"),
    ("inf count", _set(["tables", 0, "values", 0], -math.inf), "tables[0].values[0]", r"got -inf"),
    ("huge int count", _set(["tables", 0, "values", 1], 10**400), "tables[0].values[1]", r"finite number"),
    ("str count", _set(["tables", 0, "values", 2], "3"), "tables[0].values[2]", r"must be a number, got '3'"),
    ("bool count", _set(["tables", 0, "values", 2], False), "tables[0].values[2]", r"got False"),
    ("nested values", _set(["tables", 1, "values"], [[1.0, 2.0]]), "tables[1].values", r"has 1 entries"),
    ("values not a list", _set(["tables", 1, "values"], "1,2"), "tables[1].values", r"flat list"),
    ("attr not in the domain", _set(["tables", 1, "attrs"], ["d"]), "tables[1].attrs", r"names 'd', which is not"),
    ("attrs given as a string", _set(["tables", 1, "attrs"], "c"), "tables[1].attrs", r"list of attribute names"),
    ("attrs empty", _set(["tables", 1, "attrs"], []), "tables[1].attrs", r"non-empty list"),
    ("attr repeated", _set(["tables", 0, "attrs"], ["a", "a"]), "tables[0].attrs", r"names an attribute twice"),
    ("table released twice", lambda a: a["tables"].append(copy.deepcopy(a["tables"][1])), "tables[3].attrs",
     r"\['c'\] are already released in tables\[1\]"),
    ("negative n_records", _set(["n_records"], -1), "n_records", r"non-negative record count"),
    ("NaN n_records", _set(["n_records"], math.nan), "n_records", r"finite number"),
    ("str n_records", _set(["n_records"], "50"), "n_records", r"got '50'"),
    ("bool n_records", _set(["n_records"], True), "n_records", r"got True"),
    ("wrong format", _set(["format"], "something-else"), "format", r"not a pgmpy-dp marginal release"),
    ("future version", _set(["format_version"], 4), "format_version", r"reads versions \[1, 2, 3\]: upgrade"),
    ("str version", _set(["format_version"], "1"), "format_version", r"must be an int"),
    ("versions disagree", _set(["version"], 1), "version", r"is 1 but format_version is 3"),
    ("sampler not a str", _set(["sampler"], 3), "sampler", r"non-empty str"),
    ("domain not a list", _set(["domain"], {"a": ["x"]}), "domain", r"list of \[attribute, \[states\]\] pairs"),
    ("domain pair malformed", _set(["domain", 0], ["a"]), "domain[0]", r"\[attribute, \[states\]\] pair"),
    ("domain attr not a str", _set(["domain", 0, 0], 5), "domain[0][0]", r"attribute name"),
    ("domain states a str", _set(["domain", 0, 1], "xyz"), "domain[0][1]", r"non-empty list of states"),
    ("domain state repeated", _set(["domain", 0, 1], ["x", "x", "z"]), "domain[0][1]", r"lists a state twice"),
    ("domain state NaN", _set(["domain", 0, 1], ["x", math.nan, "z"]), "domain[0][1]", r"state nan, which JSON cannot"),
    ("domain state inf", _set(["domain", 0, 1], ["x", math.inf, "z"]), "domain[0][1]", r"JSON cannot carry"),
    ("domain state an object", _set(["domain", 0, 1], ["x", {"k": 1}, "z"]), "domain[0][1]", r"JSON scalars"),
    ("domain attr declared twice", _set(["domain", 1], ["a", ["x"]]), "domain[1][0]", r"a second time"),
    ("domain state dropped", _set(["domain", 0, 1], ["x", "y"]), "tables[0].shape", r"the shape \[2, 2\]"),
    ("no tables", _set(["tables"], []), "tables", r"non-empty list of tables"),
    ("table not an object", _set(["tables", 1], ["c"]), "tables[1]", r"JSON object"),
]
for _key in ("format", "mechanism", "sampler", "n_records", "domain", "tables"):
    BAD.append((f"missing {_key}", _del([_key]), _key, r"is missing"))
for _key in ("attrs", "shape", "values", "epsilon", "scale", "sensitivity"):
    BAD.append((f"missing tables[1].{_key}", _del(["tables", 1, _key]), f"tables[1].{_key}", r"is missing"))
BAD.append(("missing format_version", _del(["format_version"]), "format_version", r"is missing"))


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_field_is_named(case):
    _, edit, field, message = case
    art = tampered(edit)
    with pytest.raises(ReleaseFormatError, match=message) as info:
        MarginalRelease.from_dict(art)
    assert info.value.field == field
    assert repr(field) in str(info.value)


@pytest.mark.parametrize(
    "edit, field, message",
    [
        (lambda t: t.update(scale=-1.0), "tables[0].scale", r"positive finite"),
        (lambda t: t.update(rho=0.5), "tables[0].rho", r"costs rho = sensitivity\^2 / \(2 sigma\^2\)"),
        (lambda t: t.pop("rho"), "tables[0].rho", r"is missing"),
        (lambda t: t.update(rho=math.nan), "tables[0].rho", r"got nan"),
        (lambda t: t.update(epsilon=-1.0), "tables[0].epsilon", r"positive finite"),
        (lambda t: t.update(sensitivity=2.0), "tables[0].rho", r"sensitivity 2.0"),
    ],
)
def test_bad_gaussian_table_is_named(edit, field, message):
    art = gaussian_artifact()
    edit(art["tables"][0])
    with pytest.raises(ReleaseFormatError, match=message) as info:
        validate_release_dict(art)
    assert info.value.field == field


@pytest.mark.parametrize(
    "source, exc, message",
    [
        ("", ReleaseFormatError, r"'\(root\)' is empty"),
        ("   \n", ReleaseFormatError, r"'\(root\)' is empty"),
        ("null", ReleaseFormatError, r"must be a JSON object \(a dict\), got NoneType"),
        ("[1, 2]", ReleaseFormatError, r"must be a JSON object \(a dict\), got list"),
        ("3", ReleaseFormatError, r"got int"),
        ('{"format": ', ReleaseFormatError, r"is not valid JSON .* truncated"),
        ("[", ReleaseFormatError, r"is not valid JSON"),
        (b"\xff\xfe", ReleaseFormatError, r"is not valid JSON"),
        ("no-such-release.json", FileNotFoundError, r"no release file 'no-such-release.json'"),
        (Path("null"), FileNotFoundError, r"no release file 'null'"),  # a Path is always a path
        (".", IsADirectoryError, r"cannot read the release file '.'"),
        ("a\0b", ReleaseFormatError, r"neither JSON text nor a usable path"),
        (None, TypeError, r"source must be JSON text \(str or bytes\) or a path, got NoneType"),
        (3.0, TypeError, r"got float"),
    ],
)
def test_from_json_source_rule(source, exc, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(exc, match=message):
        MarginalRelease.from_json(source)


def test_from_json_reads_a_file_that_is_not_json(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    with pytest.raises(ReleaseFormatError, match=r"not valid JSON \(file '.*notes.txt'"):
        MarginalRelease.from_json(path)


def test_json_nan_tokens_are_refused():
    text = re.sub(r'"scale": [0-9.e-]+', '"scale": NaN', REL.to_json(), count=1)  # Python's json reads NaN
    assert "NaN" in text
    with pytest.raises(ReleaseFormatError, match=r"'tables\[0\].scale' must be a positive finite number, got nan"):
        MarginalRelease.from_json(text)


# -- the fuzzer ------------------------------------------------------------------------------------


def _paths(node, prefix=()):
    """Every (path, value) in a JSON tree; only the first entries of long lists."""
    yield prefix, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node[:4]):
            yield from _paths(v, (*prefix, i))


def _field(path) -> str:
    out = ""
    for k in path:
        out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else k)
    return out


ARTIFACTS = [ART, REL_DECLARED.to_dict()]
PATHS = [[p for p, _ in _paths(a) if p] for a in ARTIFACTS]
JUNK = [
    None, True, False, 0, -1, 1, 2, 0.5, -0.5, 1e-300, 1e308, math.nan, math.inf, -math.inf, 10**400, "", "x",
    "discrete_gaussian", "mixed", "a", [], [1.0], ["a"], ["x", "y"], {}, {"a": 1},
]


def _related(changed: str, named: str) -> bool:
    """Is the named field the changed one, inside it, around it, or a field checked against it?"""
    if named.startswith(changed) or changed.startswith(named):
        return True
    table = re.match(r"tables\[\d+\]", changed)
    if table and named.startswith(table.group()):
        return True  # e.g. a changed epsilon is reported as the scale it disagrees with
    # the domain and the release's mechanism shape every table; a table's numbers sum into the totals
    return (
        changed.split("[")[0].split(".")[0] in ("domain", "mechanism") and named.startswith("tables")
    ) or (changed.startswith("tables") and named in ("epsilon", "sensitivity"))


def _check_invariants(rel: MarginalRelease) -> None:
    assert isinstance(rel, MarginalRelease) and len(rel.tables) > 0
    for t in rel.tables:
        assert all(a in rel.domain for a in t.attrs) and len(set(t.attrs)) == len(t.attrs)
        assert t.values.shape == rel.domain.shape(t.attrs) and np.all(np.isfinite(t.values))
        assert math.isfinite(t.scale) and t.scale > 0 and math.isfinite(t.sensitivity) and t.sensitivity > 0
        assert math.isclose(t.scale, t.sensitivity / t.epsilon, rel_tol=1e-9)
    assert rel.n_records is None or (math.isfinite(rel.n_records) and rel.n_records >= 0)
    assert MarginalRelease.from_json(rel.to_json()) == rel


@st.composite
def mutations(draw):
    which = draw(st.sampled_from(range(len(ARTIFACTS))))
    art = copy.deepcopy(ARTIFACTS[which])
    op = draw(st.sampled_from(["replace", "delete", "scale", "truncate"]))
    if op == "truncate":
        text = json.dumps(ARTIFACTS[which])
        return which, "truncate", text[: draw(st.integers(0, len(text) - 1))], "(root)"
    path = draw(st.sampled_from(PATHS[which]))
    *head, last = path
    parent = art
    for k in head:
        parent = parent[k]
    if op == "delete":
        del parent[last]
    elif op == "scale":  # nudge a number, as a hand edit would
        value = parent[last]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return which, "noop", art, _field(path)
        parent[last] = value * draw(st.sampled_from([-1, 0, 1 + 1e-6, 2, 1e300]))
    else:
        parent[last] = copy.deepcopy(draw(st.sampled_from(JUNK)))
    return which, op, art, _field(path)


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(case=mutations())
def test_tampered_or_truncated_artifacts_load_correctly_or_fail_naming_the_field(case):
    which, op, art, changed = case
    try:
        rel = MarginalRelease.from_json(art) if op == "truncate" else MarginalRelease.from_dict(art)
    except ReleaseFormatError as exc:
        assert repr(exc.field) in str(exc)
        if op != "truncate":
            assert _related(changed, exc.field), f"changed {changed}, error names {exc.field}: {exc}"
        return
    assert op != "truncate", "a truncated artifact loaded"
    _check_invariants(rel)
    if art == ARTIFACTS[which] or op == "noop":
        assert rel == [REL, REL_DECLARED][which]


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=30))
def test_any_text_is_json_or_a_path_and_fails_clearly(text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    try:
        MarginalRelease.from_json(text)
    except ReleaseFormatError as exc:
        assert repr(exc.field) in str(exc)
    except OSError as exc:  # not JSON: a path, and there is no such file here
        assert repr(text) in str(exc) or repr(str(Path(text))) in str(exc)
    else:
        raise AssertionError(f"{text!r} loaded as a release")


def test_a_release_with_an_infinite_state_cannot_be_written():
    df = pd.DataFrame({"v": pd.Categorical([1.0, math.inf], categories=[1.0, math.inf])})
    budget = pgmpy_dp.PrivacyBudget(1.0)
    # refused before the release charges anything (the domain is checked for JSON first)
    with pytest.raises(ValueError, match=r"state inf of attribute 'v' cannot be written to a JSON release"):
        df.dp.release(["v"], 1.0, budget=budget)
    assert budget.spent == 0
