"""The published format of a [`MarginalRelease`][pgmpy_dp.tables.artifact.MarginalRelease] and its validation on load.

An artifact may have been edited, truncated or forged, so every field is checked before anything is
built from it; the first problem is reported with the field's path (``tables[2].scale``) in a
[`ReleaseFormatError`][pgmpy_dp.tables.schema.ReleaseFormatError].

Format version 1 (``"format": "pgmpy-dp/marginal-release"``, ``"format_version": 1``;
artifacts written before the field was renamed carry ``"version": 1`` instead)::

    {"format", "format_version", "mechanism", "sampler", "n_records",
     "epsilon"?, "sensitivity"?,                        # derived totals, checked if present
     "domain": [[attr, [state, ...]], ...],             # tuple states are written as lists
     "tables": [{"attrs": [attr, ...], "shape": [...], "values": [...] (flat, C order),
                 "epsilon", "scale", "sensitivity", "mechanism"?, "rho"?}, ...]}

Per-table mechanisms are validated by the rules in `MECHANISMS` (one entry
per mechanism, so a new mechanism is one new entry). A table without
``mechanism`` has the release's own mechanism; version-1 artifacts without
any per-table mechanism are discrete Laplace throughout.

Version 3 adds pooled tables and individual-level privacy::

    "privacy_unit": null | {"unit": "individual", "column", "contribution",
                            "max_records_per_user", "skip_state"},
    "tables": [{..., "members": null | [[attr, ...], ...], "granularity": 1.0 | 2^-k}]

A pooled table's ``attrs`` equal its first member; its key (what must be
unique) is its members. Versions 1 and 2 are read as before (no pooled tables,
record-level privacy, granularity 1); the version-3 fields are refused in them.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..privacy.domain import Domain, DomainError

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MECHANISMS",
    "MechanismRules",
    "ReleaseFormatError",
    "read_json_source",
    "validate_release_dict",
]

FORMAT = "pgmpy-dp/marginal-release"
#: The version written by [`MarginalRelease.to_dict`][pgmpy_dp.tables.artifact.MarginalRelease.to_dict]
#: (2 added Gaussian tables, 3 pooled tables and individual-level privacy).
FORMAT_VERSION = 3
SUPPORTED_VERSIONS = (1, 2, 3)

#: Relative tolerance of the consistency checks (scale vs. sensitivity / epsilon, totals); looser than
#: a few ulps, for artifacts written by other tools that round a little.
RTOL = 1e-9


class ReleaseFormatError(ValueError):
    """A release artifact breaks the schema; `field` is the path of the offending field."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        super().__init__(f"invalid release artifact: field {field!r} {problem}")


# -- per-mechanism rules ------------------------------------------------------------------------


def _laplace_cost(table: Mapping, where: str) -> dict:
    eps = _positive(table, "epsilon", where)
    scale, sens = table["scale"], table["sensitivity"]
    if not math.isclose(scale, sens / eps, rel_tol=RTOL):
        raise ReleaseFormatError(
            f"{where}.scale",
            f"is {scale!r}, but the Laplace mechanism at epsilon {eps!r} and sensitivity {sens!r} "
            f"has scale sensitivity / epsilon = {sens / eps!r}",
        )
    rho = _optional_number(table, "rho", where)
    # pure epsilon-DP implies (epsilon^2 / 2)-zCDP (Bun and Steinke 2016, Prop. 1.4)
    if rho is not None and not math.isclose(rho, eps * eps / 2, rel_tol=RTOL):
        raise ReleaseFormatError(
            f"{where}.rho", f"is {rho!r}, but a Laplace table at epsilon {eps!r} costs epsilon^2 / 2 = {eps * eps / 2!r}"
        )
    return {"epsilon": eps, "rho": rho}


def _gaussian_cost(table: Mapping, where: str) -> dict:
    rho = _positive(table, "rho", where)
    sigma, sens = table["scale"], table["sensitivity"]
    expected = sens * sens / (2.0 * sigma * sigma)
    if not math.isclose(rho, expected, rel_tol=RTOL):
        raise ReleaseFormatError(
            f"{where}.rho",
            f"is {rho!r}, but the Gaussian mechanism at sigma {sigma!r} and sensitivity {sens!r} "
            f"costs rho = sensitivity^2 / (2 sigma^2) = {expected!r}",
        )
    # an (epsilon, delta) statement needs a delta the table does not carry: only its type is checked
    eps = _optional_number(table, "epsilon", where, positive=True)
    return {"epsilon": eps, "rho": rho}


