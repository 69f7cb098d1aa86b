"""The BN likelihood fit's prior weight capped (DiscretePrivateMLE: the uniform Dirichlet's 1 / trigamma(1))."""

import math

import numpy as np
import pytest

from pgmpy_dp.estimators.likelihood import BN_WEIGHT_CAP, noise_regularization
from pgmpy_dp.estimators.priors import PRIOR_PRECISION, UNRESOLVED_PRIOR_PRECISION
from pgmpy_dp.tables import NoisyTable

BN_PRIOR_CAP = 2.0 / np.pi**2  # Jeffreys' Dirichlet(1/2) precision: a tighter cap than the default


def _tables(scale, shapes=((10, 10), (4, 3, 2))):
    # the tables' values do not enter the weight: only their noise scales and shapes (public facts)
    return [NoisyTable(tuple("abc"[: len(s)]), np.zeros(s), epsilon=1.0 / scale, scale=scale) for s in shapes]


@pytest.mark.parametrize("n_records", [200.0, 1_000.0, 5_000.0, 20_000.0, 1e6])
def test_capped_weight_is_the_rule_below_the_cap_bit_for_bit_and_the_cap_above_it(n_records):
    tables = _tables(scale=4.0)
    old = noise_regularization(tables, n_records)
    new = noise_regularization(tables, n_records, cap=BN_PRIOR_CAP)
    if old <= BN_PRIOR_CAP:
        assert new == old  # exactly: every fit whose rule is below the cap is unchanged
    else:
        assert new == BN_PRIOR_CAP
    assert old <= PRIOR_PRECISION


def test_the_cap_binds_where_the_rule_is_large_and_not_elsewhere():
    tables = _tables(scale=4.0)
    weights = {n: noise_regularization(tables, n) for n in (200.0, 1e6)}
    assert weights[200.0] > BN_PRIOR_CAP > weights[1e6]  # the grid above covers both sides
    assert noise_regularization(tables, 200.0, cap=BN_PRIOR_CAP) == BN_PRIOR_CAP
    assert noise_regularization(tables, 1e6, cap=BN_PRIOR_CAP) == weights[1e6]
    # the default (cap=None) is the Markov-network rule's own cap, unchanged
    assert noise_regularization(tables, 1.0) == PRIOR_PRECISION


def test_noiseless_tables_get_a_vanishing_weight_under_the_cap():
    tables = _tables(scale=1e-9)
    assert noise_regularization(tables, 1_000.0, cap=BN_PRIOR_CAP) < 1e-15


@pytest.mark.parametrize("cap", [0.0, -1.0, math.inf, math.nan, "jeffreys"])
def test_a_bad_cap_is_rejected_naming_the_parameter(cap):
    with pytest.raises(ValueError, match="cap must be a positive finite number"):
        noise_regularization(_tables(scale=4.0), 1_000.0, cap=cap)


def test_the_default_cap_is_the_precision_matching_a_uniform_dirichlet_column():
    from scipy.special import polygamma

    assert BN_WEIGHT_CAP == UNRESOLVED_PRIOR_PRECISION == pytest.approx(1.0 / float(polygamma(1, 1.0)), rel=1e-12)
    k, draws = 3, 200_000
    p = np.random.default_rng(1).dirichlet(np.ones(k), size=draws)
    c = np.log(p) - np.log(p).mean(axis=1, keepdims=True)
    cov = np.cov(c, rowvar=False)
    se = (c[:, :, None] * c[:, None, :]).std(axis=0) / np.sqrt(draws)
    assert np.all(np.abs(cov - (np.eye(k) - 1.0 / k) / BN_WEIGHT_CAP) < 5 * se)
    assert np.all(np.abs(np.diag(cov) - (1 - 1 / k) / BN_PRIOR_CAP) > 50 * np.diag(se))  # Jeffreys' is far off


@pytest.mark.parametrize("epsilon, capped", [(0.02, True), (5.0, False)])
def test_discrete_private_mle_fits_with_the_capped_weight(epsilon, capped, monkeypatch):
    """The estimator's global weight is min(6 / pi^2, rule) per record: the cap where the noise rule exceeds it
    (tiny epsilon), the rule itself, bit for bit, elsewhere."""
    from pgmpy.models import DiscreteBayesianNetwork

    import pgmpy_dp
    import pgmpy_dp.estimators.bayesian as bayesian
    from pgmpy_dp.datasets import load_network, sample_network
    from pgmpy_dp.estimators.evidence import pooled_n_records

    seen = {}
    original = bayesian.fit_family_tables

    def spy(domain, families, measurements, n_records, **kwargs):
        seen["weight"], seen["n"] = kwargs["regularization"], n_records
        return original(domain, families, measurements, n_records, **kwargs)

    monkeypatch.setattr(bayesian, "fit_family_tables", spy)
    truth = load_network("asia")
    df = sample_network(truth, 2000, seed=0)
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=epsilon, random_state=0, show_progress=False)
    DiscreteBayesianNetwork(truth.edges()).fit(df, estimator=est)
    tables = list(est.release_)
    rule = noise_regularization(tables, pooled_n_records([est.release_]))
    assert (rule > BN_WEIGHT_CAP) == capped  # the two cases are on the two sides of the cap
    assert seen["weight"] == min(BN_WEIGHT_CAP, rule) / seen["n"]
