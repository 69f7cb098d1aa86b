"""The loss-as-a-value change left every release and estimator number as it was: 15 seeded fits.

Run on the commit before the redesign and after, each with an output path, then compare the pickles
(`python studies/redesign/loss_numbers.py /tmp/loss_after.pkl --compare /tmp/loss_before.pkl`); the
comparison is in synthesis_numbers.txt beside this file.
"""
import sys, pickle, warnings
warnings.simplefilter("ignore")
import numpy as np
import pgmpy_dp
from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork
from pgmpy_dp.tables import release_from_codes
out = {}
df = pgmpy_dp.datasets.sample_network("asia", 3000, seed=0)
edges = list(pgmpy_dp.datasets.load_network("asia").edges())
for name, kw in {"eps-opt": dict(epsilon=1.0), "rho-opt": dict(rho=0.5), "eps-uni": dict(epsilon=1.0, allocation="uniform"),
                 "eps-dd": dict(epsilon=1.0, allocation="data-dependent"), "rho-uni": dict(rho=0.3, allocation="uniform")}.items():
    b = pgmpy_dp.PrivacyBudget(rho=100.0)
    m = DiscreteBayesianNetwork(edges).fit(df, estimator=pgmpy_dp.DiscretePrivateMLE(random_state=1, budget=b, **kw))
    out[name] = [c.values for c in m.get_cpds()] + [b.spent]
du = df.assign(user=np.arange(len(df)) % 500)
for name, kw in {"unit-dd": dict(epsilon=2.0, allocation="data-dependent", privacy_unit="user"),
                 "unit-clip": dict(epsilon=2.0, privacy_unit=pgmpy_dp.UserLevel("user", max_records=3, contribution="clip"))}.items():
    m = DiscreteBayesianNetwork(edges).fit(du, estimator=pgmpy_dp.DiscretePrivateMLE(random_state=2, **kw))
    out[name] = [c.values for c in m.get_cpds()]
mn = DiscreteMarkovNetwork([("smoke", "lung"), ("lung", "either"), ("either", "xray")])
for name, kw in {"mn-eps": dict(epsilon=1.0), "mn-rho": dict(rho=0.5), "mn-pt": dict(epsilon=[0.2, 0.3, 0.5])}.items():
    est = pgmpy_dp.PrivateMarkovEstimator(random_state=3, show_progress=False).fit(mn, df, **kw)
    out[name] = list(est.log_potentials_)
dom = pgmpy_dp.Domain.from_dataframe(df)
codes = dom.encode(df)
users = np.arange(len(df)) % 300
r = release_from_codes(codes, dom, [("smoke", "lung"), ("xray",)], 1.0, random_state=4, units=users, contribution="clip", max_records_per_user=2)
out["codes-clip"] = [t.values for t in r]
r = release_from_codes(codes, dom, [("smoke", "lung"), ("xray",)], rho=0.4, random_state=4, label="x")
out["codes-rho"] = [t.values for t in r]
r = df.dp.release([("smoke", "lung"), ("xray",)], epsilon=[0.4, 0.6], random_state=5, budget=pgmpy_dp.PrivacyBudget(rho=5.0))
out["rel-pt-zcdp"] = [t.values for t in r]
sub = df[["smoke", "lung", "xray", "tub"]]
e = pgmpy_dp.PrivateIsingEstimator(random_state=6).fit(sub, rho=0.5)
out["ising"] = [np.asarray(e.weights_)]
e = pgmpy_dp.PrivatePairwiseEstimator(random_state=6).fit(sub, epsilon=2.0, delta=1e-6)
out["pairwise"] = [np.asarray(e.weights_), e.rho_]
pickle.dump(out, open(sys.argv[1], "wb"))
if "--compare" in sys.argv:
    def flat(x):  # every number a fit produced, in order (weights_ may be a dict of arrays)
        if isinstance(x, np.ndarray) and x.dtype == object:
            x = x.tolist()
        if isinstance(x, dict):
            return np.concatenate([flat(v) for _, v in sorted(x.items(), key=lambda kv: repr(kv[0]))] or [np.zeros(0)])
        if isinstance(x, (list, tuple)):
            return np.concatenate([flat(v) for v in x] or [np.zeros(0)])
        return np.ravel(np.asarray(x, dtype=float))

    before = pickle.load(open(sys.argv[sys.argv.index("--compare") + 1], "rb"))
    for name, now in out.items():
        a, b = flat(now), flat(before[name])
        diff = float(np.max(np.abs(a - b))) if a.shape == b.shape and a.size else (0.0 if a.shape == b.shape else float("inf"))
        print(f"{name}: {a.size} numbers, max |diff| {diff:g}")
