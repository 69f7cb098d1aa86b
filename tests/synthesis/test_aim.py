"""AIM's steps: workload and candidates, the round selection, the whole run; model marginals."""

import itertools
import math

import numpy as np
import pytest

from pgmpy_dp import Domain
from pgmpy_dp.engine import JunctionTree
from pgmpy_dp.estimators import priors
from pgmpy_dp.privacy import selection
from pgmpy_dp.privacy.domain import DomainError
from pgmpy_dp.synthesis import aim, marginals


def test_default_workload_is_the_capped_3_way_marginals():
    dom = Domain({"a": range(100), "b": range(100), "c": range(2), "d": range(2)})
    plan = aim.check_aim(dom, rho=1.0)
    triples = [w for w, _ in plan.workload]
    assert triples == [c for c in itertools.combinations("abcd", 3) if dom.cells(c) <= aim.DEFAULT_WORKLOAD_CELLS]
    assert ("a", "b", "c") not in triples and ("a", "c", "d") in triples


def test_candidates_are_the_downward_closure_weighted_by_overlap():
    dom = Domain({v: [0, 1] for v in "abcd"})
    plan = aim.check_aim(dom, rho=1.0, workload=[("a", "b", "c"), (("c", "d"), 2.0)])
    assert set(plan.candidates) == {
        ("a", "b", "c"), ("a", "b"), ("a", "c"), ("b", "c"), ("a",), ("b",), ("c",), ("c", "d"), ("d",)
    }
    assert plan.candidates[("a", "b", "c")] == 3.0 + 2.0
    assert plan.candidates[("c",)] == 1.0 + 2.0
    assert plan.candidates[("c", "d")] == 1.0 + 4.0


@pytest.mark.parametrize(
    "workload, error, match",
    [
        ([("a", "q")], DomainError, r"\['q'\]"),
        ([(("a", "b"), -1.0)], ValueError, "positive finite"),
        ([("a", "a")], ValueError, "repeats"),
        ("ab", TypeError, "non-empty list"),
        ([], TypeError, "non-empty list"),
        ([(1, 2)], TypeError, "tuple of column names"),
    ],
)
def test_workload_errors_name_the_problem(workload, error, match):
    with pytest.raises(error, match=match):
        aim.check_aim(Domain({"a": [0, 1], "b": [0, 1]}), rho=1.0, workload=workload)


def test_worst_approximated_prefers_the_worst_weighted_error():
    exact = {("a",): np.array([80.0, 20.0]), ("b",): np.array([55.0, 45.0])}
    est = {("a",): np.array([50.0, 50.0]), ("b",): np.array([50.0, 50.0])}
    rng = np.random.default_rng(0)
    picks = [aim.worst_approximated(exact, est, {("a",): 1.0, ("b",): 1.0}, 1.0, 1.0, rng) for _ in range(400)]
    # scores 60 - b and 10 - b at sensitivity 1: P(a) = 1 / (1 + exp(-25)) ~ 1
    assert picks.count(("a",)) == 400
    # a weight that flips the order (b's error counts 20 times): b wins
    w = {("a",): 1.0, ("b",): 20.0}
    picks = [aim.worst_approximated(exact, est, w, 1.0, 20.0, rng) for _ in range(200)]
    assert picks.count(("b",)) > 190


def random_model(seed=0):
    rng = np.random.default_rng(seed)
    dom = Domain({"a": range(2), "b": range(3), "c": range(2), "d": range(3), "e": range(2)})
    cliques = [("a", "b"), ("b", "c", "d"), ("d", "e"), ("a",), ("e",)]
    theta = [rng.normal(size=dom.shape(c)) for c in cliques]
    return dom, cliques, theta


def brute_force(dom, cliques, theta, attrs):
    log_joint = np.zeros(dom.shape(dom.attrs))
    letters = {a: i for i, a in enumerate(dom.attrs)}
    for c, t in zip(cliques, theta):
        shape = [dom.size(a) if a in c else 1 for a in dom.attrs]
        log_joint = log_joint + np.transpose(t, np.argsort([letters[a] for a in c])).reshape(shape)
    p = np.exp(log_joint - log_joint.max())
    p /= p.sum()
    drop = tuple(i for i, a in enumerate(dom.attrs) if a not in attrs)
    kept = [a for a in dom.attrs if a in attrs]
    return np.transpose(p.sum(axis=drop), [kept.index(a) for a in attrs])


