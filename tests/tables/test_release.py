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
    with pytest.raises(DomainError, match=r"values outside its declared domain \[30, 40\].*withheld"):
        pd.DataFrame({"age": [30, 60]}).dp.release([("age",)], 1.0, domain={"age": [30, 40]})


# -- Gaussian (zCDP) releases -----------------------------------------------------------------------

from pgmpy_dp.privacy import discrete_gaussian_variance, rho_to_epsilon_delta  # noqa: E402
from pgmpy_dp.tables import release_counts, release_from_codes  # noqa: E402


def test_gaussian_sigma_for_c_tables():
    tables = [("a", "b"), ("c",), ("a", "c")]
    rel = make_frame().dp.release(tables, rho=0.6, random_state=0)
    sigma = math.sqrt(3 / (2 * 0.6))  # L2 sensitivity sqrt(|C|) over sqrt(2 rho)
    assert [t.scale for t in rel.tables] == pytest.approx([sigma] * 3, rel=1e-15)
    assert [t.rho for t in rel.tables] == pytest.approx([0.2] * 3)
    assert [t.mechanism for t in rel.tables] == ["discrete_gaussian"] * 3
    assert rel.mechanism == "discrete_gaussian" and rel.rho == pytest.approx(0.6)
    assert rel.l2_sensitivity == pytest.approx(math.sqrt(3)) and rel.sensitivity == 3
    assert rel.epsilon is None and all(t.epsilon is None for t in rel.tables)  # no pure-DP claim
    assert rel.epsilon_delta(1e-6) == (rho_to_epsilon_delta(rel.rho, 1e-6), 1e-6)
    assert rel[("c",)].variance == discrete_gaussian_variance(sigma)
    assert all(np.array_equal(t.values, np.round(t.values)) for t in rel.tables)
    assert "rho=0.6" in repr(rel)
    # Laplace at the epsilon whose pure-DP guarantee implies the same rho (eps^2 / 2 = rho) has
    # scale |C| / eps: sqrt(|C|) times sigma, the gain of calibrating to the L2 sensitivity
    eps = math.sqrt(2 * 0.6)
    assert (3 / eps) / sigma == pytest.approx(math.sqrt(3))


def test_gaussian_per_table_rho():
    rel = make_frame().dp.release([("a",), ("b",)], rho=[0.125, 0.5], random_state=0)
    assert [t.scale for t in rel.tables] == pytest.approx([2.0, 1.0])  # sqrt(1 / (2 rho_i))
    assert rel.rho == pytest.approx(0.625)


def test_gaussian_noise_scale_statistically():
    """Residuals of a big seeded release have the discrete Gaussian variance, within 4.5 standard errors."""
    df = make_frame(50)
    exact = contingency_table(Domain(STATES).encode(df, ["a", "b"]), Domain(STATES), ("a", "b"))
    rel = release_from_codes(
        {a: np.tile(c, 1) for a, c in Domain(STATES).encode(df, ["a", "b"]).items()}, Domain(STATES),
        [("a", "b")], rho=0.02, random_state=1,
    )
    assert rel[("a", "b")].scale == 5.0
    # 6 cells is too few; draw many independent releases through the same path
    residuals = np.concatenate(
        [
            (release_counts([exact], Domain(STATES), [("a", "b")], rho=0.02, random_state=s)[("a", "b")].values - exact).ravel()
            for s in range(3000)
        ]
    )
    var, n = discrete_gaussian_variance(5.0), residuals.size
    assert abs(np.mean(residuals**2) - var) < 4.5 * var * math.sqrt(2 / n)


def test_gaussian_budget_charge_and_json_round_trip(tmp_path):
    budget = PrivacyBudget(rho=1.0)
    rel = make_frame().dp.release([("a", "b"), ("c",)], rho=0.4, budget=budget, random_state=0)
    assert budget.spent == 0.4 and [e.rho for e in budget.ledger] == [0.4]
    back = MarginalRelease.from_json(rel.to_json())
    assert back == rel and back.rho == rel.rho and back.epsilon is None
    d = rel.to_dict()
    assert d["format_version"] == 3 and d["mechanism"] == "discrete_gaussian" and d["rho"] == pytest.approx(0.4)
    assert set(d["tables"][0]) == {"attrs", "values", "shape", "epsilon", "scale", "sensitivity", "mechanism", "rho", "members", "granularity"}
    assert d["tables"][0]["epsilon"] is None and d["tables"][0]["rho"] == pytest.approx(0.2)


