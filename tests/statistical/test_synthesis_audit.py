"""Privacy audits of the synthesizer's selection steps (MST's spanning tree, AIM's round choice).

Each step runs many times on two neighbouring tables (``NEIGHBOUR`` is ``DATA`` plus one record)
with the public inputs fixed (MST: the independence estimate; AIM: the model's estimates), and
publishes a one-hot vector of what it selected. The event "a given marginal is selected" then
has a probability ratio at most ``exp(epsilon)`` for an ``epsilon``-DP selection (MST's tree: the
sum of its edges' epsilons). A mutant that understates the score sensitivity ten-fold must fail.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pgmpy_dp import Domain
from pgmpy_dp.privacy import selection
from pgmpy_dp.testing.audit import AuditTarget, audit_epsilon, run_in_loop
from pgmpy_dp.synthesis import aim, mst
from pgmpy_dp.tables.counting import contingency_table

DOMAIN = Domain({v: [0, 1] for v in "abc"})
PAIRS = list(itertools.combinations(DOMAIN.attrs, 2))
N = 60
#: Cell counts of (a, b, c), balanced margins; the added record (1, 1, 1) lowers the (a, b) score
#: (its cell is below the independence estimate 15) and raises the others, so scores move apart.
CELLS = {(0, 0, 0): 10, (0, 1, 0): 10, (0, 1, 1): 10, (1, 0, 0): 10, (1, 0, 1): 10, (1, 1, 1): 10}
DATA = {v: np.repeat([cell[i] for cell in CELLS], list(CELLS.values())) for i, v in enumerate("abc")}
NEIGHBOUR = {v: np.append(codes, 1) for v, codes in DATA.items()}
UNIFORM = {v: np.array([0.5, 0.5]) for v in "abc"}
EPSILON = 1.0  # per selection


def mst_tree(codes, rng):
    """Both edges of MST's tree over (a, b, c), one-hot over the pairs, at EPSILON per edge."""
    scores = mst.pair_scores(codes, DOMAIN, UNIFORM, float(N))
    tree = mst.select_tree(list(DOMAIN.attrs), scores, 2 * selection.exponential_mechanism_rho(EPSILON), rng)
    return np.array([p in tree for p in PAIRS], dtype=float)


CANDIDATES = {("a", "b"): 2.0, ("b", "c"): 2.0, ("a",): 1.0, ("c",): 1.0}
ESTIMATES = {c: np.full(DOMAIN.shape(c), N / 2 ** len(c)) for c in CANDIDATES}


def aim_round(codes, rng):
    """One AIM selection among weighted candidates, one-hot, at EPSILON."""
    exact = {c: contingency_table(codes, DOMAIN, c) for c in CANDIDATES}
    chosen = aim.worst_approximated(exact, ESTIMATES, CANDIDATES, 1.0, EPSILON, rng)
    return np.array([c == chosen for c in CANDIDATES], dtype=float)


def understated(step):
    """The step with the exponential mechanism told a tenth of the true sensitivity."""

    def run(codes, rng):
        real = selection.exponential_mechanism

        def broken(scores, epsilon, sensitivity=1.0, rng=None):
            return real(scores, epsilon, sensitivity / 10.0, rng)

        patched = [(m, m.exponential_mechanism) for m in (mst, aim)]
        try:
            for m, _ in patched:
                m.exponential_mechanism = broken
            return step(codes, rng)
        finally:
            for m, f in patched:
                m.exponential_mechanism = f

    return run


CASES = [
    AuditTarget("MST spanning tree (2 edges at eps 1)", 2 * EPSILON, run_in_loop(mst_tree)),
    AuditTarget("AIM round selection (eps 1)", EPSILON, run_in_loop(aim_round)),
]
MUTANTS = [
    AuditTarget("MST tree, sensitivity understated", 2 * EPSILON, run_in_loop(understated(mst_tree))),
    AuditTarget("AIM round, sensitivity understated", EPSILON, run_in_loop(understated(aim_round))),
]


@pytest.mark.parametrize("target", CASES, ids=lambda t: t.name)
def test_selection_stays_below_its_claim(target):
    result = audit_epsilon(target, DATA, NEIGHBOUR, n_runs=20_000, seed=7, n_select=5_000)
    print(result)
    assert result.passed, str(result)


@pytest.mark.parametrize("target", MUTANTS, ids=lambda t: t.name)
def test_audit_detects_understated_sensitivity(target):
    result = audit_epsilon(target, DATA, NEIGHBOUR, n_runs=20_000, seed=7, n_select=5_000)
    print(result)
    assert not result.passed, f"the audit missed a broken selection: {result}"
