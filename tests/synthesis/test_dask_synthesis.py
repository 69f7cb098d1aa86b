"""The synthesizer on Dask DataFrames: counted in the partitions, the same seeded fit as pandas, bad inputs named."""

import numpy as np
import pandas as pd
import pytest

from pgmpy_dp import DomainError, PrivacyBudget, PrivateSynthesizer
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.synthesis.frames import frame_domain
from pgmpy_dp.tables.counter import CodesCounter

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
from pgmpy_dp.tables.dask_release import DaskCounter  # noqa: E402  (needs dask)

# "c" has two states too rare to survive MST's noisy 1-way count at this budget: the merged (compressed)
# domain is counted on Dask too
DOMAIN = {"a": [0, 1], "b": ["u", "v"], "c": [0, 1, 2, 3, 4]}


def frame(n=600, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    b = np.where(rng.random(n) < 0.85, a, 1 - a)
    c = np.where(rng.random(n) < 0.02, rng.integers(3, 5, n), rng.integers(0, 3, n))
    return pd.DataFrame({"a": a, "b": np.array(["u", "v"])[b], "c": c})


def fit(df, **kw):
    return PrivateSynthesizer(random_state=7, show_progress=False, **kw).fit(df, domain=DOMAIN)


def facts(s):
    releases = [[(t.attrs, t.values.tolist()) for t in r.tables] for r in s.releases_]
    return releases, s.selected_, s.sample(100, random_state=1).astype(str).to_dict("list")


@pytest.mark.parametrize("kw", [
    {"method": "aim", "epsilon": 1.0, "delta": 1e-9, "workload": [("a", "b"), ("b", "c"), ("a", "c")]},
    {"method": "mst", "epsilon": 0.5, "delta": 1e-9},
    {"method": "privbayes", "epsilon": 1.0},
    {"method": "privbayes", "rho": 0.2},
], ids=["aim", "mst", "privbayes-pure", "privbayes-zcdp"])
def test_a_dask_fit_is_the_pandas_fit_bit_for_bit(kw):
    df = frame()
    with dask.config.set(scheduler="sync"):
        on_dask = fit(dd.from_pandas(df, npartitions=3), **kw)
    in_memory = fit(df, **kw)
    assert facts(on_dask) == facts(in_memory)
    assert on_dask.loss_ == in_memory.loss_ and on_dask.domain_ == in_memory.domain_
    if kw["method"] == "mst":  # the rare state was merged, so the merged counts were made on Dask
        assert on_dask.releases_[1].domain.size("c") < 5


def test_the_dask_counter_counts_what_the_codes_count():
    df = frame(300, seed=1)
    domain = Domain(DOMAIN)
    tables = [("a",), ("c", "a"), ("a", "b", "c")]
    merged = Domain({"a": [0, 1], "b": ["u", "v"], "c": ["0", "1|2", "3|4"]})
    maps = {"a": np.array([0, 1]), "b": np.array([0, 1]), "c": np.array([0, 1, 1, 2, 2])}
    twice = {"a": np.array([0, 1]), "b": np.array([0, 1]), "c": np.array([0, 1, 1])}
    merged2 = Domain({"a": [0, 1], "b": ["u", "v"], "c": ["0", "rest"]})
    memory = CodesCounter(domain.encode(df), domain)
    with dask.config.set(scheduler="sync"):
        for persist in (False, True):  # True: the encoded partitions kept, as on a distributed cluster
            counter = DaskCounter(dd.from_pandas(df, npartitions=4), domain, persist=persist)
            assert counter.n_rows == 300
            for got, want in zip(counter.tables(tables), memory.tables(tables)):
                assert got.dtype == np.float64 and np.array_equal(got, want)
            m, mm = counter.merged(maps, merged), memory.merged(maps, merged)
            assert all(np.array_equal(x, y) for x, y in zip(m.tables(tables), mm.tables(tables)))
            m2, mm2 = m.merged(twice, merged2), mm.merged(twice, merged2)
            assert np.array_equal(m2.table(("c", "b")), mm2.table(("c", "b")))


def test_bad_data_on_dask_fails_before_the_charge():
    df = frame(60)
    df.loc[5, "c"] = 9  # outside the declared states
    budget = PrivacyBudget(2.0)
    with dask.config.set(scheduler="sync"), pytest.raises(DomainError, match="'c'"):
        fit(dd.from_pandas(df, npartitions=3), method="privbayes", epsilon=1.0, budget=budget)
    assert budget.spent == 0 and not budget.ledger and budget.pending == ()


def test_a_dask_frame_needs_its_categories_known():
    df = frame(30).astype({"b": "category"})
    ddf = dd.from_pandas(df, npartitions=2).astype({"b": "category"})  # unknown categories
    with pytest.raises(DomainError, match="Dask does not know its categories"):
        frame_domain(ddf.assign(b=ddf["b"].cat.as_unknown()), {"a": [0, 1], "c": DOMAIN["c"]})


def _foreign(module, name):
    return type(name, (), {"__module__": module})()


@pytest.mark.parametrize("df, message", [
    (_foreign("polars.dataframe.frame", "DataFrame"), r"got polars\.DataFrame; convert it with df\.to_pandas\(\)"),
    (_foreign("pyarrow.lib", "Table"), r"got pyarrow\.Table; convert it with table\.to_pandas\(\)"),
    (np.zeros((3, 2)), r"got numpy\.ndarray; wrap it as pandas\.DataFrame\(array, columns="),
    (pd.Series([0, 1], name="a"), r"got pandas\.Series; give a DataFrame: series\.to_frame\(\)"),
    ([[0, 1]], r"got builtins\.list; convert it to a pandas\.DataFrame"),
], ids=["polars", "pyarrow", "numpy", "series", "list"])
def test_another_input_type_is_named_with_its_fix(df, message):
    with pytest.raises(TypeError, match=r"^df must be a pandas\.DataFrame or a dask\.dataframe\.DataFrame, " + message):
        PrivateSynthesizer(epsilon=1.0, method="privbayes", show_progress=False).fit(df, domain=DOMAIN)


def test_the_dask_counter_keeps_few_cells_and_recounts_the_rest(monkeypatch):
    import pgmpy_dp.tables.dask_release as dask_release

    monkeypatch.setattr(dask_release, "CACHE_CELLS", 12)  # one 2 x 5 table fits, two do not
    df, domain = frame(200, seed=2), Domain(DOMAIN)
    memory = CodesCounter(domain.encode(df), domain)
    with dask.config.set(scheduler="sync"):
        counter = DaskCounter(dd.from_pandas(df, npartitions=2), domain)
        for t in [("a", "c"), ("b", "c"), ("a", "c"), ("c",)]:
            assert np.array_equal(counter.table(t), memory.table(t))
            assert sum(x.size for x in counter._cache.values()) <= 12
