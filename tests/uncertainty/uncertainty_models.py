"""Small seeded fits shared by the uncertainty tests: a Markov chain a - b - c and Bayesian networks a -> b."""

import warnings

import numpy as np
import pandas as pd
from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork

import pgmpy_dp
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.tables import release_from_codes

CHAIN = [("a", "b"), ("b", "c")]
DOMAIN = Domain({"a": ["x", "y"], "b": ["u", "v", "w"], "c": ["p", "q"]})


def truth_theta():
    rng = np.random.default_rng(3)
    return [np.log(rng.dirichlet(np.ones(DOMAIN.size(a) * DOMAIN.size(b))).reshape(DOMAIN.shape((a, b))))
            for a, b in CHAIN]


def true_answer(variable, evidence):
    """P(variable | evidence) under the chain's true potentials."""
    return pgmpy_dp.query(markov_model(truth_theta()), [variable], evidence=evidence).values


def markov_model(theta):
    from pgmpy.factors.discrete import DiscreteFactor

    mn = DiscreteMarkovNetwork(CHAIN)
    mn.add_factors(*[DiscreteFactor(list(c), list(t.shape), np.exp(t).ravel(),
                                    state_names={v: list(DOMAIN[v]) for v in c}) for c, t in zip(CHAIN, theta)])
    return mn


def fitted(n=2000, eps=1.0, seed=0, method="naive-mle", rho=None, **options):
    """A PrivateMarkovEstimator fitted to a release of ``n`` records drawn from the true chain."""
    rng = np.random.default_rng(seed)
    codes = JunctionTree(DOMAIN, CHAIN).sample(truth_theta(), n, random_state=rng)
    release = release_from_codes(codes, DOMAIN, CHAIN, eps if rho is None else None, rho=rho, random_state=rng)
    est = pgmpy_dp.PrivateMarkovEstimator(method=method, show_progress=False, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(DiscreteMarkovNetwork(CHAIN), release)
    return est


def bn_truth():
    from pgmpy.factors.discrete import TabularCPD

    bn = DiscreteBayesianNetwork([("a", "b")])
    bn.add_cpds(
        TabularCPD("a", 2, [[0.3], [0.7]], state_names={"a": ["x", "y"]}),
        TabularCPD("b", 2, [[0.8, 0.25], [0.2, 0.75]], evidence=["a"], evidence_card=[2],
                   state_names={"b": ["u", "v"], "a": ["x", "y"]}),
    )
    return bn


def bn_fitted(seed, n=1000, eps=1.0, **options):
    """A DiscretePrivateMLE fitted to ``n`` records drawn from ``bn_truth``."""
    from pgmpy_dp.datasets import sample_network

    df = sample_network(bn_truth(), n, seed=seed)
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=eps, random_state=seed, **options)
    DiscreteBayesianNetwork([("a", "b")]).fit(df, estimator=est)
    return est


def bn_model(est):
    """The fitted network of a DiscretePrivateMLE, from its CPDs."""
    model = DiscreteBayesianNetwork([(p, c.variable) for c in est.parameters_ for p in c.variables[1:]])
    model.add_nodes_from(est.state_names_)
    model.add_cpds(*est.parameters_)
    return model


def frame(n=3000, seed=0):
    """``n`` records of a -> b -> c over public categorical states."""
    rng = np.random.default_rng(seed)
    a = rng.random(n) < 0.3
    df = pd.DataFrame({"a": np.where(a, "x", "y"), "b": np.where(a ^ (rng.random(n) < 0.2), "u", "v")})
    df["c"] = np.where(rng.random(n) < 0.7, df.b, np.where(df.b == "u", "v", "u"))
    states = {"a": ["x", "y"], "b": ["u", "v"], "c": ["u", "v"]}
    return df.astype({k: pd.CategoricalDtype(s) for k, s in states.items()})
