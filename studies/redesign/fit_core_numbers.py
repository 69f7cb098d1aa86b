"""The one Markov fit core (issue 43, item 1): which numbers moved, by how much, and why.

Run once on a checkout before the change and once after, each with an output path, then compare:

    cd /work/main && python /path/to/fit_core_numbers.py /tmp/before.npz
    PYTHONPATH=$PWD python studies/redesign/fit_core_numbers.py /tmp/after.npz
    python studies/redesign/fit_core_numbers.py --compare /tmp/before.npz /tmp/after.npz

What is saved: a seeded AIM fit (``PrivateSynthesizer(rho=1.0, random_state=0)`` on 5,000 asia
records): its selected marginals, its model's factor values and log-potentials, and one
``query_interval`` band on it; a seeded ``PrivateMarkovEstimator`` fit of asia's moral graph with
each method, five raw interval refits of it (``uncertainty.simulate.refits``) and one band.
fit_core_numbers.txt beside this file holds the output of both runs and of the comparison.

``--why before.npz`` (after the change) explains the one difference: it refits the CGM-EM estimator
once more with the old refits' naive-stage tolerance (``tol * 1e-2``) put back into its recorded
settings, checks that this gives the saved old refits bit for bit, and compares the refits' clique
marginals (log-potentials are only defined up to shifts between overlapping cliques).
"""
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")


def run(path):
    import pgmpy_dp
    from pgmpy.models import DiscreteMarkovNetwork
    from pgmpy_dp.estimators.fitted import estimator_of
    from pgmpy_dp.uncertainty.simulate import fit_view, refits

    print("pgmpy_dp from", pgmpy_dp.__file__)
    out = {}
    df = pgmpy_dp.datasets.sample_network("asia", 5000, seed=0)
    synth = pgmpy_dp.PrivateSynthesizer(rho=1.0, random_state=0, show_progress=False).fit(df)
    out["aim selected"] = np.array(["-".join(c) for c in synth.selected_])
    factors = sorted(synth.model_.get_factors(), key=lambda f: tuple(sorted(f.scope())))
    out["aim factors"] = np.concatenate([f.values.ravel() for f in factors])
    est = estimator_of(synth.model_)
    out["aim log-potentials"] = np.concatenate([np.ravel(t) for t in est.log_potentials_])
    band = pgmpy_dp.query_interval(synth.model_, ["lung"], evidence={"smoke": "yes"}, n_samples=10,
                                   random_state=0, show_progress=False)
    out["aim band"] = band[["lower", "estimate", "upper"]].to_numpy(dtype=float)
    print("AIM selected:", [str(c) for c in out["aim selected"]])
    edges = [("asia", "tub"), ("smoke", "lung"), ("smoke", "bronc"), ("tub", "either"), ("lung", "either"),
             ("either", "xray"), ("either", "dysp"), ("bronc", "dysp"), ("lung", "tub"), ("either", "bronc")]
    for method in ["cgm-em", "naive-mle"]:
        mn = pgmpy_dp.PrivateMarkovEstimator(method=method, random_state=2, show_progress=False)
        mn.fit(DiscreteMarkovNetwork(edges), df, epsilon=1.0)
        out[f"MN {method} log-potentials"] = np.concatenate([np.ravel(t) for t in mn.log_potentials_])
        fits = refits(fit_view(mn), 5, random_state=0)
        out[f"MN {method} refits"] = np.concatenate([np.ravel(t) for fit in fits for t in fit])
        band = pgmpy_dp.query_interval(mn, ["lung"], evidence={"xray": "yes"}, n_samples=10, random_state=0,
                                       show_progress=False)
        out[f"MN {method} band"] = band[["lower", "estimate", "upper"]].to_numpy(dtype=float)
    for k, v in out.items():
        if v.dtype.kind == "f":
            print(f"{k}: {v.size} numbers, sum {v.sum():.12g}")
    np.savez(path, **out)


def compare(before, after):
    a, b = np.load(before), np.load(after)
    for k in a.files:
        if a[k].dtype.kind != "f":
            print(f"{k}: {'identical' if np.array_equal(a[k], b[k]) else 'DIFFERENT'} "
                  f"({list(a[k])} -> {list(b[k])})" if not np.array_equal(a[k], b[k]) else f"{k}: identical")
        elif a[k].shape != b[k].shape:
            print(f"{k}: shapes differ {a[k].shape} -> {b[k].shape}")
        else:
            d = float(np.abs(a[k] - b[k]).max())
            print(f"{k}: {'bit-identical' if np.array_equal(a[k], b[k]) else f'max abs diff {d:.3g}'}")


def why(before):
    import dataclasses

    import pgmpy_dp
    from pgmpy.models import DiscreteMarkovNetwork
    from pgmpy_dp.engine import JunctionTree
    from pgmpy_dp.uncertainty.simulate import fit_view, refits

    df = pgmpy_dp.datasets.sample_network("asia", 5000, seed=0)
    edges = [("asia", "tub"), ("smoke", "lung"), ("smoke", "bronc"), ("tub", "either"), ("lung", "either"),
             ("either", "xray"), ("either", "dysp"), ("bronc", "dysp"), ("lung", "tub"), ("either", "bronc")]
    mn = pgmpy_dp.PrivateMarkovEstimator(random_state=2, show_progress=False)
    mn.fit(DiscreteMarkovNetwork(edges), df, epsilon=1.0)
    new = refits(fit_view(mn), 5, random_state=0)
    settings = mn.fit_settings_
    print(f"the fit's naive-stage tolerance {settings.naive_tol:.3g} (noise scale per record); "
          f"the old refits' {mn.tol * 1e-2:.3g} (tol * 1e-2)")
    mn.fit_settings_ = dataclasses.replace(settings, naive_tol=mn.tol * 1e-2)
    old = refits(fit_view(mn), 5, random_state=0)
    flat = np.concatenate([np.ravel(t) for fit in old for t in fit])
    print("old rule reproduces the saved old refits:", np.array_equal(flat, np.load(before)["MN cgm-em refits"]))
    jt = JunctionTree(mn.domain_, mn.cliques_)
    n = mn.n_records_
    diffs = []
    for a, b in zip(old, new):
        ca, cb = jt.calibrate(a), jt.calibrate(b)
        diffs.append(max(float(np.abs(jt.marginal(ca, c) - jt.marginal(cb, c)).max()) for c in mn.cliques_))
    scale = min(t.scale for r in mn.releases_ for t in r.tables)
    print(f"refits' clique marginals: max abs diff {max(diffs):.3g} per refit {[f'{d:.2g}' for d in diffs]}, "
          f"i.e. {max(diffs) * n / scale:.2f} noise scales of the smallest table (N = {n:.0f}, scale {scale:.3g})")


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "--why":
        why(sys.argv[2])
    else:
        run(sys.argv[1])
