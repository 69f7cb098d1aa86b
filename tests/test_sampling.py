"""pgmpy_dp.sample: samples follow the model's exact marginals, reproducibly, with the public states."""

import itertools

import numpy as np
import pandas as pd
import pytest
from pgmpy.factors.discrete import DiscreteFactor, TabularCPD
from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork
from scipy.stats import chisquare

import pgmpy_dp
from pgmpy_dp.datasets import load_network, sample_network
from pgmpy_dp.sampling import sample

#: per comparison; a test compares up to a few dozen marginals, so a correct sampler fails a test at
#: about one seed in three hundred, while a wrong one (parents or factor axes swapped) gives p ~ 0
P_MIN = 1e-4


def exact(model, variables):
    """Exact P(variables) as an array, axes in ``variables`` order, states in the model's order."""
    f = pgmpy_dp.query(model, list(variables))
    return np.transpose(f.values, [f.variables.index(v) for v in variables])


def observed(df, variables):
    codes = [df[v].cat.codes.to_numpy() for v in variables]
    shape = tuple(len(df[v].cat.categories) for v in variables)
    return np.bincount(np.ravel_multi_index(codes, shape), minlength=int(np.prod(shape))).reshape(shape)


def assert_matches(df, model, variables):
    p = exact(model, variables).ravel()
    counts = observed(df, variables).ravel()
    assert counts[p == 0].sum() == 0, f"{variables}: drew a state of probability zero"
    live = p > 0
    if live.sum() > 1:
        result = chisquare(counts[live], len(df) * p[live] / p[live].sum())
        assert result.pvalue > P_MIN, f"{variables}: chi-square p-value {result.pvalue:.2g}"


def random_markov(edges, card=3, seed=0, zero=False):
    rng = np.random.default_rng(seed)
    mn = DiscreteMarkovNetwork(edges)
    for u, v in edges:
        values = rng.gamma(1.0, size=card * card)
        if zero:
            values[0] = 0.0
        names = {x: [f"{x}{i}" for i in range(card)] for x in (u, v)}
        mn.add_factors(DiscreteFactor([u, v], [card, card], values, state_names=names))
    return mn


@pytest.fixture(scope="module")
def asia():
    return load_network("asia")


@pytest.mark.slow
def test_bayesian_network_matches_exact_marginals(asia):
    df = sample(asia, 20_000, random_state=0)
    assert list(df.columns) == list(asia.nodes())
    for v in asia.nodes():
        assert_matches(df, asia, [v])
    for u, v in [*asia.edges(), ("asia", "dysp"), ("smoke", "xray")]:
        assert_matches(df, asia, [u, v])


