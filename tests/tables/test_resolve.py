"""Resolving a schema's open parts (pgmpy_dp.tables.resolve) and its wiring in PrivateSynthesizer.fit.

The declarations ``discover``, ``bounds`` and ``integer`` are read as attributes of the domain; a Domain
subclass stands in for a schema that declares them.
"""

import numpy as np
import pandas as pd
import pytest

from pgmpy_dp import Domain, PrivacyBudget
from pgmpy_dp.privacy import BudgetExceededError, DomainError
from pgmpy_dp.privacy.loss import ZCDP, ApproxDP, PureDP
from pgmpy_dp.privacy.parameters import epsilon_delta_to_rho
from pgmpy_dp.synthesis import synthesizer as synthesizer_module
from pgmpy_dp.synthesis.synthesizer import PrivateSynthesizer
from pgmpy_dp.tables import resolve
from pgmpy_dp.tables.resolve import plan_schema, recode, resolve_domain


def declared(states=None, discover=(), bounds=None, integer=()):
    """A stand-in whose declarations may be inconsistent (class attributes shadow Domain's properties)."""
    class Declared(Domain):
        pass

    Declared.discover, Declared.bounds, Declared.integer = tuple(discover), dict(bounds or {}), tuple(integer)
    return Declared(states or {})


def frame(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "job": rng.choice(["nurse", "clerk", "pilot", "astronaut"], n, p=[0.5, 0.3, 0.1995, 0.0005]),
        "age": rng.integers(17, 91, n),
        "sex": rng.choice(["F", "M"], n),
    })


DOMAIN = declared({"sex": ["F", "M"]}, discover={"job"}, bounds={"age": (17, 90)}, integer={"age"})


def test_the_loss_splits_into_the_schemas_share_and_the_rest():
    plan = plan_schema(frame(10), DOMAIN, ApproxDP(1.0, 1e-9), 0.1)
    rho = epsilon_delta_to_rho(1.0, 1e-9 - plan.delta)
    assert plan.delta == pytest.approx(1e-10)
    assert plan.loss.rho == pytest.approx(0.1 * rho) and plan.method_loss.rho == pytest.approx(0.9 * rho)
    assert plan.loss.rho + plan.method_loss.rho <= rho
    # bins only: no delta taken, the rho of (epsilon, delta) split
    bins_only = plan_schema(frame(10), declared(bounds={"age": (17, 90)}), ApproxDP(1.0, 1e-9), 0.25)
    assert bins_only.delta == 0 and bins_only.loss.rho == pytest.approx(0.25 * ApproxDP(1.0, 1e-9).rho)
    pure = plan_schema(frame(10), declared(bounds={"age": (17, 90)}), PureDP(2.0), 0.5)
    assert pure.loss == PureDP(1.0) and pure.method_loss.epsilon <= 1.0


def test_without_a_request_nothing_is_planned_or_read(monkeypatch):
    assert plan_schema(frame(10), {"job": ["nurse"]}, ApproxDP(1.0, 1e-9), 0.1) is None
    assert plan_schema(frame(10), Domain({"sex": ["F", "M"]}), ApproxDP(1.0, 1e-9), 0.1) is None

    def fail(*args, **kwargs):
        raise AssertionError("a mechanism read the data")

    monkeypatch.setattr(resolve, "discover_keys", fail)
    monkeypatch.setattr(resolve, "private_bin_edges", fail)
    df = frame(500).assign(job=lambda d: d.job.astype(pd.CategoricalDtype(["nurse", "clerk", "pilot", "astronaut"])))
    synth = PrivateSynthesizer(rho=1.0, method="mst", random_state=0, show_progress=False)
    synth.fit(df, domain={"age": list(range(17, 91)), "sex": ["F", "M"]})
    assert synth.schema_release_ is None


def test_every_bad_request_is_named_in_one_error():
    bad = declared(discover={"job", "nope"}, bounds={"job": (0, 1), "sex": (0, 1), "age": (90, 17)},
                   integer={"height"})
    with pytest.raises(DomainError) as err:
        plan_schema(frame(10), bad, ApproxDP(1.0, 1e-9), 0.1)
    msg = str(err.value)
    for part in ("'nope' is not a column", "'job' is asked both", "'height' is declared integer",
                 "bounds['age']", "'sex' has bounds but dtype"):
        assert part in msg, msg


@pytest.mark.parametrize("share", [0, 1, -0.1, "0.1", True])
def test_a_bad_share_is_named(share):
    with pytest.raises(ValueError, match="schema_share"):
        plan_schema(frame(10), DOMAIN, ApproxDP(1.0, 1e-9), share)


