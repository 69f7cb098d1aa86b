"""Issue 12, bn12d: Dirichlet priors on the CPD columns, with CGM-EM's exact closed-form M-step."""

import numpy as np
import pytest
from scipy import special

from pgmpy_dp.engine import JunctionTree, Measurement, cgm_em
from pgmpy_dp.estimators.likelihood import DirichletCPDStep, dirichlet_pseudo_count, fit_family_tables
from pgmpy_dp.privacy.domain import Domain

FAMILIES = [("a",), ("b", "a"), ("c", "b")]
DOMAIN = Domain({"a": [0, 1], "b": [0, 1, 2], "c": [0, 1]})


def _true_tables(n=1000.0, seed=0):
    rng = np.random.default_rng(seed)
    pa = rng.dirichlet([1, 1])
    pb = rng.dirichlet([0.3] * 3, size=2).T  # (b, a), peaked columns
    pc = rng.dirichlet([0.5] * 2, size=3).T  # (c, b)
    ab = pb * pa
    pbm = ab.sum(axis=1)
    return [n * pa, n * ab, n * pc * pbm]


def test_step_is_the_closed_form_and_its_prior_is_exact_on_log_cpds():
    step = DirichletCPDStep(n_records=200.0, pseudo_count=0.7)
    tables = _true_tables(200.0)
    theta = step.step([t / 200.0 for t in tables])
    for t, th in zip(tables, theta):
        expected = (t + 0.7) / (t + 0.7).sum(axis=0, keepdims=True)
        np.testing.assert_allclose(np.exp(th), expected, rtol=1e-12)
    # on log-CPDs the log-softmax is the identity: log prior = a * sum(theta)
    assert step.log_prior(theta) == pytest.approx(0.7 * sum(float(th.sum()) for th in theta), rel=1e-12)
    # at any log-potentials (an extrapolated EM point): a sum over each column's log-softmax
    rng = np.random.default_rng(5)
    raw = [th + rng.normal(0, 2.0, th.shape) for th in theta]
    want = 0.7 * sum(float(np.sum(r - special.logsumexp(r, axis=0, keepdims=True))) for r in raw)
    assert step.log_prior(raw) == pytest.approx(want, rel=1e-12)


def test_step_maximises_the_expected_log_posterior_of_each_column():
    """sum_x (n_x + a) log p_x over the simplex: random feasible columns never beat the closed form."""
    rng = np.random.default_rng(1)
    n, a = np.array([40.0, 0.0, 3.0]), 0.5
    step = DirichletCPDStep(n_records=43.0, pseudo_count=a)
    best = np.exp(step.step([n / 43.0])[0])

    def objective(p):
        return float(np.sum((n + a) * np.log(p)))

    top = objective(best)
    for _ in range(2000):
        assert objective(rng.dirichlet(np.ones(3) * rng.uniform(0.2, 5))) <= top + 1e-12


def test_pseudo_count_matches_the_gaussian_spread():
    """trigamma(a) = 1 / weight: a = 1 at 6/pi^2, 1/2 at Jeffreys' 2/pi^2, and it vanishes with the weight."""
    for weight in (6 / np.pi**2, 2 / np.pi**2, 0.09, 1e-6):
        a = dirichlet_pseudo_count(weight)
        assert special.polygamma(1, a) == pytest.approx(1 / weight, rel=1e-9)
    assert dirichlet_pseudo_count(6 / np.pi**2) == pytest.approx(1.0, abs=1e-9)
    assert dirichlet_pseudo_count(0.0) == 0.0
    assert dirichlet_pseudo_count(1e-10) < 1e-4


def test_noiseless_tables_are_recovered_exactly():
    tables = _true_tables()
    ms = [Measurement(f, t, 1e-6) for f, t in zip(FAMILIES, tables)]
    fit = fit_family_tables(DOMAIN, FAMILIES, ms, 1000.0, regularization=0.0, prior="dirichlet")
    for got, want in zip(fit.tables, tables):
        np.testing.assert_allclose(got, want, atol=1e-6)


