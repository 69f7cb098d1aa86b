"""benchmarks/coverage_calibrated.py: the two readings of issue 14's 93-97% target and their operating odds."""

import importlib.util
import sys
from pathlib import Path

import numpy as np

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "coverage_calibrated.py"
_spec = importlib.util.spec_from_file_location("bench_coverage_calibrated", _PATH)
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench
_spec.loader.exec_module(bench)


def test_readings_point_and_with_sampling_error():
    cov = np.array([0.95, 0.96, 0.925])
    # R1 wants every point inside; R2 accepts 0.925 when its interval reaches 0.93 and the mean is 0.945
    assert bench.readings(cov, np.full(3, 0.01)) == (False, True)
    # the same miss measured precisely (0.925 + 1.96 * 0.002 < 0.93) is not consistent with the range
    assert bench.readings(cov, np.full(3, 0.002)) == (False, False)
    # every pair consistent, but the mean (0.9333) is short: R2 fails on its mean clause alone
    assert bench.readings(np.array([0.93, 0.935, 0.935]), np.full(3, 0.01)) == (True, False)
    r1, r2 = bench.readings(np.array([[0.95, 0.95], [0.90, 0.95]]), np.full((2, 2), 0.005))
    assert r1.tolist() == [True, False] and r2.tolist() == [True, False]


def test_reading_odds_match_their_closed_form():
    from scipy.stats import norm

    se = np.full(12, 0.0115)
    r1, r2 = bench.reading_odds(np.full(12, 0.95), se, draws=100_000, seed=1)
    exact_r1 = (2 * norm.cdf(0.02 / 0.0115) - 1) ** 12  # independent pairs, each inside with this probability
    assert abs(r1 - exact_r1) < 4 * np.sqrt(exact_r1 * (1 - exact_r1) / 100_000)
    assert 0.3 < r1 < 0.42 and r2 > 0.99
    # a band short by three points in every pair is caught by R2 almost surely
    assert bench.reading_odds(np.full(12, 0.92), se, draws=20_000)[1] < 0.01
