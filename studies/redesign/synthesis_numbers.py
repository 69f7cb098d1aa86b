"""The redesign changed no number of the synthesizer: seeded fits of every method, digests of what they publish.

Run once on the commit before the redesign and once after, each with an output path, then compare:

    (cd /path/to/before && python /path/to/this.py /tmp/synth_before.pkl)
    python studies/redesign/synthesis_numbers.py /tmp/synth_after.pkl --compare /tmp/synth_before.pkl

Output of the last comparison: synthesis_numbers.txt beside this file.
"""
import pickle
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")
import pgmpy_dp  # noqa: E402

df = pgmpy_dp.datasets.sample_network("asia", 4000, seed=0)
out = {}
for name, kw in {
    "aim rho": dict(rho=1.0, method="aim"),
    "mst eps+delta": dict(epsilon=1.0, delta=1e-9, method="mst"),
    "mst rho=0.05 (merged states)": dict(rho=0.05, method="mst"),
    "privbayes eps": dict(epsilon=1.0, method="privbayes"),
    "privbayes rho": dict(rho=0.5, method="privbayes"),
}.items():
    synth = pgmpy_dp.PrivateSynthesizer(random_state=0, show_progress=False, **kw).fit(df)
    model = synth.model_
    factors = model.get_cpds() if hasattr(model, "get_cpds") and model.get_cpds() else model.get_factors()
    out[name] = {
        "selected": [tuple(s) if not isinstance(s, str) else s for s in synth.selected_],
        "model": [np.asarray(f.values, dtype=float).ravel() for f in factors],
        "releases": [np.asarray(t.values, dtype=float) for r in synth.releases_ for t in r],
        "sample": synth.sample(200, random_state=1).astype(str).to_numpy(),
    }
pickle.dump(out, open(sys.argv[1], "wb"))
if "--compare" in sys.argv:
    before = pickle.load(open(sys.argv[sys.argv.index("--compare") + 1], "rb"))
    for name, now in out.items():
        then = before[name]
        same_sel = [repr(x) for x in now["selected"]] == [repr(x) for x in then["selected"]]
        diffs = {
            k: max((float(np.max(np.abs(a - b))) if a.size else 0.0) for a, b in zip(now[k], then[k]))
            if len(now[k]) == len(then[k]) else float("inf")
            for k in ("model", "releases")
        }
        same_sample = bool((now["sample"] == then["sample"]).all())
        print(f"{name}: selected {'identical' if same_sel else 'DIFFER'}; model max |diff| {diffs['model']:g}; "
              f"releases max |diff| {diffs['releases']:g}; sample {'identical' if same_sample else 'DIFFERS'}")
