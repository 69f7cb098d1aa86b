"""zCDP accounting: conversions against closed forms, composition, strict caps, copies, persistence."""

from __future__ import annotations

import copy
import json
import math
import pickle
import subprocess
import sys
import textwrap

import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import norm

from pgmpy_dp.privacy import (
    BudgetExceededError,
    PrivacyBudget,
    check_delta,
    check_rho,
    epsilon_delta_to_rho,
    rho_to_epsilon_delta,
)

GRID = [(rho, delta) for rho in (1e-4, 0.01, 0.1, 0.5, 2.0, 10.0) for delta in (1e-2, 1e-6, 1e-10)]


def _cks_delta(rho: float, eps: float) -> float:
    """CKS 2020 Proposition 12 written as delta(eps): inf over alpha of exp((a-1)(a rho - eps)) / (a-1) (1-1/a)^a."""

    def log_delta(log_am1):
        a = 1.0 + math.exp(log_am1)
        return (a - 1) * (a * rho - eps) - math.log(a - 1) + a * math.log1p(-1 / a)

    res = minimize_scalar(log_delta, bounds=(-20, 12), method="bounded", options={"xatol": 1e-12})
    return math.exp(min(res.fun, 0.0))


def _gaussian_delta(mu: float, eps: float) -> float:
    """Exact privacy profile of the Gaussian mechanism with sensitivity / sigma = mu (Balle and Wang 2018)."""
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("rho, delta", GRID)
def test_conversion_against_closed_forms(rho, delta):
    eps = rho_to_epsilon_delta(rho, delta)
    # never worse than the classical bound (Bun and Steinke 2016, Proposition 1.3)
    assert eps <= rho + 2 * math.sqrt(rho * math.log(1 / delta)) + 1e-12
    if eps == 0:  # rho so small that the distributions are within total variation delta
        assert _cks_delta(rho, 0.0) <= delta
        return
    # the same conversion written as delta(eps) gives back delta (the minimiser is found, not approximated)
    assert _cks_delta(rho, eps) == pytest.approx(delta, rel=1e-6)
    # it is a valid (not too small) epsilon: a Gaussian mechanism with exactly this rho
    # (sigma = 1 / sqrt(2 rho), sensitivity 1) has its true delta at eps below delta
    assert _gaussian_delta(math.sqrt(2 * rho), eps) <= delta * (1 + 1e-9)
    # and the inverse: the largest rho whose conversion fits (eps, delta)
    assert epsilon_delta_to_rho(eps, delta) == pytest.approx(rho, rel=1e-9)
    assert rho_to_epsilon_delta(epsilon_delta_to_rho(eps, delta), delta) <= eps


def test_conversion_matches_opendp():
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    for sigma, delta in [(1.0, 1e-6), (3.0, 1e-3), (0.4, 1e-9)]:
        m = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=sigma)
        curve = dp.c.make_zCDP_to_approxDP(m).map(1.0)
        assert rho_to_epsilon_delta(m.map(1.0), delta) == pytest.approx(curve.epsilon(delta), rel=1e-9)


def test_zcdp_composition_and_epsilon_charges():
    b = PrivacyBudget(rho=1.0)
    assert b.accounting == "zcdp" and b.unit == "rho" and b.total == 1.0
    with b.charge(rho=0.1, label="gauss"):
        pass
    with b.charge(0.4, "laplace"):  # pure 0.4-DP costs 0.4^2/2 = 0.08 in rho
        pass
    assert b.spent == 0.18 and b.remaining == 0.82
    assert [(e.unit, e.epsilon, e.rho, e.amount) for e in b.ledger] == [
        ("rho", None, 0.1, 0.1),
        ("rho", 0.4, 0.08, 0.08),
    ]
    assert b.epsilon_delta(1e-6) == (rho_to_epsilon_delta(0.18, 1e-6), 1e-6)
    with pytest.raises(BudgetExceededError, match="rho"):
        with b.charge(1.3, "too much"):  # 0.845 > 0.82
            pass
    assert b.spent == 0.18


def test_from_epsilon_delta():
    b = PrivacyBudget.from_epsilon_delta(2.0, 1e-5)
    assert b.accounting == "zcdp"
    assert rho_to_epsilon_delta(b.total, 1e-5) == pytest.approx(2.0, rel=1e-9)
    assert rho_to_epsilon_delta(b.total, 1e-5) <= 2.0
    with b.charge(rho=b.total, label="everything"):
        pass
    assert b.epsilon_delta(1e-5)[0] <= 2.0