@pytest.mark.parametrize("kwargs", [{"rho": 0.5}, {"epsilon": 1.0}])
def test_key_discovery_without_delta_is_refused_before_any_charge(kwargs):
    budget = PrivacyBudget(rho=1.0) if "rho" in kwargs else PrivacyBudget(10.0)
    synth = PrivateSynthesizer(**kwargs, method="privbayes", budget=budget, random_state=0, show_progress=False)
    with pytest.raises(ValueError, match="key discovery is approximate DP"):
        synth.fit(frame(200), domain=DOMAIN)
    assert budget.spent == 0 and budget.ledger == () and budget.pending == ()


def test_a_budget_too_small_for_both_charges_is_refused_before_either():
    budget = PrivacyBudget(rho=0.01)  # less than the rho of (1, 1e-9)
    synth = PrivateSynthesizer(epsilon=1.0, delta=1e-9, method="mst", budget=budget, random_state=0,
                               show_progress=False)
    with pytest.raises(BudgetExceededError, match="schema and its fit"):
        synth.fit(frame(200), domain=DOMAIN)
    assert budget.spent == 0 and budget.ledger == ()


def test_the_discovery_s_delta_counts_in_the_check_before_either_charge():
    # enough rho is left for both charges at the budget's whole delta, but not once the discovery takes its share
    unbudgeted = PrivateSynthesizer(epsilon=1.0, delta=1e-9, method="mst", random_state=0, show_progress=False)
    need = unbudgeted.fit(frame(200), domain=DOMAIN).rho_
    budget = PrivacyBudget(1.0, delta=2e-9)
    shrunk = epsilon_delta_to_rho(1.0, 2e-9 - 0.1 * 1e-9)  # the capacity once schema_share=0.1 of delta 1e-9 is taken
    with budget.charge(rho=shrunk - need + (budget.total - shrunk) / 2, label="earlier"):
        pass
    assert budget.remaining > need > budget.available(1e-10)
    synth = PrivateSynthesizer(epsilon=1.0, delta=1e-9, method="mst", budget=budget, random_state=0,
                               show_progress=False)
    with pytest.raises(BudgetExceededError, match="schema and its fit"):
        synth.fit(frame(200), domain=DOMAIN)
    assert [e.label for e in budget.ledger] == ["earlier"]


def test_a_public_error_elsewhere_is_raised_before_the_schema_is_charged():
    budget = PrivacyBudget.from_epsilon_delta(1.0, 1e-9)
    df = frame(200).assign(undeclared=1.5)
    synth = PrivateSynthesizer(epsilon=1.0, delta=1e-9, method="mst", budget=budget, random_state=0,
                               show_progress=False)
    with pytest.raises(DomainError, match="'undeclared' has no public domain"):
        synth.fit(df, domain=DOMAIN)
    assert budget.ledger == ()


def test_the_fit_records_the_schema_and_the_ledger_adds_up_to_the_users_loss():
    budget = PrivacyBudget.from_epsilon_delta(1.0, 1e-9)
    synth = PrivateSynthesizer(epsilon=1.0, delta=1e-9, method="mst", budget=budget, random_state=0,
                               show_progress=False).fit(frame(), domain=DOMAIN)
    record = synth.schema_release_
    assert set(record.keys["job"].keys) <= {"nurse", "clerk", "pilot", "astronaut"}
    assert synth.domain_["job"][-1] == "Other" and synth.domain_.bins["age"] == record.edges["age"]
    schema_entry, fit_entry = budget.ledger
    assert schema_entry.delta == record.delta and fit_entry.delta is None
    eps, delta = budget.epsilon_delta(1e-9 - budget.delta_spent)
    assert eps <= 1.0 and delta <= 1e-9 * (1 + 1e-12)
    assert synth.rho_ == pytest.approx(budget.spent)
    d = record.to_dict()
    assert d["loss"]["delta"] == record.delta and d["edges"]["age"][0] == 17
    assert set(synth.sample(50, random_state=0)["job"]) <= set(synth.domain_["job"])


def test_a_failure_after_the_schemas_noise_keeps_its_charge_and_record(monkeypatch):
    budget = PrivacyBudget.from_epsilon_delta(1.0, 1e-9)
    method = synthesizer_module.METHODS["mst"]
    calls = []
    original = type(method).check

    def check(self, domain, loss, **settings):
        calls.append(domain)
        if len(calls) == 2:  # the check on the resolved domain
            raise ValueError("refused after the schema")
        return original(self, domain, loss, **settings)

    monkeypatch.setattr(type(method), "check", check)
    synth = PrivateSynthesizer(epsilon=1.0, delta=1e-9, method="mst", budget=budget, random_state=0,
                               show_progress=False)
    with pytest.raises(ValueError, match="refused after the schema"):
        synth.fit(frame(), domain=DOMAIN)
    assert len(budget.ledger) == 1 and budget.ledger[0].delta is not None
    assert synth.schema_release_.edges["age"][0] == 17


