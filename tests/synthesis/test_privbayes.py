"""PrivBayes: exact spend, a DAG within the degree and the cell cap, true parents at a huge budget, valid CPDs."""

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from pgmpy_dp import Domain
from pgmpy_dp.privacy.domain import DomainError
from pgmpy_dp.privacy.selection import exponential_mechanism_rho
from pgmpy_dp.synthesis import privbayes
from pgmpy_dp.synthesis.privbayes import (
    SCORE_SENSITIVITY,
    independence_score,
    maximal_parent_sets,
    privbayes_split,
    run_privbayes,
)


def _chain(n=4000, seed=0, flip=0.1, names="abcde", states=3):
    """A Markov chain a -> b -> c -> ...: each column copies the previous one, re-drawn with probability ``flip``."""
    rng = np.random.default_rng(seed)
    codes = {names[0]: rng.integers(0, states, n)}
    for prev, name in zip(names, names[1:]):
        redraw = rng.random(n) < flip
        codes[name] = np.where(redraw, rng.integers(0, states, n), codes[prev])
    return codes, Domain({c: list(range(states)) for c in names})


def _random(n=500, sizes=(2, 3, 4, 2, 5, 3), seed=0):
    rng = np.random.default_rng(seed)
    names = "abcdefgh"[: len(sizes)]
    return {c: rng.integers(0, s, n) for c, s in zip(names, sizes)}, Domain({c: list(range(s)) for c, s in zip(names, sizes)})


# -- the budget ---------------------------------------------------------------------------------


@pytest.mark.parametrize("total", [1.0, 0.3, 0.1 + 0.2, 1e-3, 7.77])
@pytest.mark.parametrize("d", [1, 2, 3, 14, 97])
@pytest.mark.parametrize("unit", ["epsilon", "rho"])
def test_split_parts_add_up_to_the_total_exactly(total, d, unit):
    split = privbayes_split(total, d, unit=unit, structure_fraction=0.3)
    assert math.fsum(split.parts()) == total
    assert len(split.selections) == d - 1 and all(s > 0 for s in split.parts() if s is not split.count)
    assert split.count == (total * privbayes.COUNT_FRACTION if d > 1 else 0.0)


def _spy(monkeypatch):
    """Record every epsilon given to the exponential mechanism and every budget of the noisy count."""
    spent = {"selections": [], "count": []}
    real_em, real_count = privbayes.exponential_mechanism, privbayes._noisy_count

    def em(scores, epsilon, sensitivity=1.0, rng=None):
        spent["selections"].append((epsilon, sensitivity))
        return real_em(scores, epsilon, sensitivity=sensitivity, rng=rng)

    def count(n_rows, budget, unit, rng):
        spent["count"].append(budget)
        return real_count(n_rows, budget, unit, rng)

    monkeypatch.setattr(privbayes, "exponential_mechanism", em)
    monkeypatch.setattr(privbayes, "_noisy_count", count)
    return spent


def test_pure_dp_run_spends_exactly_epsilon(monkeypatch):
    spent = _spy(monkeypatch)
    codes, domain = _random()
    _, releases, selected = run_privbayes(codes, domain, epsilon=0.9, rng=np.random.default_rng(1))
    assert len(spent["selections"]) == len(domain.attrs) - 1 == len(selected) - 1
    assert all(s == SCORE_SENSITIVITY for _, s in spent["selections"])
    parts = spent["count"] + [e for e, _ in spent["selections"]] + [t.epsilon for r in releases for t in r]
    assert math.fsum(parts) == 0.9
    assert releases[0].mechanism == "discrete_laplace"


def test_zcdp_run_spends_at_most_rho_and_its_split_exactly(monkeypatch):
    spent = _spy(monkeypatch)
    codes, domain = _random()
    rho = 0.0123
    _, releases, _ = run_privbayes(codes, domain, rho=rho, rng=np.random.default_rng(1))
    split = privbayes_split(rho, len(domain.attrs), unit="rho")
    costs = [exponential_mechanism_rho(e) for e, _ in spent["selections"]]
    # each selection runs at the largest epsilon whose zCDP cost stays within its share
    assert all(c <= s and c > s * (1 - 1e-12) for c, s in zip(costs, split.selections))
    assert spent["count"] == [split.count]
    tables = [t.rho for t in releases[0]]
    assert math.fsum([split.count, *split.selections, *tables]) == rho
    assert releases[0].rho == pytest.approx(split.tables, rel=1e-12) and releases[0].mechanism == "discrete_gaussian"
    assert math.fsum(spent["count"] + costs + tables) <= rho


def test_a_declared_record_count_spends_nothing_on_counting(monkeypatch):
    spent = _spy(monkeypatch)
    codes, domain = _random()
    _, releases, _ = run_privbayes(codes, domain, epsilon=1.0, n_records=500, rng=np.random.default_rng(0))
    assert spent["count"] == []
    assert math.fsum([e for e, _ in spent["selections"]] + [t.epsilon for t in releases[0]]) == 1.0


