"""Simulated data sets drawn from a fit, and the refits of its estimator on them."""

import warnings

import numpy as np
import pandas as pd
import pytest
from pgmpy.models import DiscreteMarkovNetwork
from uncertainty_models import CHAIN, DOMAIN, bn_fitted, fitted, truth_theta

import pgmpy_dp
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree
from pgmpy_dp.estimators import markov_fit
from pgmpy_dp.tables import release_from_codes
from pgmpy_dp.uncertainty import simulate
from pgmpy_dp.uncertainty.simulate import fit_view, refits, response_refits


def same(a, b) -> bool:
    return all(np.array_equal(x, y) for u, v in zip(a, b) for x, y in zip(u, v))


@pytest.fixture(scope="module")
def mn_est():
    return fitted(n=800, method="cgm-em")


def test_views_of_both_kinds_of_fit():
    est = fitted()
    mn, bn = fit_view(est), fit_view(bn_fitted(0))
    # no declared record count: the noisy total the fit used
    assert mn.cliques == CHAIN and mn.inference == "junction-tree" and mn.n_draw == round(est.n_records_) != 2000
    assert [t.shape for t in mn.theta] == [(2, 3), (3, 2)]
    assert bn.cliques == [("a",), ("b", "a")] and bn.n_draw > 0
    # a Bayesian network's log-CPDs are log-potentials with Z = 1
    assert np.allclose(np.exp(bn.theta[0]).sum(), 1) and np.allclose(np.exp(bn.theta[1]).sum(axis=0), 1)
    with pytest.raises(TypeError, match="PrivateMarkovEstimator, DiscretePrivateMLE or PrivateSynthesizer"):
        fit_view(object())
    with pytest.raises(ValueError, match="not fitted"):
        fit_view(pgmpy_dp.PrivateMarkovEstimator())
    with pytest.raises(ValueError, match="not fitted"):
        fit_view(pgmpy_dp.DiscretePrivateMLE(epsilon=1.0))


@pytest.mark.parametrize("kind", ["markov", "bayesian"])
def test_refits_are_seeded_and_the_same_in_worker_processes(kind, mn_est):
    """Only the fits run in the workers; the tables are drawn from one stream, so nothing changes."""
    view = fit_view(mn_est if kind == "markov" else bn_fitted(8))
    one = refits(view, 3, 4)
    assert same(one, refits(view, 3, 4))
    assert same(one, refits(view, 3, 4, n_jobs=2))
    assert max(np.abs(x - y).max() for x, y in zip(one[0], one[1])) > 1e-3  # distinct refits: the check can fail
    assert not same(one, refits(view, 3, 5))


def test_refits_can_be_drawn_from_another_model():
    """The response band's second level: the fit's own log-potentials reproduce the default refits; a flat
    model gives other refits; a wrongly shaped one is refused."""
    view = fit_view(bn_fitted(5))
    own = refits(view, 3, 11)
    assert same(own, refits(view, 3, 11, theta=view.theta))
    flat = refits(view, 3, 11, theta=[np.full_like(t, -np.log(t.shape[0])) for t in view.theta])
    assert max(np.abs(x - y).max() for a, b in zip(own, flat) for x, y in zip(a, b)) > 0.05
    with pytest.raises(ValueError, match="one array per clique"):
        refits(view, 2, 0, theta=view.theta[:1])


def test_response_refits_draw_every_second_level_with_one_seed(mn_est):
    view = fit_view(mn_est)
    first = refits(view, 3, 0)
    second = response_refits(view, first, 123)
    assert same(second, [refits(view, 1, np.random.default_rng(123), theta=t)[0] for t in first])
    # common random numbers: a generator equal to the fit gives the fit's first refit under that seed
    assert same(response_refits(view, [view.theta], 123), refits(view, 1, np.random.default_rng(123)))


def test_markov_refits_use_the_fits_own_weights_from_the_fitted_potentials(monkeypatch):
    """A CGM-EM refit runs EM with the weight the fit recorded (``fit_settings_``), starting at the fitted
    potentials (the simulation's truth) for at most WARM_MAPS maps; it skips the naive stage."""
    rng = np.random.default_rng(11)
    codes = JunctionTree(DOMAIN, CHAIN).sample(truth_theta(), 1500, random_state=rng)
    release = release_from_codes(codes, DOMAIN, CHAIN, 0.3, random_state=rng)
    for max_iter in (3, simulate.WARM_MAPS + 5):
        est = pgmpy_dp.PrivateMarkovEstimator(show_progress=False, max_iter=max_iter)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(DiscreteMarkovNetwork(CHAIN), release)
        seen = {"naive": [], "em": []}
        naive, em = markov_fit.fit_log_potentials, markov_fit.cgm_em

        def naive_spy(*a, **k):
            seen["naive"].append(1)
            return naive(*a, **k)

        def em_spy(engine, measurements, n, regularization, *a, **k):
            seen["em"].append((regularization, k["max_iter"], [np.array(t) for t in k["init"]]))
            return em(engine, measurements, n, regularization, *a, **k)

        monkeypatch.setattr(markov_fit, "fit_log_potentials", naive_spy)
        monkeypatch.setattr(markov_fit, "cgm_em", em_spy)
        refits(fit_view(est), 3, 0)
        monkeypatch.undo()
        reg, n = est.regularization_, est.n_records_
        assert seen["naive"] == [] and len(seen["em"]) == 3
        for lam, maps, init in seen["em"]:
            assert lam == pytest.approx(reg["cgm-em"] / n, rel=1e-12)
            assert maps == min(est.max_iter_, simulate.WARM_MAPS)
            assert all(np.array_equal(i, t) for i, t in zip(init, est.log_potentials_))