def test_exact_tables_give_the_posterior_mean_cpds():
    """Tables measured almost exactly: the E-step's counts are the tables, and the fit's CPDs are the closed form
    (n_xu + a) / (n_u + K a), with a = 1 at the uniform cap's weight 6/pi^2."""
    n = 2000.0
    pa = np.array([0.5, 0.5])
    pb = np.array([[0.98, 0.01], [0.01, 0.01], [0.01, 0.98]])
    tables = [n * pa, n * pb * pa, n * np.full((2, 3), 0.5) * (pb * pa).sum(axis=1)]
    ms = [Measurement(f, t, 1e-3) for f, t in zip(FAMILIES, tables)]
    fit = fit_family_tables(DOMAIN, FAMILIES, ms, n, regularization=(6 / np.pi**2) / n, prior="dirichlet")
    for got, t in zip(fit.tables, tables):
        want = (t + 1.0) / (t + 1.0).sum(axis=0, keepdims=True)
        np.testing.assert_allclose(got / got.sum(axis=0, keepdims=True), want, atol=1e-6)


def test_bad_uses_are_refused():
    tables = _true_tables()
    ms = [Measurement(f, t, 1.0) for f, t in zip(FAMILIES, tables)] + [Measurement(("a", "c"), np.ones((2, 2)), 1.0)]
    with pytest.raises(ValueError, match="one measured table per family"):
        fit_family_tables(DOMAIN, FAMILIES, ms, 1000.0, regularization=1e-4, prior="dirichlet")
    jt = JunctionTree(DOMAIN, FAMILIES)
    step = DirichletCPDStep(1000.0, 0.5)
    with pytest.raises(ValueError, match="regularization=0"):
        cgm_em(jt, ms[:3], 1000.0, regularization=1e-3, m_step=step)
    with pytest.raises(ValueError, match="pseudo_count"):
        DirichletCPDStep(1000.0, -1.0)
    with pytest.raises(ValueError, match="prior must be 'gaussian' or 'dirichlet'"):
        fit_family_tables(DOMAIN, FAMILIES, ms[:3], 1000.0, prior="dirichlet-ish")


def test_noiseless_asia_gives_the_empirical_cpds():
    """At epsilon 1e9 on asia the CPDs are the empirical ones (pgmpy's DiscreteMLE) to 1e-5. The fitted *tables*
    need not be the released ones: a network of CPDs cannot hold the dependence between lung and tub that the
    `either` table shows and the DAG does not. (Before CGM-EM started from the Gaussian fit's warm start, the
    network of the projected CPDs, P(either | lung, tub) came out 0.09 off.)"""
    import warnings

    from pgmpy.models import DiscreteBayesianNetwork

    import pgmpy_dp
    from pgmpy_dp.datasets import load_network, sample_network
    from pgmpy_dp.estimators.conditionals import cpd_values
    from pgmpy_dp.estimators.likelihood import measurement_for

    net = load_network("asia")
    df = sample_network(net, 5000, seed=0)
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=1e9, random_state=0, domain=net.states)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DiscreteBayesianNetwork(net.edges()).fit(df, estimator=est)
    tables = list(est.release_)
    fit = fit_family_tables(est.release_.domain, [t.attrs for t in tables], [measurement_for(t) for t in tables],
                            5000.0, regularization=1e-20, prior="dirichlet")
    for t, got in zip(tables, fit.tables):
        np.testing.assert_allclose(cpd_values(got), cpd_values(t.values), atol=1e-5)


def test_spread_is_the_weight_divided_by_its_square():
    """dirichlet_spread=s reads a off w / s**2: the same fit as spread 1 at a quarter of the weight (s = 2)."""
    tables = _true_tables(300.0, seed=2)
    rng = np.random.default_rng(3)
    ms = [Measurement(f, t + rng.laplace(0, 5.0, t.shape), 5.0) for f, t in zip(FAMILIES, tables)]
    w = 0.3 / 300.0
    wide = fit_family_tables(DOMAIN, FAMILIES, ms, 300.0, regularization=w, prior="dirichlet", dirichlet_spread=2.0)
    quarter = fit_family_tables(DOMAIN, FAMILIES, ms, 300.0, regularization=w / 4, prior="dirichlet")
    plain = fit_family_tables(DOMAIN, FAMILIES, ms, 300.0, regularization=w, prior="dirichlet")
    for a, b, c in zip(wide.tables, quarter.tables, plain.tables):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert max(np.abs(a - c).max() for a, c in zip(wide.tables, plain.tables)) > 1e-3  # the spread matters
    with pytest.raises(ValueError, match="dirichlet_spread"):
        fit_family_tables(DOMAIN, FAMILIES, ms, 300.0, regularization=w, prior="dirichlet", dirichlet_spread=0.0)


def _asia(n=5000):
    from pgmpy.models import DiscreteBayesianNetwork

    from pgmpy_dp.datasets import load_network, sample_network

    net = load_network("asia")
    return net, sample_network(net, n, seed=0), lambda: DiscreteBayesianNetwork(net.edges())