def test_recode_sends_unreleased_keys_to_other_and_keeps_missing():
    plan = plan_schema(pd.DataFrame({"job": ["a"] * 3000 + ["b"] + [None]}), declared(discover={"job"}),
                       ApproxDP(1.0, 1e-6), 0.5)
    dom, record = resolve_domain(pd.DataFrame({"job": ["a"] * 3000 + ["b"] + [None]}), plan, random_state=0)
    out = recode(pd.DataFrame({"job": ["a", "b", None]}), record)
    assert out["job"].iloc[:2].tolist() == ["a", "Other"] and pd.isna(out["job"].iloc[2])
    assert dom["job"] == ("a", "Other")


def test_the_column_parts_never_sum_above_the_schemas_loss():
    plan = plan_schema(frame(10), DOMAIN, ApproxDP(1.0, 1e-9), 0.1)
    assert 2 * plan.column_loss().rho <= plan.loss.rho
    assert isinstance(plan.column_loss(), ZCDP)


def test_missing_values_without_a_missing_state_are_refused_before_the_charge():
    budget = PrivacyBudget.from_epsilon_delta(1.0, 1e-9)
    df = frame(300)
    df.loc[3, "age"] = np.nan
    synth = PrivateSynthesizer(epsilon=1.0, delta=1e-9, method="mst", budget=budget, random_state=0,
                               show_progress=False)
    with pytest.raises(DomainError, match="column 'age' has missing values"):
        synth.fit(df, domain=DOMAIN)
    assert budget.ledger == () and budget.pending == ()


def test_a_declared_missing_state_carries_over_to_the_resolved_columns():
    d = declared({"sex": ["F", "M"]}, discover={"job"}, bounds={"age": (17, 90)}, integer={"age"})
    d = type(d)(d, missing="NA")
    d.discover, d.bounds, d.integer = {"job"}, {"age": (17, 90)}, {"age"}
    df = frame(3000)
    df.loc[:40, "job"] = None
    df.loc[:40, "age"] = np.nan
    synth = PrivateSynthesizer(rho=0.5, delta=None, method="mst", random_state=0, show_progress=False)
    with pytest.raises(ValueError, match="approximate DP"):
        synth.fit(df, domain=d)  # rho alone cannot pay for key discovery
    synth = PrivateSynthesizer(epsilon=3.0, delta=1e-9, method="mst", random_state=0, show_progress=False)
    synth.fit(df, domain=d)
    assert synth.domain_["job"][-1] == "NA" and synth.domain_["age"][-1] == "NA"
    assert "Other" in synth.domain_["job"]


def test_the_bins_asked_come_from_the_argument_the_domain_or_the_default():
    df = frame(10)
    d = declared(bounds={"age": (17, 90)}, integer={"age"})
    assert plan_schema(df, d, ZCDP(1.0), 0.1).n_bins == resolve.DEFAULT_BINS
    d4 = Domain(bounds={"age": (17, 90)}, integer=["age"], n_bins=4)  # a Domain declares a count per column
    assert plan_schema(df, d4, ZCDP(1.0), 0.1).n_bins == {"age": 4}
    assert plan_schema(df, d4, ZCDP(1.0), 0.1, n_bins=6).n_bins == 6
    with pytest.raises(ValueError, match="n_bins"):
        plan_schema(df, d, ZCDP(1.0), 0.1, n_bins=1)


def test_bins_under_a_pure_epsilon_are_charged_in_epsilon():
    budget = PrivacyBudget(1.0)
    d = declared({"sex": ["F", "M"], "job": ["nurse", "clerk", "pilot", "astronaut"]},
                 bounds={"age": (17, 90)}, integer={"age"})
    synth = PrivateSynthesizer(epsilon=1.0, method="privbayes", budget=budget, schema_share=0.2, random_state=0,
                               show_progress=False).fit(frame(), domain=d)
    schema_entry, fit_entry = budget.ledger
    assert schema_entry.epsilon == pytest.approx(0.2) and schema_entry.delta is None
    assert budget.spent <= 1.0 and synth.epsilon_ == pytest.approx(budget.spent) and synth.rho_ is None
    assert synth.schema_release_.to_dict()["loss"] == {"epsilon": pytest.approx(0.2), "delta": 0.0}


def test_a_failure_in_a_later_column_keeps_the_earlier_columns_release(monkeypatch):
    budget = PrivacyBudget.from_epsilon_delta(1.0, 1e-9)

    def broken(*args, **kwargs):
        raise FloatingPointError("bins failed")

    monkeypatch.setattr(resolve, "private_bin_edges", broken)  # "age" comes after "job"
    synth = PrivateSynthesizer(epsilon=1.0, delta=1e-9, method="mst", budget=budget, random_state=0,
                               show_progress=False)
    with pytest.raises(FloatingPointError):
        synth.fit(frame(), domain=DOMAIN)
    assert "job" in synth.schema_release_.keys and synth.schema_release_.edges == {}
    assert len(budget.ledger) == 1 and "failed after noise" in budget.ledger[0].label
