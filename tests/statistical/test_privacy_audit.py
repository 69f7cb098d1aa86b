"""Black-box privacy audits of every mechanism that touches private data.

Each mechanism is run many times on two neighbouring DataFrames (``NEIGHBOUR``
is ``DATA`` plus one record) and :func:`pgmpy_dp.testing.audit.audit_epsilon`
computes a Clopper-Pearson lower bound on the epsilon it achieves, over a
family of threshold events on the affected outputs (Bonferroni over events,
directions and inputs). The test asserts the bound does not exceed the claimed
epsilon. Mutants (half the noise scale; an extra unnoised count) must fail the
same audit, which shows the audit can detect a violation.

What is exercised, honestly:

* ``batched`` targets call :func:`pgmpy_dp.tables.release_from_codes` once for
  many runs: the data's codes are repeated once per run along an extra public
  ``__run__`` attribute added to every table. The number of tables, the per-table
  epsilons, hence the noise scale of every cell, are those of the real release;
  counting, budget split and the sampler are the library's own code. A bug that
  only shows across separate calls would not be seen here; the ``loop`` targets
  cover that.
* ``loop`` targets call the public ``df.dp.release`` once per run, either seeded
  (the ``seeded`` sampler, same distribution as ``geometric``) or through the
  default unseeded path (OpenDP's exact sampler for these small tables).
* Seeded targets are deterministic (fixed seeds). Unseeded targets (OpenDP,
  ``geometric`` from OS entropy) cannot be seeded, so their audits use
  ``alpha = 1e-4``: a correct mechanism fails them with probability below 1e-4.

Adding an estimator (BN ``DiscretePrivateMLE``, MN ``PrivateMarkovEstimator``):
write ``one_run(df, rng) -> 1-D array`` that fits once and returns every noisy
number the estimator released (e.g. the values of all tables in its
``release_``, stage I and stage II, flattened in a fixed order), and append
``AuditCase(AuditTarget(name, epsilon, run_in_loop(one_run)), n_runs=...)`` to
``CASES`` (and a larger one to ``SLOW_CASES``), as ``bn_run`` and ``mn_run`` below do.

Only the measurement matters (the estimation is post-processing), so use the
cheapest method. Each run must publish the same number
of values on both frames (the audit raises otherwise). Mutants of an estimator can
reuse ``half_noise_scale`` (it patches the release module, which estimators call).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

import pgmpy_dp  # noqa: F401  (registers df.dp)
import pgmpy_dp.tables.release as release_module
from pgmpy_dp import Domain, PrivacyBudget
from pgmpy_dp.testing.audit import AuditTarget, audit_epsilon, run_in_loop
from pgmpy_dp.tables import release_from_codes

STATES = {"a": ["x", "y", "z"], "b": [0, 1], "c": [True, False]}
RUN = "__run__"
BATCH = 100_000  # runs per release_from_codes call (memory: BATCH * rows codes)


def make_frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({k: pd.Categorical(rng.choice(v, n), categories=v) for k, v in STATES.items()})


DATA = make_frame(20, seed=1)
NEIGHBOUR = pd.concat(
    [DATA, pd.DataFrame({k: pd.Categorical([v[-1]], categories=v) for k, v in STATES.items()})],
    ignore_index=True,
)
#: DATA with one record removed (a record in the middle, of common states): the other direction.
REMOVED = DATA.drop(index=7).reset_index(drop=True)


# -- mechanisms under audit --------------------------------------------------------------------


def batched_release(tables, epsilon, seeded: bool = True, publish_count: bool = False, rho=None):
    """``run`` for :class:`AuditTarget`: many releases in one ``release_from_codes`` call per batch.

    ``publish_count`` makes a mutant that also publishes the exact record count
    (``n_records=len(df)``), an unnoised statistic. ``rho`` (with ``epsilon=None``)
    makes it a discrete Gaussian release.
    """
    tables = [tuple(t) for t in tables]
    columns = list(dict.fromkeys(a for t in tables for a in t))

    def run(df: pd.DataFrame, n_runs: int, seed: int) -> np.ndarray:
        dom = Domain.from_dataframe(df, columns)
        codes = dom.encode(df, columns)
        rng = np.random.default_rng(seed) if seeded else None
        out = []
        for start in range(0, n_runs, BATCH):
            r = min(BATCH, n_runs - start)
            rep = {a: np.tile(c, r) for a, c in codes.items()}
            rep[RUN] = np.repeat(np.arange(r), len(df))
            domain = Domain({RUN: range(r), **dom.to_dict()})
            rel = release_from_codes(
                rep, domain, [(RUN, *t) for t in tables], epsilon, random_state=rng, max_cells=10**9,
                n_records=len(df) if publish_count else None, rho=rho,
            )
            assert rel.sampler == ("seeded" if seeded else "geometric" if rho is None else "rejection")
            cols = [t.values.reshape(r, -1) for t in rel.tables]
            if publish_count:
                cols.append(np.full((r, 1), rel.n_records))
            out.append(np.concatenate(cols, axis=1))
        return np.concatenate(out)

    return run


def public_release(tables, epsilon, seeded: bool):
    """``run`` calling the public ``df.dp.release`` once per run, charging a fresh budget each time."""

    def one_run(df: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
        budget = PrivacyBudget(sum(epsilon) if isinstance(epsilon, list) else epsilon)
        rel = df.dp.release(tables, epsilon, budget=budget, random_state=rng if seeded else None)
        assert rel.sampler == ("seeded" if seeded else "opendp") and budget.remaining < 1e-9
        return np.concatenate([t.values.ravel() for t in rel.tables])

    return run_in_loop(one_run)


@contextlib.contextmanager
def half_noise_scale():
    """Mutant: every noise draw in the release module uses half the scale it was asked for."""
    original = release_module.discrete_laplace_noise

    def halved(shape, scale, *args, **kwargs):
        return original(shape, scale / 2, *args, **kwargs)

    release_module.discrete_laplace_noise = halved
    try:
        yield
    finally:
        release_module.discrete_laplace_noise = original


def mutated(run, patch):
    def mutant_run(df, n_runs, seed):
        with patch():
            return run(df, n_runs, seed)

    return mutant_run


# -- the audit cases -------------------------------------------------------------------------------

UNIFORM = [("a", "b"), ("c",)]
PER_TABLE = [("a", "b"), ("c",), ("b", "c")]
PER_TABLE_EPS = [0.3, 0.5, 0.2]


@dataclass(frozen=True)
class AuditCase:
    target: AuditTarget
    n_runs: int
    alpha: float = 0.05
    seed: int = 2024
    n_select: int | None = None
    data: pd.DataFrame | None = None  # None: DATA
    neighbour: pd.DataFrame | None = None  # None: NEIGHBOUR (DATA plus one record)
    delta: float = 0.0  # > 0: the target's epsilon is an (epsilon, delta) claim

    def audit(self):
        data = DATA if self.data is None else self.data
        neighbour = NEIGHBOUR if self.neighbour is None else self.neighbour
        return audit_epsilon(
            self.target, data, neighbour, self.n_runs, self.seed, self.alpha, n_select=self.n_select,
            delta=self.delta,
        )


#: Correct mechanisms: the audit's lower bound must not exceed the claim.
#: Estimators join this list (see the module docstring).
CASES = [
    AuditCase(AuditTarget("release uniform eps=1 (batched, seeded)", 1.0, batched_release(UNIFORM, 1.0)), 200_000),
    AuditCase(
        AuditTarget("release per-table eps=[.3,.5,.2] (batched, seeded)", 1.0, batched_release(PER_TABLE, PER_TABLE_EPS)),
        200_000,
    ),
    AuditCase(
        AuditTarget("release uniform eps=1 (batched, default geometric)", 1.0, batched_release(UNIFORM, 1.0, seeded=False)),
        200_000,
        alpha=1e-4,
    ),
    AuditCase(
        AuditTarget("release uniform eps=2, one record removed (batched, seeded)", 2.0, batched_release(UNIFORM, 2.0)),
        200_000,
        neighbour=REMOVED,
    ),
    AuditCase(
        AuditTarget("df.dp.release per-table with budget (loop, seeded)", 1.0, public_release(PER_TABLE, PER_TABLE_EPS, True)),
        10_000,
    ),
    AuditCase(
        AuditTarget("df.dp.release uniform (loop, default OpenDP)", 1.0, public_release(UNIFORM, 1.0, False)),
        2_000,
        alpha=1e-4,
        n_select=1_000,
    ),
]

#: Broken mechanisms: the audit's lower bound must exceed the claim.
MUTANTS = [
    AuditCase(
        AuditTarget("mutant: half noise scale (batched, seeded)", 1.0, mutated(batched_release(UNIFORM, 1.0), half_noise_scale)),
        200_000,
    ),
    AuditCase(
        AuditTarget("mutant: exact record count published (batched, seeded)", 1.0, batched_release(UNIFORM, 1.0, publish_count=True)),
        200_000,
    ),
    AuditCase(
        AuditTarget("mutant: half noise scale (loop, default OpenDP)", 1.0, mutated(public_release(UNIFORM, 1.0, False), half_noise_scale)),
        2_000,
        alpha=1e-4,
        n_select=1_000,
    ),
]

# -- estimators ----------------------------------------------------------------------------------

from pgmpy_dp import DiscretePrivateMLE, PrivateMarkovEstimator  # noqa: E402


class _ReleaseOnlyMLE(DiscretePrivateMLE):
    """``DiscretePrivateMLE`` with its consistency step skipped: the step is post-processing of the
    noisy tables, so it does not change what is audited, only the time a run takes."""

    def family_tables(self, releases, domain, families):
        return [np.clip(t.values, 0, None) for t in releases[0]]


def bn_run(allocation: str, epsilon: float = 1.0):
    """``run`` fitting ``DiscretePrivateMLE`` once per run; publishes stage-I and stage-II noisy tables."""
    from pgmpy.models import DiscreteBayesianNetwork

    def one_run(df: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
        est = _ReleaseOnlyMLE(epsilon=epsilon, allocation=allocation, random_state=rng)
        DiscreteBayesianNetwork([("a", "b"), ("b", "c")]).fit(df, estimator=est)
        stage1 = [] if est.stage1_release_ is None else [t.values.ravel() for t in est.stage1_release_]
        return np.concatenate(stage1 + [t.values.ravel() for t in est.release_])

    return run_in_loop(one_run)


def mn_run(epsilon: float = 1.0):
    """``run`` fitting ``PrivateMarkovEstimator`` from a DataFrame once per run; publishes its release.

    The cheapest method (``naive-mle``, few iterations): estimation is post-processing of the
    release, so only the measurement is audited.
    """
    from pgmpy.models import DiscreteMarkovNetwork

    def one_run(df: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
        est = PrivateMarkovEstimator(method="naive-mle", max_iter=1, random_state=rng, show_progress=False)
        est.fit(DiscreteMarkovNetwork([("a", "b"), ("b", "c")]), df, epsilon=epsilon)
        return np.concatenate([t.values.ravel() for r in est.releases_ for t in r])

    return run_in_loop(one_run)


CASES += [
    AuditCase(AuditTarget(f"DiscretePrivateMLE {a} eps=1 (loop, seeded)", 1.0, bn_run(a)), 2_000)
    for a in ("uniform", "data-dependent")
]
CASES.append(AuditCase(AuditTarget("PrivateMarkovEstimator eps=1 (loop, seeded)", 1.0, mn_run()), 2_000))
MUTANTS.append(
    AuditCase(
        AuditTarget("mutant: DiscretePrivateMLE data-dependent, half noise scale", 1.0,
                    mutated(bn_run("data-dependent"), half_noise_scale)),
        2_000,
    )
)

# -- Gaussian (zCDP) releases: rho-zCDP implies (epsilon(delta), delta)-DP by the tight conversion
# (Canonne, Kamath and Steinke 2020); the audit bounds log((P[E|D'] - delta) / P[E|D]).

from pgmpy_dp.privacy import rho_to_epsilon_delta  # noqa: E402

GAUSS_RHO, GAUSS_DELTA = 0.5, 1e-3
GAUSS_CLAIM = rho_to_epsilon_delta(GAUSS_RHO, GAUSS_DELTA)  # 3.54


@contextlib.contextmanager
def half_sigma():
    """Mutant: every Gaussian draw in the release module uses half the sigma it was asked for."""
    original = release_module.discrete_gaussian_noise

    def halved(shape, sigma, *args, **kwargs):
        return original(shape, sigma / 2, *args, **kwargs)

    release_module.discrete_gaussian_noise = halved
    try:
        yield
    finally:
        release_module.discrete_gaussian_noise = original


CASES += [
    AuditCase(
        AuditTarget(f"gaussian release rho={GAUSS_RHO} at delta={GAUSS_DELTA} (batched, seeded)", GAUSS_CLAIM,
                    batched_release(UNIFORM, None, rho=GAUSS_RHO)),
        200_000,
        delta=GAUSS_DELTA,
    ),
    AuditCase(
        AuditTarget(f"gaussian release rho={GAUSS_RHO} at delta={GAUSS_DELTA} (batched, default rejection)",
                    GAUSS_CLAIM, batched_release(UNIFORM, None, seeded=False, rho=GAUSS_RHO)),
        200_000,
        alpha=1e-4,
        delta=GAUSS_DELTA,
    ),
]
def public_gaussian_release(tables, rho):
    """``run`` calling ``df.dp.release(rho=...)`` once per run (default OpenDP sampler), charging a zCDP budget."""

    def one_run(df: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
        budget = PrivacyBudget(rho=rho)
        rel = df.dp.release(tables, rho=rho, budget=budget)
        assert rel.sampler == "opendp" and budget.remaining == 0
        return np.concatenate([t.values.ravel() for t in rel.tables])

    return run_in_loop(one_run)


CASES.append(
    AuditCase(
        AuditTarget(f"df.dp.release rho={GAUSS_RHO} at delta={GAUSS_DELTA} (loop, default OpenDP)", GAUSS_CLAIM,
                    public_gaussian_release(UNIFORM, GAUSS_RHO)),
        4_000,
        alpha=1e-4,
        n_select=1_000,
        delta=GAUSS_DELTA,
    )
)
MUTANTS.append(
    AuditCase(
        AuditTarget("mutant: gaussian release, half sigma (batched, seeded)", GAUSS_CLAIM,
                    mutated(batched_release(UNIFORM, None, rho=GAUSS_RHO), half_sigma)),
        200_000,
        delta=GAUSS_DELTA,
    )
)

#: Larger audits for --runslow: more runs, smaller epsilons, more tables.
SLOW_CASES = [
    AuditCase(AuditTarget("release uniform eps=1 (batched, seeded, 2M)", 1.0, batched_release(UNIFORM, 1.0)), 2_000_000),
    AuditCase(
        AuditTarget("release uniform eps=0.5, 3 tables (batched, seeded)", 0.5, batched_release(PER_TABLE, 0.5)), 1_000_000
    ),
    AuditCase(
        AuditTarget("release per-table eps=[.3,.5,.2] (batched, default geometric)", 1.0,
                    batched_release(PER_TABLE, PER_TABLE_EPS, seeded=False)),
        1_000_000,
        alpha=1e-4,
    ),
    AuditCase(AuditTarget("df.dp.release uniform (loop, default OpenDP, 20k)", 1.0, public_release(UNIFORM, 1.0, False)), 20_000, alpha=1e-4),
]
SLOW_CASES += [
    AuditCase(AuditTarget(f"DiscretePrivateMLE {a} eps=1 (loop, seeded, 20k)", 1.0, bn_run(a)), 20_000)
    for a in ("uniform", "data-dependent")
]
SLOW_CASES.append(AuditCase(AuditTarget("PrivateMarkovEstimator eps=1 (loop, seeded, 20k)", 1.0, mn_run()), 20_000))


def _ids(cases):
    return [c.target.name for c in cases]


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_mechanism_does_not_exceed_its_claimed_epsilon(case):
    result = case.audit()
    print(result)
    assert result.passed, str(result)


@pytest.mark.parametrize("case", MUTANTS, ids=_ids(MUTANTS))
def test_audit_detects_mutant(case):
    result = case.audit()
    print(result)
    assert not result.passed, f"the audit missed a broken mechanism: {result}"


@pytest.mark.slow
@pytest.mark.parametrize("case", SLOW_CASES, ids=_ids(SLOW_CASES))
def test_large_audit(case):
    result = case.audit()
    print(result)
    assert result.passed, str(result)


def test_audit_is_tight_for_the_release():
    """The audit is powerful, not vacuous: for a correct release the bound comes close to the claim."""
    result = CASES[0].audit()
    assert 0.9 < result.epsilon_lower <= 1.0, str(result)
    # the affected outputs are exactly the cells of the added record: (z, 1) in (a, b) and False in (c,)
    assert result.affected == (5, 7)


def test_gaussian_audit_is_not_vacuous():
    """The Gaussian audit sees the record: a lower bound well above 0 on the same two cells."""
    case = next(c for c in CASES if c.target.name.startswith("gaussian release") and "seeded" in c.target.name)
    result = case.audit()
    assert 2.0 < result.epsilon_lower <= GAUSS_CLAIM and result.affected == (5, 7), str(result)
