import numpy as np
import pytest

from pgmpy_dp.engine import LoopyBP, make_inference
from pgmpy_dp.privacy.domain import Domain



def test_exact_on_a_tree(brute_force):
    rng = np.random.default_rng(2)
    domain = Domain({v: list(range(3)) for v in "abcde"})
    cliques = [("a", "b"), ("b", "c"), ("b", "d"), ("d", "e"), ("e",)]
    theta = [rng.normal(size=domain.shape(c)) for c in cliques]
    marg, log_z = LoopyBP(domain, cliques, damping=0.0).marginals(theta)
    exact, exact_log_z = brute_force(domain, cliques, theta)
    assert log_z == pytest.approx(exact_log_z, abs=1e-8)
    for m, e in zip(marg, exact):
        np.testing.assert_allclose(m, e, atol=1e-8)


def test_close_on_a_weakly_coupled_loopy_model(loopy_model, brute_force):
    domain, cliques, theta = loopy_model
    theta = [0.3 * t for t in theta]  # weak couplings: the Bethe approximation is accurate
    marg, log_z = LoopyBP(domain, cliques).marginals(theta)
    exact, exact_log_z = brute_force(domain, cliques, theta)
    assert log_z == pytest.approx(exact_log_z, abs=0.01)
    assert max(np.abs(m - e).max() for m, e in zip(marg, exact)) < 0.01


def test_auto_falls_back_to_loopy_when_the_tree_is_too_large():
    domain = Domain({v: list(range(10)) for v in "abcd"})
    cycle = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]
    assert isinstance(make_inference(domain, cycle, max_cells=999), LoopyBP)
    with pytest.raises(ValueError, match="inference must be"):
        make_inference(domain, cycle, method="exact")
