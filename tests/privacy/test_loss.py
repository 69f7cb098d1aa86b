"""The privacy loss as a value: conversion, the one error message, repr/str, require and charge."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pandas as pd
import pytest
from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork

import pgmpy_dp
from pgmpy_dp.privacy import ApproxDP, PrivacyBudget, PureDP, ZCDP, epsilon_delta_to_rho, privacy_loss
from pgmpy_dp.privacy.loss import MissingLossError, check_keywords
from pgmpy_dp.tables import release_from_codes
from pgmpy_dp.tables.plan import release_loss

# -- values ------------------------------------------------------------------------------------------


def test_each_loss_knows_the_rho_it_implies():
    assert PureDP(1.0).rho == 0.5
    assert PureDP(0.2).rho == 0.2**2 / 2
    assert ZCDP(0.3).rho == 0.3
    assert ApproxDP(1.0, 1e-6).rho == epsilon_delta_to_rho(1.0, 1e-6)
    # the pure loss implies a smaller rho than (epsilon, delta) allows: pure DP is the stronger claim
    assert PureDP(1.0).rho > ApproxDP(1.0, 1e-6).rho


@pytest.mark.parametrize(
    "make, exc, message",
    [
        (lambda: PureDP(0), ValueError, "epsilon must be positive and finite, got 0"),
        (lambda: PureDP("1"), TypeError, "epsilon must be a positive finite number, got '1'"),
        (lambda: ZCDP(math.nan), ValueError, "rho must be positive and finite"),
        (lambda: ZCDP(True), TypeError, "rho must be a positive finite number"),
        (lambda: ApproxDP(1.0, 1.5), ValueError, r"delta must be in \(0, 1\)"),
        (lambda: ApproxDP(-1.0, 1e-6), ValueError, "epsilon must be positive"),
    ],
)
def test_values_are_checked_when_made(make, exc, message):
    with pytest.raises(exc, match=message):
        make()


def test_repr_and_str():
    assert repr(PureDP(1.0)) == "PureDP(epsilon=1.0)"
    assert repr(ZCDP(0.5)) == "ZCDP(rho=0.5)"
    assert repr(ApproxDP(1.0, 1e-9)) == "ApproxDP(epsilon=1.0, delta=1e-09)"
    assert str(PureDP(1.0)) == "epsilon=1"
    assert str(ZCDP(0.25)) == "rho=0.25"
    assert str(ApproxDP(2, 1e-6)) == "(epsilon=2, delta=1e-06)"


def test_values_are_frozen_hashable_and_compare_by_value():
    assert PureDP(1) == PureDP(1.0) and isinstance(PureDP(1).epsilon, float)
    assert len({ZCDP(0.5), ZCDP(0.5), PureDP(0.5)}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        ZCDP(0.5).rho = 1.0
    assert PureDP(1.0).charge_kwargs() == {"epsilon": 1.0}
    assert ZCDP(0.5).charge_kwargs() == {"rho": 0.5}
    assert ApproxDP(1.0, 1e-6).charge_kwargs() == {"rho": ApproxDP(1.0, 1e-6).rho}


# -- the keywords become a value once -----------------------------------------------------------------


def test_privacy_loss_from_keywords():
    assert privacy_loss(epsilon=1.0) == PureDP(1.0)
    assert privacy_loss(rho=0.5) == ZCDP(0.5)
    assert privacy_loss(epsilon=1.0, delta=1e-9) == ApproxDP(1.0, 1e-9)
    value = ApproxDP(1.0, 1e-9)
    assert privacy_loss(value) is value


@pytest.mark.parametrize(
    "kwargs, exc, got",
    [
        ({}, MissingLossError, "got neither"),
        ({"epsilon": 1.0, "rho": 0.5}, ValueError, "got both epsilon=1.0 and rho=0.5"),
        ({"rho": 0.5, "delta": 1e-9}, ValueError, r"got rho=0.5 with delta=1e-09 \(delta only goes with epsilon\)"),
    ],
)
def test_the_one_error_message(kwargs, exc, got):
    with pytest.raises(exc, match=rf"^PrivateThing takes exactly one of epsilon= \(with an optional delta=\) or rho=, {got}; e\.g\. rho=1$"):
        privacy_loss(**kwargs, who="PrivateThing", example="rho=1")


def test_a_missing_loss_is_both_a_type_and_a_value_error():
    # a missing argument (TypeError, as Python says) and a bad combination (ValueError, as the other cases)
    with pytest.raises(TypeError):
        privacy_loss()
    with pytest.raises(ValueError):
        privacy_loss()
    with pytest.raises(MissingLossError, match=r"exactly one of epsilon= or rho=, got neither"):
        check_keywords(with_delta=False)


def _frame(n=60):
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.random(n) < 0.5, "b": rng.random(n) < 0.3})


DOMAIN = {"a": [False, True], "b": [False, True]}


def _bn(**kw):
    est = pgmpy_dp.DiscretePrivateMLE(domain=DOMAIN, **kw)
    return DiscreteBayesianNetwork([("a", "b")]).fit(_frame(), estimator=est)


def _mn(**kw):
    est = pgmpy_dp.PrivateMarkovEstimator(method="naive-mle", show_progress=False)
    return est.fit(DiscreteMarkovNetwork([("a", "b")]), _frame(), domain=DOMAIN, **kw)


def _ising(**kw):
    return pgmpy_dp.PrivateIsingEstimator().fit(_frame(), domain=DOMAIN, **kw)


def _codes(**kw):
    dom = pgmpy_dp.Domain(DOMAIN)
    return release_from_codes(dom.encode(_frame()), dom, [("a", "b")], **kw)


#: every public call that takes the loss keywords, each with the same error
CALLS = {
    "PrivacyBudget": lambda **kw: PrivacyBudget(**kw),
    "PrivacyBudget.charge": lambda **kw: PrivacyBudget(rho=1.0).charge(**kw).__enter__(),
    "df.dp.release": lambda **kw: _frame().dp.release([("a", "b")], domain=DOMAIN, **kw),
    "release_from_codes": _codes,
    "DiscretePrivateMLE": _bn,
    "PrivateMarkovEstimator.fit": _mn,
    "PrivateIsingEstimator.fit": _ising,
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS)
@pytest.mark.parametrize("kwargs, got", [({}, "neither"), ({"epsilon": 1.0, "rho": 0.5}, "both epsilon=1.0 and rho=0.5")])
def test_every_public_call_raises_the_one_message(call, kwargs, got):
    exc = MissingLossError if got == "neither" else ValueError
    with pytest.raises(exc, match=rf" takes exactly one of epsilon= (\(with an optional delta=\) )?or rho=, got {got}; e\.g\. "):
        call(**kwargs)


# -- budgets -------------------------------------------------------------------------------------------


def test_require_refuses_what_a_pure_budget_cannot_account():
    pure, zcdp = PrivacyBudget(1.0), PrivacyBudget(rho=1.0)
    pure.require(PureDP(5.0))  # require checks the kind, not the amount (charge checks that)
    for loss in (ZCDP(0.5), ApproxDP(1.0, 1e-6)):
        zcdp.require(loss)
        with pytest.raises(ValueError, match=rf"^MyFit spends rho \(zCDP\), here {re.escape(str(loss))}, but this budget accounts in pure epsilon; pass delta for an \(epsilon, delta\) budget that zCDP fits can charge, e\.g\. PrivacyBudget\(1, delta=1e-9\)"):
            pure.require(loss, who="MyFit")
    zcdp.require(PureDP(1.0))
    with pytest.raises(TypeError, match="loss must be a PureDP, ZCDP or ApproxDP value, got float"):
        zcdp.require(0.5)
    assert pure.spent == 0 and zcdp.spent == 0


def test_charging_a_value_is_charging_its_keywords():
    by_value, by_keyword = PrivacyBudget(rho=1.0), PrivacyBudget(rho=1.0)
    for loss, kwargs in ((PureDP(0.5), {"epsilon": 0.5}), (ZCDP(0.1), {"rho": 0.1})):
        with by_value.charge(loss, label="q"):
            pass
        with by_keyword.charge(label="q", **kwargs):
            pass
    def facts(budget):
        return [(e.epsilon, e.rho, e.label, e.unit) for e in budget.ledger]

    assert facts(by_value) == facts(by_keyword) and by_value.spent == by_keyword.spent == 0.225
    approx = ApproxDP(1.0, 1e-6)
    with by_value.charge(approx, label="approx"):
        pass
    assert by_value.ledger[-1].rho == approx.rho
    pure = PrivacyBudget(1.0)
    with pytest.raises(ValueError, match=r"PrivacyBudget\(rho=...\)"):
        with pure.charge(ZCDP(0.1), label="refused"):
            pass
    assert pure.spent == 0 and pure.pending == ()


def test_a_budget_from_a_value():
    assert PrivacyBudget(PureDP(2.0)).accounting == "pure-dp"
    assert PrivacyBudget(ZCDP(0.5)).total == 0.5
    assert PrivacyBudget(ApproxDP(1.0, 1e-6)).total == PrivacyBudget.from_epsilon_delta(1.0, 1e-6).total


# -- releases take loss= ---------------------------------------------------------------------------------


def _release(**kw):
    return _frame().dp.release([("a", "b"), ("b",)], domain=DOMAIN, random_state=3, **kw)


def _same(r1, r2):
    assert [t.attrs for t in r1] == [t.attrs for t in r2]
    for t1, t2 in zip(r1, r2):
        assert np.array_equal(t1.values, t2.values) and t1.scale == t2.scale
        assert (t1.epsilon, t1.rho, t1.mechanism) == (t2.epsilon, t2.rho, t2.mechanism)


@pytest.mark.parametrize(
    "loss, kwargs",
    [
        (PureDP(1.0), {"epsilon": 1.0}),
        (ZCDP(0.5), {"rho": 0.5}),
        ([PureDP(0.3), PureDP(0.7)], {"epsilon": [0.3, 0.7]}),
        ([ZCDP(0.2), ZCDP(0.1)], {"rho": [0.2, 0.1]}),
        (ApproxDP(1.0, 1e-6), {"rho": ApproxDP(1.0, 1e-6).rho}),
    ],
    ids=["pure", "zcdp", "pure per table", "zcdp per table", "approx is gaussian at its rho"],
)
def test_a_release_of_a_value_equals_the_release_of_its_keywords(loss, kwargs):
    a, b = _release(loss=loss), _release(**kwargs)
    _same(a, b)
    assert a.loss == b.loss


def test_release_loss_refusals():
    with pytest.raises(ValueError, match="not both"):
        release_loss(epsilon=1.0, loss=PureDP(1.0))
    for bad in ([PureDP(1.0), 0.5], [], 1.0):
        with pytest.raises(TypeError, match="loss= must be a PureDP, ZCDP or ApproxDP value, or a non-empty sequence"):
            release_loss(loss=bad)
    with pytest.raises(ValueError, match="mixes pure-DP and zCDP values"):
        _release(loss=[PureDP(1.0), ZCDP(0.5)])
    with pytest.raises(ValueError, match="got 3 per-table epsilons for 2 tables"):
        _release(loss=[PureDP(1.0)] * 3)


def test_the_release_states_its_loss():
    assert _release(epsilon=[0.25, 0.5]).loss == PureDP(0.75)
    assert _release(rho=0.5).loss == ZCDP(0.5)


# -- release_from_codes: the loss and the unit as values, the old keywords as shorthands -------------------


def _user_codes():
    rng = np.random.default_rng(1)
    dom = pgmpy_dp.Domain({"x": [0, 1, 2], "y": [0, 1]})
    codes = {"x": rng.integers(0, 3, 200), "y": rng.integers(0, 2, 200)}
    return dom, codes, rng.integers(0, 40, 200)


@pytest.mark.parametrize(
    "unit, keywords",
    [
        (pgmpy_dp.UserLevel("user"), dict(privacy_unit="user")),
        (pgmpy_dp.UserLevel("user", max_records=2, contribution="clip"),
         dict(privacy_unit="user", contribution="clip", max_records_per_user=2)),
        (None, dict(contribution="clip", max_records_per_user=3)),
    ],
    ids=["normalize", "clip", "unnamed individuals"],
)
def test_release_from_codes_value_form_equals_the_keywords(unit, keywords):
    dom, codes, users = _user_codes()
    if unit is None:  # units= without a name: the keywords still say how rows are bounded
        unit = pgmpy_dp.privacy.UserLevel("anyone", max_records=3, contribution="clip")
    by_value = release_from_codes(codes, dom, [("x", "y"), ("x",)], PureDP(2.0), random_state=5, unit=unit, units=users)
    by_keyword = release_from_codes(codes, dom, [("x", "y"), ("x",)], 2.0, random_state=5, units=users, **keywords)
    _same(by_value, by_keyword)
    assert by_value.privacy_unit["contribution"] == by_keyword.privacy_unit["contribution"]


def test_release_from_codes_keeps_its_old_keywords():
    dom, codes, users = _user_codes()
    old = release_from_codes(codes, dom, [("x",)], rho=0.5, random_state=0, label="old form")
    new = release_from_codes(codes, dom, [("x",)], ZCDP(0.5), random_state=0, label="old form")
    _same(old, new)
    _same(release_from_codes(codes, dom, [("x",)], epsilon=[1.0], random_state=0),
          release_from_codes(codes, dom, [("x",)], [PureDP(1.0)], random_state=0))


@pytest.mark.parametrize(
    "kwargs, exc, message",
    [
        (dict(epsilon=1.0, colour="red"), TypeError, "unexpected keyword argument 'colour'"),
        (dict(loss=1.0, epsilon=1.0), TypeError, "multiple values for argument 'epsilon'"),
        (dict(epsilon=1.0, unit=pgmpy_dp.UserLevel("u")), ValueError, "unit= names the individual-level unit"),
        (dict(epsilon=1.0, privacy_unit="u"), ValueError, "privacy_unit names the individual-level unit"),
        (dict(epsilon=1.0, unit=pgmpy_dp.UserLevel("u"), privacy_unit="u", units=np.zeros(200, int)), ValueError,
         "give unit= or its shorthand keywords"),
    ],
)
def test_release_from_codes_refuses_mixed_forms(kwargs, exc, message):
    dom, codes, _ = _user_codes()
    budget = PrivacyBudget(10.0)
    with pytest.raises(exc, match=message):
        release_from_codes(codes, dom, [("x",)], budget=budget, **kwargs)
    assert budget.spent == 0


def test_the_allocation_splits_a_loss_value_in_its_own_unit():
    from pgmpy_dp.estimators.allocation import error_optimal_allocation

    cells = [2, 8, 18]
    assert np.array_equal(error_optimal_allocation(cells, PureDP(1.0)), error_optimal_allocation(cells, 1.0))
    assert np.array_equal(error_optimal_allocation(cells, ZCDP(0.5)), error_optimal_allocation(cells, 0.5, noise="gaussian"))
    approx = ApproxDP(1.0, 1e-6)
    assert np.array_equal(error_optimal_allocation(cells, approx), error_optimal_allocation(cells, approx.rho, noise="gaussian"))
    with pytest.raises(ValueError, match="disagrees with the loss"):
        error_optimal_allocation(cells, PureDP(1.0), noise="gaussian")
