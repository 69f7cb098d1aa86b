"""method="auto": AIM up to AUTO_MST_COLUMNS columns, MST beyond, chosen from the declared domain alone."""

import numpy as np
import pandas as pd
import pytest

from pgmpy_dp import Domain, PrivacyBudget, PrivateSynthesizer
from pgmpy_dp.synthesis.auto import AUTO_MST_COLUMNS, choose_method


def table(columns, n=300, seed=0):
    """``columns`` binary columns, each a noisy copy of the first; and their declared domain."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    df = pd.DataFrame({f"c{i}": np.where(rng.random(n) < 0.8, a, 1 - a) for i in range(columns)})
    return df, {c: [0, 1] for c in df.columns}


def fit(method, df, dom, **kw):
    return PrivateSynthesizer(rho=1.0, method=method, random_state=0, show_progress=False, **kw).fit(df, domain=dom)


@pytest.mark.parametrize("columns, expected", [(3, "aim"), (AUTO_MST_COLUMNS + 1, "mst")])
def test_auto_runs_the_chosen_method_exactly(columns, expected):
    df, dom = table(columns)
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


def test_a_saved_auto_synthesizer_keeps_its_choice(tmp_path):
    df, dom = table(AUTO_MST_COLUMNS + 1)
    s = fit("auto", df, dom)
    s.save(tmp_path / "s.json")
    loaded = PrivateSynthesizer.load(tmp_path / "s.json")
    assert loaded.method_ == "mst" and loaded.sample(5, random_state=1).equals(s.sample(5, random_state=1))
