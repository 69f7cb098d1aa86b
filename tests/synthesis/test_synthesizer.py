"""PrivateSynthesizer: the one-call path from a table to a private model and synthetic data."""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import pgmpy_dp
from pgmpy_dp import PrivacyBudget, PrivateSynthesizer
from pgmpy_dp.privacy import selection
from pgmpy_dp.privacy.domain import DomainError
from pgmpy_dp.privacy.parameters import epsilon_delta_to_rho
from pgmpy_dp.synthesis import aim, marginals, mst

DOMAIN = {"a": [0, 1], "b": [0, 1], "c": [0, 1, 2], "d": ["x", "y"]}


def chain_frame(n=4000, seed=0):
    """a -> b -> c strongly dependent, d independent."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    b = np.where(rng.random(n) < 0.9, a, 1 - a)
    c = np.where(rng.random(n) < 0.8, b * 2, rng.integers(0, 3, n))
    d = np.where(rng.random(n) < 0.3, "x", "y")
    return pd.DataFrame({"a": a, "b": b, "c": c, "d": d})


def synth(**kw):
    kw.setdefault("random_state", 0)
    kw.setdefault("show_progress", False)
    return PrivateSynthesizer(**kw)


@pytest.fixture
def spy(monkeypatch):
    """Records the epsilon of every exponential-mechanism call the methods make."""
    calls = []
    real = selection.exponential_mechanism

    def recording(scores, epsilon, sensitivity=1.0, rng=None):
        calls.append(epsilon)
        return real(scores, epsilon, sensitivity, rng)

    monkeypatch.setattr(mst, "exponential_mechanism", recording)
    monkeypatch.setattr(aim, "exponential_mechanism", recording)
    return calls


def test_init_stores_and_clone_works():
    s = PrivateSynthesizer(1.0, delta=1e-9, method="mst", workload=None, max_model_size=5, random_state=3)
    params = s.get_params()
    assert params["epsilon"] == 1.0 and params["delta"] == 1e-9 and params["max_model_size"] == 5
    c = clone(s)
    assert c.get_params() == params and c is not s
    # __init__ validates nothing: a bad method only fails in fit
    bad = PrivateSynthesizer(rho=1.0, method="nope")
    assert bad.method == "nope"
    with pytest.raises(ValueError, match="method must be one of"):
        bad.fit(chain_frame(100), domain=DOMAIN)


@pytest.mark.parametrize("method", ["mst", "aim"])
def test_spend_adds_up_to_the_budget_exactly(method, spy):
    """Releases plus selections spend exactly rho; the budget is charged once with it."""
    rho = epsilon_delta_to_rho(2.0, 1e-6)
    budget = PrivacyBudget(rho=1.0)
    s = synth(epsilon=2.0, delta=1e-6, method=method, budget=budget).fit(chain_frame(), domain=DOMAIN)
    assert s.rho_ == rho and s.epsilon_ is None
    released = math.fsum(r.rho for r in s.releases_)
    selected = math.fsum(selection.exponential_mechanism_rho(e) for e in spy)
    assert len(spy) == len(s.selected_) == s.n_rounds_ > 0
    assert math.isclose(released + selected, rho, rel_tol=1e-12)
    assert len(budget.ledger) == 1 and math.isclose(budget.spent, rho, rel_tol=1e-12)
    if method == "mst":  # thirds: 1-ways, tree, tree 2-ways
        assert [math.isclose(r.rho, rho / 3, rel_tol=1e-12) for r in s.releases_] == [True, True]
        assert math.isclose(selected, rho / 3, rel_tol=1e-12)


@pytest.mark.parametrize("method", ["mst", "aim"])
def test_fit_returns_self_and_finds_the_dependence(method):
    df = chain_frame()
    s = synth(rho=1.0, method=method)
    assert s.fit(df, domain=DOMAIN) is s
    assert {frozenset(c) for c in s.selected_ if len(c) > 1} & {frozenset("ab"), frozenset("abc")}
    assert type(s.model_).__name__ == "DiscreteMarkovNetwork"
    assert all(r.to_json() for r in s.releases_)  # publishable
    q = pgmpy_dp.query(s.model_, ["b"], evidence={"a": 1})
    assert q.values[1] > 0.8  # P(b=1 | a=1) = 0.9 in the data


def test_sample_reproduces_the_data_marginals():
    """Large budget: the model's 2-way marginals are the data's; a sample of m rows matches them
    within 5 standard errors of sampling plus 5 of the measurement noise (per record)."""
    df = chain_frame(n=20000, seed=1)
    s = synth(rho=100.0, method="mst").fit(df, domain=DOMAIN)
    m = 50_000
    out = s.sample(m, random_state=0)
    assert list(out.columns) == list(df.columns) and len(out) == m
    # raw values in the fitted dtypes; decode=False keeps the states
    assert (out.dtypes == df.dtypes).all() and set(out["d"]) <= {"x", "y"}
    assert list(s.sample(5, random_state=0, decode=False)["d"].cat.categories) == ["x", "y"]
    sigma = max(t.scale for r in s.releases_ for t in r.tables)
    for a, b in [("a", "b"), ("b", "c"), ("a", "d")]:
        p = pd.crosstab(df[a], df[b], normalize=True)
        q = pd.crosstab(out[a].astype(df[a].dtype), out[b].astype(df[b].dtype), normalize=True)
        q = q.reindex_like(p).fillna(0.0)
        tol = 5 * np.sqrt(p * (1 - p) / m) + 5 * np.sqrt(p * (1 - p) / len(df)) + 5 * sigma / len(df)
        assert (np.abs(p - q) <= tol).all().all(), (a, b, p, q)


def test_sample_is_reproducible_and_needs_a_fit():
    with pytest.raises(ValueError, match="not fitted"):
        synth(rho=1.0).sample(3)
    s = synth(rho=1.0, method="mst").fit(chain_frame(500), domain=DOMAIN)
    pd.testing.assert_frame_equal(s.sample(50, random_state=4), s.sample(50, random_state=4))


@pytest.mark.parametrize(
    "kwargs, data, match, error",
    [
        (dict(method="aim", rho=1.0, workload=[("a", "zz")]), None, r"workload names column\(s\) \['zz'\]", DomainError),
        (dict(method="aim", rho=1.0), "empty", "df is empty", ValueError),
        (dict(method="mst", rho=1.0), "empty", "df is empty", ValueError),
        (dict(method="aim", rho=1e-30), None, "budget is too small", ValueError),
        (dict(method="mst", rho=1e-30), None, "budget is too small", ValueError),
        (dict(method="aim", epsilon=1.0), None, "zCDP method: epsilon needs a delta", ValueError),
        (dict(method="mst", epsilon=1.0), None, "zCDP method: epsilon needs a delta", ValueError),
        (dict(method="mst", rho=1.0, delta=1e-9), None, "delta only goes with epsilon", ValueError),
        (dict(method="mst", rho=1.0, workload=[("a",)]), None, "workload only applies", ValueError),
        (dict(method="aim", rho=1.0, max_model_size=1e-9), None, "max_model_size", ValueError),
        (dict(method="mst", rho=1.0, max_seconds=60), None, "max_seconds only applies", ValueError),
        (dict(method="aim", rho=1.0, max_seconds=0), None, "max_seconds must be None or a positive", ValueError),
    ],
)
def test_clear_errors_spend_nothing(kwargs, data, match, error):
    budget = PrivacyBudget(rho=10.0)
    df = chain_frame(200).iloc[:0] if data == "empty" else chain_frame(200)
    with pytest.raises(error, match=match):
        synth(budget=budget, **kwargs).fit(df, domain=DOMAIN)
    assert budget.spent == 0 and not budget.ledger


def test_failure_before_noise_refunds(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom before noise")

    monkeypatch.setattr(mst, "measure", broken)
    budget = PrivacyBudget(rho=10.0)
    s = synth(rho=1.0, method="mst", budget=budget)
    with pytest.raises(RuntimeError, match="boom"):
        s.fit(chain_frame(200), domain=DOMAIN)
    assert budget.spent == 0 and s.releases_ == []


@pytest.mark.parametrize("method", ["mst", "aim"])
def test_failure_after_noise_keeps_charge_and_releases(monkeypatch, method):
    def broken(*args, **kwargs):
        raise RuntimeError("boom after noise")

    monkeypatch.setattr(mst if method == "mst" else aim, "fit_final_model", broken)
    budget = PrivacyBudget(rho=10.0)
    s = synth(rho=1.0, method=method, budget=budget)
    with pytest.raises(RuntimeError, match="boom"):
        s.fit(chain_frame(500), domain=DOMAIN)
    assert budget.spent == 1.0 and "failed after noise" in budget.ledger[0].label
    assert len(s.releases_) >= 2 and math.isclose(budget.spent, 1.0)


def test_weighted_workload_steers_aim(spy):
    """A workload of one weighted pair: AIM only ever measures it or its subsets."""
    s = synth(rho=1.0, method="aim", workload=[(("c", "d"), 3.0)]).fit(chain_frame(), domain=DOMAIN)
    assert all(set(c) <= {"c", "d"} for c in s.selected_)
    assert {t.attrs for t in s.releases_[0].tables} == {(a,) for a in DOMAIN}


def test_model_size_cap_is_public_and_respected():
    """A cap of 1% above the 1-way model: only sets that add no cells to it may be measured
    (a pair of binary columns: 2 x 2 cells replace 2 + 2), whatever the data."""
    dom = pgmpy_dp.Domain(DOMAIN)
    one_way = [(a,) for a in DOMAIN]
    cap = marginals.model_megabytes(dom, one_way) * 1.01
    s = synth(rho=1.0, method="aim", max_model_size=cap).fit(chain_frame(), domain=DOMAIN)
    assert s.n_rounds_ > 0
    assert all(marginals.model_megabytes(dom, one_way + [c]) <= cap for c in s.selected_), s.selected_
    assert not any(set(c) & {"c"} and len(c) > 1 for c in s.selected_)


@pytest.mark.slow
def test_model_works_with_query_interval_when_a_marginal_is_measured_twice():
    """AIM may measure one marginal in two rounds (two releases over the same set): the
    interval's simulated refits keep the releases apart."""
    s = synth(rho=1.0, method="aim", workload=[("a", "b")]).fit(chain_frame(1000), domain=DOMAIN)
    sets = [frozenset(t.attrs) for r in s.releases_ for t in r.tables]
    assert len(sets) > len(set(sets))  # the setting under test: a repeated measurement
    band = pgmpy_dp.query_interval(s.model_, "b", evidence={"a": 1}, n_samples=5, random_state=0,
                                   show_progress=False)
    assert (band["lower"] <= band["estimate"]).all() and (band["estimate"] <= band["upper"]).all()


