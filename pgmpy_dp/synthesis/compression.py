"""MST's compression of rare states: merge the states a noisy 1-way release barely saw, fit, expand back.

MST (McKenna, Miklau and Sheldon 2021) merges, per attribute, the states whose noisy 1-way count is
below a few noise scales into one (named by the tuple of the states it holds) before measuring the 2-way
tables, which then have fewer, better-resolved cells at the same cost. The merge reads the noisy
release only (post-processing). A model fitted on the merged states is expanded back exactly, each
state taking a share of its group; [`Compression.from_release`][pgmpy_dp.synthesis.compression.Compression.from_release]
shares in proportion to the clipped noisy counts plus one noise scale (docs/synthesis.md).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..privacy.domain import Domain
from ..tables.artifact import MarginalRelease

#: MST's threshold: a state is kept when its noisy count reaches this many noise scales.
THRESHOLD = 3.0

_NOTE = "_pgmpy_dp_expanded"  # on an expanded model: (the merged-state model, the compression, its factors)


def expanded_from(model):
    """``(merged-state model, compression)`` if ``model`` is a `Compression.expand` output with its factors unchanged, else None.

    Examples
    --------
    >>> from pgmpy.models import DiscreteMarkovNetwork
    >>> expanded_from(DiscreteMarkovNetwork()) is None
    True
    """
    note = getattr(model, _NOTE, None)
    if note is None:
        return None
    merged, compression, factors = note
    current = list(model.get_factors())
    if len(current) != len(factors) or not all(any(f is c for c in current) for f in factors):
        return None
    return merged, compression


class Compression:
    """Which states of each attribute merge, and the maps between the declared and merged states.

    Parameters
    ----------
    domain : Domain
        The declared (public) domain.
    keep : mapping of str to array of bool
        Per attribute and declared state: ``False`` merges the state with the attribute's other
        unflagged states (fewer than two merge nothing).
    weights : mapping of str to array of float, optional
        Per declared state, a positive weight: its share of its group (default: equal shares).

    Attributes
    ----------
    domain : Domain
        The declared domain.
    merged_domain : Domain
        The kept states in declared order, then a merged state (the tuple of its states) if any.
    codes_map : dict of str to numpy.ndarray
        Per attribute, the merged code of each declared code.
    shares : dict of str to numpy.ndarray
        Per attribute, each declared state's share of its merged state (1 for a kept state).

    Examples
    --------
    >>> c = Compression(Domain({"a": [0, 1, 2, 3], "b": ["x", "y"]}),
    ...                 {"a": [True, False, True, False], "b": [True, False]})
    >>> c.merged_domain["a"], c.merged_domain["b"], c.merged
    ((0, 2, (1, 3)), ('x', 'y'), ['a'])
    >>> c.codes_map["a"].tolist(), c.shares["a"].tolist()
    ([0, 2, 1, 2], [1.0, 0.5, 1.0, 0.5])
    >>> Compression(c.domain, {"a": [True, False, True, False], "b": [True, True]},
    ...             weights={"a": [9.0, 1.0, 9.0, 3.0], "b": [1.0, 1.0]}).shares["a"].tolist()
    [1.0, 0.25, 1.0, 0.75]
    """

    def __init__(self, domain: Domain, keep, weights=None) -> None:
        self.domain = domain
        self.codes_map: dict[str, np.ndarray] = {}
        self.shares: dict[str, np.ndarray] = {}
        self.merged: list[str] = []
        states = {}
        for a in domain.attrs:
            flags = np.asarray(keep[a], dtype=bool)
            dropped = np.flatnonzero(~flags)
            if dropped.size < 2:  # one state alone is already its own group
                flags = np.ones_like(flags)
                dropped = dropped[:0]
            kept = np.flatnonzero(flags)
            codes = np.full(flags.size, kept.size, dtype=np.int64)
            codes[kept] = np.arange(kept.size)
            share = np.ones(flags.size)
            names = [domain[a][i] for i in kept]
            if dropped.size:
                w = np.ones(dropped.size) if weights is None else np.asarray(weights[a], dtype=float)[dropped]
                share[dropped] = w / w.sum()
                label = tuple(domain[a][i] for i in dropped)
                while label in names:  # a declared tuple state may already spell the label
                    label = (label,)
                names.append(label)
                self.merged.append(a)
            self.codes_map[a], self.shares[a], states[a] = codes, share, names
        self.merged_domain = Domain(states)

    @classmethod
    def from_release(cls, release: MarginalRelease, threshold: float = THRESHOLD) -> Compression:
        """MST's rule on a release of every 1-way table: keep the states whose noisy count reaches
        ``threshold`` noise scales of their table; share a group in proportion to its states'
        noisy counts clipped at zero, plus one noise scale each.

        Examples
        --------
        >>> import pandas as pd
        >>> import pgmpy_dp
        >>> df = pd.DataFrame({"sex": ["F"] * 600 + ["M"] * 400, "job": ["x"] * 999 + ["y"]})
        >>> public = {"sex": ["F", "M"], "job": ["x", "y", "z"]}
        >>> rel = df.dp.release(["sex", "job"], rho=0.5, domain=public, random_state=0)
        >>> c = Compression.from_release(rel)
        >>> c.merged, c.merged_domain["job"]
        (['job'], ('x', ('y', 'z')))
        """
        tables = {t.attrs[0]: t for t in release.tables if len(t.attrs) == 1}
        domain = release.domain.project(list(tables))
        keep = {a: t.values >= threshold * t.scale for a, t in tables.items()}
        return cls(domain, keep, {a: np.maximum(t.values, 0.0) + t.scale for a, t in tables.items()})

    def codes(self, codes) -> dict[str, np.ndarray]:
        """Declared codes to merged codes, attribute by attribute."""
        return {a: self.codes_map[a][np.asarray(codes[a])] for a in self.domain.attrs}

    def merge_release(self, release: MarginalRelease) -> MarginalRelease:
        """A release of 1-way tables re-expressed on the merged states (each group's noisy counts summed).

        Not a new measurement: merged cells carry their group's summed noise.

        Examples
        --------
        >>> import pandas as pd
        >>> import pgmpy_dp
        >>> df = pd.DataFrame({"a": [0] * 500 + [1] * 500 + [2, 3]})
        >>> rel = df.dp.release(["a"], rho=1.0, domain={"a": [0, 1, 2, 3]}, random_state=0)
        >>> c = Compression.from_release(rel)
        >>> float(c.merge_release(rel)[("a",)].values.sum()) == float(rel[("a",)].values.sum())
        True
        """
        tables = []
        for t in release.tables:
            (a,) = t.attrs
            values = np.bincount(self.codes_map[a], weights=t.values, minlength=self.merged_domain.size(a))
            tables.append(dataclasses.replace(t, values=values))
        return MarginalRelease(
            self.merged_domain.project([t.attrs[0] for t in tables]), tables, release.mechanism,
            release.sampler, release.n_records, release.privacy_unit,
        )

    def expand(self, model):
        """A Markov network over the merged states, as the same distribution over the declared states.

        Each merged state's share of its group multiplies one factor of its attribute (its node potential
        if it has one), so marginals over merged states agree exactly.

        Examples
        --------
        >>> from pgmpy.factors.discrete import DiscreteFactor
        >>> from pgmpy.models import DiscreteMarkovNetwork
        >>> c = Compression(Domain({"a": [0, 1, 2]}), {"a": [True, False, False]})
        >>> small = DiscreteMarkovNetwork()
        >>> small.add_node("a")
        >>> small.add_factors(DiscreteFactor(["a"], [2], [0.6, 0.4], state_names={"a": [0, (1, 2)]}))
        >>> c.expand(small).get_factors()[0].values.tolist()
        [0.6, 0.2, 0.2]
        """
        from pgmpy.factors.discrete import DiscreteFactor
        from pgmpy.models import DiscreteMarkovNetwork

        pending = set(self.merged)
        factors = []
        for f in model.get_factors():
            scope = list(f.variables)
            values = np.asarray(f.values)[np.ix_(*[self.codes_map[a] for a in scope])]
            if len(scope) == 1 and scope[0] in pending:
                values = values * self.shares[scope[0]]
                pending.discard(scope[0])
            factors.append(self._factor(DiscreteFactor, scope, values))
        factors += [self._factor(DiscreteFactor, [a], self.shares[a]) for a in self.merged if a in pending]
        out = DiscreteMarkovNetwork()
        out.add_nodes_from(model.nodes())
        out.add_edges_from(model.edges())
        out.add_factors(*factors)
        out.check_model()
        return self.attach(out, model)

    def attach(self, expanded, model):
        """Mark ``expanded`` (with its factors as they are) as this compression's expansion of ``model``; returns it.

        The expanded model then stands for the merged fit (`expanded_from`), as on load of a saved MST model.
        """
        setattr(expanded, _NOTE, (model, self, tuple(expanded.get_factors())))
        return expanded

    def _factor(self, factor_class, scope, values):
        return factor_class(scope, list(values.shape), values.ravel(),
                            state_names={a: list(self.domain[a]) for a in scope})