def test_tree_marginal_matches_brute_force_in_and_out_of_cliques():
    dom, cliques, theta = random_model()
    jt = JunctionTree(dom, cliques)
    cal = jt.calibrate(theta)
    for k in (1, 2, 3):
        for attrs in itertools.permutations(dom.attrs, k):
            got = marginals.tree_marginal(jt, cal, attrs)
            np.testing.assert_allclose(got, brute_force(dom, cliques, theta, attrs), atol=1e-12, err_msg=str(attrs))


def test_model_megabytes_counts_the_triangulated_cliques():
    dom = Domain({v: range(512) for v in "abcd"})
    # a 4-cycle triangulates into two triangles of 512**3 cells
    assert marginals.model_megabytes(dom, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]) == 2 * 512**3 * 8 / 2**20


def test_run_aim_spends_exactly_rho_and_anneals(monkeypatch):
    eps = []
    real = selection.exponential_mechanism
    monkeypatch.setattr(aim, "exponential_mechanism", lambda s, e, sens=1.0, rng=None: eps.append(e) or real(s, e, sens, rng))
    rng = np.random.default_rng(0)
    n = 5000
    a = rng.integers(0, 2, n)
    codes = {"a": a, "b": np.where(rng.random(n) < 0.9, a, 1 - a), "c": rng.integers(0, 3, n)}
    dom = Domain({"a": [0, 1], "b": [0, 1], "c": [0, 1, 2]})
    model, releases, selected = aim.run_aim(codes, dom, rho=0.5, workload=[("a", "b"), ("b", "c")], rng=rng)
    spent = math.fsum(r.rho for r in releases) + math.fsum(selection.exponential_mechanism_rho(e) for e in eps)
    assert math.isclose(spent, 0.5, rel_tol=1e-12)
    assert len(selected) == len(eps) == len(releases) - 1
    assert ("a", "b") in selected
    # annealing: later rounds measure with less noise than the opening rounds
    scales = [r.tables[0].scale for r in releases[1:]]
    assert min(scales) < releases[0].tables[0].scale


def test_short_m_step_refits_still_recover_a_measured_pair():
    # Warm-started refits with the rounds' short M-steps over a growing list of releases must
    # still answer the measured pair to within a few noise scales per cell.
    rng = np.random.default_rng(3)
    n = 20_000
    a = rng.integers(0, 4, n)
    b = (a + (rng.random(n) < 0.2)) % 4
    c = rng.integers(0, 3, n)
    codes = {"a": a, "b": b, "c": c}
    dom = Domain({"a": range(4), "b": range(4), "c": range(3)})
    rels = [marginals.measure(codes, dom, [("a",), ("b",), ("c",)], 5.0, rng, "1-way")]
    fit = marginals.MarkovFit(
        dom, max_iter=aim.ROUND_EM_MAPS, m_step_iter=aim.ROUND_M_STEPS, e_step_iter=aim.ROUND_E_STEPS
    ).fit(rels)
    rels.append(marginals.measure(codes, dom, [("a", "b")], 5.0, rng, "pair"))
    fit = fit.fit(rels)
    exact = np.zeros((4, 4))
    np.add.at(exact, (a, b), 1)
    sigma = rels[-1][("a", "b")].scale
    assert np.abs(fit.n_records * fit.marginal(("a", "b")) - exact).max() < 4 * sigma + 0.01 * n
    # the independent model of the 1-way tables alone is far off on this pair
    independent = np.outer(exact.sum(1), exact.sum(0)) / n
    assert np.abs(independent - exact).max() > 10 * (4 * sigma + 0.01 * n)