def test_markov_network_matches_exact_marginals():
    mn = random_markov([("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("a", "c")], zero=True)
    df = sample(mn, 20_000, random_state=0)
    for v in "abcd":
        assert_matches(df, mn, [v])
    for pair in itertools.combinations("abcd", 2):
        assert_matches(df, mn, list(pair))


def test_deterministic_markov_network_keeps_its_constraint():
    mn = DiscreteMarkovNetwork([("a", "b"), ("b", "c")])
    mn.add_factors(DiscreteFactor(["a", "b"], [2, 2], [1.0, 0.0, 0.0, 1.0]),  # a == b
                   DiscreteFactor(["b", "c"], [2, 2], [0.0, 1.0, 1.0, 0.0]))  # b != c
    df = sample(mn, 5_000, random_state=0)
    a, b, c = (df[v].cat.codes.to_numpy() for v in "abc")
    assert np.all(a == b) and np.all(b != c)
    assert 0 < a.sum() < len(a)  # both solutions drawn


def test_same_random_state_same_records(asia):
    mn = random_markov([("a", "b"), ("b", "c")])
    for model in (asia, mn):
        first = sample(model, 2_000, random_state=7)
        pd.testing.assert_frame_equal(first, sample(model, 2_000, random_state=7))
        pd.testing.assert_frame_equal(first, sample(model, 2_000, random_state=np.random.default_rng(7)))
        assert not first.equals(sample(model, 2_000, random_state=8))


def test_categories_are_the_public_states_even_when_never_drawn():
    bn = DiscreteBayesianNetwork([("rain", "wet")])
    bn.add_cpds(
        TabularCPD("rain", 3, [[0.5], [0.5], [0.0]], state_names={"rain": ["no", "yes", "hail"]}),
        TabularCPD("wet", 2, [[0.9, 0.1, 0.5], [0.1, 0.9, 0.5]], evidence=["rain"], evidence_card=[3],
                   state_names={"wet": ["dry", "wet"], "rain": ["no", "yes", "hail"]}),
    )
    df = sample(bn, 1_000, random_state=0)
    assert df["rain"].cat.categories.tolist() == ["no", "yes", "hail"]
    assert (df["rain"] == "hail").sum() == 0
    assert df["wet"].cat.categories.tolist() == ["dry", "wet"]
    # the states are public, so releasing the sample raises no data-derived-domain warning
    assert df.attrs[pgmpy_dp.privacy.domain.PUBLIC_COLUMNS_ATTR] == ["rain", "wet"]


def test_estimator_stands_for_its_model(asia):
    data = sample_network(asia, 2_000, seed=0)
    estimator = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, random_state=0)
    bn = DiscreteBayesianNetwork(asia.edges())
    bn.fit(data, estimator=estimator)
    pd.testing.assert_frame_equal(sample(estimator, 500, random_state=3), sample(bn, 500, random_state=3))

    mn_estimator = pgmpy_dp.PrivateMarkovEstimator(random_state=0, show_progress=False)
    mn_estimator.fit(DiscreteMarkovNetwork([("smoke", "lung"), ("lung", "xray")]), data[["smoke", "lung", "xray"]],
                     epsilon=1.0)
    pd.testing.assert_frame_equal(sample(mn_estimator, 500, random_state=3),
                                  sample(mn_estimator.model_, 500, random_state=3))


@pytest.mark.parametrize("n, error", [(0, ValueError), (-5, ValueError), (1.5, TypeError), (1e6, TypeError),
                                      ("10", TypeError), (True, TypeError)])
def test_bad_n_is_a_clear_error(asia, n, error):
    with pytest.raises(error, match="n must be a positive integer"):
        sample(asia, n)


@pytest.mark.parametrize("n, shown", [(10**12, "1,000,000,000,000"), (2**64, "18,446,744,073,709,551,616")])
def test_more_records_than_memory_holds_is_a_clear_error_before_drawing(asia, n, shown):
    # numpy's own answers were a raw MemoryError (10**12) and "Maximum allowed size exceeded" (2**64)
    from pgmpy_dp._memory import NotEnoughMemoryError

    with pytest.raises(NotEnoughMemoryError, match=rf"^sample\(n={shown}\) would need about .* GiB, more than the .* "
                                                   r"GiB this process can still allocate; draw fewer records"):
        sample(asia, n, random_state=0)


def test_the_memory_check_counts_the_columns(asia, monkeypatch):
    from pgmpy_dp import _memory

    monkeypatch.setattr(_memory, "available_memory", lambda: 8 * 1000 * (len(asia.nodes()) + 2))
    assert len(sample(asia, 1000, random_state=0)) == 1000
    with pytest.raises(MemoryError, match=r"sample\(n=1,001\)"):
        sample(asia, 1001, random_state=0)


@pytest.mark.parametrize("seed, error, message", [
    (-1, ValueError, r"random_state must be a non-negative int seed, got -1; pass e.g. random_state=0"),
    (1.5, TypeError, r"random_state must be None, a non-negative int seed or a numpy.random.Generator, got 1.5"),
    (True, TypeError, r"a bool is not a seed"),
])
def test_a_bad_seed_gets_the_message_fit_gives(asia, seed, error, message):
    with pytest.raises(error, match=message):
        sample(asia, 5, random_state=seed)


def test_seeds_and_generators_draw_the_same_rows_as_before(asia):
    # the seed is validated by check_random_state; the generator it makes is numpy's default_rng
    a = sample(asia, 200, random_state=np.random.default_rng(11))
    pd.testing.assert_frame_equal(a, sample(asia, 200, random_state=11))
    assert len(sample(asia, 3)) == 3  # None: OS randomness


def test_non_model_input_is_a_clear_error(asia):
    with pytest.raises(TypeError, match="sample needs a fitted pgmpy model.*got DataFrame"):
        sample(pd.DataFrame({"a": [0, 1]}), 10)
    with pytest.raises(TypeError, match="got PrivateMarkovEstimator; fit it first"):
        sample(pgmpy_dp.PrivateMarkovEstimator(), 10)
    with pytest.raises(ValueError, match="node 'asia' has no CPD"):
        sample(DiscreteBayesianNetwork(asia.edges()), 10)
    with pytest.raises(TypeError, match="random_state"):
        sample(asia, 10, random_state="seed")


@pytest.mark.slow
def test_gibbs_fallback_matches_exact_marginals():
    mn = random_markov([("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")], card=2, seed=3)
    n = 20_000
    with pytest.warns(UserWarning, match=r"approximate: 20000 independent Gibbs chains after 200 sweeps"):
        df = sample(mn, n, random_state=0, max_cells=4)  # the tree's cliques have 8 cells: too large
    for variables in [*"abcd", *itertools.combinations("abcd", 2)]:
        p = exact(mn, list(variables))
        freq = observed(df, list(variables)) / n
        # the chains are independent: each cell's frequency has binomial spread around p
        assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-9), variables


def test_gibbs_burn_in_zero_is_not_the_model():
    """The check above can fail: chains kept at their uniform start do not match a strongly coupled model."""
    mn = DiscreteMarkovNetwork([("a", "b"), ("b", "c"), ("c", "a")])
    for u, v in mn.edges():
        mn.add_factors(DiscreteFactor([u, v], [2, 2], [20.0, 1.0, 1.0, 20.0]))
    with pytest.warns(UserWarning, match="approximate"):
        df = sample(mn, 5_000, random_state=0, max_cells=4, burn_in=0)
    p = exact(mn, ["a", "b"])
    assert np.abs(observed(df, ["a", "b"]) / 5_000 - p).max() > 0.1


def test_structure_learner_model_matches_exact_marginals():
    rng = np.random.default_rng(0)
    a = rng.choice([-1, 1], 20_000)
    b = np.where(rng.random(20_000) < 0.9, a, -a)
    c = rng.choice([-1, 1], 20_000)
    df = pd.DataFrame({"a": a, "b": b, "c": c}).astype(pd.CategoricalDtype([-1, 1]))
    estimator = pgmpy_dp.PrivateIsingEstimator(width=1.5, eta=0.5, random_state=0).fit(df, rho=1.0)
    synthetic = sample(estimator, 20_000, random_state=0)
    assert list(synthetic.columns) == list(estimator.model_.nodes())
    assert synthetic["c"].cat.categories.tolist() == [-1, 1]
    for variables in (["a"], ["c"], ["a", "b"], ["b", "c"]):
        assert_matches(synthetic, estimator.model_, variables)
