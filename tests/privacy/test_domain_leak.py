"""Domain-leak check: the structure of every output is the same on neighbouring frames.

``DATA`` never shows the state ``a='z'`` nor ``c=True``; ``NEIGHBOUR`` is ``DATA``
plus one record that has both. Everything except the noisy numbers (keys,
shapes, table order, index and column labels, state names, dtypes, JSON
layout, samplers, epsilons) must be identical, or the output would reveal
whether that record is present without any noise.

:func:`structure` turns any output into its structure: numbers become their
type, arrays their shape and dtype, pandas objects their labels and dtypes;
strings, keys and lengths are kept. Estimators join ``PRODUCERS`` with a
function ``frame -> output`` (the fitted model's CPDs plus everything the
estimator exposes, releases via :func:`release_structure`), as the BN and MN
estimators do below.
"""

from __future__ import annotations

import json
import numbers

import numpy as np
import pandas as pd
import pytest

import pgmpy_dp  # noqa: F401
from pgmpy_dp import Domain, MarginalRelease, release_marginals
from pgmpy_dp.tables import release_from_codes

STATES = {"a": ["x", "y", "z"], "b": [0, 1], "c": [True, False]}


def _frame():
    rng = np.random.default_rng(5)
    n = 25
    return pd.DataFrame(
        {
            "a": pd.Categorical(rng.choice(["x", "y"], n), categories=STATES["a"]),
            "b": pd.Categorical(rng.choice([0, 1], n), categories=STATES["b"]),
            "c": pd.Categorical([False] * n, categories=STATES["c"]),
        }
    )


DATA = _frame()
NEIGHBOUR = pd.concat(
    [DATA, pd.DataFrame({"a": ["z"], "b": [1], "c": [True]}).astype({k: pd.CategoricalDtype(v) for k, v in STATES.items()})],
    ignore_index=True,
)
assert "z" not in set(DATA["a"]) and True not in set(DATA["c"]) and len(NEIGHBOUR) == len(DATA) + 1


