"""Black-box audits of the schema mechanisms, and the key-discovery target on Zipf-like categories.

Key discovery is ``delta``-approximately ``rho``-zCDP, so ``(rho_to_epsilon_delta(rho, d'), delta + d')``-DP for
every ``d'``; the audit bounds ``log((p_high - delta_total) / p_low)`` on the release indicators of two neighbours
(one more record of a key at the threshold; one record of a key the other frame lacks). Private bin edges are
pure-epsilon (exponential mechanisms). With the threshold or the sensitivity understated, the audits must fail.
"""

import math

import numpy as np
import pytest

from pgmpy_dp.privacy import discovery
from pgmpy_dp.privacy.discovery import private_bin_edges, threshold_keys
from pgmpy_dp.privacy.loss import ApproxDP, PureDP
from pgmpy_dp.privacy.parameters import rho_to_epsilon_delta
from pgmpy_dp.tables.resolve import plan_schema
from pgmpy_dp.testing.audit import AuditTarget, audit_epsilon, run_in_loop

RHO, DELTA, DELTA_PRIME = 0.5, 1e-3, 1e-3
KEYS = ("a", "b")


THRESHOLD = threshold_keys([], [], RHO, DELTA).threshold


def key_frames():
    t = THRESHOLD
    data = {"a": t - 1}               # "a" one record short of the threshold; "b" absent
    neighbour = {"a": t - 1, "b": 1}  # one more record, of a key the first frame lacks
    neighbour_a = {"a": t}            # one more record of "a"
    return data, neighbour, neighbour_a


def one_key_run(counts, rng):
    rel = threshold_keys(list(counts), list(counts.values()), RHO, DELTA, random_state=rng)
    return np.array([k in rel.keys for k in KEYS], dtype=float)


def _key_audit(neighbour_index):
    data, *neighbours = key_frames()
    claim = rho_to_epsilon_delta(RHO, DELTA_PRIME)
    target = AuditTarget(f"key discovery rho={RHO} delta={DELTA}", claim, run_in_loop(one_key_run))
    return audit_epsilon(target, data, neighbours[neighbour_index], n_runs=20000, seed=5, delta=DELTA + DELTA_PRIME)


@pytest.mark.slow
@pytest.mark.parametrize("neighbour_index", [0, 1], ids=["a new key", "one more of a key"])
def test_key_discovery_passes_the_audit(neighbour_index):
    result = _key_audit(neighbour_index)
    print(result)
    assert result.passed, str(result)


@pytest.mark.slow
def test_a_threshold_below_the_delta_bound_fails_the_audit(monkeypatch):
    facts = discovery._key_facts

    def low(rho, delta):
        sigma, threshold, sure = facts(rho, delta)
        return sigma, 1, sure  # a lone key passes half the time

    monkeypatch.setattr(discovery, "_key_facts", low)
    result = _key_audit(0)
    print(result)
    assert not result.passed, str(result)


BIN_EPSILON = 1.0
ROWS = np.array([0, 1, 1, 2, 2, 3, 3, 4, 5, 5, 6])
BIN_NEIGHBOUR = np.append(ROWS, 0)  # one more record below every cut


def one_bin_run(values, rng):
    return np.array(private_bin_edges(values, (0, 6), 2, PureDP(BIN_EPSILON), integer=True, random_state=rng)[1:-1])


def _bin_audit():
    target = AuditTarget(f"private bin edge eps={BIN_EPSILON}", BIN_EPSILON, run_in_loop(one_bin_run))
    return audit_epsilon(target, ROWS, BIN_NEIGHBOUR, n_runs=20000, seed=7)


@pytest.mark.slow
def test_private_bin_edges_pass_the_audit():
    result = _bin_audit()
    print(result)
    assert result.passed, str(result)


@pytest.mark.slow
def test_an_understated_quantile_sensitivity_fails_the_audit(monkeypatch):
    monkeypatch.setattr(discovery, "QUANTILE_SENSITIVITY", discovery.QUANTILE_SENSITIVITY / 8)
    result = _bin_audit()
    print(result)
    assert not result.passed, str(result)


def zipf_counts(n=40, total=15_000, s=1.1):
    p = 1.0 / np.arange(1, n + 1) ** s
    return np.floor(total * p / p.sum()).astype(int)


@pytest.mark.slow
def test_zipf_categories_above_the_sure_count_are_kept_and_none_invented():
    # the synthesizer's split at (1, 1e-9), schema_share=0.1, one discover column
    import pandas as pd
    from pgmpy_dp import Domain

    class Declared(Domain):
        discover = {"job"}

    plan = plan_schema(pd.DataFrame({"job": ["x"]}), Declared(), ApproxDP(1.0, 1e-9), 0.1)
    rho, delta = plan.column_loss().rho, plan.delta
    counts = zipf_counts()
    keys = [f"c{i}" for i in range(len(counts))]
    runs = 1000
    kept = np.zeros(len(keys))
    for seed in range(runs):
        rel = threshold_keys(keys, counts, rho, delta, random_state=seed)
        assert set(rel.keys) <= set(keys)  # none invented
        kept += np.isin(keys, rel.keys)
    rate = kept / runs
    sure = counts >= rel.sure_count
    assert sure.sum() >= 20 and (~sure).sum() >= 5  # the target straddles the documented count
    slack = 3 * math.sqrt(0.05 * 0.95 / runs)  # binomial sampling error at the 95% guarantee
    print(f"sure_count={rel.sure_count}, threshold={rel.threshold}, lowest kept rate above it "
          f"{rate[sure].min():.3f}, {int(sure.sum())} of 40 categories above it")
    assert rate[sure].min() >= 0.95 - slack
    # far below the threshold (by the same margin) a key is dropped at least as often
    far = counts <= 2 * rel.threshold - rel.sure_count - 1
    assert np.all(rate[far] <= 0.05 + slack)
