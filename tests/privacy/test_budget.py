import math

import pytest

from pgmpy_dp.privacy import BudgetExceededError, PrivacyBudget, check_epsilon


def test_ledger_sums_to_spent_and_remaining():
    b = PrivacyBudget(1.0)
    for i in range(10):
        with b.charge(0.1, f"q{i}"):
            pass
    assert len(b.ledger) == 10
    assert math.isclose(b.spent, 1.0)
    assert b.remaining == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(BudgetExceededError, match="exceeds the remaining budget"):
        with b.charge(0.01, "one too many"):
            pass


def test_failed_block_refunds_and_exceeded_charge_never_runs():
    b = PrivacyBudget(1.0)
    with pytest.raises(RuntimeError):
        with b.charge(0.7, "fails"):
            raise RuntimeError("solver error")
    assert b.spent == 0 and b.remaining == 1.0 and b.ledger == ()
    ran = []
    with pytest.raises(BudgetExceededError):
        with b.charge(1.5, "too big"):
            ran.append(1)
    assert ran == [] and b.remaining == 1.0


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan")])
def test_check_epsilon_values(bad):
    with pytest.raises(ValueError, match="epsilon must be positive and finite"):
        check_epsilon(bad)


@pytest.mark.parametrize("bad", ["1", None, True])
def test_check_epsilon_types(bad):
    with pytest.raises(TypeError, match="epsilon must be a positive finite number"):
        check_epsilon(bad)


def test_check_epsilon_accepts_numpy_scalars():
    import numpy as np

    assert check_epsilon(np.float32(0.5)) == 0.5 and check_epsilon(np.int64(2)) == 2.0
    with pytest.raises(TypeError):
        check_epsilon(np.bool_(True))