def test_version_1_artifacts_still_read():
    rel = make_frame().dp.release([("a", "b")], epsilon=1.0, random_state=0)
    old = rel.to_dict()
    del old["format_version"], old["rho"], old["privacy_unit"]
    old["version"] = 1  # the field's name in version-1 artifacts
    for t in old["tables"]:
        del t["mechanism"], t["rho"], t["members"], t["granularity"]
    back = MarginalRelease.from_dict(json.loads(json.dumps(old)))
    assert back == rel and back[("a", "b")].mechanism == "discrete_laplace" and back.rho is None


def test_laplace_release_in_a_zcdp_budget_composes_per_table():
    """Each table is eps_i-DP, so (eps_i^2 / 2)-zCDP: the release costs sum(eps_i^2) / 2, not eps^2 / 2."""
    budget = PrivacyBudget(rho=1.0)
    make_frame().dp.release([("a",), ("b",)], epsilon=[0.6, 0.8], budget=budget, random_state=0)
    assert budget.spent == pytest.approx((0.36 + 0.64) / 2, rel=1e-15) and budget.spent >= 0.5
    single = PrivacyBudget(rho=1.0)
    make_frame().dp.release([("a",)], epsilon=0.6, budget=single, random_state=0)
    assert single.spent == 0.18 and single.ledger[0].epsilon == 0.6


@pytest.mark.parametrize(
    "kwargs, exc, message",
    [
        ({"rho": 0}, ValueError, "rho must be positive and finite"),
        ({"rho": -0.5}, ValueError, "rho must be positive and finite"),
        ({"rho": math.inf}, ValueError, "rho must be positive and finite"),
        ({"rho": math.nan}, ValueError, "rho must be positive and finite"),
        ({"rho": [0.1, 0.0]}, ValueError, r"rho for table \('c',\) must be positive"),
        ({"rho": [0.1]}, ValueError, "got 1 per-table rhos for 2 tables"),
        ({"rho": 1e-30}, ValueError, "is too small"),
        ({"rho": 5e-324}, ValueError, "is too small"),
        ({"rho": 0.5, "epsilon": 1.0}, ValueError, "got both epsilon=1.0 and rho=0.5"),
        ({"rho": 5.0}, BudgetExceededError, "exceeds the remaining budget"),
        ({}, TypeError, "the release takes exactly one of epsilon= or rho=, got neither"),
    ],
)
def test_bad_gaussian_requests_spend_nothing(kwargs, exc, message):
    budget = PrivacyBudget(rho=2.0)
    with pytest.raises(exc, match=message):
        make_frame().dp.release([("a", "b"), ("c",)], budget=budget, **kwargs)
    assert budget.spent == 0 and budget.ledger == () and budget.remaining == 2.0


def test_rho_release_refuses_a_pure_budget_before_counting():
    budget = PrivacyBudget(1.0)
    with pytest.raises(ValueError, match=r"PrivacyBudget\(rho=...\)"):
        make_frame().dp.release([("a",)], rho=0.5, budget=budget)
    assert budget.spent == 0 and budget.ledger == ()


# -- release_counts ------------------------------------------------------------------------------------


def test_release_counts_equals_release_from_codes():
    df, dom = make_frame(), Domain(STATES)
    codes = dom.encode(df, list(STATES))
    tables = [("a", "b"), ("c",)]
    exact = {t: contingency_table(codes, dom, t) for t in tables}
    for kwargs in ({"epsilon": 1.0}, {"rho": 0.5}, {"epsilon": [0.2, 0.3]}):
        a = release_from_codes(codes, dom, tables, random_state=3, **kwargs)
        b = release_counts(exact, dom, tables, random_state=3, **kwargs)
        c = release_counts([exact[t] for t in tables], dom, tables, random_state=3, **kwargs)
        assert a == b == c


@pytest.mark.parametrize(
    "exact, exc, message",
    [
        ({("a", "b"): np.zeros((3, 2))}, ValueError, r"no counts for table\(s\) \[\('c',\)\]"),
        ({("a", "b"): np.zeros((2, 3)), ("c",): np.zeros(2)}, ValueError, r"have shape \(2, 3\)"),
        ({("a", "b"): np.full((3, 2), np.nan), ("c",): np.zeros(2)}, ValueError, "finite and non-negative"),
        ({("a", "b"): -np.ones((3, 2)), ("c",): np.zeros(2)}, ValueError, "finite and non-negative"),
        ({("a", "b"): np.full((3, 2), "x"), ("c",): np.zeros(2)}, TypeError, "numeric array"),
        ([np.zeros((3, 2))], ValueError, "1 arrays for 2 tables"),
        ("counts", TypeError, "exact must map attribute tuples"),
    ],
)
def test_release_counts_bad_input_spends_nothing(exact, exc, message):
    budget = PrivacyBudget(1.0)
    with pytest.raises(exc, match=message):
        release_counts(exact, Domain(STATES), [("a", "b"), ("c",)], 0.5, budget=budget)
    assert budget.spent == 0 and budget.ledger == ()