# -- the network --------------------------------------------------------------------------------


@pytest.mark.parametrize("degree", [0, 1, 2])
def test_network_is_a_dag_within_the_degree_and_the_cell_cap(degree):
    codes, domain = _random(n=3000, sizes=(2, 3, 4, 2, 5, 3, 6), seed=3)
    model, _, selected = run_privbayes(codes, domain, epsilon=2.0, degree=degree, n_records=3000,
                                       rng=np.random.default_rng(degree))
    assert nx.is_directed_acyclic_graph(model) and set(model.nodes()) == set(domain.attrs)
    assert max(model.in_degree(n) for n in model.nodes()) <= degree
    order = [x for x, _ in selected]
    assert sorted(order) == sorted(domain.attrs) and selected[0][1] == ()
    split = privbayes_split(2.0, len(domain.attrs), count=False)
    cap = privbayes._cell_cap(3000.0, split, len(domain.attrs), privbayes.DEFAULT_THETA)
    for i, (x, parents) in enumerate(selected):
        assert set(parents) <= set(order[:i])  # parents were placed before
        assert sorted(model.get_parents(x)) == sorted(parents)
        assert not parents or domain.cells((x, *parents)) <= cap


def test_chain_parents_are_found_at_a_huge_budget():
    codes, domain = _chain()
    for seed in range(4):  # several random first nodes
        _, _, selected = run_privbayes(codes, domain, epsilon=1e4, degree=1, n_records=4000,
                                       rng=np.random.default_rng(seed))
        edges = {frozenset((x, p)) for x, parents in selected for p in parents}
        assert edges == {frozenset(e) for e in ["ab", "bc", "cd", "de"]}, selected


def test_cpds_are_valid_conditionals_over_the_public_states():
    codes, domain = _random(n=800, sizes=(2, 3, 4), seed=5)
    domain = Domain({**{a: domain[a] for a in domain.attrs}, "c": [0, 1, 2, 3, "never seen"]})
    model, releases, _ = run_privbayes(codes, domain, epsilon=1.0, rng=np.random.default_rng(2))
    assert model.check_model()
    for cpd in model.get_cpds():
        values = cpd.get_values()
        np.testing.assert_allclose(values.sum(axis=0), 1.0, atol=1e-9)
        assert np.all(values >= 0)
        assert cpd.state_names[cpd.variable] == list(domain[cpd.variable])
    assert model.get_cpds("c").state_names["c"][-1] == "never seen"
    assert releases[0].domain["c"] == domain["c"]


def test_seeded_runs_reproduce_and_os_randomness_runs():
    codes, domain = _random(n=300, sizes=(2, 3, 2), seed=1)
    a = run_privbayes(codes, domain, epsilon=1.0, rng=np.random.default_rng(7))
    b = run_privbayes(codes, domain, epsilon=1.0, rng=np.random.default_rng(7))
    assert a[2] == b[2]
    for x in domain.attrs:
        np.testing.assert_array_equal(a[0].get_cpds(x).get_values(), b[0].get_cpds(x).get_values())
    model, releases, selected = run_privbayes(codes, domain, rho=0.5)  # OpenDP's exact samplers
    assert model.check_model() and releases[0].sampler == "opendp" and len(selected) == 3


def test_one_attribute_gets_the_whole_budget_in_its_table():
    model, releases, selected = run_privbayes({"a": np.array([0, 1, 1])}, Domain({"a": [0, 1]}), epsilon=0.5,
                                              rng=np.random.default_rng(0))
    assert selected == [("a", ())] and releases[0].epsilon == 0.5 and model.check_model()


def _candidate_counts(monkeypatch, limit):
    monkeypatch.setattr(privbayes, "MAX_CANDIDATES", limit)
    counts, real = [], privbayes.exponential_mechanism

    def em(scores, epsilon, sensitivity=1.0, rng=None):
        counts.append(len(scores))
        return real(scores, epsilon, sensitivity=sensitivity, rng=rng)

    monkeypatch.setattr(privbayes, "exponential_mechanism", em)
    codes, domain = _random(n=400, sizes=(2,) * 8, seed=2)
    _, _, selected = run_privbayes(codes, domain, epsilon=1e3, degree=3, n_records=1e9, rng=np.random.default_rng(0))
    return counts, selected


def test_too_many_candidates_lower_the_degree(monkeypatch):
    unlimited, _ = _candidate_counts(monkeypatch, 10**6)
    assert max(unlimited) > 12  # the limit below binds
    counts, selected = _candidate_counts(monkeypatch, 12)
    assert max(counts) <= 12 and len(selected) == 8


def test_family_cells_stay_within_the_release_limit_whatever_the_budget():
    rng = np.random.default_rng(0)
    domain = Domain({a: list(range(4000)) for a in "abc"})
    codes = {a: rng.integers(0, 4000, 100) for a in "abc"}
    _, releases, selected = run_privbayes(codes, domain, epsilon=1e6, n_records=1e15, rng=rng)
    assert all(p == () for _, p in selected)  # any pair has 1.6e7 cells, above DEFAULT_MAX_CELLS
    assert len(releases[0].tables) == 3


