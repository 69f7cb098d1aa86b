"""The ``"inverted"`` band of issue 14: the far end of a clipped normal band found by test inversion."""

import warnings

import numpy as np
import pandas as pd
import pytest
from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork

import pgmpy_dp
from pgmpy_dp.uncertainty import (
    _acceptance,
    _answerer,
    _band_t,
    _event_mask,
    _inverted_ends,
    _records_behind,
    _TiltTest,
    _tilted,
    band_limits,
    bootstrap_log_potentials,
)

LEVEL = 0.95
B = 12  # refits per set: the tests check the construction, not the band's coverage


def chain_fit(seed: int, n: int = 400, eps: float = 0.5):
    """A fitted three-node chain a - b - c (ternary) whose b | a = 0 has rare states (seeds 3 and 4 clip them)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = np.where(rng.random(n) < 0.7, a, rng.integers(0, 3, n))
    c = np.where(rng.random(n) < 0.6, b, rng.integers(0, 3, n))
    df = pd.DataFrame({"a": a, "b": b, "c": c})
    dom = {k: [0, 1, 2] for k in df}
    rel = df.dp.release([("a", "b"), ("b", "c")], epsilon=eps, domain=dom, random_state=seed)
    est = pgmpy_dp.PrivateMarkovEstimator(random_state=0, show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(DiscreteMarkovNetwork([("a", "b"), ("b", "c")]), rel)
    return est


@pytest.fixture(scope="module")
def fit4():
    return chain_fit(4)


def theta_of(est):
    return [np.asarray(t, dtype=np.float64) for t in est.log_potentials_]


@pytest.mark.parametrize("variables, evidence", [(["b"], {"a": 0}), (["a"], {}), (["c"], {"b": 2}), (["a", "b"], {})])
def test_tilt_gives_the_requested_answer_keeps_p_evidence_and_the_other_states_ratios(fit4, variables, evidence):
    est = fit4
    answer = _answerer(est.domain_, list(est.cliques_), est.inference_, variables, evidence)
    theta = theta_of(est)
    p = answer(theta).ravel()
    host = next(i for i, c in enumerate(est.cliques_) if set(variables) | set(evidence) <= set(c))
    for j, p0 in ((0, 0.5), (1, 0.02), (p.size - 1, 0.97)):
        mask = _event_mask(est.domain_, est.cliques_[host], variables, j, evidence)
        tilted = _tilted(theta, host, mask, answer, j, p0)
        q = answer(tilted).ravel()
        assert q[j] == pytest.approx(p0, abs=1e-9)
        # the evidence keeps its fitted probability (the records behind the answer stay as many)
        assert answer.evidence_probability(tilted) == pytest.approx(answer.evidence_probability(theta), rel=1e-9)
        others = np.arange(p.size) != j
        # only the event's mass moves: the other states keep their proportions
        np.testing.assert_allclose(q[others] / q[others].sum(), p[others] / p[others].sum(), rtol=1e-9)


def interval_pieces(est, variables, evidence, seed=1):
    variables = [variables] if isinstance(variables, str) else variables
    answer = _answerer(est.domain_, list(est.cliques_), est.inference_, variables, evidence)
    estimate = answer(theta_of(est)).ravel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = bootstrap_log_potentials(est, B, random_state=seed, show_progress=False)
    answers = np.array([answer(f).ravel() for f in fits])
    return answer, estimate, answers


def test_inverted_ends_reach_the_acceptance_boundary_and_not_beyond(fit4):
    """b | a = 0 on seed 4: states 1 and 2 clipped at 0, state 0 at 1. Each inverted end, solved to a tight
    tolerance, is accepted just inside (within 0.01) and rejected just outside; the upper ends are at least the
    normal ones (the fit came out small, so refits at a larger truth spread more)."""
    est = fit4
    answer, estimate, answers = interval_pieces(est, "b", {"a": 0})
    n_lo, n_hi = band_limits(estimate, answers, LEVEL)
    assert n_lo[1] == 0.0 and n_lo[2] == 0.0 and n_hi[0] == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo, hi, rep = _inverted_ends(est, answer, ["b"], {"a": 0}, estimate, answers, LEVEL, 1, True, "warm",
                                     False, max_evals=6, xtol=1e-4)
    assert rep["upper_inverted"] == [1, 2] and rep["lower_inverted"] == [0] and rep["left_normal"] == []
    assert hi[1] >= n_hi[1] and hi[2] >= n_hi[2]
    assert lo[1] == 0.0 and lo[2] == 0.0 and hi[0] == 1.0  # the clipped end itself stays where it was
    t = _band_t(B, (1 - LEVEL) / 2)  # the normal band's multiplier
    d = 0.01
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for j, end, x in ((1, "upper", hi[1]), (2, "upper", hi[2]), (0, "lower", lo[0])):
            test = _TiltTest(est, answer, ["b"], {"a": 0}, 0, j, end, estimate[j], t, B, 1, True, "warm")
            inside, outside = (x - d, x + d) if end == "upper" else (x + d, x - d)
            if end == "upper":
                assert test(inside) <= 0 < test(outside)
            else:
                assert test(inside) >= 0 > test(outside)
    # at the fit itself (p0 = p_hat) the tilted refits are the fit's own refits (common random numbers)
    test = _TiltTest(est, answer, ["b"], {"a": 0}, 0, 1, "upper", estimate[1], t, B, 1, True, "warm")
    assert test(estimate[1]) == pytest.approx(_acceptance(answers[:, 1], t, -1.0, estimate[1]), abs=1e-9)


def test_query_interval_inverted_changes_only_clipped_states():
    """Seed 3: b | a = 0 has state 1 clipped at 0 and the others inside (0, 1): those two rows equal the normal band."""
    est = chain_fit(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        normal = pgmpy_dp.query_interval(est, "b", {"a": 0}, n_samples=B, random_state=5, show_progress=False)
        inv = pgmpy_dp.query_interval(est, "b", {"a": 0}, n_samples=B, random_state=5, show_progress=False,
                                      interval="inverted")
    assert normal.lower[1] == 0.0 and (normal.lower[[0, 2]] > 0).all() and (normal.upper < 1).all()
    pd.testing.assert_frame_equal(inv.loc[[0, 2]], normal.loc[[0, 2]])
    assert inv.lower[1] == 0.0 and inv.upper[1] != normal.upper[1]
    assert inv.attrs["inverted"]["upper_inverted"] == [1]
    assert inv.attrs["inverted"]["tilted_refits"] == 2 * B  # the cost: two tilted refit sets for one clipped end
    assert inv.attrs["interval"] == "inverted" and inv.attrs["n_records"] == normal.attrs["n_records"]


def test_no_clique_holds_query_and_evidence_leaves_the_normal_band(fit4):
    """c | a = 0: no clique holds a and c, so no tilt of one clique sets that answer; the band stays normal."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        normal = pgmpy_dp.query_interval(fit4, "c", {"a": 1}, n_samples=B, random_state=2, show_progress=False)
        inv = pgmpy_dp.query_interval(fit4, "c", {"a": 1}, n_samples=B, random_state=2, show_progress=False,
                                      interval="inverted")
    pd.testing.assert_frame_equal(inv, normal, check_like=True)
    rep = inv.attrs["inverted"]
    clipped = sorted(np.flatnonzero((normal.lower <= 0).to_numpy() | (normal.upper >= 1).to_numpy()).tolist())
    assert rep["left_normal"] == clipped and rep["tilted_refits"] == 0