@pytest.mark.parametrize("threshold, short", [(0.0, True), (1e9, False)])
def test_round_refits_shorten_only_past_the_model_size_threshold(monkeypatch, threshold, short):
    monkeypatch.setattr(aim, "SHORT_REFIT_MB", threshold)
    settings = []
    real = marginals.MarkovFit.fit
    monkeypatch.setattr(
        marginals.MarkovFit, "fit", lambda self, r: settings.append((self.m_step_iter, self.e_step_iter)) or real(self, r)
    )
    rng = np.random.default_rng(1)
    n = 3000
    a = rng.integers(0, 2, n)
    codes = {"a": a, "b": np.where(rng.random(n) < 0.9, a, 1 - a), "c": rng.integers(0, 3, n)}
    dom = Domain({"a": [0, 1], "b": [0, 1], "c": [0, 1, 2]})
    aim.run_aim(codes, dom, rho=0.5, workload=[("a", "b"), ("b", "c")], rng=rng)
    full = (None, 10)
    assert settings[0] == full  # the opening fit is always a full one
    expected = (aim.ROUND_M_STEPS, aim.ROUND_E_STEPS) if short else full
    assert len(settings) > 1 and all(s == expected for s in settings[1:])


def test_the_published_fit_starts_from_the_last_rounds_fit(monkeypatch):
    starts = []
    real = marginals.fit_final_model
    monkeypatch.setattr(
        aim, "fit_final_model", lambda r, d, p, start=None, **kw: starts.append((start, kw)) or real(r, d, p, start, **kw)
    )
    rng = np.random.default_rng(2)
    n = 4000
    a = rng.integers(0, 3, n)
    codes = {"a": a, "b": (a + (rng.random(n) < 0.2)) % 3, "c": rng.integers(0, 2, n)}
    dom = Domain({"a": range(3), "b": range(3), "c": range(2)})
    model, releases, _ = aim.run_aim(codes, dom, rho=0.5, workload=[("a", "b"), ("b", "c")], rng=rng)
    ((start, kw),) = starts
    assert isinstance(start, marginals.MarkovFit)
    assert kw == {"regularization": start.scaled_regularization, "max_iter": aim.FINAL_EM_MAPS}
    assert 0 < start.scaled_regularization < priors.UNRESOLVED_PRIOR_PRECISION  # the rule before the floor: under it here
    assert start.cliques == marginals.measured_cliques(releases)  # fitted to every release, the last included
    assert sorted(map(sorted, (f.scope() for f in model.get_factors()))) == sorted(map(sorted, start.cliques))


def test_tree_marginal_has_no_column_limit():
    # 70 binary attributes in a chain of copies: numpy's einsum has 52 letters, and P(first, last) spans them all
    names = [f"x{i}" for i in range(70)]
    dom = Domain({v: [0, 1] for v in names})
    cliques = list(zip(names, names[1:]))
    copy = np.array([[0.8, 0.2], [0.3, 0.7]])
    jt = JunctionTree(dom, cliques)
    cal = jt.calibrate([np.log(copy)] * len(cliques))
    got = marginals.tree_marginal(jt, cal, ("x0", "x69"))
    # by hand: p(x0, x69) is proportional to the product of the 69 copy matrices
    joint = np.linalg.matrix_power(copy, len(cliques))
    np.testing.assert_allclose(got, joint / joint.sum(), atol=1e-12)


def test_candidates_of_a_wide_workload_are_built_once_each():
    dom = Domain({f"c{j}": [0, 1] for j in range(60)})
    plan = aim.check_aim(dom, rho=1.0)
    n = 60
    assert len(plan.candidates) == n + n * (n - 1) // 2 + n * (n - 1) * (n - 2) // 6
    # each attribute lies in C(59, 2) of the workload's triples, so a k-set weighs k * C(59, 2)
    assert plan.candidates[("c0",)] == 59 * 58 // 2
    assert plan.candidates[("c0", "c1", "c2")] == 3 * 59 * 58 // 2


class StepClock:
    """A wall clock that moves one second per reading: a run's timing without the machine."""

    def __init__(self):
        self.now = -1.0

    def __call__(self):
        self.now += 1.0
        return self.now


