"""Black-box audits of the non-noisy outputs: warnings and refusals must not depend on the data.

A warning or a refusal is released without noise, so it may only depend on public
facts (the dtype, the declared domain, ``df.attrs``, the budget arguments). Each
audit runs a public entry point many times on two neighbouring frames, records the
event (warning raised, fit refused) next to the noisy output, and checks that

* the event has the same frequency on both frames (for a deterministic event any
  difference is an unbounded privacy loss), and
* [`audit_epsilon`][pgmpy_dp.testing.audit.audit_epsilon] over the event and the noisy
  numbers does not exceed the claimed epsilon.

Each audit has a mutant that reproduces a data-dependent rule (warn only when every
category occurs; refuse below ``min_rows_for_structure`` rows): the same audit must
catch it, which shows the audit can fail.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import pgmpy_dp  # noqa: F401  (registers df.dp)
from pgmpy_dp import DataDerivedDomainWarning, PrivacyBudget
from pgmpy_dp.structure import PrivateIsingEstimator, min_rows_for_structure
from pgmpy_dp.testing.audit import AuditTarget, audit_epsilon, run_in_loop

# -- the data-derived-domain warning -----------------------------------------------------------------
DTYPE = pd.CategoricalDtype(["x", "y", "z"])  # sorted, unordered: what astype('category') makes
#: every category occurs; the neighbour drops the only 'z' record, so 'z' no longer occurs
FULL = pd.DataFrame({"a": pd.Categorical(["x", "y"] * 10 + ["z"], dtype=DTYPE)})
SHORT = FULL.iloc[:-1].reset_index(drop=True)
assert set(FULL["a"]) == {"x", "y", "z"} and "z" not in set(SHORT["a"]) and len(FULL) == len(SHORT) + 1


def _all_categories_occur(df) -> bool:
    """The data-dependent rule the warning must not follow (the mutant)."""
    return bool(df["a"].value_counts().min() > 0)


def _release_run(as_error: bool, mutant: bool = False):
    """One release of ``a`` at epsilon 1: ``[event, noisy counts...]``; a refused run publishes zeros.

    ``as_error`` runs it under ``-W error``: the warning becomes a refusal. The mutant replaces the
    library's decision by the data-dependent rule.
    """
    def one_run(df, rng):
        budget = PrivacyBudget(1.0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("error" if as_error and not mutant else "always", DataDerivedDomainWarning)
            try:
                values = df.dp.release(["a"], 1.0, random_state=int(rng.integers(2**32)), budget=budget)["a"].values
            except DataDerivedDomainWarning:
                assert budget.spent == 0
                return np.r_[1.0, np.zeros(3)]
        warned = any(issubclass(w.category, DataDerivedDomainWarning) for w in caught)
        if mutant:
            warned = _all_categories_occur(df)
            if as_error and warned:
                return np.r_[1.0, np.zeros(3)]
        return np.r_[float(warned), values]

    return run_in_loop(one_run)


def _event_counts(run, n_runs: int, seed: int = 11):
    return int(run(FULL, n_runs, seed)[:, 0].sum()), int(run(SHORT, n_runs, seed + 1)[:, 0].sum())


@pytest.mark.parametrize("as_error", [False, True], ids=["warning", "warning as error (refusal)"])
def test_the_domain_warning_is_the_same_on_neighbouring_frames(as_error):
    full, short = _event_counts(_release_run(as_error), 200)
    assert full == short == 200  # the dtype is the same, so it warns (or refuses) on every run of both


@pytest.mark.parametrize("as_error", [False, True], ids=["warning", "warning as error (refusal)"])
def test_the_event_count_catches_a_data_dependent_warning(as_error):
    assert _event_counts(_release_run(as_error, mutant=True), 200) == (200, 0)


@pytest.mark.slow
@pytest.mark.parametrize("as_error", [False, True], ids=["warning", "warning as error (refusal)"])
def test_the_event_audit_catches_a_data_dependent_warning(as_error):
    result = audit_epsilon(AuditTarget("mutant warning", 1.0, _release_run(as_error, mutant=True)),
                           FULL, SHORT, n_runs=600, n_select=200, seed=3)
    print(result)
    assert not result.passed and result.epsilon_lower > 4, str(result)


@pytest.mark.slow
@pytest.mark.parametrize("as_error", [False, True], ids=["warning", "warning as error (refusal)"])
def test_audit_of_the_release_with_its_warning(as_error):
    result = audit_epsilon(AuditTarget("release with its warning", 1.0, _release_run(as_error)),
                           FULL, SHORT, n_runs=4000, seed=5)
    print(result)
    assert result.passed, str(result)


# -- the structure learners' refusal -----------------------------------------------------------------
RHO = 3 / 400  # min_rows_for_structure(3, RHO) == 20: the two frames sit on either side of it
_BIN = pd.CategoricalDtype([0, 1])
_rng = np.random.default_rng(4)
FEW = pd.DataFrame({c: _rng.integers(0, 2, 19) for c in "abc"}).astype(_BIN)
ENOUGH = pd.concat([FEW, pd.DataFrame({c: [1] for c in "abc"}).astype(_BIN)], ignore_index=True)
assert min_rows_for_structure(3, RHO) == 20 and (len(FEW), len(ENOUGH)) == (19, 20)
#: rho-zCDP implies (rho + 2 sqrt(rho log(1/delta)), delta)-DP: the claim the audits check
DELTA = 1e-3
CLAIM = RHO + 2 * (RHO * np.log(1 / DELTA)) ** 0.5


def _fit_run(mutant: bool = False):
    """One Ising fit: ``[refused, edge strengths...]``; a refused fit publishes zeros."""
    def one_run(df, rng):
        budget = PrivacyBudget(rho=1.0)
        try:
            if mutant and len(df) < min_rows_for_structure(3, RHO):
                raise ValueError("too few rows")
            est = PrivateIsingEstimator(n_iter=5, random_state=int(rng.integers(2**32)))
            est.fit(df, rho=RHO, budget=budget)
        except ValueError:
            assert budget.spent == 0
            return np.r_[1.0, np.zeros(3)]
        return np.r_[0.0, list(est.edge_strength_.values())]

    return run_in_loop(one_run)


def test_the_learners_refuse_alike_on_neighbouring_frames():
    run = _fit_run()
    assert run(FEW, 100, 1)[:, 0].sum() == run(ENOUGH, 100, 2)[:, 0].sum() == 0


def test_the_event_count_catches_a_row_count_refusal():
    run = _fit_run(mutant=True)
    assert (run(FEW, 100, 1)[:, 0].sum(), run(ENOUGH, 100, 2)[:, 0].sum()) == (100, 0)


@pytest.mark.slow
def test_the_event_audit_catches_a_row_count_refusal():
    run = _fit_run(mutant=True)
    result = audit_epsilon(AuditTarget("mutant refusal", CLAIM, run), FEW, ENOUGH,
                           n_runs=600, n_select=200, seed=3, delta=DELTA)
    print(result)
    assert not result.passed, str(result)


@pytest.mark.slow
def test_audit_of_the_learner_with_its_refusal():
    result = audit_epsilon(AuditTarget("Ising fit with its refusal", CLAIM, _fit_run()), FEW, ENOUGH,
                           n_runs=3000, seed=5, delta=DELTA)
    print(result)
    assert result.passed, str(result)
