"""PrivateSynthesizer.measure: a follow-up release, charged and kept like every release, then a refit from all."""

import copy
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import pgmpy_dp
from pgmpy_dp.engine import ConvergenceWarning
from pgmpy_dp.synthesis import followup
from pgmpy_dp.synthesis.synthesizer import PrivateSynthesizer
from pgmpy_dp.synthesis.marginals import measured_cliques
from pgmpy_dp.uncertainty.support import UnsupportedAnswerWarning


def table(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    b = a ^ (rng.random(n) < 0.1)
    c = b ^ (rng.random(n) < 0.1)  # a and c depend on each other through b
    rest = {v: rng.integers(0, 6, n) for v in "defg"}  # wider columns: PrivBayes's families cannot hold every pair
    domain = {**{v: [0, 1] for v in "abc"}, **{v: list(range(6)) for v in rest}}
    return pd.DataFrame({"a": a, "b": b, "c": c, **rest}), domain


_FITS = {}


def fitted(method="aim"):
    """One seeded fit per method, copied for each test (a follow-up changes its synthesizer)."""
    if method not in _FITS:
        _FITS[method] = _fit(method)
    df, synth = _FITS[method]
    return df, copy.deepcopy(synth)


def _fit(method):
    df, domain = table()
    budget = dict(epsilon=1.0) if method == "privbayes" else dict(rho=1.0)
    kw = {"workload": [("a", "b"), ("b", "c")]} if method == "aim" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        synth = PrivateSynthesizer(method=method, random_state=0, show_progress=False, **budget, **kw).fit(df, domain)
    return df, synth


def ask(synth, target="c", given="a"):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        iv = pgmpy_dp.query_interval(synth, target, evidence={given: 1}, n_samples=3, interval="normal",
                                     random_state=0, show_progress=False)
    return iv, [w for w in caught if w.category is UnsupportedAnswerWarning]


@pytest.mark.parametrize("method", ["aim", "privbayes"])
def test_a_follow_up_release_is_charged_ledgered_and_makes_the_answer_supported(method):
    df, synth = fitted(method)
    measured = [set(m) for m in measured_cliques(synth.releases_)]
    pairs = [(x, y) for x, y in itertools.permutations("abcdefg", 2) if not any({x, y} <= m for m in measured)]
    target, given = ("c", "a") if ("c", "a") in pairs else pairs[0]
    before, warned = ask(synth, target, given)
    assert not before.supported.any() and len(warned) == 1
    budget = pgmpy_dp.PrivacyBudget(rho=0.05)
    n_releases, spent = len(synth.releases_), synth.loss_.rho
    synth.measure(df, before.attrs["needs"], rho=0.02, budget=budget, random_state=1)
    assert budget.spent == pytest.approx(0.02) and "PrivateSynthesizer.measure" in budget.ledger[-1].label
    assert len(synth.releases_) == n_releases + 1 and synth.releases_[-1].tables[0].attrs == (target, given)
    assert synth.loss_.rho == pytest.approx(spent + 0.02)
    after, warned = ask(synth, target, given)
    assert after.supported.all() and set(after.attrs["supported_by"]) == {target, given} and not warned
    truth = df.loc[df[given] == 1, target].value_counts(normalize=True).sort_index().to_numpy()
    noise_sd = synth.releases_[-1].tables[0].scale / (df[given] == 1).sum()
    assert np.abs(after.estimate.to_numpy() - truth).max() < 6 * noise_sd + 0.01  # the new table moved the model


def test_a_follow_up_that_fails_after_its_noise_keeps_the_release_and_the_charge(monkeypatch):
    df, synth = fitted()
    budget = pgmpy_dp.PrivacyBudget(rho=0.05)
    n_releases, model = len(synth.releases_), synth.model_

    def broken(*a, **k):
        raise RuntimeError("refit interrupted")

    monkeypatch.setattr(followup, "fit_final_model", broken)
    with pytest.raises(RuntimeError, match="refit interrupted"):
        synth.measure(df, [("a", "c")], rho=0.02, budget=budget, random_state=1)
    assert budget.spent == pytest.approx(0.02) and len(synth.releases_) == n_releases + 1
    assert synth.model_ is model  # the previous model stays until a refit succeeds


def test_bad_follow_ups_are_refused_before_anything_is_spent():
    df, synth = fitted()
    budget = pgmpy_dp.PrivacyBudget(rho=0.05)
    with pytest.raises(ValueError, match=r"\('a', 'zz'\): unknown columns \['zz'\]"):
        synth.measure(df, [("a", "zz")], rho=0.01, budget=budget)
    with pytest.raises(ValueError, match="not fitted"):
        PrivateSynthesizer(rho=1.0).measure(df, [("a", "c")], rho=0.01)
    with pytest.raises(ValueError, match="rho"):
        synth.measure(df, [("a", "c")], budget=budget)  # no loss given
    assert budget.spent == 0 and len(budget.ledger) == 0