@pytest.mark.slow
def test_estimator_dirichlet_recovers_the_empirical_cpds_without_noise():
    """At epsilon 1e9 the pseudo-count vanishes with the weight: the CPDs are pgmpy's DiscreteMLE ones."""
    import warnings

    from pgmpy.parameter_estimator import DiscreteMLE

    import pgmpy_dp

    net, df, empty = _asia()
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=1e9, random_state=0, domain=net.states)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = empty().fit(df, estimator=est)
    mle = empty().fit(df, estimator=DiscreteMLE(state_names=net.states))
    for v in net.nodes():
        np.testing.assert_allclose(model.get_cpds(v).get_values(), mle.get_cpds(v).get_values(), atol=1e-5)


def test_best_start_keeps_the_run_with_the_higher_objective():
    """warm_start="best": CGM-EM from the exact start and from the CPD network, the better final EM objective kept."""
    # a v-structure c <- (a, b) whose table couples a and b: the CPD network cannot hold that, the exact start can
    families = [("a",), ("b",), ("c", "a", "b")]
    domain = Domain({"a": [0, 1], "b": [0, 1, 2], "c": [0, 1]})
    rng = np.random.default_rng(7)
    ab = 200.0 * rng.dirichlet(np.full(6, 0.4)).reshape(2, 3)
    cab = rng.dirichlet([0.5, 0.5], size=(2, 3)).transpose(2, 0, 1) * ab
    tables = [ab.sum(axis=1), ab.sum(axis=0), cab]
    ms = [Measurement(f, t + rng.laplace(0, 40.0, t.shape), 40.0) for f, t in zip(families, tables)]
    kw = dict(regularization=0.6 / 200.0, prior="dirichlet", max_iter=5)
    runs = {s: fit_family_tables(domain, families, ms, 200.0, warm_start=s, **kw) for s in ("mle", "cpds", "best")}
    assert runs["mle"].log_likelihood[-1] != runs["cpds"].log_likelihood[-1]  # two different runs to choose from
    better = max(("mle", "cpds"), key=lambda s: runs[s].log_likelihood[-1])
    for got, want in zip(runs["best"].tables, runs[better].tables):
        np.testing.assert_array_equal(got, want)
    seen = []  # one progress count over both runs: the second counts on from max_iter
    fit_family_tables(domain, families, ms, 200.0, warm_start="best", callback=lambda i, obj, ch: seen.append(i), **kw)
    assert seen == sorted(seen) and seen[-1] > 5
    with pytest.raises(ValueError, match="prior='dirichlet' only"):
        fit_family_tables(domain, families, ms, 200.0, regularization=1e-3, warm_start="best")


@pytest.mark.slow
@pytest.mark.parametrize("n, eps, binds", [(5000, 1.0, False), (300, 0.05, True)])
def test_estimator_takes_the_better_start_only_where_the_cap_binds(n, eps, binds):
    """The default fit runs both starts exactly where the capped global weight binds, and only the exact start
    elsewhere (bit for bit the fit of bn12d)."""
    import pgmpy_dp
    from pgmpy_dp.estimators.conditionals import cpd_values
    from pgmpy_dp.estimators.evidence import pooled_n_records
    from pgmpy_dp.estimators.likelihood import (
        BN_DIRICHLET_SPREAD, BN_WEIGHT_CAP, noise_excess, measurement_for, noise_regularization,
    )

    net, df, empty = _asia(n)
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=eps, random_state=3, domain=net.states)
    model = empty().fit(df, estimator=est)
    tables = list(est.release_)
    n_rec = pooled_n_records([est.release_])
    assert (noise_regularization(tables, n_rec) > BN_WEIGHT_CAP) == binds
    fits = {
        start: fit_family_tables(est.release_.domain, [t.attrs for t in tables], [measurement_for(t) for t in tables],
                                 n_rec, regularization=noise_regularization(tables, n_rec, cap=BN_WEIGHT_CAP) / n_rec,
                                 naive_regularization=noise_excess(tables, n_rec) / n_rec, prior="dirichlet",
                                 dirichlet_spread=BN_DIRICHLET_SPREAD, warm_start=start)
        for start in ("mle", "best")
    }
    got = [model.get_cpds(t.attrs[0]).get_values() for t in tables]
    for g, table in zip(got, fits["best" if binds else "mle"].tables):
        np.testing.assert_allclose(g, cpd_values(table), atol=1e-12)


