"""``PrivateMarkovEstimator(accelerate=...)``: passed to CGM-EM's engine, validated before any fitting."""

import pytest
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp.estimators.markov as markov_module
from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.engine.cgm import cgm_em
from pgmpy_dp.tables import release_marginals

from tests.estimators.test_markov_reconciled import EDGES, _frame


@pytest.mark.filterwarnings("ignore::pgmpy_dp.engine.ConvergenceWarning")
@pytest.mark.parametrize("accelerate", ["squarem", "anderson", None])
def test_the_accelerator_reaches_the_engine(monkeypatch, accelerate):
    seen = []

    def spy(*a, **k):
        seen.append(k.get("accelerate", "missing"))
        return cgm_em(*a, **k)

    monkeypatch.setattr(markov_module, "cgm_em", spy)
    release = release_marginals(_frame(2000), EDGES, epsilon=1.0, random_state=4)
    est = PrivateMarkovEstimator(show_progress=False, max_iter=6, accelerate=accelerate)
    est.fit(DiscreteMarkovNetwork(EDGES), release)
    assert seen == [accelerate]
    assert est.n_iter_ <= 6
    trace = est.log_likelihood_
    assert all(b >= a - 1e-9 * abs(a) for a, b in zip(trace, trace[1:]))


def test_squarem_is_the_default():
    assert PrivateMarkovEstimator().accelerate == "squarem"
    assert "accelerate" not in repr(PrivateMarkovEstimator())
    assert "accelerate='anderson'" in repr(PrivateMarkovEstimator(accelerate="anderson"))


@pytest.mark.parametrize("bad", ["fast", True, "Anderson"])
def test_a_bad_accelerator_is_refused_before_fitting(monkeypatch, bad):
    monkeypatch.setattr(markov_module, "fit_log_potentials", lambda *a, **k: pytest.fail("fitted"))
    release = release_marginals(_frame(500), EDGES, epsilon=1.0, random_state=9)
    with pytest.raises(ValueError, match=r"accelerate must be one of \('squarem', 'anderson', None\)"):
        PrivateMarkovEstimator(show_progress=False, accelerate=bad).fit(DiscreteMarkovNetwork(EDGES), release)