def test_a_failed_refit_leaves_no_stale_model(monkeypatch):
    s = synth(rho=1.0, method="mst").fit(chain_frame(300), domain=DOMAIN)
    assert hasattr(s, "model_")
    with pytest.raises(DomainError, match=r"\['zz'\]"):
        s.set_params(method="aim", workload=[("zz",)]).fit(chain_frame(300), domain=DOMAIN)
    assert not hasattr(s, "model_") and not hasattr(s, "releases_")


@pytest.mark.parametrize("budget_kwargs", [dict(epsilon=1.0), dict(epsilon=1.0, delta=1e-6)])
def test_privbayes_fits_a_bayesian_network_and_spends_its_budget(budget_kwargs):
    pure = "delta" not in budget_kwargs
    budget = PrivacyBudget(10.0) if pure else PrivacyBudget(rho=10.0)
    s = synth(method="privbayes", budget=budget, **budget_kwargs).fit(chain_frame(), domain=DOMAIN)
    assert type(s.model_).__name__ == "DiscreteBayesianNetwork" and s.model_.check_model()
    assert sorted(x for x, _ in s.selected_) == sorted(DOMAIN)
    spent = 1.0 if pure else epsilon_delta_to_rho(1.0, 1e-6)
    assert len(budget.ledger) == 1 and math.isclose(budget.spent, spent, rel_tol=1e-12)
    assert (s.epsilon_, s.rho_) == ((1.0, None) if pure else (None, spent))
    assert len(s.sample(20, random_state=0)) == 20


