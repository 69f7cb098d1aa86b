"""Budgets in the user's units: (epsilon, delta) budgets, their display, their file, and older files."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from pgmpy_dp import PrivacyBudget, PrivateSynthesizer
from pgmpy_dp.privacy.loss import ApproxDP, PureDP
from pgmpy_dp.privacy.parameters import rho_to_epsilon_delta

DOMAIN = {"a": [0, 1], "b": [0, 1], "c": [0, 1, 2]}


def frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    return pd.DataFrame({"a": a, "b": np.where(rng.random(n) < 0.9, a, 1 - a), "c": rng.integers(0, 3, n)})


def test_an_epsilon_delta_budget_is_the_rho_of_the_one_conversion(tmp_path):
    b = PrivacyBudget.open(tmp_path / "b.json", epsilon=1.0, delta=1e-9)
    assert b.accounting == "zcdp" and b.delta == 1e-9 and b.loss == ApproxDP(1.0, 1e-9)
    assert b.total == ApproxDP(1.0, 1e-9).rho == PrivacyBudget(1.0, delta=1e-9).total
    assert PrivacyBudget.from_epsilon_delta(1.0, 1e-9).loss == ApproxDP(1.0, 1e-9)
    # a zCDP fit of the same (epsilon, delta) spends it exactly, in a later session too
    synth = PrivateSynthesizer(epsilon=1.0, delta=1e-9, method="mst", budget=b, random_state=0, show_progress=False)
    synth.fit(frame(), domain=DOMAIN)
    again = PrivacyBudget.open(tmp_path / "b.json")
    assert again.spent == again.total and again.remaining == 0 and again.loss == ApproxDP(1.0, 1e-9)
    assert again.epsilon_delta() == (rho_to_epsilon_delta(again.spent, 1e-9), 1e-9)
    assert again.epsilon_delta()[0] <= 1.0


def test_a_pure_budget_stays_pure_and_the_refusal_says_pass_delta(tmp_path):
    b = PrivacyBudget.open(tmp_path / "pure.json", epsilon=1.0)
    assert b.accounting == "pure-dp" and b.delta is None and b.loss == PureDP(1.0)
    for method in ("aim", "mst"):
        synth = PrivateSynthesizer(epsilon=1.0, delta=1e-9, method=method, budget=b, show_progress=False)
        with pytest.raises(ValueError, match=r"accounts in pure epsilon; pass delta .*PrivacyBudget\.open\(path, epsilon=1, delta=1e-9\)"):
            synth.fit(frame(), domain=DOMAIN)
    assert b.spent == 0 and not b.ledger and b.pending == ()
    with pytest.raises(TypeError, match=r"needs a delta"):
        b.epsilon_delta()


def test_display_in_the_users_units():
    b = PrivacyBudget(1.0, delta=1e-9)
    rho = b.total
    assert repr(b) == f"PrivacyBudget(epsilon=1, delta=1e-09 [rho={rho:.4g}]; spent nothing)"
    with b.charge(rho=rho / 4, label="first"):
        pass
    with b.charge(0.05, "a pure one"):
        pass
    spent = rho / 4 + 0.05**2 / 2
    text = repr(b)
    want_spent = f"spent epsilon={rho_to_epsilon_delta(spent, 1e-9):.4g} at delta=1e-09 [rho={spent:.4g}]"
    want_left = f"left epsilon={rho_to_epsilon_delta(rho - spent, 1e-9):.4g} at delta=1e-09 [rho={rho - spent:.4g}]"
    assert text == f"PrivacyBudget(epsilon=1, delta=1e-09 [rho={rho:.4g}]; {want_spent}; {want_left})" == str(b)
    # the epsilons are conversions of the rhos, not additive: spent + left exceeds the total epsilon
    spent_eps, left_eps = (float(x) for x in re.findall(r"(?:spent|left) epsilon=([0-9.]+)", text))
    assert spent_eps + left_eps > 1.0
    first, pure = (str(e) for e in b.ledger)
    assert first.endswith(f"epsilon={rho_to_epsilon_delta(rho / 4, 1e-9):.4g} at delta=1e-09 [rho={rho / 4:.4g}]  first")
    assert pure.endswith("epsilon=0.05 [rho=0.00125]  a pure one")
    assert [e.shown_at for e in b.ledger] == [1e-9, 1e-9]  # shown at the budget's delta
    assert [e.delta for e in b.ledger] == [None, None]  # neither took a delta of its own
    # pure and rho budgets show as before
    assert repr(PrivacyBudget(2.0)) == "PrivacyBudget(epsilon=2, spent=0)"
    assert repr(PrivacyBudget(rho=0.5)) == "PrivacyBudget(rho=0.5, spent=0)"


def test_the_file_records_the_users_units(tmp_path):
    path = tmp_path / "b.json"
    b = PrivacyBudget.open(path, epsilon=2.0, delta=1e-8)
    with b.charge(rho=0.01, label="q"):
        pass
    record = json.loads(path.read_text())
    assert record["version"] == 2 and record["accounting"] == "zcdp"
    assert record["declared"] == {"epsilon": 2.0, "delta": 1e-8, "rho": b.total}
    assert "delta" not in record["ledger"][0]  # a plain charge takes no delta of its own
    snapshot = PrivacyBudget.from_json(b.to_json())
    assert snapshot.loss == ApproxDP(2.0, 1e-8) and snapshot.spent == 0.01
    with pytest.raises(ValueError, match=r"holds a zcdp budget of total .* \(epsilon=2, delta=1e-08\), not zcdp .* \(epsilon=1, delta=1e-08\)"):
        PrivacyBudget.open(path, epsilon=1.0, delta=1e-8)
    with pytest.raises(ValueError, match=r"holds a zcdp budget .*, not pure-dp 2"):
        PrivacyBudget.open(path, epsilon=2.0)
    assert PrivacyBudget.open(path, epsilon=2.0, delta=1e-8).spent == 0.01


def _version_1(accounting, total, ledger):
    """A budget file as version 1 wrote it: no declared units, no delta per entry."""
    entries = [
        {"label": label, "time": "2026-01-01T00:00:00+00:00", "unit": unit, "amount": amount,
         "exact": exact, "epsilon": amount if unit == "epsilon" else None, "rho": amount if unit == "rho" else None}
        for label, unit, amount, exact in ledger
    ]
    return {"format": "pgmpy-dp/privacy-budget", "version": 1, "accounting": accounting, "total": total,
            "ledger": entries, "pending": []}


def test_files_of_the_previous_format_stay_readable(tmp_path):
    pure = tmp_path / "pure.json"
    pure.write_text(json.dumps(_version_1("pure-dp", "1/1", [("monday", "epsilon", 0.25, "1/4")])))
    b = PrivacyBudget.open(pure)
    assert (b.accounting, b.spent, b.delta, [e.label for e in b.ledger]) == ("pure-dp", 0.25, None, ["monday"])
    with b.charge(0.25, "tuesday"):
        pass
    assert PrivacyBudget.open(pure).spent == 0.5 and json.loads(pure.read_text())["version"] == 2

    rho = ApproxDP(1.0, 1e-9).rho
    zcdp = tmp_path / "zcdp.json"
    exact = f"{rho / 2!r}"
    from fractions import Fraction

    zcdp.write_text(json.dumps(_version_1("zcdp", f"{Fraction(repr(rho))}", [("half", "rho", rho / 2, str(Fraction(exact)))])))
    old = PrivacyBudget.open(zcdp)
    assert old.accounting == "zcdp" and old.delta is None and old.spent == rho / 2
    assert repr(old).startswith(f"PrivacyBudget(rho={rho:.12g}, spent=")
    # opened with the (epsilon, delta) of the same rho, it is shown in those units from then on
    b = PrivacyBudget.open(zcdp, epsilon=1.0, delta=1e-9)
    assert b.loss == ApproxDP(1.0, 1e-9) and PrivacyBudget.open(zcdp).delta == 1e-9
    assert "spent epsilon=" in repr(b) and b.spent == rho / 2