@dataclass(frozen=True)
class MechanismRules:
    """How one mechanism's table records its noise and cost.

    Attributes
    ----------
    name : str
        The mechanism's name in artifacts.
    scale_meaning : str
        What ``scale`` is for this mechanism (for documentation and messages).
    check_cost : callable
        ``check_cost(table, where) -> {"epsilon": ..., "rho": ...}``: validates the cost fields against
        the (checked) ``scale`` and ``sensitivity``, ``None`` where a field may be absent.
    """

    name: str
    scale_meaning: str
    check_cost: Callable[[Mapping, str], dict]


#: Every mechanism an artifact may name, with its rules.
MECHANISMS: dict[str, MechanismRules] = {
    "discrete_laplace": MechanismRules("discrete_laplace", "Laplace scale b = sensitivity / epsilon", _laplace_cost),
    "discrete_gaussian": MechanismRules("discrete_gaussian", "standard deviation sigma", _gaussian_cost),
}

#: Release-level mechanism of a release whose tables use different mechanisms.
MIXED = "mixed"


# -- the validator ------------------------------------------------------------------------------


def validate_release_dict(data) -> dict:
    """Validate a release artifact (the output of ``to_dict``) and return it normalised.

    The result has the same keys, with JSON lists turned back into tuples, each table's values as a
    float64 array of its shape, numbers as floats, and every table's ``mechanism`` and ``rho`` filled
    in. The input is not modified.

    Raises
    ------
    ReleaseFormatError
        Naming the first field that is missing, has the wrong type, or disagrees with another.

    Examples
    --------
    >>> art = {"format": FORMAT, "format_version": 1, "mechanism": "discrete_laplace",
    ...        "sampler": "opendp", "n_records": None, "domain": [["a", ["x", "y"]]],
    ...        "tables": [{"attrs": ["a"], "shape": [2], "values": [3.0, 4.0],
    ...                    "epsilon": 0.5, "scale": 2.0, "sensitivity": 1.0}]}
    >>> validate_release_dict(art)["tables"][0]["values"]
    array([3., 4.])
    >>> art["tables"][0]["scale"] = -2.0
    >>> validate_release_dict(art)
    Traceback (most recent call last):
    ...
    pgmpy_dp.tables.schema.ReleaseFormatError: invalid release artifact: field 'tables[0].scale' must be a positive finite number, got -2.0
    """
    if not isinstance(data, Mapping):
        raise ReleaseFormatError("(root)", f"must be a JSON object (a dict), got {type(data).__name__}")
    fmt = _require(data, "format", "")
    if fmt != FORMAT:
        raise ReleaseFormatError("format", f"must be {FORMAT!r}, got {_describe(fmt)}: this is not a pgmpy-dp marginal release")
    version = _format_version(data)
    if version not in SUPPORTED_VERSIONS:
        raise ReleaseFormatError(
            "format_version",
            f"is {version!r}; this pgmpy-dp reads versions {list(SUPPORTED_VERSIONS)}: upgrade pgmpy-dp",
        )
    mechanism = _require(data, "mechanism", "")
    if not isinstance(mechanism, str) or (mechanism not in MECHANISMS and mechanism != MIXED):
        raise ReleaseFormatError("mechanism", f"is {_describe(mechanism)}; known mechanisms: {[*MECHANISMS, MIXED]}")
    sampler = _require(data, "sampler", "")
    if not isinstance(sampler, str) or not sampler:
        raise ReleaseFormatError("sampler", f"must be a non-empty str, got {_describe(sampler)}")
    n_records = _require(data, "n_records", "")
    if n_records is not None:
        n_records = _number(n_records, "n_records")
        if n_records < 0:
            raise ReleaseFormatError("n_records", f"must be a non-negative record count or null, got {n_records!r}")
    domain = _domain(_require(data, "domain", ""))
    tables = _require(data, "tables", "")
    if not isinstance(tables, list) or not tables:
        raise ReleaseFormatError("tables", f"must be a non-empty list of tables, got {_describe(tables)}")
    parsed = [_table(t, f"tables[{i}]", domain, mechanism, version) for i, t in enumerate(tables)]
    privacy_unit = _privacy_unit(data, version)
    for i, t in enumerate(parsed):
        _check_bound_sensitivity(t, privacy_unit, f"tables[{i}]")
        if t["granularity"] != 1.0 and (privacy_unit is None or privacy_unit["contribution"] != "normalize"):
            raise ReleaseFormatError(
                f"tables[{i}].granularity", "may differ from 1 only in an individual-normalised release"
            )
    seen: dict[tuple, int] = {}
    for i, t in enumerate(parsed):
        key = t["attrs"] if t["members"] is None else t["members"]
        field = "attrs" if t["members"] is None else "members"
        if key in seen:
            raise ReleaseFormatError(
                f"tables[{i}].{field}", f"{[list(k) if isinstance(k, tuple) else k for k in key]} are already "
                f"released in tables[{seen[key]}]"
            )
        seen[key] = i
    mechanisms = {t["mechanism"] for t in parsed}
    if mechanism == MIXED and len(mechanisms) == 1:
        raise ReleaseFormatError("mechanism", f"is {MIXED!r}, but every table uses {mechanisms.pop()!r}")
    _check_total(data, "sensitivity", [t["sensitivity"] for t in parsed])
    _check_total(data, "epsilon", [t["epsilon"] for t in parsed])
    out = dict(data)
    out.update(
        format_version=version, mechanism=mechanism, sampler=sampler, n_records=n_records,
        domain=[[a, domain[a]] for a in domain.attrs], tables=parsed, privacy_unit=privacy_unit,
    )
    return out


