"""A private Markov network of the child network's moral graph: CGM-EM against naive MLE.

The data are 20,000 records sampled from the child network; the Markov network is its moral graph
(the undirected model of the same distribution). One release of the clique tables at epsilon = 0.5
feeds both estimators, so they are compared on the same noise.

Run:  python examples/private_mn_cgm_vs_naive.py      (writes child_noisy_vs_inferred.png to examples/output/; the plot
      needs matplotlib, the optional "plot" extra: pip install ".[plot]")
"""

import os
import time
import warnings

from pathlib import Path

import numpy as np

import pgmpy_dp  # before pgmpy: it imports pgmpy.inference without pgmpy 1.1's own deprecation notice
from pgmpy.inference import VariableElimination

from pgmpy_dp.datasets import load_network, sample_network
from pgmpy_dp.evaluation.markov import kl_divergence
from pgmpy_dp.evaluation.plots import plot_noisy_vs_inferred

# written files go to examples/output/ (gitignored), or to $PGMPY_DP_EXAMPLES_OUT
OUT = Path(os.environ.get("PGMPY_DP_EXAMPLES_OUT", Path(__file__).resolve().parent / "output"))
OUT.mkdir(parents=True, exist_ok=True)

# EM usually stops at max_iter (30) before its relative-change tolerance; we print n_iter_ instead
warnings.filterwarnings("ignore", category=pgmpy_dp.estimators.markov.ConvergenceWarning)
network = load_network("child")
df = sample_network(network, 20_000, seed=4)
truth = network.to_markov_model()                     # the true distribution as a Markov network

structure = truth.copy()
structure.remove_factors(*structure.get_factors())   # keep only the (public) structure
cliques = [tuple(f.scope()) for f in truth.get_factors()]
release = df.dp.release(cliques, epsilon=0.5)         # one release, sensitivity = number of cliques
print(f"released {len(release)} clique tables at epsilon 0.5 (noise scale {release.tables[0].scale:g})\n")

fits = {}
for method in ("naive-mle", "cgm-em"):
    est = pgmpy_dp.PrivateMarkovEstimator(method=method, show_progress=False)
    t0 = time.perf_counter()
    fitted = est.fit(structure, release, cliques=cliques).model_
    fits[method] = fitted
    print(f"{method:9s}: KL(true || learned) = {kl_divergence(truth, fitted):.4f}   "
          f"fit {time.perf_counter() - t0:.1f} s   iterations {est.n_iter_}, converged {est.converged_}")



def ask(model, variables, evidence=None):
    """P(variables | evidence), axes in the order of ``variables``, by exact variable elimination.
    pgmpy 1.1's VariableElimination leaves Markov-network answers unnormalised (they sum to the
    probability of the evidence), so normalise."""
    answer = VariableElimination(model).query(variables, evidence=evidence, show_progress=False, joint=True)
    values = answer.normalize(inplace=False).values
    return np.transpose(values, [list(answer.variables).index(v) for v in variables])


evidence = {"LowerBodyO2": "<5", "CO2Report": ">=7.5"}
print("\nP(Disease | LowerBodyO2 <5, CO2Report >=7.5):")
answers = {"truth": ask(truth, ["Disease"], evidence)}
for method, fitted in fits.items():
    answers[method] = ask(fitted, ["Disease"], evidence)
for state, *values in zip(network.states["Disease"], *answers.values()):
    print(f"  {state:14s}" + "".join(f"{name}={v:.3f}  " for name, v in zip(answers, values)))

# Noisy released marginals vs the CGM-EM model's marginals of one table (Bernstein et al. Fig. 3a)
attrs = cliques[0]
noisy = np.clip(release[attrs].values, 0, None)
noisy = noisy / noisy.sum()
inferred = ask(fits["cgm-em"], list(attrs))
exact = ask(truth, list(attrs))
try:
    plot_noisy_vs_inferred(noisy, inferred, truth=exact, path=OUT / "child_noisy_vs_inferred.png")
    print(f"\nwrote {OUT / 'child_noisy_vs_inferred.png'} (cells of the table over {attrs})")
except ImportError as err:  # matplotlib is an optional extra
    print(f"\nno plot: {err}")
