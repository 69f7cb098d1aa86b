import itertools
import math

import numpy as np
import pytest
from scipy.optimize import minimize

from pgmpy_dp import Domain
from pgmpy_dp.estimators.allocation import (
    allocation_weights,
    error_optimal_allocation,
    expected_noise_error,
    amplified_epsilon,
    node_heights,
    optimal_allocation,
    out_degrees,
    parameter_error,
    parameter_sensitivity,
)


@pytest.mark.parametrize("eps", [0.01, 0.1, 1.0, 3.0])
@pytest.mark.parametrize("beta", [0.01, 0.1, 0.5, 1.0])
def test_amplified_epsilon_inverts_lemma_2_1(eps, beta):
    inner = amplified_epsilon(eps, beta)
    assert inner >= eps
    assert math.log1p(beta * math.expm1(inner)) == pytest.approx(eps, rel=1e-12)


def test_amplified_epsilon_rejects_bad_rates():
    for beta in (0, -0.1, 1.5):
        with pytest.raises(ValueError, match="sample_rate"):
            amplified_epsilon(1.0, beta)


def test_heights_and_out_degrees_on_a_small_dag():
    parents = {"a": [], "b": ["a"], "c": ["b"], "d": ["a", "c"], "e": []}
    assert node_heights(parents) == {"a": 3, "b": 2, "c": 1, "d": 0, "e": 0}
    assert out_degrees(parents) == {"a": 2, "b": 1, "c": 1, "d": 0, "e": 0}
    with pytest.raises(ValueError, match="cycle"):
        node_heights({"a": ["b"], "b": ["a"]})


@pytest.mark.parametrize("seed", range(5))
def test_closed_form_allocation_matches_a_numerical_optimiser(seed):
    rng = np.random.default_rng(seed)
    costs = rng.uniform(0.01, 10, size=6)
    total = 0.9
    closed = optimal_allocation(costs, total)
    assert closed.sum() == pytest.approx(total, rel=1e-12)

    def objective(e):
        return float(np.sum(costs / e))

    numeric = minimize(
        objective,
        np.full(6, total / 6),
        method="SLSQP",
        bounds=[(1e-6, total)] * 6,
        constraints=[{"type": "eq", "fun": lambda e: e.sum() - total}],
        options={"ftol": 1e-14, "maxiter": 500},
    )
    assert numeric.success
    np.testing.assert_allclose(closed, numeric.x, rtol=1e-4)
    assert objective(closed) <= objective(numeric.x) + 1e-9
    # and it beats every random feasible split
    for split in rng.dirichlet(np.ones(6), size=200) * total:
        assert objective(closed) <= objective(split)


def test_closed_form_equals_the_papers_product_form():
    c = np.array([0.5, 2.0, 4.0, 1.0])  # the paper's c_i = 1 / (W_i delta_i)
    total = 2.0
    prods = np.array([np.prod(np.sqrt(np.delete(c, i))) for i in range(len(c))])
    paper = total * prods / prods.sum()
    np.testing.assert_allclose(optimal_allocation(1 / c, total), paper, rtol=1e-12)


def test_optimal_allocation_rejects_bad_costs():
    for bad in ([], [1.0, 0.0], [1.0, np.inf], [[1.0]]):
        with pytest.raises(ValueError, match="costs"):
            optimal_allocation(bad, 1.0)


def test_parameter_error_matches_a_cell_by_cell_reference():
    rng = np.random.default_rng(3)
    table = rng.normal(20, 15, size=(3, 2, 4))  # node with two parents; some negative cells
    got = parameter_error(table, scale_to=10.0, min_count=5.0)
    counts = np.clip(table, 0, None).reshape(3, -1) * 10.0
    terms = []
    for u in range(counts.shape[1]):
        c_pa = counts[:, u].sum()
        for x in range(3):
            theta = counts[x, u] / c_pa if c_pa > 0 else 1 / 3
            terms.append(theta * math.sqrt(1 / max(c_pa, 5.0) ** 2 + 1 / max(counts[x, u], 5.0) ** 2))
    assert got == pytest.approx(np.mean(terms), rel=1e-12)


def _random_network(rng, parents, card):
    cpds = {}
    for node, pa in parents.items():
        shape = (card[node], *[card[p] for p in pa])
        t = rng.uniform(0.1, 1.0, size=shape)
        cpds[node] = t / t.sum(axis=0, keepdims=True)
    return cpds


def _marginal(cpds, parents, card, target):
    """P(target) by brute-force enumeration of the joint, from (possibly unnormalised) CPD tables."""
    nodes = list(parents)
    out = np.zeros(card[target])
    for assignment in itertools.product(*[range(card[n]) for n in nodes]):
        a = dict(zip(nodes, assignment))
        p = 1.0
        for n in nodes:
            p *= cpds[n][(a[n], *[a[q] for q in parents[n]])]
        out[a[target]] += p
    return out