def test_privbayes_refunds_before_its_first_noise_and_keeps_after(monkeypatch):
    from pgmpy_dp.synthesis import privbayes

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    budget = PrivacyBudget(10.0)
    with monkeypatch.context() as m:  # the inputs check runs before any noise
        m.setattr(privbayes, "_check_inputs", broken)
        with pytest.raises(RuntimeError, match="boom"):
            synth(epsilon=1.0, method="privbayes", budget=budget).fit(chain_frame(300), domain=DOMAIN)
    assert budget.spent == 0 and not budget.ledger
    with monkeypatch.context() as m:  # the selection follows the noisy count
        m.setattr(privbayes, "_select", broken)
        with pytest.raises(RuntimeError, match="boom"):
            synth(epsilon=1.0, method="privbayes", budget=budget).fit(chain_frame(300), domain=DOMAIN)
    assert budget.spent == 1.0 and "failed after noise" in budget.ledger[0].label


def test_a_time_capped_fit_charges_the_claim_and_spends_it_all(monkeypatch):
    eps = []
    real = aim.exponential_mechanism
    monkeypatch.setattr(aim, "exponential_mechanism", lambda s, e, sens=1.0, rng=None: eps.append(e) or real(s, e, sens, rng))
    budget = PrivacyBudget(rho=10.0)
    s = synth(rho=1.0, method="aim", budget=budget, max_seconds=1e-9).fit(chain_frame(1000), domain=DOMAIN)
    assert s.n_rounds_ == 1  # out of time at once: the first round is the last
    assert [e.amount for e in budget.ledger] == [1.0] and budget.spent == 1.0
    spent = math.fsum(r.rho for r in s.releases_) + math.fsum(selection.exponential_mechanism_rho(e) for e in eps)
    assert math.isclose(spent, budget.spent, rel_tol=1e-12)


