import json
import math

import numpy as np
import pandas as pd
import pytest

import pgmpy_dp  # noqa: F401  (registers df.dp)
from pgmpy_dp import BudgetExceededError, Domain, DomainError, MarginalRelease, PrivacyBudget
from pgmpy_dp.privacy import CellLimitError, discrete_laplace_variance
from pgmpy_dp.tables import contingency_table

STATES = {"a": ["x", "y", "z"], "b": [0, 1], "c": [True, False]}


def make_frame(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "a": pd.Categorical(rng.choice(STATES["a"], n), categories=STATES["a"]),
            "b": pd.Categorical(rng.choice(STATES["b"], n), categories=STATES["b"]),
            "c": pd.Categorical(rng.choice(STATES["c"], n), categories=STATES["c"]),
        }
    )


def test_uniform_split_scale_and_facts():
    rel = make_frame().dp.release([("a", "b"), ("c",), ("a", "c")], epsilon=1.5, random_state=0)
    assert rel.epsilon == pytest.approx(1.5)
    assert rel.sensitivity == 3
    assert [t.scale for t in rel.tables] == pytest.approx([2.0, 2.0, 2.0])  # |C| / eps
    assert rel.mechanism == "discrete_laplace" and rel.sampler == "seeded"
    assert rel[("a", "b")].values.shape == (3, 2)
    assert rel.n_records is None


def test_per_table_budgets():
    rel = make_frame().dp.release([("a",), ("b",)], epsilon=[0.25, 0.75], random_state=0)
    assert [t.scale for t in rel.tables] == pytest.approx([4.0, 4 / 3])
    assert rel.epsilon == pytest.approx(1.0)


def test_noise_scale_statistically():
    """Residuals noisy - exact over many seeded releases have the variance of scale |C|/eps."""
    df = make_frame(50)
    dom = Domain(STATES)
    exact = contingency_table(dom.encode(df), dom, ("a", "b", "c"))
    eps, n_rep = 0.8, 400
    res = np.stack(
        [
            df.dp.release([("a", "b", "c"), ("a",)], eps, random_state=s)[("a", "b", "c")].values - exact
            for s in range(n_rep)
        ]
    ).ravel()
    var = discrete_laplace_variance(2 / eps)
    assert abs(res.var() - var) < 5 * var * math.sqrt(5 / res.size)
    assert abs(res.var() - discrete_laplace_variance(1 / eps)) > 5 * var * math.sqrt(5 / res.size)


def test_neighbouring_frames_have_identical_structure():
    """A record with a state the other frame never shows changes no key, shape or index."""
    df = make_frame(30)
    df = df[df["a"] != "z"]
    neighbour = pd.concat([df, make_frame(1).assign(a=pd.Categorical(["z"], categories=STATES["a"]))])
    tables = [("a", "b"), ("c",)]
    r0, r1 = (d.dp.release(tables, 1.0, random_state=0) for d in (df, neighbour))
    assert r0.attrs == r1.attrs and r0.domain == r1.domain
    for t in tables:
        assert r0.series(t).index.equals(r1.series(t).index)
    d0, d1 = r0.to_dict(), r1.to_dict()
    strip = lambda d: {k: v for k, v in d.items() if k != "tables"}  # noqa: E731
    assert strip(d0) == strip(d1)
    assert [len(t["values"]) for t in d0["tables"]] == [len(t["values"]) for t in d1["tables"]]


def test_json_round_trip_without_loss(tmp_path):
    rel = make_frame().dp.release([("a", "b"), ("c", "a")], epsilon=0.3, random_state=3, n_records=200)
    text = rel.to_json()
    back = MarginalRelease.from_json(text)
    assert back == rel
    assert back.domain["b"] == (0, 1) and back.domain["c"] == (True, False)
    path = tmp_path / "rel.json"
    rel.to_json(path)
    assert MarginalRelease.from_json(path) == rel
    assert json.loads(text)["sensitivity"] == 2
    changed = json.loads(text)
    changed["tables"][0]["values"][0] += 1
    assert MarginalRelease.from_dict(changed) != rel


def test_views():
    rel = make_frame().dp.release([("a", "b")], epsilon=1.0, random_state=0)
    s = rel.series(("a", "b"))
    assert list(s.index.names) == ["a", "b"] and len(s) == 6
    assert rel.frame(("a", "b")).columns.tolist() == ["a", "b", "noisy_count"]
    f = rel.factor(("a", "b"))
    assert f.state_names["a"] == ["x", "y", "z"]
    np.testing.assert_array_equal(f.values, rel[("a", "b")].values)
    assert (rel.factor(("a", "b"), clip=True).values >= 0).all()


def test_n_records_estimate_is_close_to_truth():
    rel = make_frame(5000).dp.release([("a",), ("b",), ("c",)], epsilon=1.0, random_state=0)
    # each total has variance |cells| * var(scale 3); the weighted mean is tighter than any one
    sd = math.sqrt(2 * discrete_laplace_variance(3.0))
    assert abs(rel.n_records_estimate - 5000) < 5 * sd


def test_budget_charged_once_and_failed_release_spends_nothing():
    df = make_frame()
    budget = PrivacyBudget(1.0)
    df.dp.release([("a",), ("b",)], 0.6, budget=budget)
    assert budget.spent == pytest.approx(0.6) and len(budget.ledger) == 1
    with pytest.raises(BudgetExceededError):
        df.dp.release([("a",)], 0.5, budget=budget)
    with pytest.raises(DomainError):
        df.dp.release([("a", "nope")], 0.1, budget=budget)
    assert budget.spent == pytest.approx(0.6) and len(budget.ledger) == 1


@pytest.mark.parametrize(
    "tables, epsilon, kwargs, exc, message",
    [
        ([("a", "missing")], 1.0, {}, DomainError, r"column\(s\) \['missing'\] that are not in the DataFrame"),
        ([("a", "a")], 1.0, {}, DomainError, "repeats column"),
        ([("a",), ("a",)], 1.0, {}, DomainError, "requested twice"),
        ([], 1.0, {}, ValueError, "no tables requested"),
        (("a", "b"), 1.0, {}, TypeError, "list of attribute tuples"),
        ([("a",)], 0.0, {}, ValueError, "epsilon must be positive"),
        ([("a",)], float("inf"), {}, ValueError, "epsilon must be positive"),
        ([("a",)], [0.5, 0.5], {}, ValueError, "2 per-table epsilons for 1 tables"),
        ([("a", "b")], 1.0, {"max_cells": 5}, CellLimitError, "6 cells"),
    ],
)
def test_bad_requests(tables, epsilon, kwargs, exc, message):
    with pytest.raises(exc, match=message):
        make_frame().dp.release(tables, epsilon, **kwargs)


def test_bad_frames():
    with pytest.raises(ValueError, match="DataFrame is empty"):
        make_frame().iloc[:0].dp.release([("a",)], 1.0)
    raw = pd.DataFrame({"age": [30, 40]})
    with pytest.raises(DomainError, match="column 'age' has no public domain"):
        raw.dp.release([("age",)], 1.0)
    rel = raw.dp.release([("age",)], 1.0, domain={"age": [30, 40, 50]}, random_state=0)
    assert rel[("age",)].values.shape == (3,)
    with pytest.raises(DomainError, match=r"value\(s\) \[60\] outside its declared domain"):
        pd.DataFrame({"age": [30, 60]}).dp.release([("age",)], 1.0, domain={"age": [30, 40]})