def read_json_source(source) -> object:
    """Parse the JSON of [`MarginalRelease.from_json`][pgmpy_dp.tables.artifact.MarginalRelease.from_json]'s ``source`` (text, bytes or a path).

    ``bytes`` and a ``str`` that starts with ``{`` or ``[`` or parses as JSON
    are JSON text; any other ``str`` and every ``os.PathLike`` name a file.
    """
    if isinstance(source, (bytes, bytearray)):
        return _parse(source, "JSON text")
    if isinstance(source, os.PathLike):
        return _parse(_read(Path(source)), f"file {os.fspath(source)!r}")
    if not isinstance(source, str):
        raise TypeError(f"source must be JSON text (str or bytes) or a path, got {type(source).__name__}")
    text = source.strip()
    if not text:
        raise ReleaseFormatError("(root)", "is empty: pass the JSON text written by to_json, or a file path")
    if text[0] in "{[":
        return _parse(text, "JSON text")
    try:
        return json.loads(text)  # "null", "3", '"x"': JSON, though not a release (rejected by the validator)
    except ValueError:
        return _parse(_read(Path(source)), f"file {source!r}")


# -- helpers ------------------------------------------------------------------------------------


def _parse(text, what: str):
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and bad UTF-8 are ValueErrors
        raise ReleaseFormatError("(root)", f"is not valid JSON ({what}: {exc}); was the artifact truncated?") from None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(
            f"no release file {str(path)!r}; from_json reads a file written by to_json, or JSON text "
            "starting with '{'"
        ) from None
    except OSError as exc:  # a directory, no permission, a name too long
        raise type(exc)(exc.errno, f"cannot read the release file {str(path)!r}: {exc.strerror}") from None
    except ValueError as exc:  # e.g. a NUL character in the path
        raise ReleaseFormatError("(root)", f"is neither JSON text nor a usable path ({exc})") from None


def _describe(value) -> str:
    text = repr(value)
    return f"{text[:60]}... ({type(value).__name__})" if len(text) > 60 else f"{text} ({type(value).__name__})"


def _require(data: Mapping, key: str, where: str):
    if key not in data:
        path = f"{where}.{key}" if where else key
        raise ReleaseFormatError(path, "is missing; was the artifact truncated or written by another tool?")
    return data[key]


