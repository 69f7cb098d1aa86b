"""Spend one privacy budget across several releases, then reuse what was released for free.

Run:  python examples/budget_across_releases.py
"""

import numpy as np
from pgmpy.models import DiscreteBayesianNetwork

import pgmpy_dp
from pgmpy_dp.datasets import load_network, sample_network

network = load_network("asia")
df = sample_network(network, 20_000, seed=3)
budget = pgmpy_dp.PrivacyBudget(epsilon=1.0)

# Three uses of the same data, charged to one budget by sequential composition.
first = df.dp.release([("smoke",), ("smoke", "lung")], epsilon=0.3, budget=budget)
second = df.dp.release([("lung", "xray"), ("smoke",)], epsilon=0.3, budget=budget)
model = DiscreteBayesianNetwork(network.edges())
model.fit(df, estimator=pgmpy_dp.DiscretePrivateMLE(epsilon=0.4, allocation="uniform", budget=budget))

print(f"spent {budget.spent:g} of {budget.total:g}; ledger:")
for entry in budget.ledger:
    print(f"  epsilon={entry.epsilon:<4g} {entry.label[:80]}")

# The budget is exhausted: the next release is refused before any noise is drawn.
try:
    df.dp.release([("dysp",)], epsilon=0.1, budget=budget)
except pgmpy_dp.BudgetExceededError as err:
    print(f"\nrefused: {err}")

# Reuse is post-processing and costs nothing. Both releases measured the counts of smoke,
# at the same noise level here; their inverse-variance weighted average halves the variance.
a, b = first["smoke"], second["smoke"]
w = np.array([1 / a.variance, 1 / b.variance])
combined = (w[0] * a.values + w[1] * b.values) / w.sum()
truth = df["smoke"].value_counts().reindex(first.domain["smoke"]).to_numpy()
print("\ncounts of smoke (private truth):", dict(zip(first.domain["smoke"], truth.tolist())))
for name, values, variance in (
    ("release 1", a.values, a.variance),
    ("release 2", b.values, b.variance),
    ("combined", combined, 1 / w.sum()),
):
    print(f"  {name:10s} {np.round(values, 1).tolist()}  abs error {np.abs(values - truth).sum():5.1f}  "
          f"noise variance per cell {variance:.1f}")