def test_degree_zero_spends_nothing_on_counting(monkeypatch):
    spent = _spy(monkeypatch)
    codes, domain = _random()
    model, releases, selected = run_privbayes(codes, domain, epsilon=1.0, degree=0, rng=np.random.default_rng(0))
    assert spent["count"] == [] and model.number_of_edges() == 0
    assert math.fsum([e for e, _ in spent["selections"]] + [t.epsilon for t in releases[0]]) == 1.0


# -- the score and the candidates ---------------------------------------------------------------


def test_score_sensitivity_holds_on_neighbouring_tables():
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(3000):
        shape = (int(rng.integers(1, 4)), int(rng.integers(1, 5)))
        n = int(rng.integers(0, 6))
        joint = np.zeros(shape)
        np.add.at(joint, tuple(rng.integers(0, s, n) for s in shape), 1.0)
        plus = joint.copy()
        plus[tuple(int(rng.integers(0, s)) for s in shape)] += 1.0  # one record added
        worst = max(worst, abs(independence_score(plus) - independence_score(joint)))
    assert worst <= SCORE_SENSITIVITY
    assert worst > 1.0  # the bound is not loose by more than a factor 2


def test_score_is_zero_under_independence_and_grows_with_dependence():
    indep = np.outer([10.0, 30.0], [5.0, 15.0, 20.0])
    assert independence_score(indep) == pytest.approx(0.0, abs=1e-9)
    assert independence_score(np.array([[3.0, 1.0], [1.0, 3.0]])) < independence_score(np.array([[4.0, 0.0], [0.0, 4.0]]))


def test_maximal_parent_sets_match_brute_force():
    rng = np.random.default_rng(4)
    for _ in range(50):
        placed = list("pqrstu"[: int(rng.integers(0, 7))])
        sizes = {a: int(rng.integers(1, 6)) for a in placed}
        cap, k = float(rng.integers(1, 60)), int(rng.integers(0, 5))
        feasible = [s for r in range(k + 1) for s in itertools.combinations(placed, r)
                    if math.prod(sizes[a] for a in s) <= cap]
        maximal = [s for s in feasible if len(s) == k or not any(set(s) < set(t) for t in feasible)]
        assert sorted(maximal_parent_sets(placed, sizes, cap, k)) == sorted(maximal)


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(), ValueError, "exactly one of epsilon"),
        (dict(epsilon=1.0, rho=0.1), ValueError, "exactly one of epsilon"),
        (dict(epsilon=-1.0), ValueError, "epsilon must be positive"),
        (dict(rho=float("nan")), ValueError, "rho must be positive"),
        (dict(epsilon=1.0, degree=-1), ValueError, "degree must be"),
        (dict(epsilon=1.0, degree=1.5), TypeError, "degree must be"),
        (dict(epsilon=1.0, degree=True), TypeError, "degree must be"),
        (dict(epsilon=1.0, structure_fraction=0.0), ValueError, "structure_fraction must be positive"),
        (dict(epsilon=1.0, structure_fraction=0.995), ValueError, "structure_fraction must be in"),
        (dict(epsilon=1.0, theta=0), ValueError, "theta must be positive"),
        (dict(epsilon=1.0, n_records=-5), ValueError, "n_records must be positive"),
    ],
)
def test_bad_parameters_are_clear_errors(kwargs, error, match):
    codes, domain = _random(n=20)
    with pytest.raises(error, match=match):
        run_privbayes(codes, domain, **kwargs)


def test_bad_codes_and_domain_are_clear_errors():
    codes, domain = _random(n=20, sizes=(2, 3))
    with pytest.raises(TypeError, match="domain must be a pgmpy_dp.Domain"):
        run_privbayes(codes, {"a": [0, 1]}, epsilon=1.0)
    with pytest.raises(DomainError, match=r"no codes given for attribute\(s\) \['b'\]"):
        run_privbayes({"a": codes["a"]}, domain, epsilon=1.0)
    with pytest.raises(DomainError, match=r"codes of 'b' must be in \[0, 3\)"):
        run_privbayes({"a": codes["a"], "b": codes["b"] + 1}, domain, epsilon=1.0)
    with pytest.raises(TypeError, match="codes of 'a' must be a 1-D integer array"):
        run_privbayes({"a": codes["a"].astype(float), "b": codes["b"]}, domain, epsilon=1.0)
    with pytest.raises(ValueError, match="another number of rows"):
        run_privbayes({"a": codes["a"][:5], "b": codes["b"]}, domain, epsilon=1.0)
    with pytest.raises(ValueError, match="the data has no rows"):
        run_privbayes({"a": codes["a"][:0], "b": codes["b"][:0]}, domain, epsilon=1.0)
