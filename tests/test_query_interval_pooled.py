"""query_interval on fits from pooled (tied) and individual-level releases."""

import numpy as np
import pandas as pd
import pytest
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp
from pgmpy_dp.uncertainty import bootstrap_log_potentials

STEPS = ["x1", "x2", "x3", "x4"]
EDGES = list(zip(STEPS, STEPS[1:]))
PUBLIC = {v: [0, 1] for v in STEPS}


def _chain(n, seed=0):
    rng = np.random.default_rng(seed)
    x = [rng.random(n) < 0.3]
    for _ in STEPS[1:]:
        x.append(np.where(x[-1], rng.random(n) < 0.8, rng.random(n) < 0.1))
    df = pd.DataFrame({v: xi.astype(int) for v, xi in zip(STEPS, x)})
    df["user"] = rng.integers(0, n // 3, n)
    return df


def _fit(df, **unit):
    est = pgmpy_dp.PrivateMarkovEstimator(method="naive-mle", random_state=0, show_progress=False)
    est.fit(
        DiscreteMarkovNetwork(EDGES), df, epsilon=2.0, domain=PUBLIC,
        cliques=[("x1",)] + EDGES, tied=[EDGES], **unit,
    )
    return est


def test_pooled_fit_refits_simulate_the_pooled_sum():
    df = _chain(3000)
    est = _fit(df)
    assert any(t.members is not None for t in est.releases_[0].tables)
    refits = bootstrap_log_potentials(est, n_samples=4, random_state=0)
    # tied potentials stay tied in every refit, and refits scatter around the fit by about the noise
    idx = est.tied_[0]
    for theta in refits:
        assert all(np.allclose(theta[idx[0]], theta[i]) for i in idx)
    spread = np.std([t[idx[0]] for t in refits], axis=0).max()
    assert 0 < spread < 1.0
    iv = pgmpy_dp.query_interval(est, "x3", evidence={"x2": 1}, n_samples=20, random_state=0, show_progress=False)
    assert ((iv.lower <= iv.estimate) & (iv.estimate <= iv.upper)).all()
    # the truth P(x3=1 | x2=1) = 0.8 is within a band-width of the band (refits that ignored the
    # pooling would centre on the first member's table alone)
    width = iv.upper.iloc[1] - iv.lower.iloc[1]
    assert iv.lower.iloc[1] - width < 0.8 < iv.upper.iloc[1] + width
    # one pooled table averages the three edges' noise: a narrower band than three separate tables
    untied = pgmpy_dp.PrivateMarkovEstimator(method="naive-mle", random_state=0, show_progress=False)
    untied.fit(DiscreteMarkovNetwork(EDGES), df, epsilon=2.0, domain=PUBLIC, cliques=[("x1",)] + EDGES)
    iv2 = pgmpy_dp.query_interval(untied, "x3", evidence={"x2": 1}, n_samples=20, random_state=0, show_progress=False)
    assert width < 0.8 * (iv2.upper.iloc[1] - iv2.lower.iloc[1])


def test_individual_level_fit_is_refused_with_a_clear_error():
    est = _fit(_chain(600), privacy_unit="user")
    with pytest.raises(NotImplementedError, match="individual-level"):
        pgmpy_dp.query_interval(est, "x2", n_samples=4, random_state=0, show_progress=False)