def wide_frame(columns, rows, seed=0):
    """``columns`` binary columns, each a noisy copy of the one before (a chain through the whole table)."""
    rng = np.random.default_rng(seed)
    data = np.empty((rows, columns), dtype=np.int64)
    data[:, 0] = rng.integers(0, 2, rows)
    for j in range(1, columns):
        data[:, j] = np.where(rng.random(rows) < 0.9, data[:, j - 1], 1 - data[:, j - 1])
    names = [f"c{j}" for j in range(columns)]
    return pd.DataFrame(data, columns=names), {v: [0, 1] for v in names}


def wide_fit(method, columns, rows, **kw):
    df, dom = wide_frame(columns, rows)
    s = synth(rho=1.0, method=method, **kw).fit(df, domain=dom)
    out = s.sample(50, random_state=0)
    assert list(out.columns) == list(df.columns) and s.n_rounds_ >= 1
    assert set(s.model_.nodes()) == set(df.columns)
    return s


def chain_workload(columns, max_seconds):
    """AIM's settings for a wide test: a chain's triples (not the default's C(d, 3)) and a time cap."""
    names = [f"c{j}" for j in range(columns)]
    return {"workload": list(zip(names, names[1:], names[2:])), "max_seconds": max_seconds}


@pytest.mark.parametrize("method", ["aim", "mst", "privbayes"])
def test_every_method_fits_more_columns_than_einsum_has_letters(method):
    # 60 columns: numpy's einsum has 52 letters, which once bounded the model's marginals; AIM makes
    # one round (the size of the table is under test, not the length of the run)
    wide_fit(method, 60, 300, **(chain_workload(60, 1e-9) if method == "aim" else {}))


@pytest.mark.slow
@pytest.mark.parametrize("method", ["aim", "mst", "privbayes"])
def test_every_method_fits_250_columns(method):
    # PrivBayes scores every (column, parent set) on counts: 500 rows keep its fit within minutes
    wide_fit(method, 250, 500 if method == "privbayes" else 2000, **(chain_workload(250, 20.0) if method == "aim" else {}))
