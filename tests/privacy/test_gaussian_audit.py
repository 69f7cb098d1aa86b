"""Black-box privacy audit of the discrete Gaussian (rho-zCDP) release.

A rho-zCDP mechanism is (epsilon(delta), delta)-DP for every delta, with
epsilon(delta) from the tight conversion (Canonne, Kamath and Steinke 2020).
The audit (:func:`pgmpy_dp.privacy.audit.audit_epsilon` with ``delta``)
bounds ``log((P[E | D'] - delta) / P[E | D])`` from below over threshold
events, with Clopper-Pearson intervals; a correct release must stay below
the converted claim, and a mutant with half the noise (four times the rho)
must exceed it. Runs are batched as in ``tests/statistical/test_privacy_audit.py``:
one ``release_from_codes`` call releases many independent runs, the codes
being repeated along a public ``__run__`` attribute, so the noise scale of
every cell is that of the real release.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pandas as pd
import pytest

import pgmpy_dp  # noqa: F401
import pgmpy_dp.tables.release as release_module
from pgmpy_dp import Domain
from pgmpy_dp.privacy import rho_to_epsilon_delta
from pgmpy_dp.privacy.audit import AuditTarget, audit_epsilon
from pgmpy_dp.tables import release_from_codes

STATES = {"a": ["x", "y", "z"], "b": [0, 1], "c": [True, False]}
RUN = "__run__"
BATCH = 100_000
TABLES = [("a", "b"), ("c",)]
RHO = 0.5
DELTA = 1e-3


def make_frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({k: pd.Categorical(rng.choice(v, n), categories=v) for k, v in STATES.items()})


DATA = make_frame(20, seed=1)
NEIGHBOUR = pd.concat(
    [DATA, pd.DataFrame({k: pd.Categorical([v[-1]], categories=v) for k, v in STATES.items()})],
    ignore_index=True,
)


def batched_gaussian_release(tables, rho, seeded: bool = True):
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
                rep, domain, [(RUN, *t) for t in tables], rho=rho, random_state=rng, max_cells=10**9
            )
            assert rel.mechanism == "discrete_gaussian"
            assert rel.sampler == ("seeded" if seeded else "rejection")
            out.append(np.concatenate([t.values.reshape(r, -1) for t in rel.tables], axis=1))
        return np.concatenate(out)

    return run


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


def _audit(run, n_runs=200_000, alpha=0.05):
    claimed = rho_to_epsilon_delta(RHO, DELTA)
    target = AuditTarget(f"gaussian release rho={RHO} at delta={DELTA}", claimed, run)
    return audit_epsilon(target, DATA, NEIGHBOUR, n_runs, seed=2024, alpha=alpha, delta=DELTA)


def test_gaussian_release_does_not_exceed_its_converted_claim():
    result = _audit(batched_gaussian_release(TABLES, RHO))
    print(result)
    assert result.passed, str(result)
    # not vacuous: the record's effect is seen (a positive lower bound on the affected cells)
    assert result.epsilon_lower > 1.0 and result.affected == (5, 7), str(result)


def test_gaussian_release_default_sampler_passes():
    """The unseeded numpy rejection path (forced by a table above OpenDP's cell limit) from OS entropy."""
    result = _audit(batched_gaussian_release(TABLES, RHO, seeded=False), alpha=1e-4)
    print(result)
    assert result.passed, str(result)


def test_audit_detects_half_sigma_gaussian_mutant():
    run = batched_gaussian_release(TABLES, RHO)

    def mutant(df, n, seed):
        with half_sigma():
            return run(df, n, seed)

    result = _audit(mutant)
    print(result)
    assert not result.passed, f"the audit missed a broken Gaussian release: {result}"
