"""End-to-end demo: release differentially private tables of data sampled from a bnlearn network.

Run:  python examples/demo.py
"""

import textwrap

import pandas as pd

import pgmpy_dp
from pgmpy_dp.datasets import load_network, sample_network

pd.set_option("display.width", 120)

# 1. A "sensitive" table: 10,000 records sampled from the asia network that pgmpy ships offline.
#    Its columns are categorical: the categories are the PUBLIC domain (declared, not read from data).
network = load_network("asia")
df = sample_network(network, 10_000, seed=0)
print(f"private data: {len(df):,} records, columns {list(df.columns)}\n")

# 2. A privacy budget for everything we publish, and one release of the network's family tables.
budget = pgmpy_dp.PrivacyBudget(epsilon=2.0)
families = [(node, *sorted(network.get_parents(node))) for node in network.nodes()]
release = df.dp.release(families, epsilon=1.0, budget=budget)

print(release)
print(f"each of the {len(release)} tables gets discrete Laplace noise of scale "
      f"{release.tables[0].scale:g} (= {len(release)} tables / epsilon 1.0)\n")
for attrs in [("smoke",), ("lung", "smoke"), ("either", "lung", "tub")]:
    print(release.frame(attrs).to_string(index=False), "\n")

# 3. The artifact is self-describing and publishable.
text = release.to_json()
assert pgmpy_dp.MarginalRelease.from_json(text) == release
print(f"JSON artifact: {len(text):,} characters; noisy record count estimate "
      f"{release.n_records_estimate:,.0f}")
print(f"budget: spent {budget.spent:g} of {budget.total:g}; ledger:")
for entry in budget.ledger:
    print(f"  {entry.time:%H:%M:%S}  epsilon={entry.epsilon:g}  {textwrap.shorten(entry.label, 70, placeholder=' ...')}")

# 4. A private Bayesian network on the known asia DAG, queried with pgmpy's own engines.
from pgmpy.inference import VariableElimination  # noqa: E402
from pgmpy.models import DiscreteBayesianNetwork  # noqa: E402

model = DiscreteBayesianNetwork(network.edges())
estimator = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, budget=budget)  # error-optimal allocation
model.fit(df, estimator=estimator)
print(f"\nprivate Bayesian network fitted: check_model() = {model.check_model()}; "
      f"stage I spent {estimator.stage1_epsilon_:g}, stage II per node:")
print(estimator.node_stats_.round(4).to_string())
engine = VariableElimination(model)
print("\nP(lung | smoke=yes, xray=yes):")
print(engine.query(["lung"], evidence={"smoke": "yes", "xray": "yes"}, show_progress=False))
print("MAP of (tub, lung, bronc) given dysp=yes:",
      engine.map_query(["tub", "lung", "bronc"], evidence={"dysp": "yes"}, show_progress=False))
print(f"budget: spent {budget.spent:g} of {budget.total:g} in {len(budget.ledger)} charges")

# 5. A private Markov network fitted from the SAME release: post-processing, no further budget.
from pgmpy.inference import BeliefPropagation  # noqa: E402
from pgmpy.models import DiscreteMarkovNetwork  # noqa: E402

# The moral graph of the DAG; its cliques are exactly the released family tables.
mn = DiscreteMarkovNetwork(network.to_markov_model().edges())
mn_estimator = pgmpy_dp.PrivateMarkovEstimator(method="cgm-em", max_iter=200, show_progress=False)
fitted = mn_estimator.fit(mn, release, cliques=families).model_
print(f"\nCGM-EM: {mn_estimator.n_iter_} EM iterations, converged: {mn_estimator.converged_}")
print("private Markov network (CGM-EM) from the released tables; P(bronc | dysp=yes):")
# BeliefPropagation returns normalised answers; pgmpy 1.1's VariableElimination would leave a
# Markov network's answer unnormalised (see docs/inference.md)
print(BeliefPropagation(fitted).query(["bronc"], evidence={"dysp": "yes"}, show_progress=False))
print(f"budget still spent {budget.spent:g} of {budget.total:g}: fitting from a release is free")
