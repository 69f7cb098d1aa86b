"""Synthetic records from a fitted private model: [`sample`][pgmpy_dp.sampling.sample].

A Bayesian network is forward-sampled in topological order; a Markov network is sampled exactly
through the engine's junction tree, or approximately by Gibbs sampling when that tree is too large.
Every step draws all rows at once. Sampling is post-processing of the fitted parameters: it spends
no budget, and the rows carry the guarantee of the fit (see docs/inference.md).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ._memory import check_memory
from .engine import DEFAULT_MAX_JT_CELLS, JunctionTree
from .privacy.decode import decode
from .privacy.domain import PUBLIC_COLUMNS_ATTR, Domain, read_domain
from .privacy.random_state import check_random_state

#: A Markov network is sampled exactly while its junction tree's largest clique has at most this many
#: cells: the limit under which the engine's ``make_inference`` chooses the exact junction tree.
MAX_EXACT_CELLS = DEFAULT_MAX_JT_CELLS

#: Gibbs sweeps (one update of every variable in every chain) before a chain's state is kept.
DEFAULT_BURN_IN = 200


def sample(
    model,
    n: int,
    random_state=None,
    *,
    domain=None,
    dtypes=None,
    max_cells: int = MAX_EXACT_CELLS,
    burn_in: int = DEFAULT_BURN_IN,
) -> pd.DataFrame:
    """Draw ``n`` synthetic records from a fitted Bayesian or Markov network.

    A ``DiscreteBayesianNetwork`` is forward-sampled in topological order. A ``DiscreteMarkovNetwork``
    is sampled exactly from its junction tree
    ([`JunctionTree.sample`][pgmpy_dp.engine.junction_tree.JunctionTree.sample]), or, when its largest
    clique has more than ``max_cells`` cells, approximately by ``n`` independent Gibbs chains of
    ``burn_in`` sweeps from uniform random states, with a warning. Sampling uses only the fitted
    parameters, never the data: it spends no privacy budget.

    Parameters
    ----------
    model : DiscreteBayesianNetwork, DiscreteMarkovNetwork or fitted estimator
        A model with its CPDs or factors (any valid pgmpy model); an estimator with a fitted
        ``model_`` stands for that model.
    n : int
        Number of records, a positive integer.
    random_state : int or numpy.random.Generator, optional
        Seed (a non-negative int) or generator; the same seed gives the same records.
    domain : Domain or str or os.PathLike, optional
        The public domain (or schema file) the model's states come from: when given, the records come back
        as raw values ([`decode`][pgmpy_dp.privacy.decode.decode]): numbers drawn within their bins, NaN
        for the missing state, categories in their declared type. Without it, the states themselves.
    dtypes : mapping of str to dtype, optional
        With ``domain``: categorical or string dtypes to restore
        ([`public_dtypes`][pgmpy_dp.privacy.decode.public_dtypes] of the fitted frame).
    max_cells : int
        Largest junction-tree clique (in cells) a Markov network is sampled exactly with.
    burn_in : int
        Gibbs sweeps per chain when a Markov network is sampled approximately.

    Returns
    -------
    pandas.DataFrame
        One column per model variable, in node order: categorical with the model's states, or raw values
        when ``domain`` is given.

    Raises
    ------
    TypeError
        If ``model`` is not a fitted pgmpy network (or an estimator holding one), ``n`` is not
        an integer, or ``random_state`` is not a seed.
    ValueError
        If ``n`` is not positive, ``random_state`` is a negative int, or a variable has no CPD or factor.
    NotEnoughMemoryError
        If ``n`` records cannot fit in the memory this process may still allocate (before any draw).

    Examples
    --------
    >>> from pgmpy.models import DiscreteMarkovNetwork
    >>> from pgmpy.factors.discrete import DiscreteFactor
    >>> mn = DiscreteMarkovNetwork([("a", "b")])
    >>> mn.add_factors(DiscreteFactor(["a", "b"], [2, 2], [4.0, 1.0, 1.0, 4.0],
    ...                               state_names={"a": ["no", "yes"], "b": ["no", "yes"]}))
    >>> df = sample(mn, 1000, random_state=0)
    >>> df.shape, df["a"].cat.categories.tolist()
    ((1000, 2), ['no', 'yes'])
    >>> round(float((df["a"] == df["b"]).mean()), 1)
    0.8

    With the public domain, binned states come back as numbers within their bins:

    >>> from pgmpy_dp import Domain
    >>> mn = DiscreteMarkovNetwork([("a", "age")])
    >>> d = Domain({"a": ["no", "yes"]}, bins={"age": [17, 40, 91]}, bounds={"age": (17, 90)}, integer=["age"])
    >>> mn.add_factors(DiscreteFactor(["a", "age"], [2, 2], [4.0, 1.0, 1.0, 4.0],
    ...                               state_names={"a": list(d["a"]), "age": list(d["age"])}))
    >>> raw = sample(mn, 1000, random_state=0, domain=d)
    >>> raw["age"].dtype, bool(raw["age"].between(17, 90).all())
    (dtype('int64'), True)
    """
    from pgmpy.models import DiscreteBayesianNetwork

    model = _check_model(model)
    n = _check_n(n, len(model.nodes()))
    _check_sampler_settings(max_cells, burn_in)
    domain = _check_domain(domain)
    rng = check_random_state(random_state)
    rng = np.random.default_rng() if rng is None else rng
    if isinstance(model, DiscreteBayesianNetwork):
        states, codes = _forward_sample(model, n, rng)
    else:
        states, codes = _markov_sample(model, n, rng, max_cells, burn_in)
    nodes = list(model.nodes())
    df = pd.DataFrame({v: pd.Categorical.from_codes(codes[v], categories=list(states[v])) for v in nodes})
    df.attrs[PUBLIC_COLUMNS_ATTR] = nodes  # the states come from the model, not from any data
    if domain is None:
        return df
    raw = decode(df, domain, rng, dtypes)
    raw.attrs[PUBLIC_COLUMNS_ATTR] = [v for v in nodes if isinstance(raw.dtypes[v], pd.CategoricalDtype)]
    return raw


def _check_domain(domain) -> Domain | None:
    """``domain=`` as a Domain (a mapping or a schema file's path read as one), refused before anything is drawn."""
    domain = read_domain(domain)
    if domain is None or isinstance(domain, Domain):
        return domain
    if isinstance(domain, Mapping):
        return Domain(domain)
    raise TypeError(f"domain must be a pgmpy_dp.Domain, a mapping or a schema file's path, got {type(domain).__name__}")


def _check_model(model):
    """The pgmpy network to sample: ``model`` itself, or the ``model_`` of a fitted estimator."""
    from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork

    fitted = getattr(model, "model_", None)
    if fitted is not None and not hasattr(model, "check_model"):
        model = fitted  # a fitted estimator: sample the model it holds
    if not isinstance(model, (DiscreteBayesianNetwork, DiscreteMarkovNetwork)):
        raise TypeError(
            "sample needs a fitted pgmpy model (DiscreteBayesianNetwork or DiscreteMarkovNetwork) or a fitted "
            f"estimator holding one in model_, got {type(model).__name__}; fit it first"
        )
    return model


def _check_n(n, n_columns: int) -> int:
    """``n`` as an int, refused (before anything is drawn) when it is not a count or its rows cannot fit in memory."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"n must be a positive integer number of records, got {n!r}; pass e.g. n=1_000_000")
    if n < 1:
        raise ValueError(f"n must be a positive integer number of records, got {n}")
    n = int(n)
    # every column's codes and the uniform draws and row indices of one step, 8 bytes each per record:
    # a lower bound on the peak, so only a request that certainly cannot fit is refused
    check_memory(
        8 * n * (n_columns + 2),
        f"sample(n={n:,}) would need",
        "draw fewer records at a time (several calls with different seeds give independent rows)",
    )
    return n


def _check_sampler_settings(max_cells, burn_in) -> None:
    for name, value in (("max_cells", max_cells), ("burn_in", burn_in)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < (name == "max_cells"):
            raise ValueError(f"{name} must be a {'positive' if name == 'max_cells' else 'non-negative'} integer, got {value!r}")


def _draw(p: np.ndarray, rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Row ``rows[i]`` of the conditional table ``p`` (configurations x states) drawn with uniform ``u[i]``.

    Each row's CDF is offset by its index, so one sorted array and one ``searchsorted`` serve every
    conditional distribution at once.
    """
    total = p.sum(axis=1, keepdims=True)
    # a configuration of zero probability (never reached) gets a uniform row, keeping the CDF sorted
    p = np.where(total > 0, p / np.where(total > 0, total, 1.0), 1.0 / p.shape[1])
    cdf = np.cumsum(p, axis=1)
    cdf[:, -1] = 1.0
    offsets = np.arange(cdf.shape[0], dtype=float)[:, None]
    pos = np.searchsorted((cdf + offsets).ravel(), rows + u, side="right") - rows * cdf.shape[1]
    return np.minimum(pos, cdf.shape[1] - 1)


def _forward_sample(model, n: int, rng: np.random.Generator) -> tuple[dict, dict]:
    import networkx as nx

    cpds = {}
    for node in model.nodes():
        cpd = model.get_cpds(node)
        if cpd is None:
            raise ValueError(f"node {node!r} has no CPD; fit the model first (model.fit(df, estimator=...))")
        cpds[node] = cpd
    model.check_model()
    states = {v: list(cpds[v].state_names[v]) for v in cpds}
    codes: dict[str, np.ndarray] = {}
    for node in nx.topological_sort(model):
        cpd = cpds[node]
        parents = cpd.variables[1:]
        cards = tuple(int(c) for c in cpd.cardinality[1:])
        table = np.asarray(cpd.values, dtype=float).reshape(len(states[node]), -1).T
        if parents:
            parent_codes = tuple(_recode(codes[p], states[p], cpd.state_names[p], p, node) for p in parents)
            rows = np.ravel_multi_index(parent_codes, cards)
        else:
            rows = np.zeros(n, dtype=np.intp)
        codes[node] = _draw(table, rows, rng.random(n))
    return states, codes


def _recode(codes: np.ndarray, own: list, other, var: str, where: str) -> np.ndarray:
    """``var``'s codes (in its own state order) in the state order of ``where``'s table."""
    other = list(other)
    if other == own:
        return codes
    if sorted(map(repr, other)) != sorted(map(repr, own)):
        raise ValueError(f"{where!r}'s table lists the states {other} for {var!r}, whose own are {own}; make them agree")
    return np.array([other.index(s) for s in own], dtype=np.intp)[codes]


def _markov_sample(model, n: int, rng: np.random.Generator, max_cells: int, burn_in: int) -> tuple[dict, dict]:
    factors = list(model.get_factors())
    states: dict[str, list] = {}
    for f in factors:
        for v in f.variables:
            states.setdefault(v, list(f.state_names[v]))
    bare = [v for v in model.nodes() if v not in states]
    if bare:
        raise ValueError(f"variables {bare[:20]} are in no factor, so they have no distribution; fit the model first")
    model.check_model()
    nodes = list(model.nodes())
    cliques, logs = [], []
    for f in factors:
        values = np.asarray(f.values, dtype=float)
        for axis, v in enumerate(f.variables):  # align each axis with the first factor's state order
            if list(f.state_names[v]) != states[v]:
                order = _recode(np.arange(len(states[v])), states[v], f.state_names[v], v, f"factor {tuple(f.variables)}")
                values = np.take(values, order, axis=axis)
        with np.errstate(divide="ignore"):
            logs.append(np.log(values))  # zero -> -inf: a forbidden configuration
        cliques.append(tuple(f.variables))
    domain = Domain({v: range(len(states[v])) for v in nodes})
    jt = JunctionTree(domain, cliques)
    if jt.max_cells <= max_cells:
        return states, jt.sample(logs, n, random_state=rng)
    warnings.warn(
        f"sample: this Markov network's junction tree has a clique of {jt.max_cells} cells, above "
        f"max_cells={max_cells}; the sample is approximate: {n} independent Gibbs chains after {burn_in} "
        "sweeps each. Raise max_cells for an exact sample, or burn_in for a closer one",
        UserWarning,
        stacklevel=3,
    )
    return states, _gibbs(domain, cliques, logs, n, rng, burn_in)


def _gibbs(domain: Domain, cliques, logs, n: int, rng: np.random.Generator, sweeps: int) -> dict[str, np.ndarray]:
    """``n`` parallel Gibbs chains from uniform random states, after ``sweeps`` sweeps, as codes per variable."""
    attrs = list(domain.attrs)
    # per variable: each factor containing it, as (others, their shape, table of (other configs, states))
    blanket: dict[str, list] = {a: [] for a in attrs}
    for clique, log in zip(cliques, logs):
        for j, a in enumerate(clique):
            others = clique[:j] + clique[j + 1:]
            table = np.moveaxis(log, j, -1).reshape(-1, domain.size(a))
            blanket[a].append((others, domain.shape(others), table))
    codes = {a: rng.integers(0, domain.size(a), size=n) for a in attrs}
    for _ in range(sweeps):
        for a in attrs:
            logits = np.zeros((n, domain.size(a)))
            for others, shape, table in blanket[a]:
                if others:
                    logits += table[np.ravel_multi_index(tuple(codes[o] for o in others), shape)]
                else:
                    logits += table[0]
            top = logits.max(axis=1, keepdims=True)
            stuck = ~np.isfinite(top[:, 0])
            p = np.exp(logits - np.where(stuck[:, None], 0.0, top))
            p[stuck] = 1.0  # neighbours that forbid every state (possible at the random start): move uniformly
            cdf = np.cumsum(p, axis=1)
            u = rng.random(n)[:, None] * cdf[:, -1:]
            codes[a] = np.minimum((cdf <= u).sum(axis=1), domain.size(a) - 1)
    return codes
