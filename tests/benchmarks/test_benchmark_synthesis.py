"""benchmarks/synthesis.py: its exact marginals, its scores and mbi-MST's domain compression, on small models."""

import importlib.util
import itertools
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.append(str(_BENCHMARKS))  # for the shared harness; appended, so no script shadows an installed package


def _load(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", _BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


synthesis = _load("synthesis")

SIZES = {"a": 2, "b": 3, "c": 4, "d": 2, "e": 3}
CLIQUES = [("a", "b"), ("b", "c"), ("c", "d"), ("b", "e"), ("a",), ("d", "e")]  # a loop b-c-d-e


def _joint(rng):
    theta = [rng.normal(0, 1.5, [SIZES[a] for a in c]) for c in CLIQUES]
    attrs = list(SIZES)
    log_p = np.zeros([SIZES[a] for a in attrs])
    for c, t in zip(CLIQUES, theta):
        shape = [SIZES[a] if a in c else 1 for a in attrs]
        order = sorted(range(len(c)), key=lambda i: attrs.index(c[i]))
        log_p = log_p + np.transpose(t, order).reshape(shape)
    p = np.exp(log_p - log_p.max())
    return theta, p / p.sum()


def test_marginals_match_brute_force_for_every_two_and_three_way_set():
    rng = np.random.default_rng(3)
    theta, joint = _joint(rng)
    m = synthesis.Marginals(SIZES, CLIQUES, theta)
    attrs = list(SIZES)
    for k in (1, 2, 3):
        for s in itertools.combinations(attrs, k):
            other = tuple(i for i, a in enumerate(attrs) if a not in s)
            want = joint.sum(axis=other)
            np.testing.assert_allclose(m(s), want, atol=1e-10, err_msg=str(s))
    # out-of-order attributes come back in the order asked for
    np.testing.assert_allclose(m(("e", "a")), joint.sum(axis=(1, 2, 3)).T, atol=1e-10)


def test_scores_are_zero_against_the_data_itself_and_positive_for_another_sample():
    rng = np.random.default_rng(0)
    codes = pd.DataFrame({a: rng.integers(0, k, 2000) for a, k in SIZES.items()})
    queries = [("a", ("b",)), ("c", ("d", "e"))]
    same = synthesis.score(codes, SIZES, queries, sample=codes)
    assert all(v == 0 for v in same.values())
    other = pd.DataFrame({a: rng.integers(0, k, 2000) for a, k in SIZES.items()})
    diff = synthesis.score(codes, SIZES, queries, sample=other)
    assert set(diff) == {"l1_2_sample", "l1_3_sample", "q_a|b_sample", "q_c|d,e_sample"}
    # two independent uniform samples of 2000 rows: every 3-way table differs by sampling noise
    assert 0.05 < diff["l1_3_sample"] < 0.6 and diff["l1_2_sample"] < diff["l1_3_sample"]


def test_conditional_l1_weights_the_given_states_by_the_reference():
    ref = np.array([[0.5, 0.0], [0.0, 0.5]])  # target axis 0: given 0 -> target 0, given 1 -> target 1
    p = np.array([[0.5, 0.25], [0.0, 0.25]])  # right for given 0, uniform for given 1
    assert synthesis.conditional_l1(p, ref) == pytest.approx(0.5 * 0 + 0.5 * 1.0)


def test_mst_compression_spreads_the_merged_state_uniformly():
    peers = _load("peers_synthesis")
    comp = peers.Compression({"x": 4, "y": 2}, {"x": np.array([100.0, 1.0, 50.0, 0.0]), "y": np.array([9.0, 9.0])},
                             sigma=3.0)
    assert comp.new_sizes == {"x": 3, "y": 2}
    cliques, theta = comp.expand([("x", "y")], [np.log(np.array([[0.2, 0.1], [0.3, 0.1], [0.2, 0.1]]))])
    m = synthesis.Marginals({"x": 4, "y": 2}, cliques, theta)
    # kept states keep their mass; the merged one (0.3) is split over the two rare states
    np.testing.assert_allclose(m(("x",)), [0.3, 0.15, 0.4, 0.15], atol=1e-12)
    codes = comp.expand_codes(pd.DataFrame({"x": np.array([0, 1, 2] * 400), "y": np.zeros(1200, int)}),
                              np.random.default_rng(1))
    # compressed codes 0, 1 are the kept states 0, 2; code 2 ("other") is drawn among 1 and 3
    assert (codes["x"][0::3] == 0).all() and (codes["x"][1::3] == 2).all() and set(codes["x"][2::3]) == {1, 3}
