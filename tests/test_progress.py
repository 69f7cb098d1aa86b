"""Progress bars: drawn by the loops that can be slow, only after a delay, and silenced by
``show_progress=False`` (issue 6)."""

import itertools
import re

import numpy as np
import pytest
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp
from pgmpy_dp import _progress
from pgmpy_dp.evaluation.bayesian import answer_queries, map_answers, random_queries


@pytest.fixture(scope="module")
def df():
    return pgmpy_dp.datasets.sample_network("asia", 500, seed=0)


@pytest.fixture
def no_delay(monkeypatch):
    """Draw every bar at once, as a slow loop would after the delay."""
    monkeypatch.setattr(_progress, "PROGRESS_DELAY", 0)


def pairs(df):
    return list(itertools.combinations(df.columns, 2))


def test_quick_release_draws_no_bar(df, capsys):
    df.dp.release(pairs(df), epsilon=1.0)
    assert capsys.readouterr().err == ""


def test_release_bar_counts_tables(df, capsys, no_delay):
    df.dp.release(pairs(df), epsilon=1.0)
    err = capsys.readouterr().err
    assert "counting tables" in err and f"/{len(pairs(df))}" in err


def test_release_bar_silenced(df, capsys, no_delay):
    df.dp.release(pairs(df), epsilon=1.0, show_progress=False)
    assert capsys.readouterr().err == ""


def test_markov_fit_from_data_silenced(df, capsys, no_delay):
    mn = DiscreteMarkovNetwork([("smoke", "lung"), ("lung", "xray")])
    pgmpy_dp.PrivateMarkovEstimator(method="naive-mle", show_progress=False).fit(mn, df, epsilon=1.0)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("answer, desc", [(answer_queries, "queries"), (map_answers, "MAP queries")])
def test_query_helpers_bar_and_silence(df, capsys, no_delay, answer, desc):
    net = pgmpy_dp.datasets.load_network("asia")
    queries = random_queries(net, df, 5, True, np.random.default_rng(0))
    quiet = answer(net, queries, show_progress=False)
    assert capsys.readouterr().err == ""
    loud = answer(net, queries)
    err = capsys.readouterr().err
    assert f"{desc}:" in err and "/5" in err
    assert all(np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b for a, b in zip(quiet, loud))


def test_quick_cgm_em_fit_draws_no_bar_until_the_delay(df, capsys, monkeypatch):
    """The EM bar stays hidden for a fit shorter than the delay (its postfix updates must not draw it)."""
    mn = DiscreteMarkovNetwork([("smoke", "lung"), ("lung", "xray")])
    release = df.dp.release([("smoke", "lung"), ("lung", "xray")], epsilon=1.0, random_state=0)
    capsys.readouterr()
    pgmpy_dp.PrivateMarkovEstimator(method="cgm-em", max_iter=5).fit(mn, release)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(_progress, "PROGRESS_DELAY", 0)
    pgmpy_dp.PrivateMarkovEstimator(method="cgm-em", max_iter=5).fit(mn, release)
    assert "CGM-EM" in capsys.readouterr().err


def test_bars_made_and_closed_in_many_threads_at_once():
    """tqdm registers a bar before its __init__ ends, and closing a bar past tqdm's 20 rows repositions another:
    releases in several threads failed with AttributeError (no 'sp') until bars were made under tqdm's lock.
    25 open bars put every new one past row 20; without the lock this test failed in 3 runs of 4."""
    import threading

    held = [iter(_progress.progress(range(5), True, "held")) for _ in range(25)]
    for bar in held:
        next(bar)
    errors = []

    def worker():
        try:
            for _ in range(600):
                for _ in _progress.progress(range(2), True, "short"):
                    pass
        except Exception as exc:  # noqa: BLE001 - asserted on
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for bar in held:
        list(bar)
    assert errors == []


def test_aim_bar_counts_the_budget_spent_with_the_time_left(capsys, no_delay, monkeypatch):
    from pgmpy_dp.synthesis import aim

    made = _progress._bar  # redraw on every step: a fast fit would otherwise show only its 0%
    monkeypatch.setattr(_progress, "_bar", lambda iterable=None, **kw: made(iterable, mininterval=0, miniters=0, **kw))

    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 2000)
    codes = {"a": a, "b": a ^ (rng.random(2000) < 0.1)}
    aim.run_aim(codes, pgmpy_dp.Domain({"a": [0, 1], "b": [0, 1]}), rho=0.5, rng=rng, show_progress=True)
    err = capsys.readouterr().err
    # a percentage of the budget, then [elapsed<remaining] (tqdm redraws at most every 0.1 s, so not every step shows)
    assert re.search(r"AIM: budget spent: +[1-9]\d*%\|.*\[\d\d:\d\d<\d\d:\d\d", err), err