def _format_version(data: Mapping):
    if "format_version" in data:
        version = data["format_version"]
        if "version" in data and data["version"] != version:
            raise ReleaseFormatError(
                "version", f"is {data['version']!r} but format_version is {version!r}; keep one of them"
            )
    elif "version" in data:  # the field's name before it was renamed
        version = data["version"]
    else:
        raise ReleaseFormatError("format_version", "is missing; was the artifact written by pgmpy-dp?")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ReleaseFormatError("format_version", f"must be an int, got {_describe(version)}")
    return version


def _number(value, field: str, positive: bool = False) -> float:
    kind = "a positive finite number" if positive else "a finite number"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ReleaseFormatError(field, f"must be {kind}, got {_describe(value)}")
    try:
        x = float(value)
    except OverflowError:
        raise ReleaseFormatError(field, f"must be {kind}, got an int of {len(str(value))} digits") from None
    if not math.isfinite(x) or (positive and x <= 0):
        raise ReleaseFormatError(field, f"must be {kind}, got {x!r}")
    return x


def _finite(value) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond float64
        return False


def _positive(table: Mapping, key: str, where: str) -> float:
    return _number(_require(table, key, where), f"{where}.{key}", positive=True)


def _optional_number(table: Mapping, key: str, where: str, positive: bool = False) -> float | None:
    value = table.get(key)
    return None if value is None else _number(value, f"{where}.{key}", positive)


def _check_total(data: Mapping, key: str, parts: list) -> None:
    if data.get(key) is None or any(p is None for p in parts):
        return  # derived, optional; a Gaussian table may have no epsilon
    total = _number(data[key], key)
    if not math.isclose(total, math.fsum(parts), rel_tol=RTOL):
        raise ReleaseFormatError(key, f"is {total!r}, but the tables' {key}s sum to {math.fsum(parts)!r}")


def _state(value, field: str):
    """A JSON state back to the Python value it was written from (lists were tuples)."""
    if isinstance(value, (list, tuple)):  # tuple: to_dict's own output, before JSON
        return tuple(_state(v, field) for v in value)
    if isinstance(value, float) and not math.isfinite(value):
        raise ReleaseFormatError(field, f"holds the state {value!r}, which JSON cannot carry (to_json refuses it)")
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    raise ReleaseFormatError(field, f"must hold states that are JSON scalars or lists, got {_describe(value)}")


def _domain(value) -> Domain:
    if not isinstance(value, list) or not value:
        raise ReleaseFormatError("domain", f"must be a non-empty list of [attribute, [states]] pairs, got {_describe(value)}")
    states: dict[str, tuple] = {}
    for i, pair in enumerate(value):
        field = f"domain[{i}]"
        if not (isinstance(pair, list) and len(pair) == 2):
            raise ReleaseFormatError(field, f"must be an [attribute, [states]] pair, got {_describe(pair)}")
        attr, values = pair
        if not isinstance(attr, str) or not attr:
            raise ReleaseFormatError(f"{field}[0]", f"must be a non-empty attribute name (str), got {_describe(attr)}")
        if attr in states:
            raise ReleaseFormatError(f"{field}[0]", f"declares attribute {attr!r} a second time")
        if not isinstance(values, list) or not values:
            raise ReleaseFormatError(f"{field}[1]", f"must be a non-empty list of states, got {_describe(values)}")
        states[attr] = tuple(_state(v, f"{field}[1]") for v in values)
        try:
            Domain({attr: states[attr]})
        except (DomainError, TypeError) as exc:  # a repeated or NaN state; TypeError cannot happen for JSON
            raise ReleaseFormatError(f"{field}[1]", f"is not a valid list of states: {exc}") from None
    return Domain(states)


def _check_bound_sensitivity(t: Mapping, privacy_unit: Mapping | None, where: str) -> None:
    """A pooled or individual-level table's sensitivity is fixed by its bound: check it is the one recorded.

    Record level: ``len(members)``; ``"clip"``: ``max_records_per_user * len(members)``;
    ``"normalize"``: 1. (Ordinary record-level tables keep whatever versions 1 and 2 allowed.)
    """
    m = 1 if t["members"] is None else len(t["members"])
    if privacy_unit is None:
        if t["members"] is None:
            return
        expected, why = float(m), f"a record is in each of its {m} members"
    elif privacy_unit["contribution"] == "normalize":
        expected, why = 1.0, "each individual adds mass at most 1 to a normalised table"
    else:
        k = privacy_unit["max_records_per_user"]
        expected, why = float(k * m), f"each individual keeps at most {k} rows, each in {m} member(s)"
    if not math.isclose(t["sensitivity"], expected, rel_tol=RTOL):
        raise ReleaseFormatError(f"{where}.sensitivity", f"is {t['sensitivity']!r}, but must be {expected:g}: {why}")


