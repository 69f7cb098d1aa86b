"""benchmarks/structure.py: the baselines' estimates, the metrics, the interpolation and a resumable quick run."""

import importlib.util
import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pgmpy_dp  # noqa: F401  (df.dp)
from pgmpy_dp.testing.pairwise_models import sample_pairwise_model

_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.append(str(_BENCHMARKS))  # for the shared harness; appended, so no script shadows an installed package
_spec = importlib.util.spec_from_file_location("bench_structure", _BENCHMARKS / "structure.py")
structure = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = structure
_spec.loader.exec_module(structure)

S = np.array([-1.0, 1.0])
N = 20_000


@pytest.fixture(scope="module")
def chain():
    """x0 - x1 coupled at A = 0.5, x2 independent; a near noise-free release of its three tables."""
    W = np.zeros((3, 3, 2, 2))
    W[0, 1] = 0.5 * np.outer(S, S)
    W[1, 0] = W[0, 1].T
    df = sample_pairwise_model(W, np.zeros((3, 2)), N, seed=11)
    cols = list(df.columns)
    release = df.dp.release(list(itertools.combinations(cols, 2)), rho=1e8, random_state=0, show_progress=False)
    return W, df, cols, release


def test_doubly_centred_removes_row_and_column_terms():
    t = 0.3 * np.outer(S, S) + np.array([[1.0], [2.0]]) + np.array([[5.0, -1.0]])
    assert np.allclose(structure.doubly_centred(t), 0.3 * np.outer(S, S))


def test_interpolation_is_log_linear_and_marks_the_ends():
    assert structure.interpolate_n([1000, 2000], [0.0, 1.0], 0.5) == f"{math.sqrt(2e6):,.0f}"
    assert structure.interpolate_n([1000, 2000], [0.6, 1.0], 0.5) == "<= 1,000"
    assert structure.interpolate_n([1000, 2000], [0.0, 0.4], 0.5) == "> 2,000"


def test_icov_finds_the_edge_with_the_mean_field_bias(chain):
    W, _, cols, release = chain
    A = {e: w[1, 1] for e, w in structure.icov_weights(release, cols, 2).items()}
    # two spins coupled at a: corr = tanh(a), and -inv(Cov) gives tanh(a) / (1 - tanh(a)^2)
    t = math.tanh(0.5)
    assert A[0, 1] == pytest.approx(t / (1 - t * t), abs=0.05)  # sampling sd about 0.01 at N = 20,000
    assert abs(A[0, 2]) < 0.05 and abs(A[1, 2]) < 0.05
    assert structure._edges(structure.icov_weights(release, cols, 2)) == {(0, 1)}


def test_mle_refit_and_sklearn_recover_the_coupling(chain):
    W, df, cols, release = chain
    mle = structure.mle_weights(release, cols, [(0, 1)])
    assert set(mle) == {(0, 1)}
    assert np.abs(mle[0, 1] - W[0, 1]).max() < 0.05  # sd of the coupling about 0.007 at N = 20,000
    codes = np.column_stack([df[c].cat.codes.to_numpy() for c in cols]).astype(np.intp)
    sk = structure.sklearn_weights(codes, 2)
    assert structure._edges(sk) == {(0, 1)}
    assert structure.score(sk, structure._edges(sk), W)["max_err"] < 0.08  # l1 shrinkage plus sampling


def test_three_state_baselines_recover_a_doubly_centred_block():
    rng = np.random.default_rng(3)
    block = rng.normal(size=(3, 3))
    block = structure.doubly_centred(block)
    block *= 0.8 / np.abs(block).max()
    W = np.zeros((3, 3, 3, 3))
    W[0, 1], W[1, 0] = block, block.T
    df = sample_pairwise_model(W, np.zeros((3, 3)), N, seed=5)
    cols = list(df.columns)
    codes = np.column_stack([df[c].cat.codes.to_numpy() for c in cols]).astype(np.intp)
    for weights in (structure.sklearn_weights(codes, 3),
                    structure.mle_weights(df.dp.release(list(itertools.combinations(cols, 2)), rho=1e8,
                                                        random_state=0, show_progress=False), cols, [(0, 1)])):
        assert structure._edges(weights) == {(0, 1)}
        assert np.abs(weights[0, 1] - block).max() < 0.15


def test_score_counts_false_edges_and_the_largest_error():
    W = np.zeros((3, 3, 2, 2))
    W[0, 1] = 0.5 * np.outer(S, S)
    W[1, 0] = W[0, 1].T
    weights = {(0, 1): 0.4 * np.outer(S, S), (1, 2): 0.3 * np.outer(S, S)}
    got = structure.score(weights, {(1, 2)}, W)
    assert got == {"exact": 0, "fp": 1, "fn": 1, "max_err": pytest.approx(0.3)}


def test_quick_run_resumes_from_its_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(structure.harness, "RESULTS", tmp_path)
    monkeypatch.setattr(structure.harness, "pyplot", lambda: None)
    args = ["--quick", "--routes", "tables-icov", "tables-refit", "fw-oracle", "--ns", "2000", "--models", "1"]
    structure.main(args)
    runs = pd.read_csv(tmp_path / "structure_quick_runs.csv.gz")
    assert len(runs) == 9 and set(runs.route) == {"tables-icov", "tables-refit", "fw-oracle"}
    assert runs.max_err.between(0, 1).all() and (runs.lib[runs.route != "fw-oracle"] == "-").all()
    structure.main(args)  # every fit is cached: nothing is added
    assert len(pd.read_csv(tmp_path / "structure_quick_runs.csv.gz")) == 9
    assert "n50" in (tmp_path / "structure_quick_tables.md").read_text()
