"""Which private estimator fitted a pgmpy model, so that the model can stand for its estimator.

Both estimators leave a note on the model they fitted, naming themselves and the parameter objects they
gave it (an attribute of the model: a global table would keep every fit alive).
"""

from __future__ import annotations

_NOTE = "_pgmpy_dp_fit"


def _parameters(model) -> list:
    """The CPDs of a Bayesian network, the factors of a Markov network."""
    get = getattr(model, "get_cpds", None) or getattr(model, "get_factors", None)
    return list(get()) if get is not None else []


def remember_fit(model, estimator, parameters) -> None:
    """Record that ``estimator`` fitted ``parameters`` (CPDs or factors) for ``model``."""
    setattr(model, _NOTE, (estimator, tuple(parameters)))


def estimator_of(obj):
    """The fitted private estimator ``obj`` stands for: ``obj`` itself, or the one that fitted the model ``obj``.

    Raises
    ------
    ValueError
        If no private estimator fitted the model ``obj``, or its parameters changed since.

    Examples
    --------
    >>> import pandas as pd
    >>> import pgmpy_dp
    >>> from pgmpy.models import DiscreteMarkovNetwork
    >>> df = pd.DataFrame({"a": [0, 1] * 50, "b": [0, 0, 1, 1] * 25})
    >>> est = pgmpy_dp.PrivateMarkovEstimator(random_state=0, show_progress=False)
    >>> _ = est.fit(DiscreteMarkovNetwork([("a", "b")]), df, epsilon=1.0, domain={"a": [0, 1], "b": [0, 1]})
    >>> estimator_of(est.model_) is est, estimator_of(est) is est
    (True, True)
    """
    if hasattr(obj, "get_params"):  # an estimator stands for itself
        return obj
    note = getattr(obj, _NOTE, None)
    if note is None:
        raise ValueError(
            f"this {type(obj).__name__} was not fitted by a pgmpy_dp estimator; "
            "pass the fitted estimator (DiscretePrivateMLE or PrivateMarkovEstimator) instead"
        )
    estimator, parameters = note
    current = _parameters(obj)
    if len(current) != len(parameters) or not all(any(p is c for c in current) for p in parameters):
        raise ValueError(
            f"this {type(obj).__name__}'s parameters changed since {type(estimator).__name__} fitted them; "
            "pass the estimator that fitted the parameters you want intervals for"
        )
    return estimator
