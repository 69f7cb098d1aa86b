"""Releases from Dask DataFrames, run on a real ``distributed.LocalCluster`` (2 worker processes).

The cluster is started once for the module; a watchdog kills the test process with a traceback
if the module hangs (a stuck cluster must fail CI loudly, not stall it).
"""

import faulthandler
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import pgmpy_dp  # noqa: E402
from pgmpy_dp import BudgetExceededError, Domain, DomainError, PrivacyBudget  # noqa: E402
from pgmpy_dp.tables import contingency_tables, release_marginals  # noqa: E402
from pgmpy_dp.tables.dask_release import dask_contingency_tables, dask_domain  # noqa: E402

WATCHDOG_SECONDS = 600


@pytest.fixture(scope="module")
def client():
    faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True)
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit="1GiB",
    )
    client = distributed.Client(cluster, timeout=120)
    try:
        yield client
    finally:
        client.close(timeout=30)
        cluster.close(timeout=30)
        faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="module")
def alarm():
    """3,000 alarm records and the network's 37 family tables."""
    model = pgmpy_dp.datasets.load_network("alarm")
    pdf = pgmpy_dp.datasets.sample_network(model, 3000, seed=0)
    families = [(v, *sorted(model.get_parents(v))) for v in model.nodes()]
    return pdf, families


def test_accessor_registered_by_import():
    from pgmpy_dp.dask_accessor import DaskDPAccessor

    assert isinstance(dd.from_pandas(pd.DataFrame({"a": [1]}), npartitions=1).dp, DaskDPAccessor)


