"""method="auto": MST beyond AUTO_MST_COLUMNS columns; below, a noisy record count picks MST (small) or AIM."""

import numpy as np
import pandas as pd
import pytest

from pgmpy_dp import Domain, PrivacyBudget, PrivateSynthesizer
from pgmpy_dp.synthesis import auto
from pgmpy_dp.synthesis.auto import AUTO, AUTO_COUNT_SHARE, AUTO_MST_COLUMNS, choose_method, noisy_count


def table(columns, n=300, seed=0):
    """``columns`` binary columns, each a noisy copy of the first; and their declared domain."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    df = pd.DataFrame({f"c{i}": np.where(rng.random(n) < 0.8, a, 1 - a) for i in range(columns)})
    return df, {c: [0, 1] for c in df.columns}


def fit(method, df, dom, **kw):
    return PrivateSynthesizer(rho=1.0, method=method, random_state=0, show_progress=False, **kw).fit(df, domain=dom)


@pytest.mark.parametrize("columns, expected, workload", [(3, "aim", [("c0", "c1")]), (AUTO_MST_COLUMNS + 1, "mst", None)])
def test_auto_runs_the_method_public_facts_choose_exactly(columns, expected, workload):
    # beyond AUTO_MST_COLUMNS columns, or with a workload, nothing is counted: the run is the method's own
    df, dom = table(columns)
    if workload is not None:
        auto, chosen = fit("auto", df, dom, workload=workload), fit(expected, df, dom, workload=workload)
    else:
        auto, chosen = fit("auto", df, dom), fit(expected, df, dom)
    assert auto.method == "auto" and auto.method_ == expected and chosen.method_ == expected
    assert auto.selected_ == chosen.selected_ and auto.loss_ == chosen.loss_
    assert all(np.array_equal(x.values, y.values) for r, s in zip(auto.releases_, chosen.releases_)
               for x, y in zip(r, s))


def test_the_choice_is_the_same_on_neighbouring_tables():
    # the rule reads the declared domain only: removing one record (or every record but one) changes nothing
    df, dom = table(AUTO_MST_COLUMNS + 1)
    for frame in (df, df.iloc[1:], df.iloc[:1]):
        assert choose_method(Domain.from_dataframe(frame, None, dom)).name == "mst"


def test_a_workload_is_refused_before_charging_when_auto_runs_mst():
    df, dom = table(AUTO_MST_COLUMNS + 1)
    budget = PrivacyBudget(rho=2.0)
    with pytest.raises(ValueError, match="runs MST on this table .*21 columns.*use method='aim'"):
        fit("auto", df, dom, workload=[("c0", "c1")], budget=budget)
    assert budget.spent == 0
    with pytest.raises(ValueError, match="max_seconds"):
        fit("auto", df, dom, max_seconds=-1, budget=budget)
    assert budget.spent == 0


@pytest.mark.parametrize("columns", [3, AUTO_MST_COLUMNS + 1])
def test_a_saved_auto_synthesizer_keeps_its_choice(tmp_path, monkeypatch, columns):
    df, dom = table(columns)
    monkeypatch.setattr(auto, "AUTO_MST_RECORDS", 10)  # AIM on the narrow table: not the choice a default would give
    s = fit("auto", df, dom)
    s.save(tmp_path / "s.json")
    loaded = PrivateSynthesizer.load(tmp_path / "s.json")
    assert s.method_ == ("aim" if columns == 3 else "mst")
    assert loaded.method_ == s.method_ and loaded.sample(5, random_state=1).equals(s.sample(5, random_state=1))


def test_the_decision_is_recomputed_from_the_released_count_alone():
    df, dom = table(3)
    s = fit("auto", df, dom)
    count = s.releases_[0]
    assert [t.attrs for t in count.tables] == [("c0",)] and count.rho == pytest.approx(AUTO_COUNT_SHARE * 1.0)
    assert s.method_ == "mst" == choose_method(s.domain_, noisy_count(count)).name
    assert AUTO.chosen(s.domain_, s.releases_) == "mst"
    # the same release with a larger total: the recomputed decision follows the published value
    big = count.tables[0].values + auto.AUTO_MST_RECORDS
    count.tables[0].values[:] = big
    assert AUTO.chosen(s.domain_, s.releases_) == "aim"
    with pytest.raises(ValueError, match="first release must be the 1-way table of 'c0'"):
        AUTO.chosen(s.domain_, s.releases_[1:])


def test_neighbouring_tables_give_the_same_decision_distribution(monkeypatch):
    # the threshold at the table's size: a rule reading the exact count would choose AIM every time; the
    # noisy count (sigma 5 at rho 0.02) gives both choices, and each seed's choice is that of its count alone
    df, dom = table(2, n=200)
    monkeypatch.setattr(auto, "AUTO_MST_RECORDS", 200)
    seen = {}
    for frame in (df, df.iloc[1:]):
        for seed in range(8):
            s = PrivateSynthesizer(rho=1.0, method="auto", random_state=seed, show_progress=False).fit(frame, domain=dom)
            assert s.method_ == choose_method(s.domain_, noisy_count(s.releases_[0])).name
            seen.setdefault(len(frame), []).append(s.method_)
    assert {"aim", "mst"} <= set(seen[200]) and {"aim", "mst"} <= set(seen[199])


def test_the_total_charge_equals_the_claim():
    df, dom = table(3)
    budget = PrivacyBudget(rho=2.0)
    s = fit("auto", df, dom, budget=budget)
    assert budget.spent == 1.0 and len(budget.ledger) == 1 and s.loss_.rho == 1.0
    plan = AUTO.check(s.domain_, s.loss_)
    assert all(plan.options["count_rho"] + p.loss.rho == pytest.approx(1.0, rel=1e-15) for p in plan.options["plans"].values())
    assert sum(r.rho for r in s.releases_) <= 1.0 + 1e-12  # the releases (selections spend the rest)
    # an (epsilon, delta) claim is charged as claimed, not as its rho
    budget = PrivacyBudget(epsilon=2.0, delta=1e-6)
    s = PrivateSynthesizer(1.0, delta=1e-9, method="auto", budget=budget, random_state=0, show_progress=False).fit(df, domain=dom)
    assert s.loss_ == PrivateSynthesizer(1.0, delta=1e-9, method="mst", random_state=0, show_progress=False).fit(df, domain=dom).loss_
    assert len(budget.ledger) == 1