@pytest.mark.parametrize("seed", range(3))
def test_sensitivity_closed_form_matches_finite_difference_derivatives(seed):
    """Eq. 8 evaluated literally (derivatives of brute-force child marginals) equals the closed form."""
    rng = np.random.default_rng(seed)
    parents = {"a": [], "b": ["a"], "c": ["a", "b"], "d": ["b"], "e": ["c", "d"]}
    card = {"a": 2, "b": 3, "c": 2, "d": 2, "e": 3}
    cpds = _random_network(rng, parents, card)
    children = {n: [m for m, pa in parents.items() if n in pa] for n in parents}
    h = 1e-6
    literal = {}
    for node, pa in parents.items():
        if not children[node]:
            literal[node] = 0.0
            continue
        base = {y: _marginal(cpds, parents, card, y) for y in children[node]}
        per_param = []
        for idx in np.ndindex(cpds[node].shape):
            bumped = dict(cpds)
            bumped[node] = cpds[node].copy()
            bumped[node][idx] += h  # eq. 8 differentiates the entry alone, without renormalising
            per_child = [
                np.mean((_marginal(bumped, parents, card, y) - base[y]) / h) for y in children[node]
            ]
            per_param.append(np.mean(per_child))
        literal[node] = float(np.mean(per_param))
    domain = Domain({n: list(range(k)) for n, k in card.items()})
    closed = parameter_sensitivity(parents, domain)
    for node in parents:
        assert closed[node] == pytest.approx(literal[node], rel=1e-4, abs=1e-9), node


def test_weights_follow_eq_7():
    parents = {"a": [], "b": ["a"], "c": ["a", "b"]}
    domain = Domain({"a": [0, 1], "b": [0, 1, 2], "c": [0, 1]})
    w = allocation_weights(parents, domain)
    s = parameter_sensitivity(parents, domain)
    assert w["a"] == pytest.approx((2 + 1) * (2 + 1) * (1 + s["a"]))
    assert w["b"] == pytest.approx((1 + 1) * (1 + 1) * (1 + s["b"]))
    assert w["c"] == 1.0


@pytest.mark.parametrize("eps", [0.5, 0.999, 1.0, 1.001, 50.0, 1e4, 1e8])
def test_amplified_epsilon_is_stable_for_large_budgets(eps):
    beta = 0.1
    inner = amplified_epsilon(eps, beta)
    assert math.isfinite(inner)
    # exp(inner) overflows for large eps: check the identity in a stable form
    assert inner - math.log(1 / beta) == pytest.approx(eps + math.log1p((beta - 1) * math.exp(-eps)), rel=1e-12)


def test_parameter_error_is_finite_without_noise_and_with_empty_cells():
    table = np.array([[100.0, 0.0, 3.0], [0.0, 0.0, 7.0]])
    err = parameter_error(table, scale_to=10.0, min_count=0.0)
    assert math.isfinite(err) and err > 0


@pytest.mark.parametrize("loss", ["absolute", "squared"])
@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
@pytest.mark.parametrize("seed", range(4))
def test_error_optimal_allocation_minimises_its_stated_objective(loss, noise, seed):
    rng = np.random.default_rng(seed)
    cells = rng.integers(2, 500, size=rng.integers(2, 12)).astype(float)
    weights = rng.uniform(0.1, 3.0, size=cells.size) if seed % 2 else None
    eps = float(rng.uniform(0.1, 3.0))
    best = error_optimal_allocation(cells, eps, loss, weights, noise)
    assert best.sum() == pytest.approx(eps, rel=1e-12) and np.all(best > 0)
    value = expected_noise_error(best, cells, loss, weights, noise)
    # no random feasible split does better ...
    for split in rng.dirichlet(np.ones(cells.size), size=2000) * eps:
        assert expected_noise_error(split, cells, loss, weights, noise) >= value * (1 - 1e-12)
    # ... nor a numerical optimiser started from the uniform split (softmax parametrisation)
    res = minimize(
        lambda z: expected_noise_error(eps * np.exp(z - z.max()) / np.exp(z - z.max()).sum(), cells, loss, weights, noise),
        np.zeros(cells.size), method="BFGS", options={"gtol": 1e-10},
    )
    assert res.fun >= value * (1 - 1e-9)
    assert res.fun == pytest.approx(value, rel=1e-5)


def test_error_optimal_allocation_is_uniform_for_equal_tables_and_beats_it_otherwise():
    assert np.allclose(error_optimal_allocation([8, 8, 8], 0.3), 0.1)
    cells = [2, 2, 64]
    uniform = expected_noise_error([1 / 3] * 3, cells)
    assert expected_noise_error(error_optimal_allocation(cells, 1.0), cells) < 0.75 * uniform


def test_error_optimal_allocation_rejects_bad_input():
    with pytest.raises(ValueError, match="loss"):
        error_optimal_allocation([1, 2], 1.0, loss="max")
    with pytest.raises(ValueError, match="cells"):
        error_optimal_allocation([0, 2], 1.0)
    with pytest.raises(ValueError, match="weights"):
        error_optimal_allocation([1, 2], 1.0, weights=[1.0])
