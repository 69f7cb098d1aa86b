"""pgmpy's own inference engines on a private Markov network, checked against enumeration.

docs/inference.md tells users to query private Markov networks with VariableElimination and to
normalise; these tests hold that advice to account, and record pgmpy 1.1's BeliefPropagation
failure on the same model so that a fix of the exported potentials shows up here.
"""

import os
import subprocess
import sys
from functools import reduce

import numpy as np
import pytest
from pgmpy.inference import VariableElimination


# the model of the docs' caveat: asia's moral graph, naive MLE from a seeded release
FIT = """
import pgmpy_dp
from pgmpy.models import DiscreteMarkovNetwork
network = pgmpy_dp.datasets.load_network("asia")
df = pgmpy_dp.datasets.sample_network(network, 10_000, seed=0)
families = [(node, *sorted(network.get_parents(node))) for node in network.nodes()]
release = df.dp.release(families, epsilon=1.0, random_state=1)
mn = DiscreteMarkovNetwork(network.to_markov_model().edges())
mn = pgmpy_dp.PrivateMarkovEstimator(method="naive-mle").fit(mn, release, cliques=families).model_
"""


def enumerate_marginal(mn, variable, evidence=None):
    joint = reduce(lambda a, b: a * b, mn.get_factors())
    if evidence:
        joint = joint.reduce(list(evidence.items()), inplace=False)
    others = [v for v in joint.variables if v != variable]
    return joint.marginalize(others, inplace=False).normalize(inplace=False).values


def enumerate_evidence(mn, evidence):
    joint = reduce(lambda a, b: a * b, mn.get_factors())
    return float(joint.reduce(list(evidence.items()), inplace=False).values.sum() / joint.values.sum())


def test_variable_elimination_normalised_is_exact():
    scope = {}
    exec(FIT, scope)
    mn = scope["mn"]
    for evidence in (None, {"dysp": "yes"}, {"xray": "no", "smoke": "yes"}):
        answer = VariableElimination(mn).query(["bronc"], evidence=evidence, show_progress=False)
        # pgmpy 1.1 does not normalise Markov-network answers, but the exported potentials have total
        # mass 1, so an answer sums to the probability of its evidence
        expected_mass = 1.0 if evidence is None else enumerate_evidence(mn, evidence)
        assert answer.values.sum() == pytest.approx(expected_mass, rel=1e-6)
        assert np.allclose(answer.normalize(inplace=False).values, enumerate_marginal(mn, "bronc", evidence))


@pytest.mark.slow
def test_belief_propagation_is_exact(tmp_path):
    """pgmpy 1.1's BeliefPropagation stops calibrating when sepset beliefs agree to an absolute 1e-8;
    exported potentials with a total mass of 1e-13..1e-27 (before they were rescaled to 1) made it
    stop before passing any message, giving 0.643 here instead of 0.455."""
    script = FIT + (
        "from pgmpy.inference import BeliefPropagation\n"
        "print(BeliefPropagation(mn).query(['bronc'], show_progress=False).values[0])\n"
    )
    # the junction tree pgmpy builds, and so the failure, depends on string hashing
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr
    scope = {}
    exec(FIT, scope)
    assert float(result.stdout.split()[-1]) == pytest.approx(enumerate_marginal(scope["mn"], "bronc")[0], abs=1e-6)
