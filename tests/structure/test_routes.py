"""The two routes of the structure learners, the route rule, and the settings derived without oracle inputs."""

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from pgmpy_dp import PrivacyBudget, PrivateIsingEstimator, PrivatePairwiseEstimator
from pgmpy_dp import _memory
from pgmpy_dp.structure import routing, tables_route
from pgmpy_dp.structure.frank_wolfe import ITERATION_CONSTANT, frank_wolfe_iterations, frank_wolfe_noise_scale
from pgmpy_dp.testing.pairwise_models import model_edges, random_pairwise_model, sample_pairwise_model


def _ising(p, n, seed, eta=0.5):
    W, theta = random_pairwise_model(p, k=2, max_degree=3, eta=eta, seed=seed)
    return W, sample_pairwise_model(W, theta, n, seed=seed + 1)


# -- the route rule --------------------------------------------------------------------------------


@pytest.mark.parametrize("p, k, expected", [(2, 2, "tables"), (100, 2, "tables"), (101, 2, "frank-wolfe"),
                                            (67, 3, "tables"), (68, 3, "frank-wolfe"), (4, 50, "tables"),
                                            (5, 50, "frank-wolfe")])
def test_auto_route_follows_the_cells_of_all_two_way_tables(p, k, expected):
    # all pairs' cells: p (p - 1) / 2 k**2 against the limit (100 binary columns: 19,800 cells)
    assert (p * (p - 1) // 2 * k * k <= routing.TABLES_MAX_PAIR_CELLS) == (expected == "tables")
    assert routing.choose_route("auto", p, k, 0.5) == expected
    # an explicit route is kept, and Frank-Wolfe-only settings choose Frank-Wolfe
    assert routing.choose_route("tables", p, k, 0.5) == "tables"
    assert routing.choose_route("auto", p, k, 0.5, frank_wolfe_settings=True) == "frank-wolfe"


@pytest.mark.filterwarnings("ignore::pgmpy_dp.structure.routing.BoundaryWarning")  # the constant frame
@pytest.mark.parametrize("cls", [PrivateIsingEstimator, PrivatePairwiseEstimator])
def test_the_route_is_the_same_on_neighbouring_and_unrelated_frames(cls):
    _, df = _ising(6, 400, seed=3)
    neighbour = df.iloc[1:]  # one record removed
    flipped = df.copy()
    flipped.iloc[0] = flipped.iloc[0].map(lambda v: 1 - v)  # one record changed
    other = pd.DataFrame({c: np.zeros(50, dtype=int) for c in df.columns})
    domain = {c: [0, 1] for c in df.columns}
    frames = [d.astype(int) for d in (df, neighbour, flipped)] + [other]
    for route in routing.ROUTES:
        routes = {cls(route=route, random_state=0).fit(d, rho=1.0, domain=domain).route_ for d in frames}
        assert len(routes) == 1
        assert routes == {"tables" if route == "auto" else route}


# -- Frank-Wolfe's iteration count and radius ------------------------------------------------------


@pytest.mark.parametrize("n, rho, radius, d", [(10_000, 0.1, 3.0, 11), (30_000, 1.0, 2.0, 21), (500, 0.01, 1.0, 5)])
def test_iteration_rule_is_the_formula(n, rho, radius, d):
    core = radius * n * math.sqrt(rho) / math.log(2 * d)
    expected = min(2_000, max(10, math.ceil(ITERATION_CONSTANT * core ** (2 / 3))))
    assert frank_wolfe_iterations(n, rho, radius, d) == expected


def test_iterations_grow_like_n_sqrt_rho_to_the_two_thirds():
    base = frank_wolfe_iterations(20_000, 0.05, 2.0, 11)
    assert frank_wolfe_iterations(160_000, 0.05, 2.0, 11) == pytest.approx(4 * base, abs=4)  # 8x n
    assert frank_wolfe_iterations(20_000, 0.05 * 64, 2.0, 11) == pytest.approx(4 * base, abs=4)  # 8x sqrt(rho)
    assert frank_wolfe_iterations(10, 1e-6, 1.0, 3) == 10 and frank_wolfe_iterations(1e12, 1e6, 9.0, 3) == 2_000


def test_declared_n_and_width_set_the_iterations_and_spend_nothing_extra():
    _, df = _ising(6, 2_000, seed=5)
    rho, width = 2.0, 1.5
    est = PrivateIsingEstimator(route="frank-wolfe", width=width, random_state=0).fit(df, rho=rho, n_records=2_000)
    assert est.releases_ == [] and est.n_records_ == 2_000
    assert est.n_iter_ == frank_wolfe_iterations(2_000, rho / 6, 2 * width, 7)
    assert est.noise_scale_ == pytest.approx(frank_wolfe_noise_scale(rho / 6, 2 * width, est.n_iter_))


def test_pairwise_radius_contains_every_regressions_true_weights():
    # the u-vs-v regression of node i has one-hot weights W_ij(u, b) - W_ij(v, b) and intercept
    # theta_i(u) - theta_i(v); their l1 norm must fit in 2 k width
    for seed in range(5):
        k = 3
        W, theta = random_pairwise_model(5, k=k, max_degree=3, eta=0.6, seed=seed)
        p = W.shape[0]
        attrs = list(range(p))
        edges = [(i, j) for i, j in itertools.combinations(attrs, 2) if np.abs(W[i, j]).max() > 0]
        weights = {(i, j): W[i, j] for i, j in itertools.combinations(attrs, 2)}
        width = routing.width_from_fit(weights, dict(enumerate(theta)), edges, attrs)
        worst = 0.0
        for i in attrs:
            for u, v in itertools.combinations(range(k), 2):
                l1 = abs(theta[i][u] - theta[i][v]) + sum(
                    np.abs(W[i, j][u] - W[i, j][v]).sum() for j in attrs if j != i
                )
                worst = max(worst, l1)
        assert worst <= 2 * k * width + 1e-12
        assert worst > 2 * width  # the old default 2 width would cut the truth off


def test_pairwise_default_radius_is_two_k_width():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({c: rng.integers(0, 3, 500) for c in "abc"}).astype(pd.CategoricalDtype([0, 1, 2]))
    est = PrivatePairwiseEstimator(route="frank-wolfe", width=0.7, n_iter=9, random_state=0).fit(df, rho=1.0)
    expected = frank_wolfe_noise_scale(1.0 / (3 * 2), 2 * 3 * 0.7, 9)
    np.testing.assert_allclose(est.noise_scale_, [expected] * 3)


# -- no silent oracle ------------------------------------------------------------------------------


def test_width_none_spends_a_share_on_a_pilot_and_the_total_is_rho():
    _, df = _ising(6, 3_000, seed=7)
    budget = PrivacyBudget(rho=1.0)
    est = PrivateIsingEstimator(route="frank-wolfe", random_state=0).fit(df, rho=1.0, budget=budget)
    assert budget.spent == pytest.approx(1.0)
    (pilot,) = est.releases_
    assert pilot.rho == pytest.approx(routing.WIDTH_SHARE) and len(pilot.tables) == 15
    rest = 1.0 - routing.WIDTH_SHARE
    assert est.n_iter_ == frank_wolfe_iterations(est.n_records_, rest / 6, 2 * est.width_, 7)
    assert est.noise_scale_ == pytest.approx(frank_wolfe_noise_scale(rest / 6, 2 * est.width_, est.n_iter_))


def test_width_given_without_n_spends_a_small_share_on_a_count():
    _, df = _ising(5, 3_000, seed=8)
    est = PrivateIsingEstimator(route="frank-wolfe", width=1.5, random_state=0).fit(df, rho=1.0)
    (count,) = est.releases_
    assert count.rho == pytest.approx(routing.COUNT_SHARE)
    # a noisy count: sigma = 1 / sqrt(2 * 0.01), two cells
    assert abs(est.n_records_ - 3_000) < 6 * math.sqrt(2) * math.sqrt(1 / (2 * routing.COUNT_SHARE))


def test_understated_width_warns_from_the_fits_output():
    W, df = _ising(8, 20_000, seed=11)
    with pytest.warns(routing.BoundaryWarning, match="boundary"):
        PrivateIsingEstimator(route="frank-wolfe", width=0.3, random_state=0).fit(df, rho=10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", routing.BoundaryWarning)
        est = PrivateIsingEstimator(route="frank-wolfe", width=3.0, random_state=0).fit(df, rho=10.0)
    assert np.median(est.l1_fraction_) < routing.BOUNDARY_FRACTION


@pytest.mark.parametrize("route", ["tables", "frank-wolfe"])
def test_defaults_recover_a_seeded_8_node_ising_model(route):
    # at rho = 1 the default tables route recovered 10 of 10 such models from 1,000 rows, 5 of 10 from 500
    # (docs/structure.md); 4,000 rows leave Frank-Wolfe's larger noise room too
    W, df = _ising(8, 4_000, seed=8_000)
    truth = set(model_edges(W, list(df.columns)))
    assert 4 <= len(truth) <= 12
    est = PrivateIsingEstimator(route=route, random_state=1).fit(df, rho=1.0)
    assert set(est.edges_) == truth
    A = W[:, :, 1, 1]
    iu = np.triu_indices(8, 1)
    # couplings: sampling error ~ 1/sqrt(n) times a few, plus the privacy noise
    assert np.abs(est.coef_ - A)[iu].max() < (0.15 if route == "tables" else 0.3)


def test_default_recovers_a_seeded_10_node_3_state_model_beyond_the_exact_limit():
    # 3**10 joint cells: the icov screen and the refit test; at rho = 1 the default recovered 10 of 10
    # held-out models from 1,000 rows and every one from 2,000 (benchmarks/structure_edge_rule.py)
    W, theta = random_pairwise_model(10, k=3, max_degree=3, eta=0.5, seed=30_000)
    df = sample_pairwise_model(W, theta, 2_000, seed=30_001)
    est = PrivatePairwiseEstimator(random_state=0).fit(df, rho=1.0)
    assert est.route_ == "tables" and est.tables_fit_ == "icov+refit"
    assert set(est.edges_) == set(model_edges(W, list(df.columns)))


def test_independent_columns_give_no_edges_in_most_fits():
    # the default rule controls the family-wise error (Bonferroni) at edge_alpha(3,000) = 2.2%: 2 or more
    # of 10 seeds with a false edge has probability 0.02 at exactly that rate
    rng = np.random.default_rng(0)
    false = 0
    for seed in range(10):
        df = pd.DataFrame(rng.integers(0, 2, (3_000, 6)), columns=list("abcdef")).astype(pd.CategoricalDtype([0, 1]))
        false += bool(PrivateIsingEstimator(random_state=seed).fit(df, rho=1.0).edges_)
    assert tables_route.edge_alpha(3_000) == pytest.approx(0.2 / 9)
    assert false <= 1


# -- the tables route ------------------------------------------------------------------------------


def test_tables_route_releases_every_pair_once_and_refits_the_selected_graph():
    W, df = _ising(6, 5_000, seed=21)
    budget = PrivacyBudget(rho=2.0)
    est = PrivateIsingEstimator(random_state=0).fit(df, rho=0.5, budget=budget)
    assert est.route_ == "tables" and est.tables_fit_ == "exact-mle"
    (release,) = est.releases_
    assert sorted(release.attrs) == sorted(itertools.combinations(df.columns, 2))
    assert release.rho == pytest.approx(0.5) and budget.spent == pytest.approx(0.5)
    assert sorted(est.model_.edges()) == sorted(est.graph_.edges())
    assert sorted(map(tuple, map(sorted, est.model_.edges()))) == sorted(est.edges_)
    # the model on a user's graph is a refit of the same release: nothing more is spent
    other = est.to_markov_network(edges=[("x0", "x1")])
    assert sorted(other.edges()) == [("x0", "x1")] and budget.spent == pytest.approx(0.5)


def test_tables_route_beyond_the_exact_limit_selects_by_inverse_covariance(monkeypatch):
    W, df = _ising(7, 20_000, seed=31)
    monkeypatch.setattr(tables_route, "EXACT_MAX_CELLS", 16)
    est = PrivateIsingEstimator(random_state=0).fit(df, rho=5.0)
    assert est.tables_fit_ == "icov+refit"
    assert set(est.edges_) == set(model_edges(W, list(df.columns)))
    # couplings of the kept edges come from the exact refit on the sparse graph
    A = W[:, :, 1, 1]
    for a, b in est.edges_:
        i, j = int(a[1:]), int(b[1:])
        assert abs(est.coef_[i, j] - A[i, j]) < 0.1


def test_tables_route_k_states_recovers_a_graph():
    W, theta = random_pairwise_model(5, k=3, max_degree=2, eta=0.8, seed=2)
    df = sample_pairwise_model(W, theta, 20_000, seed=3)
    est = PrivatePairwiseEstimator(random_state=0).fit(df, rho=5.0)
    assert est.route_ == "tables"
    assert set(est.edges_) == set(model_edges(W, list(df.columns)))
    assert est.weights_["x0", "x1"].shape == (3, 3)


def test_edge_alpha_is_the_formula_and_its_cut_off_grows_slowly():
    base, rows = tables_route.EDGE_ALPHA, tables_route.ALPHA_ROWS
    for n in (1, 10, rows):
        assert tables_route.edge_alpha(n) == base
    for n in (2 * rows, 30_000, 1e7):
        assert tables_route.edge_alpha(n) == pytest.approx(base * (rows / n) ** 2)
    # the Bonferroni cut-off over 45 pairs at 1e3 and 1e5 rows: z(0.2 / 90) = 2.845, z(2e-5 / 90) = 5.049
    crit = [norm.isf(tables_route.edge_alpha(n) / 90) for n in (1e3, 1e5)]
    assert crit == pytest.approx([2.845, 5.049], abs=1e-3)


def test_a_fit_cuts_at_the_bonferroni_value_of_its_noisy_row_count():
    _, df = _ising(6, 8_000, seed=41)
    est = PrivateIsingEstimator(random_state=0).fit(df, rho=1.0)
    n_hat = est.releases_[0].n_records_estimate
    assert abs(n_hat - 8_000) < 50
    assert est.threshold_ == pytest.approx(norm.isf(tables_route.edge_alpha(n_hat) / (2 * 15)))


@pytest.mark.slow  # a fresh interpreter or a Monte Carlo estimate: seconds of CPU each
def test_monte_carlo_fisher_information_matches_the_exact_one():
    # the refit test estimates the Fisher information from draws of the refitted model; on a model
    # small enough to enumerate, 200,000 draws give the exact covariance to about 1 / sqrt(200,000)
    # relative per entry of F (a few per cent after inversion): allow 5%
    from pgmpy_dp.privacy import Domain

    W, theta = random_pairwise_model(5, k=3, max_degree=2, eta=0.6, seed=4)
    df = sample_pairwise_model(W, theta, 5_000, seed=5)
    dom = Domain.from_dataframe(df)
    rel = tables_route.release_pair_tables(dom.encode(df), dom, 10.0, random_state=np.random.default_rng(0))
    edges = model_edges(W, list(df.columns))
    refit = tables_route.refit_on_edges(rel, dom, edges)
    exact = tables_route._wald_covariance(*tables_route._joint_grid(refit, dom), dom, edges, 2.0, 5_000)
    draws = tables_route._model_sample(refit, dom, 200_000, np.random.default_rng(1))
    approx = tables_route._wald_covariance(*draws, dom, edges, 2.0, 5_000)
    for e in edges:
        np.testing.assert_allclose(np.diag(approx[e]), np.diag(exact[e]), rtol=0.05)


def test_the_refit_test_removes_the_false_edges_of_the_inverse_covariance_screen(monkeypatch):
    # 10 columns of 3 states are beyond the exact limit (3**10 cells); in this seeded fit the icov scores
    # cut at the Bonferroni value admit false edges, the exact refit's Wald test does not (the study
    # in benchmarks/structure_edge_rule.py measures this over 10 models)
    from pgmpy_dp.privacy import Domain

    W, theta = random_pairwise_model(10, k=3, max_degree=3, eta=0.5, seed=10_000)
    df = sample_pairwise_model(W, theta, 1_000, seed=21_000)
    dom = Domain.from_dataframe(df)
    rel = tables_route.release_pair_tables(dom.encode(df), dom, 10.0, random_state=np.random.default_rng([0, 1000, 10000]))
    truth = set(model_edges(W, list(df.columns)))
    fit = tables_route.fit_tables_route(rel, dom, random_state=0)
    assert fit.method == "icov+refit" and set(fit.edges) == truth
    monkeypatch.setattr(tables_route, "_confirm_on_refit", lambda *args: None)
    screen_only = tables_route.fit_tables_route(rel, dom, random_state=0)
    assert screen_only.method == "icov" and len(set(screen_only.edges) - truth) >= 1


def test_an_isolated_column_refits_at_a_huge_rho():
    # at rho = 1e6 the discrete Gaussian's variance rounds to zero; the refit of an isolated node's
    # margin still needs a positive noise scale
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2, 5_000)
    df = pd.DataFrame({"a": a, "b": np.where(rng.random(5_000) < 0.85, a, 1 - a), "c": rng.integers(0, 2, 5_000)})
    est = PrivateIsingEstimator(random_state=0).fit(df.astype(pd.CategoricalDtype([0, 1])), rho=1e6)
    assert est.edges_ == [("a", "b")]
    # the isolated column's field: the log-odds of its empirical mean (non-private level, 1 / sqrt(n))
    share = df.c.mean()
    assert est.intercept_[2] == pytest.approx(0.5 * math.log(share / (1 - share)), abs=0.01)


def test_wald_scores_of_a_fit_match_its_contrasts():
    w = {("a", "b"): 0.25 * np.array([[1.0, -1.0], [-1.0, 1.0]])}
    score, crit = tables_route.wald_scores(w, {("a", "b"): np.array([[0.04]])}, alpha=0.05)
    # contrast W11 - W10 - W01 + W00 = 1.0; sd 0.2: score 5; one pair: crit = z(0.025)
    assert score["a", "b"] == pytest.approx(5.0) and crit == pytest.approx(1.959964, abs=1e-5)


# -- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize("init, match", [({"route": "magic"}, "route must be one of"),
                                         ({"route": None}, "route must be one of"),
                                         ({"width": 0.0}, "width must be None"),
                                         ({"eta": -1.0}, "eta must be None")])
