"""The one rule for where every estimator takes its privacy loss (docs/privacy.md, "Where the loss goes").

The loss (``epsilon``/``rho``/``delta``), the ``budget`` it is charged to and the ``privacy_unit``
it protects are given together, either in ``__init__`` (estimators fitted by code with a fixed
``fit`` signature: pgmpy's parameter estimators, the synthesizer) or in ``fit`` next to the data
(everything else). After a fit each estimator states what it spent as a value, ``loss_``.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork

import pgmpy_dp
from pgmpy_dp.privacy import ApproxDP, PrivacyBudget, PureDP, ZCDP

#: estimator -> where its loss goes
PLACEMENT = {
    pgmpy_dp.DiscretePrivateMLE: "__init__",
    pgmpy_dp.PrivateSynthesizer: "__init__",
    pgmpy_dp.PrivateMarkovEstimator: "fit",
    pgmpy_dp.PrivateIsingEstimator: "fit",
    pgmpy_dp.PrivatePairwiseEstimator: "fit",
}
LOSS_KEYWORDS = {"epsilon", "rho"}
TRAVEL_WITH_THE_LOSS = {"budget", "privacy_unit"}


def _params(cls, where: str) -> set[str]:
    return set(inspect.signature(getattr(cls, where)).parameters)


def test_every_public_estimator_declares_where_its_loss_goes():
    # a new public estimator that spends (it takes a budget somewhere) must be added to the rule
    spenders = {
        obj for name in pgmpy_dp.__all__
        if inspect.isclass(obj := getattr(pgmpy_dp, name)) and hasattr(obj, "fit")
        and ("budget" in _params(obj, "__init__") or "budget" in _params(obj, "fit"))
    }
    assert spenders == set(PLACEMENT)


@pytest.mark.parametrize("cls, where", PLACEMENT.items(), ids=lambda x: getattr(x, "__name__", x))
def test_loss_budget_and_unit_go_in_one_place(cls, where):
    other = "fit" if where == "__init__" else "__init__"
    here, there = _params(cls, where), _params(cls, other)
    assert LOSS_KEYWORDS <= here, f"{cls.__name__}.{where} must take epsilon= and rho="
    assert not (LOSS_KEYWORDS | TRAVEL_WITH_THE_LOSS) & there, (
        f"{cls.__name__}.{other} takes a privacy argument; by the rule it goes in {where}"
    )
    assert "budget" in here
    # keyword defaults only: the loss is never a required positional argument
    sig = inspect.signature(getattr(cls, where))
    assert all(sig.parameters[k].default is None for k in LOSS_KEYWORDS)


@pytest.mark.parametrize("cls, where", PLACEMENT.items(), ids=lambda x: getattr(x, "__name__", x))
def test_the_rule_is_in_the_docstring(cls, where):
    # the class, its fit, or its loss_ attribute (a property on the structure learners) states the rule
    doc = inspect.getdoc(cls) + (inspect.getdoc(cls.fit) or "") + (inspect.getdoc(getattr(cls, "loss_", None)) or "")
    assert "Where the loss goes" in doc


def _frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.random(n) < 0.4
    b = np.where(a, rng.random(n) < 0.8, rng.random(n) < 0.2)
    c = np.where(b, rng.random(n) < 0.7, rng.random(n) < 0.3)
    return pd.DataFrame({"a": a, "b": b, "c": c})


DOMAIN = {v: [False, True] for v in "abc"}
EDGES = [("a", "b"), ("b", "c")]


def test_discrete_private_mle_states_its_loss():
    df = _frame()
    for given, kwargs in ((PureDP(1.0), dict(epsilon=1.0)), (ZCDP(0.5), dict(rho=0.5))):
        budget = PrivacyBudget(rho=10.0)
        est = pgmpy_dp.DiscretePrivateMLE(**kwargs, domain=DOMAIN, random_state=0, budget=budget)
        DiscreteBayesianNetwork(EDGES).fit(df, estimator=est)
        assert est.loss_ == given
    rel = df.dp.release([("a",), ("b", "a"), ("c", "b")], epsilon=1.0, domain=DOMAIN, random_state=0)
    est = pgmpy_dp.DiscretePrivateMLE().fit(DiscreteBayesianNetwork(EDGES), rel)
    assert est.loss_ is None  # from releases: nothing spent


def test_markov_estimator_states_its_loss():
    df = _frame()
    est = pgmpy_dp.PrivateMarkovEstimator(method="naive-mle", random_state=0, show_progress=False)
    assert est.fit(DiscreteMarkovNetwork(EDGES), df, rho=0.5, domain=DOMAIN).loss_ == ZCDP(0.5)
    assert est.fit(DiscreteMarkovNetwork(EDGES), df, epsilon=[0.25, 0.5], domain=DOMAIN).loss_ == PureDP(0.75)
    assert est.fit(DiscreteMarkovNetwork(EDGES), df, epsilon=PureDP(1.0), domain=DOMAIN).loss_ == PureDP(1.0)
    per_clique = [ZCDP(0.25), ZCDP(0.5)]
    assert est.fit(DiscreteMarkovNetwork(EDGES), df, epsilon=per_clique, domain=DOMAIN).loss_ == ZCDP(0.75)
    release = est.releases_[0]
    assert est.fit(DiscreteMarkovNetwork(EDGES), release).loss_ is None


@pytest.mark.parametrize("cls", [pgmpy_dp.PrivateIsingEstimator, pgmpy_dp.PrivatePairwiseEstimator])
def test_structure_learners_state_their_loss(cls):
    df = _frame()
    est = cls(random_state=0)
    assert not hasattr(est, "loss_")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert est.fit(df, rho=0.5, domain=DOMAIN).loss_ == ZCDP(0.5)
        assert est.fit(df, epsilon=2.0, delta=1e-6, domain=DOMAIN).loss_ == ApproxDP(2.0, 1e-6)
    assert est.rho_ == ApproxDP(2.0, 1e-6).rho


def test_synthesizer_states_its_loss():
    synth = pgmpy_dp.PrivateSynthesizer(epsilon=1.0, delta=1e-6, method="mst", random_state=0, show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth.fit(_frame(), domain=DOMAIN)
    assert synth.loss_ == ApproxDP(1.0, 1e-6)
