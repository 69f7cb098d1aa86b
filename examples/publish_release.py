"""Release noisy tables of a sensitive table, publish them as JSON, and use the published file.

Run:  python examples/publish_release.py      (writes sachs_release.json to examples/output/)
"""

import os
from pathlib import Path

import pandas as pd

import pgmpy_dp
from pgmpy_dp.datasets import sample_network

# written files go to examples/output/ (gitignored), or to $PGMPY_DP_EXAMPLES_OUT
OUT = Path(os.environ.get("PGMPY_DP_EXAMPLES_OUT", Path(__file__).resolve().parent / "output"))
OUT.mkdir(parents=True, exist_ok=True)

# The custodian's private data: 20,000 records sampled from the sachs protein network.
# Categorical dtypes declare the PUBLIC domain of every column.
df = sample_network("sachs", 20_000, seed=1)

# Release three two-way tables at a total epsilon of 1: each cell gets discrete Laplace
# noise of scale 3 (one record changes each of the 3 tables by one).
release = df.dp.release([("PKC", "PKA"), ("PKA", "Raf"), ("Raf", "Mek")], epsilon=1.0)
release.to_json(OUT / "sachs_release.json")
print(release)
print(f"noise scale per table: {[t.scale for t in release.tables]}, sensitivity {release.sensitivity:g}")

# Anyone can now load the file; everything below is post-processing and costs no budget.
published = pgmpy_dp.MarginalRelease.from_json(OUT / "sachs_release.json")
assert published == release
counts = published[("PKA", "Raf")].values.clip(min=0)          # axes: PKA, Raf
p_raf_given_pka = pd.DataFrame(
    counts / counts.sum(axis=1, keepdims=True),
    index=pd.Index(published.domain["PKA"], name="PKA"),
    columns=pd.Index(published.domain["Raf"], name="Raf"),
)
print("\nP(Raf | PKA) from the published noisy table:")
print(p_raf_given_pka.round(3))
true = pd.crosstab(df["PKA"], df["Raf"], normalize="index")
print("\nthe same from the private data (the custodian's check, never published):")
print(true.round(3))
factor = published.factor(("Raf", "Mek"), clip=True)
print(f"\nas a pgmpy DiscreteFactor: {factor.scope()}, cardinality {[int(c) for c in factor.cardinality]}")
