"""A private Bayesian network of alarm: a what-if query, the budget allocation, and a privacy-utility plot.

Run:  python examples/private_bn_alarm.py      (writes alarm_allocation.png and alarm_privacy_utility.png to examples/output/;
      the plots need matplotlib, the optional "plot" extra: pip install ".[plot]")

The noise is fresh on every run, so the private numbers change from run to run; pass
``random_state=`` to an estimator for a repeatable experiment.
"""

import os
from pathlib import Path

import numpy as np
import pandas as pd

import pgmpy_dp  # before pgmpy: it imports pgmpy.inference without pgmpy 1.1's own deprecation notice
from pgmpy.inference import VariableElimination
from pgmpy.models import DiscreteBayesianNetwork
from pgmpy.parameter_estimator import DiscreteMLE

from pgmpy_dp.datasets import load_network, sample_network
from pgmpy_dp.evaluation.bayesian import joint_kl
from pgmpy_dp.evaluation.plots import plot_allocation, plot_privacy_utility

# written files go to examples/output/ (gitignored), or to $PGMPY_DP_EXAMPLES_OUT
OUT = Path(os.environ.get("PGMPY_DP_EXAMPLES_OUT", Path(__file__).resolve().parent / "output"))
OUT.mkdir(parents=True, exist_ok=True)

net = load_network("alarm")
df = sample_network(net, 10_000, seed=2)


def empty_model():
    model = DiscreteBayesianNetwork(net.edges())
    model.add_nodes_from(net.nodes())
    return model


# 1. Fit at epsilon = 1 with the default (optimal allocation, likelihood fit) and ask a what-if question.
estimator = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0)
private = empty_model().fit(df, estimator=estimator)
exact = empty_model().fit(df, estimator=DiscreteMLE(state_names=net.states))
question = dict(variables=["HYPOVOLEMIA"], evidence={"CVP": "HIGH", "BP": "LOW"}, show_progress=False)
print("What if central venous pressure is high and blood pressure low: P(HYPOVOLEMIA)?")
answers = pd.DataFrame(
    {
        "private (eps=1)": VariableElimination(private).query(**question).values,
        "non-private MLE": VariableElimination(exact).query(**question).values,
    },
    index=net.states["HYPOVOLEMIA"],
)
print(answers.round(3), "\n")

# 2. A small privacy-utility study against the true network (2 runs; benchmarks/bn_accuracy.py runs the full one):
#    the default against the paper's D-Ind baseline (uniform allocation, least-squares projection).
methods = {"default": {}, "D-Ind": {"allocation": "uniform", "consistency": "projection"}}
rows = []
for eps in (0.5, 1.0, 2.0):
    for method, kwargs in methods.items():
        for run in range(2):
            est = pgmpy_dp.DiscretePrivateMLE(eps, random_state=run, **kwargs)
            model = empty_model().fit(df, estimator=est)
            rows.append({"epsilon": eps, "method": method, "joint KL": joint_kl(net, model)})
runs = pd.DataFrame(rows)
print("KL(true network || private network) of the joint distribution (mean over 2 runs; lower is better):")
print(runs.groupby(["epsilon", "method"])["joint KL"].mean().unstack().round(3))
assert np.isfinite(runs["joint KL"]).all()

try:
    plot_allocation(estimator, path=OUT / "alarm_allocation.png")
    plot_privacy_utility(runs, "joint KL", path=OUT / "alarm_privacy_utility.png")
    print(f"\nwrote alarm_allocation.png and alarm_privacy_utility.png to {OUT}")
except ImportError as err:  # matplotlib is an optional extra; the numbers above are the result
    print(f"\nno plots: {err}")