def structure(obj):
    """The data-independent shape of ``obj``: what must not change between neighbouring frames."""
    if isinstance(obj, MarginalRelease):
        return {"release": structure(obj.to_dict()), "json": structure(json.loads(obj.to_json())), "repr": repr(obj)}
    if isinstance(obj, pd.DataFrame):
        return ("DataFrame", list(obj.columns), obj.index.tolist(), [str(t) for t in obj.dtypes])
    if isinstance(obj, pd.Series):
        return ("Series", obj.name, obj.index.tolist(), list(obj.index.names), str(obj.dtype))
    if isinstance(obj, np.ndarray):
        return ("ndarray", obj.shape, str(obj.dtype))
    if isinstance(obj, dict):
        return {k: structure(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        if obj and all(isinstance(v, numbers.Number) and not isinstance(v, bool) for v in obj):
            return (type(obj).__name__, len(obj), sorted({type(v).__name__ for v in obj}))
        return [structure(v) for v in obj]
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, numbers.Number):
        return type(obj).__name__
    if hasattr(obj, "state_names") and hasattr(obj, "variables"):  # a pgmpy factor or CPD
        return ("factor", list(obj.variables), list(obj.cardinality), obj.state_names, str(obj.values.dtype))
    raise TypeError(f"no structure rule for {type(obj).__name__}")


def release_structure(rel: MarginalRelease):
    """Everything a release shows: its dict/JSON form and each table's pandas and pgmpy views."""
    views = []
    for attrs in rel.attrs:
        views += [rel.series(attrs), rel.frame(attrs), rel.factor(attrs), rel[attrs].values]
    return [rel, views, rel.n_records_estimate, rel.epsilon, rel.sensitivity, rel.attrs]


def _from_codes(df):
    dom = Domain(STATES)
    return release_from_codes(dom.encode(df), dom, [("a", "c"), ("b",)], 1.0)


def _object_columns(df):
    plain = df.astype(object)
    return release_marginals(plain, [("a", "b", "c")], 0.5, domain=STATES, random_state=1)


#: (name, frame -> output). Estimators are added here.
PRODUCERS = [
    ("release uniform (default OpenDP)", lambda df: release_structure(df.dp.release([("a", "b"), ("c",)], 1.0))),
    ("release per-table (seeded)", lambda df: release_structure(
        df.dp.release([("a", "b"), ("b", "c"), ("a",)], [0.2, 0.3, 0.5], random_state=0))),
    ("release geometric (large table)", lambda df: release_structure(
        df.assign(d=pd.Categorical([0] * len(df), categories=range(40_000))).dp.release([("a", "d")], 1.0))),
    ("release with public n_records", lambda df: release_structure(df.dp.release([("a",)], 1.0, n_records=100))),
    ("release_from_codes", lambda df: release_structure(_from_codes(df))),
    ("object columns with explicit domain", lambda df: release_structure(_object_columns(df))),
    ("df.dp.domain", lambda df: df.dp.domain().to_dict()),
]


# -- estimators -------------------------------------------------------------------------------------
from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork  # noqa: E402

from pgmpy_dp import DiscretePrivateMLE, PrivateMarkovEstimator  # noqa: E402


def _bn(allocation):
    def produce(df):
        est = DiscretePrivateMLE(epsilon=1.0, allocation=allocation, random_state=0)
        model = DiscreteBayesianNetwork([("a", "b"), ("b", "c")]).fit(df, estimator=est)
        stage1 = None if est.stage1_release_ is None else release_structure(est.stage1_release_)
        return [
            model.get_cpds(),
            release_structure(est.release_),
            stage1,
            est.allocation_,
            est.node_stats_,
            est.state_names_,
            est.stage1_epsilon_,
        ]

    return produce


def _mn(method):
    def produce(df):
        est = PrivateMarkovEstimator(method=method, max_iter=3, random_state=0, show_progress=False)
        model = est.fit(DiscreteMarkovNetwork([("a", "b"), ("b", "c")]), df, epsilon=1.0).model_
        return [
            model.get_factors(),
            [release_structure(r) for r in est.releases_],
            est.cliques_,
            [np.shape(p) for p in est.log_potentials_],
        ]

    return produce


PRODUCERS += [(f"DiscretePrivateMLE({a})", _bn(a)) for a in ("uniform", "data-dependent")]
PRODUCERS += [(f"PrivateMarkovEstimator({m})", _mn(m)) for m in ("naive-mle", "cgm-em")]

from pgmpy_dp import PrivateIsingEstimator, PrivatePairwiseEstimator  # noqa: E402


def _learner(cls, columns):
    def produce(df):
        est = cls(n_iter=5, random_state=0).fit(df[columns], rho=1.0)
        # which edges are kept is a noisy output; the model on every pair shows the structure
        full = est.to_markov_network(edges=list(est.weights_))
        return [est.weights_, est.node_weights_, sorted(est.graph_.nodes()), est.rho_, est.n_iter_,
                est.noise_scale_, est.threshold_, full.get_factors(), est.epsilon_delta(1e-6)]

    return produce


PRODUCERS += [
    ("PrivateIsingEstimator", _learner(PrivateIsingEstimator, ["b", "c"])),
    ("PrivatePairwiseEstimator", _learner(PrivatePairwiseEstimator, ["a", "b", "c"])),
]


@pytest.mark.parametrize("produce", [p for _, p in PRODUCERS], ids=[n for n, _ in PRODUCERS])
def test_output_structure_is_identical_on_neighbouring_frames(produce):
    assert structure(produce(DATA)) == structure(produce(NEIGHBOUR))


def test_round_trip_keeps_the_structure():
    rel = DATA.dp.release([("a", "b"), ("c",)], 1.0, random_state=0)
    assert structure(release_structure(MarginalRelease.from_json(rel.to_json()))) == structure(release_structure(rel))


def test_the_check_detects_a_domain_read_from_the_data():
    """The check has teeth: categories inferred from the data (``astype('category')``) do leak.

    This is why the domain must be declared (docs/privacy.md): a state that no
    record shows would otherwise be missing from every output.
    """
    inferred = [d.astype(object).astype({"a": "category", "b": "category", "c": "category"}) for d in (DATA, NEIGHBOUR)]
    s0, s1 = (structure(release_structure(d.dp.release([("a", "b")], 1.0, random_state=0))) for d in inferred)
    assert s0 != s1
