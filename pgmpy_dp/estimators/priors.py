"""The Gaussian prior ``lambda/2 ||theta||^2`` on log-potentials: its weights, from public facts only.

They depend on noise scales, table shapes and the record count estimate, never on the counts;
[`markov_weights`][pgmpy_dp.estimators.priors.markov_weights] is the Markov fit's rule (docs/markov.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Prior precision of each log-potential entry under ``regularization="auto"``: a unit-variance Gaussian prior.
PRIOR_PRECISION = 1.0

#: The floor of CGM-EM's prior precision, ``6 / pi**2``: a count the noise cannot resolve follows at most an
#: exponential law (maximum entropy), whose log has variance ``pi**2 / 6`` whatever its mean.
UNRESOLVED_PRIOR_PRECISION = 6.0 / np.pi**2


def auto_regularization(tables, n_records: float) -> float:
    """The L2 weight naive MLE uses under ``regularization="auto"``.

    A table of ``K`` cells with noise variance ``v`` makes a cell of probability ``1/K`` worth
    ``N_eff = 1 / (1/N + v K / N^2)`` records: the unit prior times the mean over tables of ``N / N_eff``.

    Examples
    --------
    >>> from pgmpy_dp.tables import NoisyTable
    >>> t = NoisyTable(("a", "b"), np.zeros((10, 10)), epsilon=0.1, scale=10.0)
    >>> round(auto_regularization([t], n_records=10_000), 2)
    3.0
    """
    factors = [1.0 + t.variance * t.values.size / n_records for t in tables]
    return PRIOR_PRECISION * float(np.mean(factors))


def cgm_regularization(naive_regularization: float, scales: Sequence[float]) -> float:
    """The scaled L2 weight of a CGM-EM M-step (the Bayesian-network fit's; floored for Markov networks).

    CGM-EM's Laplace gradient is bounded by ``1 / scale``, so the naive weight is divided by the
    mean noise scale, capped at the unit prior (`PRIOR_PRECISION`).

    Examples
    --------
    >>> cgm_regularization(5.6, [48.0, 48.0])
    0.11666666666666665
    >>> cgm_regularization(1236.0, [240.0])
    1.0
    """
    return float(min(PRIOR_PRECISION, naive_regularization / max(1.0, float(np.mean(scales)))))


def floored_regularization(naive_regularization: float, scales: Sequence[float]) -> float:
    """CGM-EM's default L2 weight under ``regularization="auto"``: the scaled weight, floored at ``6 / pi**2``.

    A weight below `UNRESOLVED_PRIOR_PRECISION` would let the log-potentials of cells the noise
    cannot resolve spread further than the noise explains; the floor's value is derived, combining
    it with [`cgm_regularization`][pgmpy_dp.estimators.priors.cgm_regularization] by ``max`` is a
    measured choice (docs/markov.md).

    Examples
    --------
    >>> round(floored_regularization(5.6, [48.0, 48.0]), 4)   # scaled 0.117: floored
    0.6079
    >>> floored_regularization(1236.0, [240.0])                # scaled 1.0 (the cap): kept
    1.0
    """
    return float(max(cgm_regularization(naive_regularization, scales), UNRESOLVED_PRIOR_PRECISION))


def per_clique_weights(rule, cliques, clique_tables, measurements, tied_idx, pooled: float):
    """One prior weight per clique: ``rule(tables, scales)`` on the tables over exactly that clique.

    Cliques of a tied group, and cliques no table measures on its own, keep the ``pooled`` weight.
    Returns one float when every weight agrees, else an array in clique order.

    Examples
    --------
    >>> import pandas as pd
    >>> import pgmpy_dp
    >>> from pgmpy_dp.estimators.measurements import clique_measurements
    >>> df = pd.DataFrame({"a": [0, 1, 1, 0] * 25, "b": [0, 1, 0, 0] * 25})
    >>> d = {"a": [0, 1], "b": [0, 1]}
    >>> rel = df.dp.release([("a", "b"), ("a",)], epsilon=1.0, domain=d, random_state=0)
    >>> cliques = [("a", "b"), ("a",)]
    >>> ms, per = clique_measurements([rel], cliques)
    >>> per_clique_weights(lambda tables, scales: float(tables[0].values.size), cliques, per, ms, None, 1.0)
    array([4., 2.])
    """
    scales: dict = {}
    for m in measurements:
        if m.members is None:
            scales.setdefault(frozenset(m.attrs), []).append(m.scale)
    tied = {i for g in tied_idx or [] if len(g) > 1 for i in g}
    out = [
        pooled if i in tied or frozenset(c) not in scales else rule(tables, scales[frozenset(c)])
        for i, (c, tables) in enumerate(zip(cliques, clique_tables))
    ]
    return pooled if len(set(out)) == 1 else np.array(out)


def markov_weights(regularization, cliques, clique_tables, measurements, tied_idx, n_records: float,
                   per_clique: bool = True) -> tuple:
    """The L2 weights ``(naive, cgm)`` of the Markov fit's naive stage and of CGM-EM's M-step.

    A number is both. ``"auto"``: `auto_regularization` from every table, and `floored_regularization`
    set per clique from the tables over exactly that clique (``per_clique``, the estimator's rule) or
    once from all tables (AIM's rounds, docs/synthesis.md).

    Examples
    --------
    >>> import pandas as pd
    >>> from pgmpy_dp.estimators.measurements import clique_measurements
    >>> df = pd.DataFrame({"a": [0, 1, 1, 0] * 25, "b": [0, 1, 0, 0] * 25})
    >>> rel = df.dp.release([("a", "b")], epsilon=1.0, domain={"a": [0, 1], "b": [0, 1]}, random_state=0)
    >>> ms, per = clique_measurements([rel], [("a", "b")])
    >>> naive, cgm = markov_weights("auto", [("a", "b")], per, ms, None, 100.0)
    >>> bool(naive > PRIOR_PRECISION), cgm == floored_regularization(naive, [m.scale for m in ms])
    (True, True)
    """
    if regularization != "auto":
        return float(regularization), float(regularization)
    naive = auto_regularization([t for ts in clique_tables for t in ts], n_records)
    cgm = floored_regularization(naive, [m.scale for m in measurements])
    if per_clique:
        cgm = per_clique_weights(
            lambda tables, scales: floored_regularization(auto_regularization(tables, n_records), scales),
            cliques, clique_tables, measurements, tied_idx, cgm,
        )
    return naive, cgm
