"""Whether an answer was measured: its variables counted together in one released marginal, or not.

An answer ``P(variables | evidence)`` is *supported* when one released table counts all of its variables
(query and evidence) together: the fit then holds a noisy measurement of exactly the joint the answer
reads. Otherwise the answer rests on the model's conditional independences, which the releases never
tested (a dependence never measured is invisible to the model and to its bootstrap). The check reads
which marginals were released, public outputs only (docs/intervals.md, "What an answer rests on"); `pgmpy_dp.UnsupportedAnswerWarning` is its warning.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass


class UnsupportedAnswerWarning(UserWarning):
    """An answer whose variables no released marginal measured together (it rests on the model's independences)."""


@dataclass(frozen=True)
class Support:
    """Whether one released marginal holds every variable of an answer.

    Attributes
    ----------
    supported : bool
        Whether some released table counts ``needed`` together.
    marginal : tuple of str or None
        The smallest such released table's attributes, else None.
    needed : tuple of str
        The answer's variables, query then evidence: the marginal that would support it.
    """

    supported: bool
    marginal: tuple | None
    needed: tuple


def support(measured, variables, evidence=()) -> Support:
    """Whether one of the ``measured`` attribute sets holds every query and evidence variable.

    Parameters
    ----------
    measured : iterable of tuple of str
        The released marginals' attribute sets (``synthesis.marginals.measured_cliques`` of the releases).
    variables : list of str
        The query variables.
    evidence : iterable of str
        The observed variables.

    Examples
    --------
    >>> s = support([("a",), ("a", "b"), ("b", "c", "d")], ["c"], {"b": 1})
    >>> s.supported, s.marginal
    (True, ('b', 'c', 'd'))
    >>> support([("a", "b"), ("b", "c")], ["a"], ["c"])
    Support(supported=False, marginal=None, needed=('a', 'c'))
    """
    needed = tuple(dict.fromkeys([*variables, *evidence]))
    holding = [tuple(m) for m in measured if set(needed) <= set(m)]
    marginal = min(holding, key=len) if holding else None
    return Support(marginal is not None, marginal, needed)


def warn_unsupported(s: Support, measured) -> None:
    """One ``UnsupportedAnswerWarning`` for an unsupported answer, naming the marginal that would support it."""
    if s.supported:
        return
    touching = [m for m in measured if len(set(m) & set(s.needed)) > 1]
    seen = f" (only the smaller sets {touching})" if touching else ""
    warnings.warn(
        f"no released marginal measured {list(s.needed)} together{seen}: the answer rests on the model's "
        f"conditional independences, which no release tested, and its band does not cover a dependence that "
        f"was never measured. A release of the marginal {s.needed} would support it (docs/intervals.md)",
        UnsupportedAnswerWarning,
        stacklevel=3,
    )
