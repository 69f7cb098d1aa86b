"""Individual-level privacy: contribution bounding by a user column (issue 16, Bernstein et al. sec. 4.2)."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pgmpy_dp
from pgmpy_dp import Domain, DomainError, MarginalRelease, Pooled, PrivacyBudget, UserLevel
from pgmpy_dp.tables import release_from_codes
from pgmpy_dp.tables.contribution import (
    NORMALIZE_UNITS,
    ContributionBound,
    contribution_weights,
    per_unit_mass,
    sample_per_unit,
)
from pgmpy_dp.tables.schema import ReleaseFormatError

LOC = ["n", "a", "b"]
PUBLIC = {"h0": LOC, "h1": LOC, "h2": LOC}
EDGES = [("h0", "h1"), ("h1", "h2")]
HUGE = 1e9  # noise of scale 1024 / 5e8 in lattice units: zero with overwhelming probability


def tiny():
    """Hand-checked frame: user 1 owns two rows, user 2 one all-null row, user 3 one row."""
    return pd.DataFrame(
        {
            "h0": ["a", "b", "n", "n"],
            "h1": ["b", "b", "n", "a"],
            "h2": ["n", "a", "n", "a"],
            "uid": ["u1", "u1", "u2", "u3"],
        }
    )


def release(df, tables, contribution="normalize", max_records_per_user=None, skip_state=None, **kw):
    kw.setdefault("epsilon", HUGE)
    kw.setdefault("random_state", 0)
    unit = UserLevel("uid", max_records=max_records_per_user, contribution=contribution, skip_state=skip_state)
    return df.dp.release(tables, domain=PUBLIC, privacy_unit=unit, **kw)


# -- exact counts by hand ---------------------------------------------------------------------------


def test_normalised_counts_by_hand_with_skip_state():
    rel = release(tiny(), [("h0", "h1")], skip_state="n")
    # (h0,h1): u1 (a,b) and (b,b) at 1/2 each; u2 (n,n) skipped; u3 (n,a) at 1
    expected = np.array([[0, 1, 0], [0, 0, 0.5], [0, 0, 0.5]])
    np.testing.assert_array_equal(rel[("h0", "h1")].values, expected)
    assert rel[("h0", "h1")].granularity == 1 / NORMALIZE_UNITS


def test_normalised_counts_by_hand_without_skip_state():
    rel = release(tiny(), [("h0", "h1")])
    expected = np.array([[1, 1, 0], [0, 0, 0.5], [0, 0, 0.5]])  # u2's null-null row now counts, weight 1
    np.testing.assert_array_equal(rel[("h0", "h1")].values, expected)


def test_normalised_pooled_counts_by_hand():
    rel = release(tiny(), [Pooled(EDGES)], skip_state="n")
    # u1: 4 instances (a,b) (b,n) (b,b) (b,a) at 1/4; u2: none; u3: (n,a) (a,a) at 1/2
    expected = np.array([[0, 0.5, 0], [0, 0.5, 0.25], [0.25, 0.25, 0.25]])
    t = rel[tuple(EDGES)]
    np.testing.assert_array_equal(t.values, expected)
    assert t.sensitivity == 1.0 and rel.sensitivity == 1.0
    # every individual with a counted instance adds exactly 1: the total estimates individuals
    assert rel.n_records_estimate == pytest.approx(2.0)


def test_uneven_split_is_on_the_lattice_and_sums_to_one():
    df = pd.DataFrame({"h0": ["a", "b", "b"], "h1": ["n", "n", "n"], "h2": ["n", "n", "n"], "uid": [7, 7, 7]})
    values = release(df, ["h0"])["h0"].values
    assert values.sum() == 1.0  # 1024 units split 342 / 341 / 341 at random
    units = values * NORMALIZE_UNITS
    assert np.array_equal(units, np.round(units)) and set(units[1:]) <= {0, 341, 342, 683, 684}
    assert abs(values[1] - 1 / 3) < 1.5 / NORMALIZE_UNITS and abs(values[2] - 2 / 3) < 1.5 / NORMALIZE_UNITS


def test_clip_keeps_at_most_k_rows_per_individual():
    rel = release(tiny(), [("h0", "h1"), Pooled(EDGES)], contribution="clip", max_records_per_user=1)
    assert rel[("h0", "h1")].values.sum() == 3  # one row per individual, weight 1
    assert rel[tuple(EDGES)].values.sum() == 6
    assert [t.sensitivity for t in rel.tables] == [1.0, 2.0]
    full = release(tiny(), [Pooled(EDGES)], contribution="clip", max_records_per_user=2, skip_state="n")
    # weight 1 for each counted instance: u1's (a,b) (b,n) (b,b) (b,a), u3's (n,a) (a,a)
    np.testing.assert_array_equal(full[tuple(EDGES)].values, [[0, 1, 0], [0, 1, 1], [1, 1, 1]])
    assert full[tuple(EDGES)].sensitivity == 4.0


def test_an_individual_with_no_counted_row_in_a_table_contributes_nothing():
    rel = release(tiny(), [("h0", "h1"), "h2"], skip_state="n")
    # u2's only row is null everywhere: no mass in either table, no error
    assert rel[("h0", "h1")].values.sum() == 2.0 and rel["h2"].values.sum() == 2.0


def test_max_records_with_normalize_samples_first():
    df = pd.DataFrame({"h0": ["a"] * 3 + ["b"] * 3, "h1": ["n"] * 6, "h2": ["n"] * 6, "uid": ["u"] * 6})
    rel = release(df, ["h0"], max_records_per_user=2)
    values = rel["h0"].values
    assert values.sum() == 1.0 and set(np.round(values * 2)) <= {0, 1, 2} and rel["h0"].sensitivity == 1.0


# -- the bound holds on any frame (hypothesis) ---------------------------------------------------------


@st.composite
def frames(draw):
    n = draw(st.integers(1, 60))
    units = np.array(draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)))
    codes = {a: np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))) for a in ("h0", "h1", "h2")}
    return units, codes


@settings(max_examples=60, deadline=None)
@given(
    frames(),
    st.sampled_from([None, "n"]),
    st.sampled_from([[("h0", "h1")], EDGES, [("h0",), ("h1",), ("h2",)]]),
    st.integers(0, 2**32 - 1),
)
def test_each_individual_adds_mass_at_most_one(frame, skip, members, seed):
    units, codes = frame
    units = np.unique(units, return_inverse=True)[1]  # codes 0 .. k-1, as pd.factorize gives
    dom = Domain(PUBLIC)
    bound = ContributionBound("uid", "normalize", None, skip)
    weights = contribution_weights(codes, dom, members, units, bound, np.random.default_rng(seed))
    mass = per_unit_mass(weights, units)
    counted = sum(np.bincount(units, weights=(w > 0).astype(float), minlength=len(mass)) for w in weights)
    assert np.all(mass <= 1.0)
    # exactly 1 for an individual with a counted instance, 0 otherwise; every weight on the lattice
    np.testing.assert_array_equal(mass, (counted > 0).astype(float))
    for w in weights:
        assert np.array_equal(w * NORMALIZE_UNITS, np.round(w * NORMALIZE_UNITS)) and np.all(w >= 0)


@settings(max_examples=40, deadline=None)
@given(frames(), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_clip_bounds_each_individual_by_k_per_member(frame, k, seed):
    units, codes = frame
    units = np.unique(units, return_inverse=True)[1]
    rng = np.random.default_rng(seed)
    kept = sample_per_unit(units, k, rng)
    bound = ContributionBound("uid", "clip", k, None)
    weights = contribution_weights(codes, Domain(PUBLIC), EDGES, units, bound, rng, kept)
    assert np.all(per_unit_mass(weights, units) <= bound.sensitivity(len(EDGES)))
    np.testing.assert_array_equal(np.bincount(units[kept]), np.minimum(np.bincount(units), k))


def test_row_sampling_is_uniform_within_an_individual():
    units = np.array([0, 0, 0, 0, 1])
    picks = np.zeros(4)
    for seed in range(4000):
        picks += sample_per_unit(units, 1, np.random.default_rng(seed))[:4]
    # each of the 4 rows is kept with probability 1/4: binomial sd sqrt(4000 * 3/16) ~ 27
    assert np.all(np.abs(picks - 1000) < 5 * 27.4)


# -- noise scales ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw, sens",
    [
        ({}, [1.0, 1.0]),
        ({"contribution": "clip", "max_records_per_user": 3}, [3.0, 6.0]),
        ({"contribution": "normalize", "max_records_per_user": 3}, [1.0, 1.0]),
    ],
)
def test_noise_scale_is_sensitivity_over_epsilon(kw, sens):
    rel = release(tiny(), ["h0", Pooled(EDGES)], epsilon=[0.5, 2.0], **kw)
    assert [t.sensitivity for t in rel.tables] == sens
    assert [t.scale for t in rel.tables] == pytest.approx([sens[0] / 0.5, sens[1] / 2.0])
    total = release(tiny(), ["h0", Pooled(EDGES)], epsilon=1.0, **kw)
    # a total budget: the same scale sum(s_i) / epsilon on every cell
    assert [t.scale for t in total.tables] == pytest.approx([sum(sens)] * 2)


def test_gaussian_normalised_release():
    rel = release(tiny(), ["h0", ("h0", "h1")], epsilon=None, rho=1.0)
    assert [t.scale for t in rel.tables] == pytest.approx([1.0, 1.0])  # sqrt(2) / sqrt(2 rho)
    assert rel.rho == pytest.approx(1.0) and rel.l2_sensitivity == pytest.approx(math.sqrt(2))
    assert all(t.granularity == 1 / NORMALIZE_UNITS for t in rel.tables)


# -- unbiasedness (statistical; fixed seeds, tolerance from the noise scale) ----------------------------


@pytest.mark.slow
def test_released_values_are_unbiased_for_the_normalised_counts():
    # users with 1, 2, 3 and 5 rows: weights 1, 1/2, 1/3 (randomised rounding) and 1/5
    rows = [("u1", "a")] + [("u2", "a"), ("u2", "b")] + [("u3", s) for s in "nab"] + [("u4", s) for s in "aabbb"]
    df = pd.DataFrame({"uid": [u for u, _ in rows], "h0": [s for _, s in rows], "h1": "n", "h2": "n"})
    exact = np.array([1 / 3, 1 + 1 / 2 + 1 / 3 + 2 / 5, 1 / 2 + 1 / 3 + 3 / 5])
    reps = 400
    draws = np.array([release(df, ["h0"], epsilon=1.0, random_state=s)["h0"].values for s in range(reps)])
    var = release(df, ["h0"], epsilon=1.0)["h0"].variance
    assert var == pytest.approx(2.0, rel=1e-3)  # Laplace(1): the lattice is fine enough to look continuous
    # the rounding adds at most 1/4 unit^2 per row: negligible against the noise
    tol = 5 * math.sqrt((var + 10 / (4 * NORMALIZE_UNITS**2)) / reps)
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - exact), tol)
    # and the noise has the variance the table records (sd of a variance estimate of Laplace noise ~ sqrt(5/N))
    resid = (draws - exact).ravel()
    assert abs(resid.var() / var - 1) < 5 * math.sqrt(5 / resid.size)
    assert np.array_equal(draws * NORMALIZE_UNITS, np.round(draws * NORMALIZE_UNITS))


def test_interval_of_a_normalised_table_uses_its_lattice():
    rel = release(tiny(), ["h0"], epsilon=1.0)
    iv = rel.interval("h0")
    half = (iv.upper - iv.lower) / 2
    assert iv.attrs["method"] == "exact" and iv.attrs["coverage"] >= 0.95
    # Laplace scale 1 on a fine lattice: half-width ~ ln(1/0.05) = 3.0
    assert np.allclose(half, half.iloc[0]) and abs(half.iloc[0] - math.log(20)) < 0.01
    assert half.iloc[0] * NORMALIZE_UNITS == round(half.iloc[0] * NORMALIZE_UNITS)


# -- the artifact ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw", [{"skip_state": "n"}, {"contribution": "clip", "max_records_per_user": 2}, {"max_records_per_user": 1}]
)
def test_json_round_trip_keeps_the_privacy_unit(kw):
    rel = release(tiny(), ["h0", Pooled(EDGES)], epsilon=1.0, **kw)
    back = MarginalRelease.from_json(rel.to_json())
    assert back == rel and back.privacy_unit == rel.privacy_unit
    assert rel.privacy_unit == {
        "unit": "individual", "column": "uid", "contribution": kw.get("contribution", "normalize"),
        "max_records_per_user": kw.get("max_records_per_user"), "skip_state": kw.get("skip_state"),
    }
    assert "privacy_unit={'unit': 'individual'" in repr(rel)
    assert "uid" not in rel.domain and all("uid" not in t.attrs for t in rel.tables)


def test_record_level_release_has_no_privacy_unit():
    rel = tiny().dp.release(["h0"], epsilon=1.0, domain=PUBLIC, random_state=0)
    assert rel.privacy_unit is None and rel.to_dict()["privacy_unit"] is None and "privacy_unit" not in repr(rel)


def _unit_artifact():
    return json.loads(release(tiny(), ["h0"], epsilon=1.0, skip_state="n").to_json())


@pytest.mark.parametrize(
    "edit, field, match",
    [
        (lambda a: a["privacy_unit"].update(contribution="drop"), "privacy_unit.contribution", "'normalize' or 'clip'"),
        (lambda a: a["privacy_unit"].update(unit="household"), "privacy_unit.unit", "'individual'"),
        (lambda a: a["privacy_unit"].pop("skip_state"), "privacy_unit.skip_state", "missing"),
        (lambda a: a["privacy_unit"].update(max_records_per_user=0), "privacy_unit.max_records_per_user", "positive int"),
        (lambda a: a["privacy_unit"].update(contribution="clip"), "privacy_unit.max_records_per_user", "required"),
        (lambda a: a.update(format_version=2), "tables[0].granularity", "not part of format version 2"),
        (lambda a: a.pop("privacy_unit"), "privacy_unit", "missing"),
        (lambda a: a.update(privacy_unit=None), "tables[0].granularity", "individual-normalised"),
        (lambda a: a.update(privacy_unit="uid"), "privacy_unit", "null or an object"),
    ],
)
def test_schema_refuses_bad_privacy_unit_records(edit, field, match):
    art = _unit_artifact()
    edit(art)
    with pytest.raises(ReleaseFormatError, match=match) as info:
        MarginalRelease.from_dict(art)
    assert info.value.field == field


# -- bad input: a clear error, nothing spent -----------------------------------------------------------


def _nan_user():
    df = tiny()
    df.loc[2, "uid"] = None
    return df


@pytest.mark.parametrize(
    "frame, tables, kw, error, match",
    [
        (tiny, ["h0"], {"privacy_unit": "user"}, DomainError, "privacy_unit 'user' is not a column"),
        (_nan_user, ["h0"], {"privacy_unit": "uid"}, ValueError, "'uid' has missing values"),
        (tiny, [("h0", "uid")], {"privacy_unit": "uid"}, DomainError, "is named in a requested table"),
        (tiny, ["h0"], {"privacy_unit": "uid", "domain": dict(PUBLIC, uid=["u1", "u2", "u3"])}, DomainError,
         "declared in domain"),
        (tiny, [("h0", "h1")], {"privacy_unit": UserLevel("uid", skip_state="zz")}, DomainError, "would skip nothing"),
        (tiny, ["h0"], {"privacy_unit": UserLevel("uid", max_records=0)}, ValueError, "max_records must be at least 1"),
        (tiny, ["h0"], {"privacy_unit": UserLevel("uid", max_records=1.5)}, TypeError, "positive int"),
        (tiny, ["h0"], {"privacy_unit": UserLevel("uid", max_records=True)}, TypeError, "positive int"),
        (tiny, ["h0"], {"privacy_unit": UserLevel("uid", contribution="drop")}, ValueError,
         "one of \\['normalize', 'clip'\\]"),
        (tiny, ["h0"], {"privacy_unit": UserLevel("uid", contribution="clip")}, ValueError, "needs max_records"),
        (tiny, ["h0"], {"privacy_unit": ["uid"]}, TypeError, "column label or a pgmpy_dp.UserLevel"),
        (tiny, ["h0"], {"privacy_unit": UserLevel(None)}, ValueError, "needs the column"),
        (tiny, ["h0"], {"contribution": "clip"}, TypeError, "unexpected keyword argument 'contribution'"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_spent(frame, tables, kw, error, match):
    budget = PrivacyBudget(1.0)
    kw.setdefault("domain", PUBLIC)
    with pytest.raises(error, match=match):
        frame().dp.release(tables, epsilon=0.5, budget=budget, **kw)
    assert budget.spent == 0 and len(budget.ledger) == 0


def test_all_rows_skipped_everywhere_is_an_error_and_nothing_is_spent():
    df = pd.DataFrame({"h0": ["n", "n"], "h1": ["n", "n"], "h2": ["a", "b"], "uid": [1, 2]})
    budget = PrivacyBudget(1.0)
    with pytest.raises(ValueError, match="no row is counted in any table"):
        df.dp.release([("h0", "h1")], epsilon=0.5, domain=PUBLIC, budget=budget,
                      privacy_unit=UserLevel("uid", skip_state="n"))
    assert budget.spent == 0


@pytest.mark.parametrize(
    "units, error, match",
    [
        (np.array([0, 1]), ValueError, "different numbers of rows"),
        (np.array([0.0, 1.0, 1.0, 2.0]), TypeError, "1-D integer array"),
        (np.array([0, -1, 1, 2]), ValueError, "non-negative"),
    ],
)
def test_release_from_codes_checks_unit_codes(units, error, match):
    dom = Domain(PUBLIC)
    codes = dom.encode(tiny(), list(PUBLIC))
    budget = PrivacyBudget(1.0)
    with pytest.raises(error, match=match):
        release_from_codes(codes, dom, ["h0"], 0.5, budget=budget, units=units)
    assert budget.spent == 0


def test_release_from_codes_needs_units_for_a_named_unit():
    dom = Domain(PUBLIC)
    with pytest.raises(ValueError, match="give both"):
        release_from_codes(dom.encode(tiny(), list(PUBLIC)), dom, ["h0"], 0.5, privacy_unit="uid")


def test_dask_refuses_individual_level_privacy():
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(tiny(), npartitions=2)
    budget = PrivacyBudget(1.0)
    with pytest.raises(NotImplementedError, match="individual-level privacy .* not supported on Dask"):
        ddf.dp.release(["h0"], epsilon=0.5, domain=PUBLIC, budget=budget, privacy_unit="uid")
    assert budget.spent == 0


# -- estimators ----------------------------------------------------------------------------------------


def users_frame(n_users=300, seed=0):
    df = pgmpy_dp.datasets.sample_network("asia", 3 * n_users, seed=seed)
    df["user"] = np.repeat([f"p{i}" for i in range(n_users)], 3)
    return df


def test_markov_fit_from_a_frame_passes_the_privacy_unit_through():
    from pgmpy.models import DiscreteMarkovNetwork

    mn = DiscreteMarkovNetwork([("smoke", "lung"), ("smoke", "bronc")])
    est = pgmpy_dp.PrivateMarkovEstimator(random_state=0)
    est.fit(mn, users_frame(), epsilon=1.0, privacy_unit=UserLevel("user", max_records=1, contribution="clip"))
    rel = est.releases_[0]
    assert rel.privacy_unit["column"] == "user" and rel.privacy_unit["contribution"] == "clip"
    assert all(t.sensitivity == 1.0 for t in rel.tables)  # one row kept per individual


def test_markov_fit_refuses_a_privacy_unit_with_releases():
    from pgmpy.models import DiscreteMarkovNetwork

    mn = DiscreteMarkovNetwork([("smoke", "lung")])
    rel = users_frame().dp.release([("smoke", "lung")], epsilon=1.0, random_state=0)
    with pytest.raises(ValueError, match="only applies when fitting from a DataFrame"):
        pgmpy_dp.PrivateMarkovEstimator().fit(mn, rel, privacy_unit="user")


def test_markov_fit_refuses_bad_contribution_before_spending():
    from pgmpy.models import DiscreteMarkovNetwork

    budget = PrivacyBudget(1.0)
    with pytest.raises(ValueError, match="needs max_records"):
        pgmpy_dp.PrivateMarkovEstimator().fit(
            DiscreteMarkovNetwork([("smoke", "lung")]), users_frame(), epsilon=1.0, budget=budget,
            privacy_unit=UserLevel("user", contribution="clip"),
        )
    assert budget.spent == 0


@pytest.mark.parametrize("allocation", ["uniform", "data-dependent"])
def test_bayesian_fit_through_pgmpy_with_a_privacy_unit(allocation):
    from pgmpy.models import DiscreteBayesianNetwork

    bn = DiscreteBayesianNetwork([("smoke", "lung"), ("smoke", "bronc")])
    est = pgmpy_dp.DiscretePrivateMLE(
        epsilon=2.0, allocation=allocation, privacy_unit=UserLevel("user", max_records=2, contribution="clip"),
        random_state=0,
    )
    bn.fit(users_frame(), estimator=est)  # pgmpy tolerates the extra user column
    assert est.release_.privacy_unit["max_records_per_user"] == 2
    assert all(t.sensitivity == 2.0 for t in est.release_)
    if allocation == "data-dependent":
        assert est.stage1_release_.privacy_unit == est.release_.privacy_unit
    assert bn.get_cpds("lung").values.shape == (2, 2)


def test_bayesian_fit_refuses_the_user_column_as_a_node_before_spending():
    from pgmpy.models import DiscreteBayesianNetwork

    budget = PrivacyBudget(1.0)
    df = users_frame()
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, budget=budget, privacy_unit="user")
    with pytest.raises(DomainError, match="is a model node"):
        est.fit(DiscreteBayesianNetwork([("smoke", "user")]), df)
    assert budget.spent == 0


def test_bayesian_fit_release_refuses_a_privacy_unit():
    from pgmpy.models import DiscreteBayesianNetwork

    rel = users_frame().dp.release([("lung", "smoke")], epsilon=1.0, random_state=0)
    with pytest.raises(ValueError, match="privacy_unit applies to a fit from a DataFrame"):
        pgmpy_dp.DiscretePrivateMLE(privacy_unit="user").fit_release(DiscreteBayesianNetwork([("smoke", "lung")]), rel)


def test_randomised_rounding_is_unbiased_per_row():
    # one individual with 3 counted rows: 1024 units do not split evenly; each row's expected weight is 1/3
    dom = Domain(PUBLIC)
    codes = {a: np.array([1, 2, 1]) for a in PUBLIC}
    bound = ContributionBound("uid", "normalize", None, None)
    reps = 3000
    total = np.zeros(3)
    for seed in range(reps):
        total += contribution_weights(codes, dom, [("h0",)], np.zeros(3, dtype=np.int64), bound,
                                      np.random.default_rng(seed))[0]
    sd = math.sqrt((1 / 3) * (2 / 3) / reps) / NORMALIZE_UNITS  # one extra unit with probability 1/3
    np.testing.assert_array_less(np.abs(total / reps - 1 / 3), 5 * sd)  # floor(1024/3)/1024 would be 1/3072 off


@pytest.mark.parametrize("kw, expected", [({}, "must be 1"), ({"contribution": "clip", "max_records_per_user": 3}, "must be 3")])
def test_schema_checks_the_sensitivity_an_individual_level_table_must_have(kw, expected):
    art = json.loads(release(tiny(), ["h0"], epsilon=1.0, **kw).to_json())
    t = art["tables"][0]
    t["sensitivity"], t["scale"] = 2.0, 2.0 / t["epsilon"]
    with pytest.raises(ReleaseFormatError, match=expected) as info:
        MarginalRelease.from_dict(art)
    assert info.value.field == "tables[0].sensitivity"
