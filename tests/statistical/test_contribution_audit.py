"""Black-box audits of individual-level releases: neighbours differ by ALL rows of one individual.

The added individual owns 6 rows, all in one cell of each table. A release that
bounds contributions (normalise, or clip at k=2 with epsilon scaled to it) must
pass the audit at its claimed epsilon; the same release at record level (no
``privacy_unit``) lets that individual move each table by 6 and must fail it.
See `pgmpy_dp.testing.audit` for what the audit guarantees.
"""

import numpy as np
import pytest

from pgmpy_dp import Domain
from pgmpy_dp.testing.audit import AuditTarget, audit_epsilon, run_in_loop
from pgmpy_dp.tables import release_from_codes

DOM = Domain({"a": [0, 1, 2], "b": [0, 1]})
TABLES = [("a", "b"), ("b",)]
_rng = np.random.default_rng(7)
ROWS = np.array([1, 2, 3, 4, 2, 3, 4, 1, 2, 3, 4, 3, 3, 3, 2])  # rows per individual
DATA = (
    {"a": _rng.integers(0, 3, ROWS.sum()), "b": _rng.integers(0, 2, ROWS.sum())},
    np.repeat(np.arange(len(ROWS)), ROWS),
)
# the neighbour adds individual 15 with 6 rows, all at (a=2, b=1)
NEIGHBOUR = (
    {"a": np.concatenate([DATA[0]["a"], np.full(6, 2)]), "b": np.concatenate([DATA[0]["b"], np.full(6, 1)])},
    np.concatenate([DATA[1], np.full(6, len(ROWS))]),
)


def target(name, epsilon, **unit):
    def one_run(data, rng):
        codes, units = data
        kw = {"units": units, **unit} if unit else {}
        rel = release_from_codes(codes, DOM, TABLES, epsilon, random_state=rng, **kw)
        return np.concatenate([t.values.ravel() for t in rel])

    return AuditTarget(name, epsilon, run_in_loop(one_run))


@pytest.mark.parametrize(
    "tgt",
    [
        target("normalize eps=1", 1.0, contribution="normalize"),
        target("clip k=2 eps=1", 1.0, contribution="clip", max_records_per_user=2),
    ],
    ids=lambda t: t.name,
)
def test_individual_level_release_passes_the_audit(tgt):
    result = audit_epsilon(tgt, DATA, NEIGHBOUR, n_runs=8000, seed=11)
    print(result)
    assert result.passed, str(result)


def test_record_level_release_fails_the_individual_level_audit():
    """Without contribution bounding the 6-row individual is protected at about 6 * epsilon, not epsilon."""
    result = audit_epsilon(target("record level eps=1", 1.0), DATA, NEIGHBOUR, n_runs=8000, seed=11)
    print(result)
    assert not result.passed and result.epsilon_lower > 2.0, str(result)
