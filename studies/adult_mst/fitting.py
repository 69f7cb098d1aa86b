"""One quiet, timed fit of PrivateMarkovEstimator with some of its module's rules replaced for that fit."""

from __future__ import annotations

import time
import warnings

from pgmpy_dp.engine import ConvergenceWarning
from pgmpy_dp.estimators import markov as markov_module


def timed_fit(est, model, data, cliques=None, **rules) -> float:
    """Fit ``est`` (ConvergenceWarning silenced) with ``markov_module.<name> = rule`` for each given rule; CPU seconds."""
    saved = {name: getattr(markov_module, name) for name in rules}
    for name, rule in rules.items():
        if rule is not None:
            setattr(markov_module, name, rule)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t0 = time.process_time()
            est.fit(model, data, cliques=cliques)
            return time.process_time() - t0
    finally:
        for name, rule in saved.items():
            setattr(markov_module, name, rule)
