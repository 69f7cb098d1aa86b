"""The arcsine band rule and the refits' ``generator=`` hook (issue 14, spread diagnosis)."""

import warnings

import numpy as np
import pytest
from pgmpy.models import DiscreteMarkovNetwork
from scipy import special

import pgmpy_dp
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.tables import release_from_codes
from pgmpy_dp.uncertainty import _answerer, band_limits, bootstrap_log_potentials

EDGE = [("a", "b")]
DOMAIN = Domain({"a": [0, 1], "b": [0, 1]})
N = 5000


def theta_with(p_a: float):
    """Log-potentials of a two-node model with P(a = 1) = p_a and b independent and uniform."""
    return [np.log(np.array([[1 - p_a, 1 - p_a], [p_a, p_a]]) / 2)]


@pytest.fixture(scope="module")
def est():
    rng = np.random.default_rng(0)
    codes = JunctionTree(DOMAIN, EDGE).sample(theta_with(0.3), N, random_state=rng)
    release = release_from_codes(codes, DOMAIN, EDGE, 1.0, random_state=rng)
    est = pgmpy_dp.PrivateMarkovEstimator(method="naive-mle", show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(DiscreteMarkovNetwork(EDGE), release)
    return est


def test_refits_draw_their_records_from_the_given_generator(est):
    """generator= changes the data-generating model only: refits then estimate ITS answer, not the fit's."""
    p_a = _answerer(DOMAIN, EDGE, "junction-tree", ["a"], {})
    assert abs(p_a(est.log_potentials_)[1] - 0.3) < 0.05
    refits = bootstrap_log_potentials(est, 12, random_state=1, show_progress=False, generator=theta_with(0.8))
    answers = np.array([p_a(t)[1] for t in refits])
    # per refit: binomial sd sqrt(0.16 / N) plus noise of scale 1 on 4 cells (sd ~ 3 / N): well under 0.01;
    # the naive MLE's unit prior moves P(a) by about 1 / N
    assert abs(answers.mean() - 0.8) < 0.01, answers
    default = bootstrap_log_potentials(est, 12, random_state=1, show_progress=False)
    assert abs(np.mean([p_a(t)[1] for t in default]) - p_a(est.log_potentials_)[1]) < 0.01


def test_generator_must_match_the_fits_cliques(est):
    with pytest.raises(ValueError, match="one log-potential array per clique"):
        bootstrap_log_potentials(est, 2, random_state=0, show_progress=False, generator=[np.zeros(2)])


def test_arcsine_band_is_the_bias_corrected_normal_band_on_arcsin_sqrt():
    rng = np.random.default_rng(0)
    est = np.array([0.04, 0.5])
    refits = np.clip(est + 0.01 + 0.01 * rng.standard_normal((30, 2)), 1e-6, 1)
    lo, hi = band_limits(est, refits, 0.9, "arcsine")
    g = np.arcsin(np.sqrt(refits))
    g_hat = np.arcsin(np.sqrt(est))
    centre = 2 * g_hat - g.mean(axis=0)
    half = special.stdtrit(29, 0.95) * np.sqrt(1 + 1 / 30) * g.std(axis=0, ddof=1)  # t, and the bias's own Monte Carlo error
    np.testing.assert_allclose(lo, np.sin(np.clip(centre - half, 0, np.pi / 2)) ** 2, rtol=1e-12)
    np.testing.assert_allclose(hi, np.sin(np.clip(centre + half, 0, np.pi / 2)) ** 2, rtol=1e-12)
    # on this scale the band reaches further up than down from its centre near 0 (the normal band is symmetric)
    c = np.sin(centre) ** 2
    assert hi[0] - c[0] > 1.2 * (c[0] - lo[0])
    assert abs((hi[1] - c[1]) - (c[1] - lo[1])) < 0.01 * (hi[1] - lo[1])
    # a band that would reach below 0 on the arcsine scale starts at 0
    lo0, _ = band_limits(np.array([0.001]), np.full((30, 1), 0.004) + 0.002 * rng.random((30, 1)), 0.95, "arcsine")
    assert lo0[0] == 0.0


def strong_fit(regularization):
    """P(a = 1) = 0.9, b = a with probability 0.9: a strong model, fitted with the given L2 weight."""
    rng = np.random.default_rng(2)
    theta = [np.log(np.array([[0.09, 0.01], [0.09, 0.81]]))]
    codes = JunctionTree(DOMAIN, EDGE).sample(theta, 2000, random_state=rng)
    release = release_from_codes(codes, DOMAIN, EDGE, 1.0, random_state=rng)
    est = pgmpy_dp.PrivateMarkovEstimator(regularization=regularization, show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(DiscreteMarkovNetwork(EDGE), release)
    return est


def test_prior_free_generator_is_the_fits_em_without_its_prior():
    from pgmpy_dp.engine import cgm_em, make_inference
    from pgmpy_dp.estimators.markov import _measurements
    from pgmpy_dp.uncertainty import prior_free_log_potentials

    est = strong_fit(200.0)  # a heavy prior: the fit is pulled far towards the uniform model
    pf = prior_free_log_potentials(est)
    engine = make_inference(est.domain_, list(est.cliques_), est.inference_)
    measurements, _ = _measurements(est.releases_, est.cliques_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = cgm_em(engine, measurements, est.n_records_, 0.0, init=est.log_potentials_,
                        max_iter=est.max_iter_, tol=est.tol, warn=False).log_potentials
    np.testing.assert_allclose(pf[0], direct[0])
    p_a = _answerer(DOMAIN, EDGE, "junction-tree", ["a"], {})
    fit_a, pf_a = p_a(est.log_potentials_)[1], p_a(pf)[1]
    # the prior shrank P(a = 1) = 0.9 towards 1/2; without it the model is back near the data
    assert fit_a < 0.85 and abs(pf_a - 0.9) < 0.03, (fit_a, pf_a)


def test_query_interval_takes_the_generator_and_keeps_its_refits_apart():
    est = strong_fit("auto")
    a = pgmpy_dp.query_interval(est, "a", n_samples=5, random_state=0, show_progress=False)
    b = pgmpy_dp.query_interval(est, "a", n_samples=5, random_state=0, show_progress=False, generator="prior-free")
    assert not np.array_equal(a.attrs["bootstrap"], b.attrs["bootstrap"])
    again = pgmpy_dp.query_interval(est, "b", n_samples=5, random_state=0, show_progress=False, generator="prior-free")
    own = pgmpy_dp.query_interval(est, "a", n_samples=5, random_state=0, show_progress=False, refit="estimator")
    assert not np.array_equal(a.attrs["bootstrap"], own.attrs["bootstrap"])
    assert again.attrs["n_samples"] == 5
    with pytest.raises(ValueError, match="generator must be one of"):
        pgmpy_dp.query_interval(est, "a", n_samples=5, generator="truth")
    with pytest.raises(ValueError, match="generator must be one of"):
        bootstrap_log_potentials(est, 2, generator="smooth")
    with pytest.raises(ValueError, match="only supported for PrivateMarkovEstimator"):
        pgmpy_dp.query_interval(pgmpy_dp.DiscretePrivateMLE(epsilon=1.0), "a", refit="estimator")
    with pytest.raises(ValueError, match="only supported for PrivateMarkovEstimator"):
        pgmpy_dp.query_interval(pgmpy_dp.DiscretePrivateMLE(epsilon=1.0), "a", generator="prior-free")


def test_estimator_refit_is_the_estimators_own_fit():
    """refit='estimator' runs fit itself: on the real release it gives back the point fit exactly."""
    from pgmpy_dp.uncertainty import _refit_as_estimator

    est = strong_fit("auto")
    again = _refit_as_estimator(est, est.releases_[0])
    np.testing.assert_array_equal(again[0], est.log_potentials_[0])
    p_a = _answerer(DOMAIN, EDGE, "junction-tree", ["a"], {})
    refits = bootstrap_log_potentials(est, 4, random_state=0, show_progress=False, refit="estimator")
    assert len(refits) == 4 and all(abs(p_a(t)[1] - p_a(est.log_potentials_)[1]) < 0.05 for t in refits)
    with pytest.raises(ValueError, match="refit must be"):
        bootstrap_log_potentials(est, 2, refit="cold")


@pytest.mark.parametrize("b", [5, 30])
def test_normal_band_has_its_level_when_the_bias_is_a_mean_of_few_refits(b):
    """Estimate p + bias + s Z0, refits estimate + bias + s Z_i (the pivot's model, exactly): the
    centre 2 estimate - mean(refits) misses the truth by s (Z0 - mean Z), of variance s^2 (1 + 1/b),
    so the band t sqrt(1 + 1/b) s_hat holds its 95% exactly. Without sqrt(1 + 1/b) it would cover
    P(|t_4| < 2.776 / 1.095) = 0.936 at b = 5 (0.946 at 30). 200,000 states: 3 SE = 0.0015."""
    rng = np.random.default_rng(11)
    k, truth, bias, s = 200_000, 0.5, 0.02, 0.01
    estimate = truth + bias + s * rng.standard_normal(k)
    refits = estimate + bias + s * rng.standard_normal((b, k))
    lo, hi = band_limits(estimate, refits, 0.95)
    coverage = float(np.mean((lo <= truth) & (truth <= hi)))
    assert abs(coverage - 0.95) < 0.0015, coverage