def _privacy_unit(data: Mapping, version: int) -> dict | None:
    """The release's ``privacy_unit`` record, validated (None: record-level privacy)."""
    if "privacy_unit" not in data:
        if version >= 3:
            raise ReleaseFormatError("privacy_unit", "is missing; version 3 records it (null for record-level privacy)")
        return None
    unit = data["privacy_unit"]
    if unit is None:
        return None
    if version < 3:
        raise ReleaseFormatError("privacy_unit", f"is not part of format version {version}; write format_version 3")
    if not isinstance(unit, Mapping):
        raise ReleaseFormatError("privacy_unit", f"must be null or an object, got {_describe(unit)}")
    for key in ("unit", "column", "contribution", "max_records_per_user", "skip_state"):
        _require(unit, key, "privacy_unit")
    if unit["unit"] != "individual":
        raise ReleaseFormatError("privacy_unit.unit", f"must be 'individual', got {_describe(unit['unit'])}")
    if unit["column"] is not None and not isinstance(unit["column"], (str, int)):
        raise ReleaseFormatError("privacy_unit.column", f"must be a column name or null, got {_describe(unit['column'])}")
    if unit["contribution"] not in ("normalize", "clip"):
        raise ReleaseFormatError(
            "privacy_unit.contribution", f"must be 'normalize' or 'clip', got {_describe(unit['contribution'])}"
        )
    k = unit["max_records_per_user"]
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ReleaseFormatError("privacy_unit.max_records_per_user", f"must be a positive int or null, got {_describe(k)}")
    if unit["contribution"] == "clip" and k is None:
        raise ReleaseFormatError("privacy_unit.max_records_per_user", "is required (the sensitivity) when contribution is 'clip'")
    out = dict(unit)
    out["skip_state"] = None if unit["skip_state"] is None else _state(unit["skip_state"], "privacy_unit.skip_state")
    return out


def _members(t: Mapping, where: str, domain: Domain, attrs: tuple, version: int):
    """A pooled table's members (None for an ordinary table), checked against ``attrs`` and the domain."""
    members = t.get("members")
    if members is None:
        return None
    if version < 3:
        raise ReleaseFormatError(f"{where}.members", f"is not part of format version {version}; write format_version 3")
    if not isinstance(members, list) or not members:
        raise ReleaseFormatError(f"{where}.members", f"must be null or a non-empty list of attribute lists, got {_describe(members)}")
    out = []
    for j, m in enumerate(members):
        field = f"{where}.members[{j}]"
        if not isinstance(m, (list, tuple)) or len(m) != len(attrs):
            raise ReleaseFormatError(field, f"must be a list of {len(attrs)} attribute names, got {_describe(m)}")
        for axis, a in enumerate(m):
            if not isinstance(a, str) or a not in domain:
                raise ReleaseFormatError(field, f"names {a!r}, which is not an attribute of the domain {list(domain.attrs)}")
            if domain[a] != domain[attrs[axis]]:
                raise ReleaseFormatError(
                    field, f"has {a!r} at axis {axis}, whose states differ from those of {attrs[axis]!r}"
                )
        if len(set(m)) != len(m):
            raise ReleaseFormatError(field, f"names an attribute twice: {list(m)}")
        out.append(tuple(m))
    if out[0] != attrs:
        raise ReleaseFormatError(f"{where}.members[0]", f"is {list(out[0])}, but must equal the table's attrs {list(attrs)}")
    if len(set(out)) != len(out):
        raise ReleaseFormatError(f"{where}.members", "lists a member twice")
    return tuple(out)


