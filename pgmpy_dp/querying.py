"""Normalised queries of fitted private models with pgmpy's own inference engines.

pgmpy's engines return a ``DiscreteMarkovNetwork`` query unnormalised (summing to the partition function),
a Bayesian network's normalised; [`query`][pgmpy_dp.querying.query] normalises both. Queries are
post-processing: they spend no budget.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

_ENGINES = ("ve", "bp")


def query(
    model,
    variables: str | Iterable[str],
    evidence: Mapping[str, object] | None = None,
    engine: str = "ve",
    joint: bool = True,
):
    """P(variables | evidence) from a pgmpy model, normalised to sum to one.

    Parameters
    ----------
    model : DiscreteBayesianNetwork, DiscreteMarkovNetwork or fitted estimator
        A fitted model, e.g. from ``DiscretePrivateMLE`` or ``PrivateMarkovEstimator``;
        an estimator with a fitted ``model_`` (``PrivateMarkovEstimator``, the private
        structure learners) stands for that model.
    variables : str or list of str
        Query variables.
    evidence : dict, optional
        Observed states, ``{variable: state}``.
    engine : {"ve", "bp"}
        pgmpy's ``VariableElimination`` (``"ve"``) or ``BeliefPropagation`` (``"bp"``).
        Both are exact; pgmpy's progress bars are switched off.
    joint : bool
        One factor over all ``variables`` (default), or a dict of one factor per variable.

    Returns
    -------
    pgmpy.factors.discrete.DiscreteFactor or dict of str to DiscreteFactor
        Probabilities that sum to one.

    Raises
    ------
    ValueError
        For an unknown ``engine``, a variable or evidence state the model does not
        have, or evidence the model gives probability zero.

    Examples
    --------
    >>> from pgmpy.models import DiscreteMarkovNetwork
    >>> from pgmpy.factors.discrete import DiscreteFactor
    >>> mn = DiscreteMarkovNetwork([("a", "b")])
    >>> mn.add_factors(DiscreteFactor(["a", "b"], [2, 2], [4.0, 1.0, 1.0, 4.0]))
    >>> query(mn, ["b"], evidence={"a": 0}).values.round(2).tolist()
    [0.8, 0.2]
    >>> query(object(), ["b"])
    Traceback (most recent call last):
    ...
    TypeError: query needs a fitted pgmpy model (DiscreteBayesianNetwork or DiscreteMarkovNetwork) or a fitted estimator holding one in model_, got object; fit it first
    """
    from pgmpy.inference import BeliefPropagation, VariableElimination

    fitted = getattr(model, "model_", None)
    if fitted is not None and not hasattr(model, "check_model"):
        model = fitted  # a fitted estimator: query the model it holds
    if not hasattr(model, "check_model"):
        raise TypeError(
            f"query needs a fitted pgmpy model (DiscreteBayesianNetwork or DiscreteMarkovNetwork) or a fitted "
            f"estimator holding one in model_, got {type(model).__name__}; fit it first"
        )
    if engine not in _ENGINES:
        raise ValueError(f"engine must be one of {_ENGINES} ('ve': variable elimination, 'bp': belief propagation), got {engine!r}")
    variables = [variables] if isinstance(variables, str) else list(variables)
    if not variables:
        raise ValueError("variables must name at least one query variable")
    if evidence is not None and not isinstance(evidence, Mapping):
        raise TypeError(f"evidence must be a dict {{variable: state}}, got {type(evidence).__name__}")
    _check_names(model, variables, evidence or {})
    if engine == "ve":
        result = VariableElimination(model).query(
            variables, evidence=evidence, joint=joint, show_progress=False
        )
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            # pgmpy's BP divides 0 by 0 on CPDs with zero entries; the answer is renormalised below
            result = BeliefPropagation(model).query(
                variables, evidence=evidence, joint=joint, show_progress=False
            )
    if joint:
        return _normalised(result, evidence)
    return {v: _normalised(f, evidence) for v, f in result.items()}


def _check_names(model, variables, evidence) -> None:
    """Name the unknown variable or state (the model's states are public: they come from its domain)."""
    nodes = list(model.nodes())
    known = set(nodes)
    for where, names in (("variables", variables), ("evidence", list(evidence))):
        unknown = [v for v in names if not isinstance(v, str) or v not in known]
        if unknown:
            raise ValueError(f"{where} names {unknown}, not variables of the model; its variables are {nodes[:20]}")
    both = [v for v in variables if v in evidence]
    if both:
        raise ValueError(f"{both} appear both as query variables and in evidence; query them or condition on them")
    try:
        states = model.states
    except (AttributeError, KeyError, ValueError):
        return  # a model without factors: pgmpy's own check reports it
    for v, state in evidence.items():
        allowed = list(states.get(v, ()))
        if allowed and state not in allowed:
            raise ValueError(f"evidence {v}={state!r} is not a state of {v!r}; its states are {allowed[:20]}")


def _normalised(factor, evidence):
    total = float(np.sum(factor.values))
    if not (np.isfinite(total) and total > 0):
        raise ValueError(
            f"the model gives the evidence {dict(evidence or {})} probability zero (or the "
            "answer is not finite); no conditional distribution exists for it"
        )
    return factor.normalize(inplace=False)