@pytest.mark.slow
def test_prior_strength_scales_the_weight_the_fit_reads_its_pseudo_count_from():
    """prior_strength=s is the same fit as fit_family_tables at s times the capped global weight (Dirichlet and
    Gaussian priors); s=1 is the default bit for bit; a weaker prior leaves the fit closer to its noisy tables."""
    import pgmpy_dp
    from pgmpy_dp.estimators.conditionals import cpd_values
    from pgmpy_dp.estimators.evidence import pooled_n_records
    from pgmpy_dp.estimators.likelihood import (
        BN_DIRICHLET_SPREAD, BN_WEIGHT_CAP, noise_excess, measurement_for, noise_regularization,
    )

    net, df, empty = _asia(3000)
    private = dict(epsilon=0.3, random_state=5, domain=net.states)
    base = pgmpy_dp.DiscretePrivateMLE(**private)
    default = empty().fit(df, estimator=base)
    one = empty().fit(df, estimator=pgmpy_dp.DiscretePrivateMLE(prior_strength=1.0, **private))
    assert all(np.array_equal(one.get_cpds(v).get_values(), default.get_cpds(v).get_values()) for v in net.nodes())
    tables = list(base.release_)
    n = pooled_n_records([base.release_])
    w = noise_regularization(tables, n, cap=BN_WEIGHT_CAP) / n
    assert w * n > 0.01  # a prior that matters at this noise (the weight per N records is w)
    distance = {}
    for cpd_prior, extra in (("dirichlet", {"prior": "dirichlet", "dirichlet_spread": BN_DIRICHLET_SPREAD}),):
        for s in (0.05, 1.0, 8.0):
            est = pgmpy_dp.DiscretePrivateMLE(prior_strength=s, **private)
            model = empty().fit(df, estimator=est)
            assert est.release_.tables[0].values.tolist() == tables[0].values.tolist()  # the same noisy tables
            fit = fit_family_tables(est.release_.domain, [t.attrs for t in tables],
                                    [measurement_for(t) for t in tables], n, regularization=s * w,
                                    naive_regularization=noise_excess(tables, n) / n, **extra)
            for t, table in zip(tables, fit.tables):
                np.testing.assert_allclose(model.get_cpds(t.attrs[0]).get_values(), cpd_values(table), atol=1e-9)
            # how far the fitted family tables sit from the noisy ones, in noise scales
            distance[cpd_prior, s] = float(np.sqrt(np.mean(np.concatenate(
                [((f - t.values) / np.sqrt(t.variance)).ravel() ** 2 for f, t in zip(fit.tables, tables)]))))
        # measured 0.579 / 0.590 / 0.624: steps of 2% or more
        assert distance[cpd_prior, 0.05] < 0.99 * distance[cpd_prior, 1.0] < 0.99**2 * distance[cpd_prior, 8.0]


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan"), True, "strong", None])
def test_a_bad_prior_strength_is_refused_before_spending(bad):
    import pgmpy_dp

    net, df, empty = _asia(300)
    budget = pgmpy_dp.PrivacyBudget(epsilon=2.0)
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, random_state=0, domain=net.states, budget=budget, prior_strength=bad)
    # a non-number is a TypeError, a number outside (0, inf) a ValueError; both name the parameter
    error = TypeError if isinstance(bad, (bool, str, type(None))) else ValueError
    with pytest.raises(error, match="prior_strength must be"):
        empty().fit(df, estimator=est)
    assert budget.spent == 0


@pytest.mark.slow
def test_query_interval_refits_with_the_estimators_prior_strength():
    """The refits re-run the fit's own consistency step, so a weaker prior moves the refits too."""
    import pgmpy_dp
    from pgmpy_dp.uncertainty.simulate import fit_view, refits as simulated_refits

    net, df, empty = _asia(2000)
    refits = {}
    for s in (1.0, 0.05):
        est = pgmpy_dp.DiscretePrivateMLE(epsilon=0.3, random_state=5, domain=net.states, prior_strength=s)
        empty().fit(df, estimator=est)
        refits[s] = simulated_refits(fit_view(est), 2, np.random.default_rng(0))
        redo = simulated_refits(fit_view(est), 2, np.random.default_rng(0))
        assert all(np.array_equal(a, b) for x, y in zip(refits[s], redo) for a, b in zip(x, y))
    assert max(float(np.max(np.abs(a - b))) for x, y in zip(refits[1.0], refits[0.05]) for a, b in zip(x, y)) > 1e-3