@pytest.mark.slow
def test_import_without_dask_loads_nothing_of_dask():
    # sys.modules[name] = None makes find_spec() return None and `import dask` fail: dask "not installed"
    code = (
        "import sys\n"
        "sys.modules['dask'] = None\n"
        "import pandas as pd, pgmpy_dp\n"
        "assert 'pgmpy_dp.dask_accessor' not in sys.modules\n"
        "loaded = [m for m, v in sys.modules.items() if v is not None and m.split('.')[0] in ('dask', 'distributed')]\n"
        "assert not loaded, loaded\n"
        "df = pd.DataFrame({'a': ['x', 'y']}).astype('category')\n"
        "print(df.dp.release(['a'], epsilon=1.0, random_state=0).epsilon)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1.0"


def test_exact_counts_equal_pandas(client, alarm):
    pdf, families = alarm
    ddf = dd.from_pandas(pdf, npartitions=7)
    domain = dask_domain(ddf, None)
    assert domain == Domain.from_dataframe(pdf)
    exact, n_rows = dask_contingency_tables(ddf, domain, families, split_every=3)
    expected = contingency_tables(domain.encode(pdf), domain, families)
    assert n_rows == len(pdf)
    assert len(exact) == len(families) == 37
    for got, want in zip(exact, expected):
        np.testing.assert_array_equal(got, want)
    assert all(t.sum() == len(pdf) for t in exact)


def test_seeded_release_equals_pandas(client, alarm):
    pdf, families = alarm
    ddf = dd.from_pandas(pdf, npartitions=5)
    want = pdf.dp.release(families, epsilon=1.0, random_state=11)
    got = ddf.dp.release(families, epsilon=1.0, random_state=11)
    assert got == want
    per_table = [0.05 * (i + 1) for i in range(len(families))]
    assert ddf.dp.release(families, per_table, random_state=3) == release_marginals(
        pdf, families, per_table, random_state=3
    )
    # zCDP (discrete Gaussian) releases too, charged once to a rho budget
    budget = PrivacyBudget(rho=1.0)
    got = ddf.dp.release(families[:6], rho=0.5, random_state=2, budget=budget)
    assert got == pdf.dp.release(families[:6], rho=0.5, random_state=2)
    assert got.mechanism == "discrete_gaussian" and len(budget.ledger) == 1


def test_budget_charged_once(client, alarm):
    pdf, families = alarm
    budget = PrivacyBudget(1.0)
    rel = dd.from_pandas(pdf, npartitions=4).dp.release(families[:5], epsilon=0.6, budget=budget)
    assert budget.spent == pytest.approx(0.6)
    assert len(budget.ledger) == 1
    assert rel.epsilon == pytest.approx(0.6)
    with pytest.raises(BudgetExceededError):
        dd.from_pandas(pdf, npartitions=4).dp.release(families[:5], epsilon=0.6, budget=budget)
    assert budget.spent == pytest.approx(0.6)


def _small():
    return pd.DataFrame(
        {"a": ["x", "y", "z", "x"] * 50, "b": ["u", "v"] * 100}
    ).astype({"a": pd.CategoricalDtype(["x", "y", "z"]), "b": pd.CategoricalDtype(["u", "v"])})


def test_nan_fails_in_a_partition_before_any_budget(client):
    pdf = _small()
    pdf.loc[190, "a"] = np.nan  # in the last partition only
    budget = PrivacyBudget(1.0)
    with pytest.raises(DomainError, match=r"column 'a' has missing values"):
        dd.from_pandas(pdf, npartitions=4).dp.release([("a", "b")], epsilon=0.5, budget=budget)
    assert budget.spent == 0 and budget.ledger == ()


def test_out_of_domain_fails_in_a_partition_before_any_budget(client):
    pdf = _small().astype({"a": object})
    pdf.loc[5, "a"] = "w"
    budget = PrivacyBudget(1.0)
    ddf = dd.from_pandas(pdf, npartitions=4)
    with pytest.raises(DomainError, match=r"column 'a' has values outside its declared domain.*withheld"):
        ddf.dp.release([("a", "b")], epsilon=0.5, budget=budget, domain={"a": ["x", "y", "z"]})
    assert budget.spent == 0 and budget.ledger == ()


def test_unknown_categories_are_refused_and_declared_states_work(client):
    pdf = _small()
    ddf = dd.from_pandas(pdf.astype({"a": str}), npartitions=3).astype({"a": "category"})
    assert not ddf["a"].cat.known
    budget = PrivacyBudget(1.0)
    with pytest.raises(DomainError, match=r"column 'a' is categorical but Dask does not know its categories") as err:
        ddf.dp.release([("a", "b")], epsilon=0.5, budget=budget)
    assert "domain={'a': [...]}" in str(err.value) and "do not use ddf.categorize()" in str(err.value)
    assert budget.spent == 0
    # declaring the states, either way, fixes it
    want = pdf.dp.release([("a", "b")], epsilon=0.5, random_state=1)
    assert ddf.dp.release([("a", "b")], epsilon=0.5, random_state=1, domain={"a": ["x", "y", "z"]}) == want
    declared = ddf.astype({"a": str}).astype({"a": pd.CategoricalDtype(["x", "y", "z"])})
    assert declared.dp.release([("a", "b")], epsilon=0.5, random_state=1) == want
    declared = ddf.assign(a=ddf["a"].cat.set_categories(["x", "y", "z"]))
    assert declared.dp.release([("a", "b")], epsilon=0.5, random_state=1) == want
    # a value outside the declared states becomes NaN under set_categories: refused, not dropped
    short = ddf.assign(a=ddf["a"].cat.set_categories(["x", "y"]))
    with pytest.raises(DomainError, match="missing value"):
        short.dp.release([("a", "b")], epsilon=0.5, budget=budget)
    assert budget.spent == 0


def test_empty_frame_is_refused_before_any_budget(client):
    ddf = dd.from_pandas(_small().iloc[:0], npartitions=1)
    budget = PrivacyBudget(1.0)
    with pytest.raises(ValueError, match="no rows"):
        ddf.dp.release([("a", "b")], epsilon=0.5, budget=budget)
    assert budget.spent == 0


def test_request_errors_before_counting(client):
    ddf = dd.from_pandas(_small(), npartitions=2)
    budget = PrivacyBudget(1.0)
    with pytest.raises(DomainError, match=r"not in the DataFrame"):
        ddf.dp.release([("a", "nope")], epsilon=0.5, budget=budget)
    with pytest.raises(ValueError, match="epsilon"):
        ddf.dp.release([("a", "b")], epsilon=-1.0, budget=budget)
    with pytest.raises(TypeError, match="dask DataFrame"):
        pgmpy_dp.tables.dask_release.release_marginals_dask(_small(), [("a",)], epsilon=1.0)
    assert budget.spent == 0


def test_markov_network_fitted_from_a_dask_release(client):
    from pgmpy.models import DiscreteMarkovNetwork

    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 4000)
    b = (a ^ (rng.random(4000) < 0.2)).astype(int)
    c = (b ^ (rng.random(4000) < 0.3)).astype(int)
    pdf = pd.DataFrame({"a": a, "b": b, "c": c}).astype(pd.CategoricalDtype([0, 1]))
    tables = [("a", "b"), ("b", "c")]
    release = dd.from_pandas(pdf, npartitions=4).dp.release(tables, epsilon=1.0, random_state=5)
    fitted = pgmpy_dp.PrivateMarkovEstimator(method="cgm-em").fit(DiscreteMarkovNetwork(tables), release).model_
    reference = pgmpy_dp.PrivateMarkovEstimator(method="cgm-em").fit(
        DiscreteMarkovNetwork(tables), release_marginals(pdf, tables, 1.0, random_state=5)
    ).model_
    for f, g in zip(fitted.get_factors(), reference.get_factors()):
        np.testing.assert_allclose(f.values, g.values)
    # the fit recovers the strong a-b association (P(a == b) = 0.8) from the noisy tables
    from pgmpy.inference import VariableElimination

    joint = VariableElimination(fitted).query(["a", "b"], joint=True)
    assert 0.75 < joint.get_value(a=0, b=0) + joint.get_value(a=1, b=1) < 0.85


@pytest.mark.slow
def test_bayesian_network_fitted_from_a_dask_release(client):
    """A BN fitted from a Dask-made release equals the fit from the pandas release (same seed)."""
    from pgmpy.models import DiscreteBayesianNetwork

    if not hasattr(pgmpy_dp.DiscretePrivateMLE, "fit_release"):
        pytest.skip("DiscretePrivateMLE cannot fit from releases in this version")
    model = pgmpy_dp.datasets.load_network("asia")
    pdf = pgmpy_dp.datasets.sample_network(model, 3000, seed=1)
    families = [(v, *sorted(model.get_parents(v))) for v in model.nodes()]
    release = dd.from_pandas(pdf, npartitions=3).dp.release(families, epsilon=1.0, random_state=4)
    fitted = DiscreteBayesianNetwork(model.edges()).fit(release, estimator=pgmpy_dp.DiscretePrivateMLE())
    reference = DiscreteBayesianNetwork(model.edges()).fit(
        pdf.dp.release(families, epsilon=1.0, random_state=4), estimator=pgmpy_dp.DiscretePrivateMLE()
    )
    assert fitted.check_model()
    for node in model.nodes():
        np.testing.assert_allclose(fitted.get_cpds(node).values, reference.get_cpds(node).values)
