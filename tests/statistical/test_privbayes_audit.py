"""Black-box audit of one PrivBayes selection step: neighbouring tables, the event "x's parent is p".

The step chooses between the pairs (x, {p}) and (q, {p}) (the first node is fixed to p) by the
exponential mechanism on the count-scale independence score. The neighbour adds the one record
(found by search) that moves the two scores' difference most. At the claimed epsilon the audit
must pass; with the sensitivity understated fourfold it must fail, so the audit can see a leak.
"""

import itertools

import numpy as np

from pgmpy_dp import Domain
from pgmpy_dp.testing.audit import AuditTarget, audit_epsilon, run_in_loop
from pgmpy_dp.synthesis import privbayes
from pgmpy_dp.synthesis.privbayes import PrivBayesSplit, independence_score
from pgmpy_dp.tables.counter import as_counter

DOM = Domain({"p": [0, 1], "x": [0, 1], "q": [0, 1]})
EPSILON = 1.0
SPLIT = PrivBayesSplit("epsilon", 3.0, 0.0, (EPSILON, EPSILON), 1.0)
# columns p, x, q; found by a search over small tables for the largest move of the score gap by one record
ROWS = np.array([[1, 1, 1], [1, 1, 0], [0, 1, 1], [1, 1, 0], [1, 1, 0], [1, 1, 1], [1, 1, 1]])


def _codes(rows):
    return {a: rows[:, i].astype(np.int64) for i, a in enumerate(DOM.attrs)}


def _gap(rows):
    c = _codes(rows)
    joint = {b: np.histogram2d(c[b], c["p"], bins=[2, 2], range=[[0, 2], [0, 2]])[0] for b in ("x", "q")}
    return independence_score(joint["x"]) - independence_score(joint["q"])


# the added record that moves the score gap most
ADDED = max(itertools.product([0, 1], repeat=3), key=lambda r: abs(_gap(np.vstack([ROWS, r])) - _gap(ROWS)))
NEIGHBOUR = np.vstack([ROWS, ADDED])


def one_run(rows, rng):
    selected = privbayes._select(as_counter(_codes(rows), DOM), DOM, SPLIT, 1e9, 1, "p", False, rng)
    return np.array([selected[1] == ("x", ("p",))], dtype=float)  # only the first step's choice


def test_the_neighbour_moves_the_gap_by_more_than_one_sensitivity():
    assert abs(_gap(NEIGHBOUR) - _gap(ROWS)) > privbayes.SCORE_SENSITIVITY


def test_one_selection_step_passes_the_audit():
    result = audit_epsilon(AuditTarget("privbayes step eps=1", EPSILON, run_in_loop(one_run)), ROWS, NEIGHBOUR,
                           n_runs=20000, seed=3)
    print(result)
    assert result.passed, str(result)


def test_an_understated_sensitivity_fails_the_audit(monkeypatch):
    monkeypatch.setattr(privbayes, "SCORE_SENSITIVITY", privbayes.SCORE_SENSITIVITY / 4)
    result = audit_epsilon(AuditTarget("privbayes step, sensitivity / 4", EPSILON, run_in_loop(one_run)), ROWS,
                           NEIGHBOUR, n_runs=20000, seed=3)
    print(result)
    assert not result.passed, str(result)
