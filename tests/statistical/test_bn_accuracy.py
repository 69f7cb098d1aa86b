"""Seeded statistical checks of DiscretePrivateMLE: errors follow the noise scale.

The bound: normalising a perturbed column moves it by at most
``2 * ||noise||_1 / C[u]`` in L1, so a CPD's expected L1 error is at most
``sum over parent configurations u of 2 * k * E|eta| / C[u]`` (2 for a column
with no records), with ``E|eta|`` the noise scale ``1 / epsilon_i``.
"""

import warnings

import numpy as np
import pytest
from pgmpy.models import DiscreteBayesianNetwork
from pgmpy.parameter_estimator import DiscreteMLE

from pgmpy_dp import DiscretePrivateMLE
from pgmpy_dp.datasets import load_network, sample_network
from pgmpy_dp.evaluation.bayesian import cpd_errors, joint_kl, weighted_cpd_l1

warnings.filterwarnings("ignore", category=FutureWarning)
SEEDS = range(4)


@pytest.fixture(scope="module")
def setting():
    net = load_network("asia")
    df = sample_network(net, 5000, seed=3)
    ref = DiscreteBayesianNetwork(net.edges())
    ref.fit(df, estimator=DiscreteMLE(state_names=net.states))
    return net, df, ref


def _model(net):
    m = DiscreteBayesianNetwork(net.edges())
    m.add_nodes_from(net.nodes())
    return m


def _mean_l1(net, df, ref, eps, allocation):
    errors = []
    for seed in SEEDS:
        model = _model(net).fit(
            df, estimator=DiscretePrivateMLE(eps, allocation=allocation, consistency="projection", random_state=seed)
        )
        errors.append(cpd_errors(model, ref)["l1"].mean())
    return float(np.mean(errors))


def _uniform_bound(net, df, eps):
    n = len(net.nodes())
    scale = n / eps
    per_node = []
    for node in net.nodes():
        parents = sorted(net.get_parents(node))
        k = net.get_cardinality(node)
        if parents:
            counts = df.groupby(parents, observed=False).size().to_numpy()
        else:
            counts = np.array([len(df)])
        per_node.append(np.sum(np.where(counts > 0, 2 * k * scale / np.maximum(counts, 1), 2.0)))
    return float(np.mean(per_node))


@pytest.mark.parametrize("allocation", ["uniform", "data-dependent"])
def test_cpd_error_shrinks_as_epsilon_grows(setting, allocation):
    net, df, ref = setting
    errs = [_mean_l1(net, df, ref, eps, allocation) for eps in (0.3, 3.0, 30.0)]
    assert errs[0] > errs[1] > errs[2], errs


def test_uniform_error_is_within_the_noise_bound_and_the_bound_is_not_vacuous(setting):
    net, df, ref = setting
    high = _mean_l1(net, df, ref, 30.0, "uniform")
    low = _mean_l1(net, df, ref, 0.3, "uniform")
    bound = _uniform_bound(net, df, 30.0)
    assert high <= bound, (high, bound)
    # at a hundred times less budget the error must exceed what the bound allows at epsilon 30
    assert low > bound, (low, bound)


def test_default_beats_d_ind_on_a_seeded_small_benchmark():
    """sachs, 10,000 records, epsilon 1, against the true network.

    benchmarks/bn_accuracy.py measured (one run, seed 1) joint KL 0.044 for the
    default against 0.099 for D-Ind (ratio 0.45), and 0.085 against 0.265 (0.32)
    at epsilon 0.5. We require a ratio below 0.7 on the mean of two other seeds:
    the measured gap with room for seed-to-seed spread, and still a clear win.
    The parent-weighted CPD L1 (what the optimal allocation minimises) must be
    lower too.
    """
    net = load_network("sachs")
    df = sample_network(net, 10_000, seed=5)
    kl = {"default": [], "D-Ind": []}
    wl1 = {"default": [], "D-Ind": []}
    for seed in (0, 1):
        for name, kwargs in (("default", {}), ("D-Ind", {"allocation": "uniform", "consistency": "projection"})):
            model = _model(net).fit(df, estimator=DiscretePrivateMLE(1.0, random_state=seed, **kwargs))
            kl[name].append(joint_kl(net, model))
            wl1[name].append(weighted_cpd_l1(net, model))
    assert np.mean(kl["default"]) < 0.7 * np.mean(kl["D-Ind"]), kl
    assert np.mean(wl1["default"]) < np.mean(wl1["D-Ind"]), wl1