def test_pure_budget_epsilon_delta_and_rho_refused():
    b = PrivacyBudget(1.0)
    with b.charge(0.3, "q"):
        pass
    assert b.epsilon_delta(1e-9) == (0.3, 1e-9)
    with pytest.raises(ValueError, match=r"PrivacyBudget\(rho=...\)"):
        with b.charge(rho=0.1, label="gauss"):
            pass
    assert b.spent == 0.3 and len(b.ledger) == 1 and b.pending == ()


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({}, TypeError, "exactly one of epsilon"),
        ({"epsilon": 1.0, "rho": 1.0}, ValueError, "both epsilon=1.0 and rho=1.0"),
        ({"rho": 0}, ValueError, "rho must be positive and finite"),
        ({"rho": -1.0}, ValueError, "rho must be positive and finite"),
        ({"rho": math.inf}, ValueError, "rho must be positive and finite"),
        ({"rho": math.nan}, ValueError, "rho must be positive and finite"),
        ({"rho": "1"}, TypeError, "rho must be a positive finite number"),
    ],
)
def test_bad_budget_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        PrivacyBudget(**kwargs)


@pytest.mark.parametrize("delta", [0, 1, -1e-6, 1.5, math.nan, math.inf])
def test_bad_delta(delta):
    b = PrivacyBudget(rho=1.0)
    with pytest.raises(ValueError, match="delta must be in"):
        b.epsilon_delta(delta)
    with pytest.raises(ValueError, match="delta must be in"):
        PrivacyBudget.from_epsilon_delta(1.0, delta)
    with pytest.raises(ValueError, match="delta must be in"):
        rho_to_epsilon_delta(0.5, delta)
    with pytest.raises(TypeError):
        check_delta("0.1")
    assert check_rho(2) == 2.0


@pytest.mark.parametrize("kwargs", [{}, {"epsilon": 0.1, "rho": 0.1}, {"rho": -0.1}, {"epsilon": math.inf}])
def test_bad_charges_spend_nothing(kwargs):
    b = PrivacyBudget(rho=1.0)
    with pytest.raises((TypeError, ValueError)):
        with b.charge(label="bad", **kwargs):
            pass
    assert b.spent == 0 and b.ledger == () and b.remaining == 1.0


# -- strict cap and exact sums ---------------------------------------------------------------------


def test_cap_is_strict_and_sums_are_exact():
    b = PrivacyBudget(1.0)
    for i in range(10):
        with b.charge(0.1, f"q{i}"):
            pass
    assert b.spent == 1.0 and b.remaining == 0.0
    for tiny in (1e-9, 1e-15, 5e-324):
        with pytest.raises(BudgetExceededError):
            with b.charge(tiny, "one too many"):
                pass
    assert b.spent == 1.0 and len(b.ledger) == 10


def test_spent_displays_cleanly():
    b = PrivacyBudget(1.0)
    with b.charge(0.1, "a"):
        pass
    with b.charge(0.2, "b"):
        pass
    assert 0.1 + 0.2 != 0.3  # what a float sum would show
    assert b.spent == 0.3 and b.remaining == 0.7
    assert repr(b) == "PrivacyBudget(epsilon=1, spent=0.3)"


def test_strict_cap_in_zcdp():
    b = PrivacyBudget(rho=0.5)
    with b.charge(1.0, "eps 1 costs exactly 0.5"):
        pass
    assert b.spent == 0.5 and b.remaining == 0.0
    with pytest.raises(BudgetExceededError):
        with b.charge(rho=1e-12, label="more"):
            pass


# -- copies ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("duplicate", [copy.copy, copy.deepcopy], ids=["copy", "deepcopy"])
def test_copies_share_reservations_and_ledger(duplicate):
    b = PrivacyBudget(1.0)
    c = duplicate(b)
    with b.charge(0.6, "in flight"):
        with pytest.raises(BudgetExceededError):
            with c.charge(0.6, "would overspend"):
                pass
        assert c.remaining == pytest.approx(0.4)
    assert c.spent == b.spent == 0.6 and c.ledger == b.ledger


def test_in_memory_budget_refuses_pickling():
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(PrivacyBudget(1.0))


# -- persistence -------------------------------------------------------------------------------------


def test_json_round_trip_keeps_ledger_and_accounting():
    b = PrivacyBudget(rho=1.0)
    with b.charge(rho=0.25, label="monday"):
        pass
    with b.charge(0.5, "tuesday"):
        pass
    c = PrivacyBudget.from_json(b.to_json())
    assert (c.accounting, c.total, c.spent) == ("zcdp", 1.0, 0.375)
    assert [(e.label, e.epsilon, e.rho, e.unit, e.time) for e in c.ledger] == [
        (e.label, e.epsilon, e.rho, e.unit, e.time) for e in b.ledger
    ]
    with pytest.raises(ValueError, match="not a valid pgmpy-dp privacy budget"):
        PrivacyBudget.from_json('{"format": "something else"}')


