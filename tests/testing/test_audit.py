"""The audit harness itself: Clopper-Pearson bounds, validity on a correct mechanism, power, errors."""

import math

import numpy as np
import pytest

from pgmpy_dp.testing.audit import AuditTarget, audit_epsilon, clopper_pearson, run_in_loop


def _laplace_count(scale):
    p = -math.expm1(-1.0 / scale)

    def run(count, n_runs, seed):
        rng = np.random.default_rng(seed)
        return (count + rng.geometric(p, n_runs) - rng.geometric(p, n_runs)).reshape(-1, 1).astype(float)

    return run


def test_clopper_pearson_known_values():
    # k = 0: upper bound is 1 - alpha^(1/n); k = n: lower bound is alpha^(1/n)
    assert clopper_pearson(0, 50, 0.05) == (0.0, pytest.approx(1 - 0.05 ** (1 / 50)))
    assert clopper_pearson(50, 50, 0.05) == (pytest.approx(0.05 ** (1 / 50)), 1.0)
    lo, hi = clopper_pearson(30, 100, 0.025)
    assert 0.21 < lo < 0.3 < hi < 0.40


@pytest.mark.slow
def test_bound_is_valid_for_a_correct_mechanism_over_many_seeds():
    """At 95% the bound may exceed the truth in at most ~5% of seeds; with tight events it stays below."""
    target = AuditTarget("count, eps=0.5", 0.5, _laplace_count(2.0))
    bounds = [audit_epsilon(target, 3, 4, n_runs=20_000, seed=s).epsilon_lower for s in range(20)]
    assert sum(b > 0.5 for b in bounds) <= 2
    assert np.median(bounds) > 0.4  # and it is not vacuous


def test_non_private_mechanism_is_caught_and_non_integer_outputs_work():
    exact = AuditTarget("exact mean", 1.0, run_in_loop(lambda x, rng: np.array([x / 3.0, rng.normal()])))
    result = audit_epsilon(exact, 1.0, 2.0, n_runs=2_000, seed=0)
    assert not result.passed and result.affected == (0,) and result.epsilon_lower > 5


def test_output_shape_must_not_depend_on_the_data():
    leaky = AuditTarget("shape leak", 1.0, lambda d, n, seed: np.zeros((n, d)))
    with pytest.raises(ValueError, match="the output shape must not depend on the data"):
        audit_epsilon(leaky, 2, 3, n_runs=100)
