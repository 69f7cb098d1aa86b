"""The methods' protocol: check from public facts (nothing spent), run with the charge, keep what was paid for."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from pgmpy_dp import CellLimitError, Domain, PrivacyBudget, PrivateSynthesizer
from pgmpy_dp.privacy.loss import ApproxDP, PureDP, ZCDP
from pgmpy_dp.synthesis import METHODS, aim, mst, privbayes
from pgmpy_dp.synthesis.method import Measurements, Method, Plan

DOMAIN = {"a": [0, 1], "b": [0, 1], "c": [0, 1, 2]}


def frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    return pd.DataFrame({"a": a, "b": np.where(rng.random(n) < 0.9, a, 1 - a), "c": rng.integers(0, 3, n)})


def synth(**kw):
    return PrivateSynthesizer(random_state=0, show_progress=False, **kw)


def test_the_registry_names_one_method_object_each():
    assert list(METHODS) == ["aim", "mst", "privbayes", "auto"]
    assert all(isinstance(m, Method) and m.name == name for name, m in METHODS.items())


@pytest.mark.parametrize("name, loss", [("aim", ZCDP(1.0)), ("mst", ApproxDP(1.0, 1e-6)), ("privbayes", PureDP(1.0))])
def test_check_reads_public_facts_and_plans_the_loss(name, loss):
    plan = METHODS[name].check(Domain(DOMAIN), loss, **({"workload": None, "max_model_size": 80.0} if name == "aim" else {}))
    assert isinstance(plan, Plan) and plan.loss == loss and plan.domain == Domain(DOMAIN)


def test_the_recorder_commits_once_at_the_first_noisy_output():
    commits = []
    rec = Measurements(on_noise=lambda: commits.append(1))
    rec.selected.append(("a", ()))  # a data-free choice: no noise yet
    assert commits == [] and not rec.noisy
    rec.release("r1")
    rec.select(("a", "b"))
    rec.release("r2")
    assert commits == [1] and rec.releases == ["r1", "r2"] and rec.selected == [("a", ()), ("a", "b")]


def test_the_loss_is_a_value_and_the_old_attributes_stay():
    s = synth(epsilon=1.0, delta=1e-6, method="mst").fit(frame(), domain=DOMAIN)
    assert s.loss_ == ApproxDP(1.0, 1e-6) and s.rho_ == ApproxDP(1.0, 1e-6).rho and s.epsilon_ is None
    s = synth(epsilon=1.0, method="privbayes").fit(frame(), domain=DOMAIN)
    assert s.loss_ == PureDP(1.0) and (s.rho_, s.epsilon_) == (None, 1.0)


def test_a_zcdp_loss_on_a_pure_budget_is_refused_before_charging():
    budget = PrivacyBudget(10.0)
    with pytest.raises(ValueError, match="accounts in pure epsilon"):
        synth(rho=1.0, method="privbayes", budget=budget).fit(frame(), domain=DOMAIN)
    assert budget.spent == 0 and not budget.ledger


def _fail(exc):
    def broken(*args, **kwargs):
        raise exc

    return broken


def _warn(*args, **kwargs):
    warnings.warn("a warning the caller turned into an error", RuntimeWarning)


@pytest.mark.parametrize("failure", ["error", "interrupt", "warning"])
def test_privbayes_failing_after_its_noise_keeps_the_tables_and_families(monkeypatch, failure):
    """A failure in the CPD fit (an error, Ctrl-C, a warning turned into an error): the charge
    stays, and so do the noisy family tables and the families it paid for."""
    fit = {"error": _fail(RuntimeError("boom in the CPD fit")), "interrupt": _fail(KeyboardInterrupt()),
           "warning": _warn}[failure]
    monkeypatch.setattr(privbayes.DiscretePrivateMLE, "fit_release", fit)
    budget = PrivacyBudget(10.0)
    s = synth(epsilon=1.0, method="privbayes", budget=budget)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises((RuntimeError, KeyboardInterrupt, RuntimeWarning)):
            s.fit(frame(), domain=DOMAIN)
    assert budget.spent == 1.0 and "failed after noise" in budget.ledger[0].label
    assert len(s.releases_) == 1
    (release,) = s.releases_
    assert [t.attrs for t in release.tables] == [(x, *parents) for x, parents in s.selected_]
    assert sorted(x for x, _ in s.selected_) == sorted(DOMAIN)
    assert math.isclose(release.epsilon, 1.0 - 0.01 - 0.3, rel_tol=1e-9)  # the tables' share of the split


def test_privbayes_failing_in_its_selection_keeps_the_charge_and_the_families_drawn(monkeypatch):
    real = privbayes.exponential_mechanism
    calls = []

    def second_fails(*args, **kwargs):
        if calls:
            raise KeyboardInterrupt
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(privbayes, "exponential_mechanism", second_fails)
    budget = PrivacyBudget(10.0)
    s = synth(epsilon=1.0, method="privbayes", budget=budget)
    with pytest.raises(KeyboardInterrupt):
        s.fit(frame(), domain=DOMAIN)
    assert budget.spent == 1.0 and s.releases_ == [] and len(s.selected_) == 2  # the first node, one drawn


@pytest.mark.parametrize("method", ["mst", "aim"])
def test_a_failure_after_noise_keeps_the_selection(monkeypatch, method):
    monkeypatch.setattr(mst if method == "mst" else aim, "fit_final_model", _fail(RuntimeError("boom")))
    budget = PrivacyBudget(rho=10.0)
    s = synth(rho=1.0, method=method, budget=budget)
    with pytest.raises(RuntimeError, match="boom"):
        s.fit(frame(), domain=DOMAIN)
    assert budget.spent == 1.0
    assert s.selected_ and all(isinstance(c, tuple) for c in s.selected_)
    if method == "mst":  # a spanning tree of three columns, and its 2-way tables released
        assert len(s.selected_) == 2 and [t.attrs for t in s.releases_[1].tables] == s.selected_
    else:  # one release per round after the 1-way one
        assert len(s.releases_) == len(s.selected_) + 1


def test_mst_refuses_a_pair_over_the_cell_limit_before_charging():
    """Two 3,200-state columns: their 2-way table (10,240,000 cells) could never be released, so
    the 1-way release and the tree selection must not be paid for."""
    df = pd.DataFrame({"x": np.arange(200) % 3200, "y": np.arange(200) % 7, "z": np.arange(200) % 2})
    domain = {"x": list(range(3200)), "y": list(range(3200)), "z": [0, 1]}
    budget = PrivacyBudget(rho=10.0)
    s = synth(rho=10.0, method="mst", budget=budget)
    with pytest.raises(CellLimitError, match=r"columns 'x' \(3,200 states\) and 'y' \(3,200 states\) make 10,240,000"):
        s.fit(df, domain=domain)
    assert budget.spent == 0 and not budget.ledger and not hasattr(s, "releases_")


def test_aim_refuses_a_workload_set_over_the_cell_limit_before_charging():
    df = pd.DataFrame({"x": np.arange(200) % 3200, "y": np.arange(200) % 7, "z": np.arange(200) % 2})
    domain = {"x": list(range(3200)), "y": list(range(3200)), "z": [0, 1]}
    budget = PrivacyBudget(rho=10.0)
    s = synth(rho=10.0, method="aim", budget=budget, workload=[("x", "y"), ("y", "z")], max_model_size=200)
    with pytest.raises(CellLimitError, match=r"workload entry \('x', 'y'\) has 10,240,000 cells"):
        s.fit(df, domain=domain)
    assert budget.spent == 0 and not budget.ledger