def _granularity(t: Mapping, where: str, version: int) -> float:
    if t.get("granularity") is None:
        return 1.0
    g = _number(t["granularity"], f"{where}.granularity", positive=True)
    if version < 3 and g != 1.0:
        raise ReleaseFormatError(f"{where}.granularity", f"is not part of format version {version}; write format_version 3")
    if g > 1.0 or math.frexp(g)[0] != 0.5:  # 1 or 2^-k: the values' lattice must be exact in floating point
        raise ReleaseFormatError(f"{where}.granularity", f"must be 1 or a power of two below 1, got {g!r}")
    return g


def _table(t, where: str, domain: Domain, release_mechanism: str, version: int = 2) -> dict:
    if not isinstance(t, Mapping):
        raise ReleaseFormatError(where, f"must be a JSON object (a table), got {_describe(t)}")
    attrs = _require(t, "attrs", where)
    if not isinstance(attrs, list) or not attrs:
        raise ReleaseFormatError(f"{where}.attrs", f"must be a non-empty list of attribute names, got {_describe(attrs)}")
    for a in attrs:
        if not isinstance(a, str) or a not in domain:
            raise ReleaseFormatError(
                f"{where}.attrs", f"names {a!r}, which is not an attribute of the domain {list(domain.attrs)}"
            )
    if len(set(attrs)) != len(attrs):
        raise ReleaseFormatError(f"{where}.attrs", f"names an attribute twice: {attrs}")
    attrs = tuple(attrs)
    expected_shape = domain.shape(attrs)
    shape = _require(t, "shape", where)
    if not isinstance(shape, list) or any(isinstance(s, bool) or not isinstance(s, int) for s in shape):
        raise ReleaseFormatError(f"{where}.shape", f"must be a list of ints, got {_describe(shape)}")
    if tuple(shape) != expected_shape:
        raise ReleaseFormatError(
            f"{where}.shape", f"is {shape}, but the domain gives {list(attrs)} the shape {list(expected_shape)}"
        )
    values = _values(_require(t, "values", where), f"{where}.values", math.prod(expected_shape))

    mechanism = t.get("mechanism", release_mechanism if release_mechanism != MIXED else None)
    if mechanism is None:
        raise ReleaseFormatError(f"{where}.mechanism", f"is missing; it is required when the release is {MIXED!r}")
    if not isinstance(mechanism, str) or mechanism not in MECHANISMS:
        raise ReleaseFormatError(f"{where}.mechanism", f"is {_describe(mechanism)}; known mechanisms: {list(MECHANISMS)}")
    if release_mechanism != MIXED and mechanism != release_mechanism:
        raise ReleaseFormatError(
            f"{where}.mechanism", f"is {mechanism!r}, but the release says every table is {release_mechanism!r}"
        )
    scale = _positive(t, "scale", where)
    sensitivity = _positive(t, "sensitivity", where)
    cost = MECHANISMS[mechanism].check_cost({**t, "scale": scale, "sensitivity": sensitivity}, where)
    members = _members(t, where, domain, attrs, version)
    granularity = _granularity(t, where, version)
    out = dict(t)
    out.update(
        attrs=attrs, shape=list(expected_shape), values=values.reshape(expected_shape), scale=scale,
        sensitivity=sensitivity, mechanism=mechanism, members=members, granularity=granularity, **cost,
    )
    return out


def _values(values, field: str, size: int) -> np.ndarray:
    if not isinstance(values, list):
        raise ReleaseFormatError(field, f"must be a flat list of {size} numbers, got {_describe(values)}")
    if len(values) != size:
        raise ReleaseFormatError(field, f"has {len(values)} entries, but the table's shape has {size} cells")
    types = set(map(type, values))  # one C-level pass; bools, strings, None and nested lists are refused
    if not types <= {int, float}:
        i = next(i for i, v in enumerate(values) if type(v) not in (int, float))
        raise ReleaseFormatError(f"{field}[{i}]", f"must be a number, got {_describe(values[i])}")
    try:
        arr = np.asarray(values, dtype=np.float64)
    except OverflowError:  # an int beyond float64
        arr = np.full(len(values), np.inf)
    if not np.all(np.isfinite(arr)):
        i = next(i for i, v in enumerate(values) if not _finite(v))
        _number(values[i], f"{field}[{i}]")  # raises, naming the entry
    return arr