def test_inverted_bad_values(fit4):
    with pytest.raises(ValueError, match="leave refits=None"):
        refits = bootstrap_log_potentials(fit4, 2, random_state=0, show_progress=False)
        pgmpy_dp.query_interval(fit4, "b", {"a": 0}, refits=refits, interval="inverted")
    with pytest.raises(ValueError, match="leave generator='fit'"):
        pgmpy_dp.query_interval(fit4, "b", {"a": 0}, n_samples=2, generator="prior-free", interval="inverted")
    with pytest.raises(ValueError, match="use query_interval"):
        band_limits(np.array([0.1]), np.full((3, 1), 0.1), LEVEL, "inverted")
    with pytest.raises(ValueError, match="interval must be one of"):
        pgmpy_dp.query_interval(fit4, "b", interval="inverse")


def test_inverted_is_refused_for_bayesian_networks():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.integers(0, 2, 300), "y": rng.integers(0, 2, 300)}).astype("category")
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, random_state=0, show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DiscreteBayesianNetwork([("x", "y")]).fit(df, estimator=est)
    with pytest.raises(NotImplementedError, match="PrivateMarkovEstimator fits only"):
        pgmpy_dp.query_interval(est, "y", {"x": 0}, n_samples=2, interval="inverted")


def test_n_records_read_off_the_answers_tree_equals_the_chained_answers(fit4):
    """The side fix: P(evidence) from the answer's own junction tree (Z clamped / Z free) instead of one new
    tree per evidence variable; the record count is the old chain's to rounding, also with two observed
    variables and for a Bayesian network."""
    est = fit4
    make = lambda v, ev: _answerer(est.domain_, list(est.cliques_), est.inference_, [v], ev)  # noqa: E731
    for x, ev in (("b", {"a": 0}), ("b", {"a": 2, "c": 1}), ("a", {})):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            iv = pgmpy_dp.query_interval(est, x, ev, n_samples=B, random_state=1, show_progress=False)
        old = _records_behind(make, theta_of(est), est.domain_, ev, est.n_records_)
        assert iv.attrs["n_records"] == pytest.approx(old, rel=1e-9)
        if ev:
            assert iv.attrs["n_records"] < est.n_records_
    rng = np.random.default_rng(1)
    x = rng.integers(0, 3, 500)
    df = pd.DataFrame({"x": x, "y": (x + rng.integers(0, 2, 500)) % 3, "z": rng.integers(0, 2, 500)})
    df = df.astype("category")
    bn = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, random_state=0, show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DiscreteBayesianNetwork([("x", "y"), ("y", "z")]).fit(df, estimator=bn)
        iv = pgmpy_dp.query_interval(bn, "x", {"y": 1, "z": 0}, n_samples=2, random_state=0, show_progress=False)
    from pgmpy_dp.uncertainty import _bn_families, _bn_releases, _refit_records
    from pgmpy_dp.privacy.domain import Domain

    families, theta_bn = _bn_families(bn)
    dom = Domain(dict(bn.state_names_))
    old = _records_behind(lambda v, ev: _answerer(dom, families, "junction-tree", [v], ev), theta_bn, dom,
                          {"y": 1, "z": 0}, _refit_records(_bn_releases(bn)))
    assert iv.attrs["n_records"] == pytest.approx(old, rel=1e-9)
