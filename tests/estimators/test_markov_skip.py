"""Both estimators and releases made with skip_state: refused, because skipped tables do not measure p(x)."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork

import pgmpy_dp  # noqa: F401  (registers df.dp)
from pgmpy_dp import DiscretePrivateMLE, PrivacyBudget, PrivateMarkovEstimator, UserLevel
from pgmpy_dp.engine import ConvergenceWarning
from pgmpy_dp.tables.pooled import Pooled

T = 6
STEPS = [f"x{t}" for t in range(1, T + 1)]
EDGES = list(zip(STEPS, STEPS[1:]))
CLIQUES = [("x1",)] + EDGES
STATES = ["null", "a", "b"]  # "null" is the skip state
PUBLIC = {v: STATES for v in STEPS}
# a sticky chain that is mostly offline, started at its stationary distribution
P = np.array([[0.9, 0.07, 0.03], [0.2, 0.7, 0.1], [0.2, 0.1, 0.7]])


def stationary():
    w, v = np.linalg.eig(P.T)
    pi = np.real(v[:, np.argmax(np.real(w))])
    return pi / pi.sum()


def sample(n, seed=0):
    """``n`` individuals, one record (a T-step path) each, identified by the ``uid`` column."""
    rng = np.random.default_rng(seed)
    codes = np.empty((n, T), dtype=np.int64)
    codes[:, 0] = rng.choice(3, size=n, p=stationary())
    cum = np.cumsum(P, axis=1)
    for t in range(1, T):  # vectorised over individuals: inverse-CDF draw of the next state
        codes[:, t] = (rng.random(n)[:, None] > cum[codes[:, t - 1]]).sum(axis=1)
    dtype = pd.CategoricalDtype(STATES)
    df = pd.DataFrame({v: pd.Categorical.from_codes(codes[:, t], dtype=dtype) for t, v in enumerate(STEPS)})
    df["uid"] = np.arange(n)
    return df


def fit(method, data, **kw):
    est = PrivateMarkovEstimator(method=method, show_progress=False, random_state=0, max_iter=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(DiscreteMarkovNetwork(EDGES), data, cliques=CLIQUES, tied=[EDGES], **kw)
    return est


def release(df, skip_state, contribution="normalize", epsilon=1.0):
    unit = UserLevel("uid", max_records=1 if contribution == "clip" else None, contribution=contribution,
                     skip_state=skip_state)
    return df.dp.release(
        [Pooled(EDGES), ("x1",)], epsilon=epsilon, domain=PUBLIC, privacy_unit=unit, random_state=0,
        show_progress=False,
    )


@pytest.mark.parametrize("method", ["naive-mle", "cgm-em"])
def test_fit_from_a_frame_with_skip_state_is_refused_before_spending(method):
    budget = PrivacyBudget(epsilon=1.0)
    with pytest.raises(ValueError, match=r"skip_state='null' cannot be fitted: .* Release with skip_state=None"):
        fit(method, sample(300), epsilon=1.0, budget=budget, domain=PUBLIC,
            privacy_unit=UserLevel("uid", skip_state="null"))
    assert budget.spent == 0


@pytest.mark.parametrize("method", ["naive-mle", "cgm-em"])
def test_fit_from_a_skipped_release_is_refused_and_an_unskipped_one_fits(method):
    df = sample(300)
    with pytest.raises(ValueError, match=r"the all-skip cell is not a measurement"):
        fit(method, release(df, "null"))
    with pytest.raises(ValueError, match=r"skip_state='null' cannot be fitted"):
        fit(method, [release(df, None), release(df, "null")])  # one skipped release among several
    est = fit(method, release(df, None))  # the same data without skip_state: fitted
    assert est.releases_[0].privacy_unit["skip_state"] is None and np.isfinite(est.log_potentials_[1]).all()


def expected_normalised_skipped_table():
    """Exact per-individual expectation of the normalised, skipped pooled table, and the model's
    pooled pair distribution given "not null-null", by enumerating all 3^T paths."""
    pi = stationary()
    normalised = np.zeros((3, 3))
    pairs = np.zeros((3, 3))
    for path in itertools.product(range(3), repeat=T):
        p = pi[path[0]] * np.prod([P[a, b] for a, b in zip(path, path[1:])])
        c = np.zeros((3, 3))
        np.add.at(c, (list(path[:-1]), list(path[1:])), 1.0)
        pairs += p * c
        c[0, 0] = 0.0
        if c.sum():
            normalised += p * c / c.sum()
    pairs[0, 0] = 0.0
    return normalised / normalised.sum(), pairs / pairs.sum()


def test_a_normalised_skipped_table_does_not_measure_the_chain_even_with_its_skipped_cell_masked():
    """Why the estimators refuse: 1/K_u weights depend on how much of the path is skipped, so the
    released table is biased away from p(pair | not null-null), not only missing its null-null cell."""
    n = 20_000
    normalised, conditional = expected_normalised_skipped_table()
    pooled = release(sample(n, seed=1), "null", epsilon=1e6).tables[0].values
    released = pooled / pooled.sum()
    # sampling error of a cell frequency over n individuals is below 0.5 / sqrt(n) = 0.0035
    np.testing.assert_allclose(released, normalised, atol=0.012)
    assert released[0, 0] == pytest.approx(0.0, abs=1e-3)  # the skipped cell: no data, only (tiny) noise
    # ... and the release is far from the model's conditional pair distribution (up to 0.065 here)
    assert np.abs(released - conditional).max() > 0.05


def test_bayesian_estimator_refuses_skip_state_before_spending_and_skipped_releases():
    df = sample(300)
    model = DiscreteBayesianNetwork(EDGES)
    budget = PrivacyBudget(epsilon=1.0)
    est = DiscretePrivateMLE(epsilon=1.0, budget=budget, domain=PUBLIC, privacy_unit=UserLevel("uid", skip_state="null"))
    with pytest.raises(ValueError, match=r"skip_state='null' cannot be fitted"):
        est.fit(model, df)
    assert budget.spent == 0
    skipped = df.dp.release(EDGES, epsilon=1.0, domain=PUBLIC, privacy_unit=UserLevel("uid", skip_state="null"),
                            random_state=0)
    with pytest.raises(ValueError, match=r"skip_state='null' cannot be fitted"):
        DiscretePrivateMLE().fit_release(model, skipped)
    unskipped = df.dp.release(EDGES, epsilon=1.0, domain=PUBLIC, privacy_unit="uid", random_state=0)
    assert len(DiscretePrivateMLE().fit_release(model, unskipped).parameters_) == T  # the control fits
