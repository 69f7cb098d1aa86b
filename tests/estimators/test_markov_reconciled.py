"""CGM-EM's warm start from reconciled (consistent) tables: same EM fixed point, consistent targets."""

import warnings

import numpy as np
import pandas as pd
import pytest
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp.estimators.markov as markov_module
from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree, max_disagreement
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.tables import release_marginals

EDGES = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]  # one loop


def _frame(n, seed=0, k=3):
    rng = np.random.default_rng(seed)
    domain = Domain({v: list(range(k)) for v in "abcd"})
    theta = [np.log(rng.dirichlet(np.ones(k * k)).reshape(k, k)) for _ in EDGES]
    codes = JunctionTree(domain, EDGES).sample(theta, n, random_state=seed)
    return pd.DataFrame({v: pd.Categorical.from_codes(codes[v], categories=domain[v]) for v in domain.attrs})


def _fit(release, targets, monkeypatch, count_tol=None, **kw):
    if count_tol is not None:  # EM's count rule off: run to the objective's own tolerance
        em = markov_module.cgm_em
        monkeypatch.setattr(markov_module, "cgm_em", lambda *a, **k: em(*a, **{**k, "count_tol": count_tol}))
    est = PrivateMarkovEstimator(method="cgm-em", show_progress=False, warm_start=targets, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(DiscreteMarkovNetwork(EDGES), release)
    return est


def test_reconciled_warm_start_reaches_the_same_em_fixed_point(monkeypatch):
    """Run to convergence, EM from either warm start ends at the same objective (and model)."""
    release = release_marginals(_frame(5000), EDGES, epsilon=1.0, random_state=3)
    noisy = _fit(release, "noisy", monkeypatch, count_tol=0.0, max_iter=2000, tol=1e-12)
    monkeypatch.undo()
    rec = _fit(release, "reconciled", monkeypatch, count_tol=0.0, max_iter=2000, tol=1e-12)
    assert noisy.converged_ and rec.converged_
    f_noisy, f_rec = noisy.log_likelihood_[-1], rec.log_likelihood_[-1]
    assert f_rec == pytest.approx(f_noisy, rel=1e-8, abs=1e-6)
    # the starts differ: the reconciled start is already closer to the fixed point
    assert rec.log_likelihood_[0] != pytest.approx(noisy.log_likelihood_[0], rel=1e-6)
    assert abs(rec.log_likelihood_[0] - f_rec) < abs(noisy.log_likelihood_[0] - f_noisy)
    mu_noisy, _ = JunctionTree(noisy.domain_, EDGES).marginals(noisy.log_potentials_)
    mu_rec, _ = JunctionTree(rec.domain_, EDGES).marginals(rec.log_potentials_)
    for a, b in zip(mu_noisy, mu_rec):
        np.testing.assert_allclose(a, b, atol=1e-4)


def test_reconciled_targets_are_consistent_and_pool_repeated_releases():
    df = _frame(3000, seed=1)
    r1 = release_marginals(df, EDGES, epsilon=0.5, random_state=1)
    r2 = release_marginals(df, EDGES[:2], epsilon=0.5, random_state=2)
    _, per_clique = markov_module._measurements([r1, r2], EDGES)
    targets = markov_module._reconciled_targets(EDGES, per_clique, 3000.0)
    assert all(np.all(t >= 0) and t.sum() == pytest.approx(1.0) for t in targets)
    assert max_disagreement(EDGES, targets) < 1e-10
    naive = markov_module._naive_targets(EDGES, per_clique, 3000.0)
    assert max_disagreement(EDGES, naive) > 1e-3  # what reconciling removes


def test_tied_potentials_are_started_from_the_noisy_targets():
    """A time-homogeneous chain released as one pooled table: every member gets the pooled mean table,
    which reconciling would force to agree with itself across the chain's steps, so a tied fit is
    started from the noisy targets whatever ``warm_start`` says (``warm_start_`` reports it)."""
    from tests.estimators.test_markov_tied import CLIQUES, EDGES as CHAIN, sample

    df, domain, _, _ = sample(5000)
    fits = {}
    for warm_start in ("reconciled", "noisy"):
        est = PrivateMarkovEstimator(method="cgm-em", show_progress=False, max_iter=5, random_state=0,
                                     warm_start=warm_start)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(DiscreteMarkovNetwork(CHAIN), df, epsilon=1.0, domain={v: domain[v] for v in domain.attrs},
                    cliques=CLIQUES, tied=[CHAIN])
        assert est.warm_start_ == "noisy"
        theta = est.log_potentials_
        for t in theta[2:]:
            np.testing.assert_allclose(t, theta[1])
        fits[warm_start] = theta
    for a, b in zip(fits["reconciled"], fits["noisy"]):
        np.testing.assert_array_equal(a, b)


def test_warm_start_used_is_reported():
    release = release_marginals(_frame(2000), EDGES, epsilon=1.0, random_state=4)
    for method, warm_start, used in [("cgm-em", "reconciled", "reconciled"), ("cgm-em", "noisy", "noisy"),
                                     ("naive-mle", "reconciled", None)]:
        est = PrivateMarkovEstimator(method=method, show_progress=False, max_iter=2, warm_start=warm_start)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(DiscreteMarkovNetwork(EDGES), release)
        assert est.warm_start_ == used