def chain_codes(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    return {"a": a, "b": np.where(rng.random(n) < 0.9, a, 1 - a), "c": rng.integers(0, 3, n)}


CHAIN = Domain({"a": [0, 1], "b": [0, 1], "c": [0, 1, 2]})


def capped_run(monkeypatch, codes, max_seconds, seed=0):
    """``run_aim`` under a step clock; returns its releases, selections and the epsilons of its selections."""
    eps = []
    real = selection.exponential_mechanism
    monkeypatch.setattr(aim, "exponential_mechanism", lambda s, e, sens=1.0, rng=None: eps.append(e) or real(s, e, sens, rng))
    monkeypatch.setattr(aim, "_clock", StepClock())
    _, releases, selected = aim.run_aim(codes, CHAIN, rho=0.5, workload=[("a", "b"), ("b", "c")],
                                        rng=np.random.default_rng(seed), max_seconds=max_seconds)
    return releases, selected, eps


def test_the_time_cap_ends_the_rounds_and_spends_exactly_rho(monkeypatch):
    # the step clock reads 0 at the start, 2k - 1 when round k begins and 2k when it ends, so round k
    # begins out of time (time used plus the last round's second) once 2k >= max_seconds: round 3 for 6 s
    releases, selected, eps = capped_run(monkeypatch, chain_codes(3000, 0), max_seconds=6.0)
    assert len(selected) == len(eps) == len(releases) - 1 == 3
    spent = math.fsum(r.rho for r in releases) + math.fsum(selection.exponential_mechanism_rho(e) for e in eps)
    assert math.isclose(spent, 0.5, rel_tol=1e-12)
    # the last round spends what the uncapped rounds would have spread: its noise is the smallest
    scales = [r.tables[0].scale for r in releases[1:]]
    assert scales[-1] < min(scales[:-1])
    uncapped, _, _ = capped_run(monkeypatch, chain_codes(3000, 0), max_seconds=None)
    assert len(uncapped) > len(releases)


def test_the_time_cap_reads_the_clock_not_the_data(monkeypatch):
    # Neighbouring frames (one record removed) under the same clock stop at the same round: the cap's
    # decision is a function of the clock alone, and the round it picks is the one computed from the
    # clock's readings with no data at all (the rounds before it follow AIM's own noisy annealing).
    codes = chain_codes(3000, 1)
    neighbour = {v: c[1:] for v, c in codes.items()}
    clock, k = StepClock(), 0
    start, last_round = clock(), 0.0
    while True:  # the cap's rule, replayed on the clock alone
        k += 1
        began = clock()
        if began - start + last_round >= 8.0:
            break
        last_round = clock() - began
    for frame in (codes, neighbour):
        for seed in (0, 1):
            releases, selected, _ = capped_run(monkeypatch, frame, max_seconds=8.0, seed=seed)
            assert len(selected) == k == 4


def test_the_pool_bounds_admit_exactly_what_triangulating_each_candidate_admits():
    # The merge bound and the cached sizes only skip work: the pool is the one a triangulation of the
    # model with each candidate gives, at every limit, as the model grows and the cache is reused.
    rng = np.random.default_rng(0)
    dom = Domain({f"v{i}": range(int(k)) for i, k in enumerate(rng.integers(2, 5, 9))})
    plan = aim.check_aim(dom, rho=1.0)
    sizes, counts = {}, set()
    cliques = [(a,) for a in dom.attrs]
    for extra in [[], [("v0", "v1", "v2")], [("v2", "v3"), ("v4", "v5", "v6")], [("v6", "v7", "v0"), ("v8", "v3")]]:
        cliques = cliques + extra
        fit = marginals.MarkovFit(dom)
        fit.cliques, fit.jt = cliques, JunctionTree(dom, cliques)
        base = marginals.model_megabytes(dom, cliques)
        for limit in [base * 1.01, base * 1.5, base * 4, base * 50]:
            brute = [c for c in plan.candidates
                     if any(set(c) <= set(n) for n in fit.jt.nodes) or marginals.model_megabytes(dom, cliques + [c]) <= limit]
            assert aim._pool(dom, plan, fit, limit, sizes) == brute
            assert aim._pool(dom, plan, fit, limit) == brute
            counts.add(len(brute))
    assert len(counts) > 3 and 0 < min(counts) and max(counts) == len(plan.candidates)  # the limits bite


def test_the_merge_bound_is_above_the_triangulated_size():
    rng = np.random.default_rng(1)
    dom = Domain({f"v{i}": range(int(k)) for i, k in enumerate(rng.integers(2, 6, 10))})
    cliques = [(a,) for a in dom.attrs] + [("v0", "v1"), ("v1", "v2", "v3"), ("v5", "v6"), ("v3", "v7")]
    bound = aim._MergeBound(dom, JunctionTree(dom, cliques))
    for c in itertools.combinations(dom.attrs, 3):
        exact = marginals.model_megabytes(dom, cliques + [c])
        assert exact <= bound.megabytes(c) * (1 + 1e-12)