def test_bad_settings_are_refused_before_charging(init, match):
    _, df = _ising(4, 200, seed=1)
    budget = PrivacyBudget(rho=1.0)
    with pytest.raises(ValueError, match=match):
        PrivateIsingEstimator(**init).fit(df, rho=0.5, budget=budget)
    assert budget.spent == 0 and budget.pending == ()


@pytest.mark.parametrize("n_records", [0, -5, float("nan"), True, "many"])
def test_bad_n_records_is_refused_before_charging(n_records):
    _, df = _ising(4, 200, seed=1)
    budget = PrivacyBudget(rho=1.0)
    with pytest.raises(ValueError, match="n_records must be"):
        PrivateIsingEstimator().fit(df, rho=0.5, budget=budget, n_records=n_records)
    assert budget.spent == 0


@pytest.mark.parametrize("cls", [PrivateIsingEstimator, PrivatePairwiseEstimator])
def test_new_parameters_survive_clone(cls):
    from sklearn.base import clone

    est = cls(route="frank-wolfe", width=None, eta=None, n_iter=None)
    assert clone(est).get_params() == est.get_params()
    assert est.get_params()["route"] == "frank-wolfe"


@pytest.mark.parametrize("route", ["tables", "frank-wolfe"])
def test_the_memory_check_covers_both_routes(monkeypatch, route):
    monkeypatch.setattr(_memory, "available_memory", lambda: 10_000)
    _, df = _ising(6, 200, seed=2)
    budget = PrivacyBudget(rho=1.0)
    with pytest.raises(ValueError, match=r"would need about .* GiB .*Nothing was charged"):
        PrivateIsingEstimator(route=route).fit(df, rho=0.5, budget=budget)
    assert budget.spent == 0 and budget.pending == ()
    # the estimate reads the declared states only: the tables route's is what tables_route states
    assert 10_000 < tables_route.memory_needed([2] * 6) < 10**6