def test_open_persists_across_sessions(tmp_path):
    path = tmp_path / "budget.json"
    with pytest.raises(FileNotFoundError, match="create one"):
        PrivacyBudget.open(path)
    b = PrivacyBudget.open(path, 1.0)
    with b.charge(0.25, "session 1"):
        pass
    again = PrivacyBudget.open(path)
    assert again.spent == 0.25 and again.total == 1.0 and [e.label for e in again.ledger] == ["session 1"]
    assert PrivacyBudget.open(path, 1.0).spent == 0.25  # the same total is accepted
    with pytest.raises(ValueError, match="holds a pure-dp budget of total 1"):
        PrivacyBudget.open(path, rho=1.0)
    # both handles see each other's charges: the file is the account
    with again.charge(0.5, "session 2"):
        pass
    assert b.spent == 0.75
    with pytest.raises(BudgetExceededError):
        with b.charge(0.3, "too much"):
            pass
    # a file-backed budget pickles as a reference to its file
    assert pickle.loads(pickle.dumps(b)).spent == 0.75
    assert json.loads(path.read_text())["pending"] == []


_WORKER = textwrap.dedent(
    """
    import sys
    from pgmpy_dp.privacy import BudgetExceededError, PrivacyBudget
    b = PrivacyBudget.open(sys.argv[1])
    ok = 0
    for i in range(int(sys.argv[2])):
        try:
            with b.charge(0.05, f"{sys.argv[3]}-{i}"):
                pass
            ok += 1
        except BudgetExceededError:
            pass
    print(ok)
    """
)


@pytest.mark.slow
def test_two_processes_never_overspend_a_file_budget(tmp_path):
    path = tmp_path / "shared.json"
    PrivacyBudget.open(path, 1.0)
    procs = [
        subprocess.Popen([sys.executable, "-c", _WORKER, str(path), "30", name], stdout=subprocess.PIPE, text=True)
        for name in ("p1", "p2")
    ]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    counts = [int(o) for o in outs]
    b = PrivacyBudget.open(path)
    assert sum(counts) == 20 == len(b.ledger)  # 20 x 0.05 = 1.0 exactly, the other 40 refused
    assert b.spent == 1.0 and b.remaining == 0.0
    assert {e.label.split("-")[0] for e in b.ledger} <= {"p1", "p2"}


@pytest.mark.slow  # a fresh interpreter or a Monte Carlo estimate: seconds of CPU each
def test_crash_mid_charge_stays_reserved(tmp_path):
    path = tmp_path / "crash.json"
    PrivacyBudget.open(path, 1.0)
    code = textwrap.dedent(
        f"""
        import os
        from pgmpy_dp.privacy import PrivacyBudget
        b = PrivacyBudget.open({str(path)!r})
        with b.charge(0.4, "killed while drawing noise"):
            os._exit(3)
        """
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 3
    b = PrivacyBudget.open(path)
    # noise may have been drawn: the dead process's reservation counts as spent everywhere
    assert b.spent == 0.4 and b.remaining == 0.6 and b.pending == ()
    assert [(e.epsilon, e.label.startswith("killed while drawing noise")) for e in b.ledger] == [(0.4, True)]
    assert b.epsilon_delta(1e-6) == (0.4, 1e-6)
    with b.charge(0.6, "the rest"):
        pass
    assert b.spent == 1.0 and b.remaining == 0.0 and b.epsilon_delta(1e-6)[0] == 1.0
    assert PrivacyBudget.from_json(path).spent == 1.0


def test_a_snapshot_counts_its_in_flight_charges_as_spent():
    b = PrivacyBudget(rho=1.0)
    with b.charge(rho=0.25, label="in flight"):
        snapshot = PrivacyBudget.from_json(b.to_json())
    assert snapshot.spent == 0.25 and snapshot.remaining == 0.75 and snapshot.pending == ()
    assert snapshot.epsilon_delta(1e-6)[0] > 0 and len(snapshot.ledger) == 1


def test_a_reservation_taken_for_dead_is_not_counted_twice(tmp_path, monkeypatch):
    # if another process wrongly settles a live reservation (a reused pid, say), finishing it must not
    # add it again: the file would then hold more than its total
    import pgmpy_dp.privacy.ledger as ledger_module

    path = tmp_path / "b.json"
    b = PrivacyBudget.open(path, 1.0)
    with b.charge(0.6, "live"):
        monkeypatch.setattr(ledger_module.os, "getpid", lambda: -1)  # the reservation now looks foreign
        monkeypatch.setattr(ledger_module, "_process_alive", lambda pid: False)
        assert PrivacyBudget.open(path).spent == 0.6  # settled as spent by "another process"
        monkeypatch.undo()
    assert b.spent == 0.6 and len(b.ledger) == 1 and b.remaining == pytest.approx(0.4)