def test_markov_refits_read_the_settings_the_fit_recorded(monkeypatch):
    """A refit repeats the recorded settings: change the record and the refits follow it."""
    import dataclasses

    rng = np.random.default_rng(12)
    codes = JunctionTree(DOMAIN, CHAIN).sample(truth_theta(), 1500, random_state=rng)
    release = release_from_codes(codes, DOMAIN, CHAIN, 0.3, random_state=rng)
    est = pgmpy_dp.PrivateMarkovEstimator(show_progress=False).fit(DiscreteMarkovNetwork(CHAIN), release)
    assert est.fit_settings_.max_iter == est.max_iter_ and est.fit_settings_.method == est.method
    est.fit_settings_ = dataclasses.replace(est.fit_settings_, max_iter=2, cgm_regularization=0.125)
    seen = []
    em = markov_fit.cgm_em

    def em_spy(engine, measurements, n, regularization, *a, **k):
        seen.append((regularization * n, k["max_iter"]))
        return em(engine, measurements, n, regularization, *a, **k)

    monkeypatch.setattr(markov_fit, "cgm_em", em_spy)
    refits(fit_view(est), 2, 0)
    assert seen == [(pytest.approx(0.125, rel=1e-12), 2)] * 2


def test_bayesian_refits_run_the_estimators_own_step_on_a_copy(monkeypatch):
    from pgmpy_dp.estimators.bayesian import DiscretePrivateMLE

    est = bn_fitted(2, prior_strength=0.5)
    before = (est.n_iter_, est.converged_, [c.get_values().copy() for c in est.parameters_])
    seen = []
    original = DiscretePrivateMLE._likelihood_tables

    def spy(self, *args, **kwargs):
        seen.append((self is est, self.consistency, self.prior_strength, self.max_iter))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(DiscretePrivateMLE, "_likelihood_tables", spy)
    refits(fit_view(est), 2, 0)
    assert seen == [(False, est.consistency, 0.5, est.max_iter)] * 2
    assert (est.n_iter_, est.converged_) == before[:2]
    assert all(np.array_equal(c.get_values(), v) for c, v in zip(est.parameters_, before[2]))


def test_bayesian_refits_with_the_projection_spread():
    est = bn_fitted(4, n=1500, consistency="projection")
    fits = refits(fit_view(est), 6, 0)
    assert np.std([np.exp(f[0]) for f in fits], axis=0).max() > 1e-3


def test_a_fit_from_releases_re_releases_its_tables_at_their_own_scales():
    from pgmpy.models import DiscreteBayesianNetwork

    from pgmpy_dp.datasets import sample_network
    from uncertainty_models import bn_truth

    df = sample_network(bn_truth(), 2000, seed=3)
    r1 = df.dp.release([("b", "a")], epsilon=0.5, random_state=1)
    r2 = df.dp.release(["a"], epsilon=1.0, random_state=2)
    est = pgmpy_dp.DiscretePrivateMLE().fit_release(DiscreteBayesianNetwork([("a", "b")]), [r1, r2])
    view = fit_view(est)
    assert [[t.attrs for t in ts] for _, ts, _, _ in view.releases] == [[("b", "a")], [("a",)]]
    fit, (boots, *_) = simulate._simulate(view, 2, np.random.default_rng(0))
    assert [[t.scale for t in r.tables] for r in boots] == [[t.scale for t in r1.tables], [t.scale for t in r2.tables]]


STEPS = ["x1", "x2", "x3", "x4"]
EDGES = list(zip(STEPS, STEPS[1:]))


def chain_frame(n, seed=0):
    rng = np.random.default_rng(seed)
    x = [rng.random(n) < 0.3]
    for _ in STEPS[1:]:
        x.append(np.where(x[-1], rng.random(n) < 0.8, rng.random(n) < 0.1))
    df = pd.DataFrame({v: xi.astype(int) for v, xi in zip(STEPS, x)})
    df["user"] = rng.integers(0, n // 3, n)
    return df


def tied_fit(df, **unit):
    est = pgmpy_dp.PrivateMarkovEstimator(method="naive-mle", random_state=0, show_progress=False)
    est.fit(DiscreteMarkovNetwork(EDGES), df, epsilon=2.0, domain={v: [0, 1] for v in STEPS},
            cliques=[("x1",)] + EDGES, tied=[EDGES], **unit)
    return est


def test_pooled_tables_are_simulated_as_the_sum_of_their_members():
    est = tied_fit(chain_frame(3000))
    assert any(t.members is not None for t in est.releases_[0].tables)
    fits = refits(fit_view(est), 4, 0)
    idx = est.tied_[0]
    for theta in fits:  # tied potentials stay tied, and refits scatter around the fit by about the noise
        assert all(np.allclose(theta[idx[0]], theta[i]) for i in idx)
    assert 0 < np.std([t[idx[0]] for t in fits], axis=0).max() < 1.0


def test_individual_level_fit_is_refused_with_a_clear_error():
    est = tied_fit(chain_frame(600), privacy_unit="user")
    with pytest.raises(NotImplementedError, match="individual-level"):
        fit_view(est)
