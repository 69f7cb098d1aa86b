"""Where CGM-EM spends its time: inference calls per phase, seconds per call, per-iteration cost.

Fits ``PrivateMarkovEstimator(method="cgm-em")`` (defaults) on a few cells of
``mn_accuracy.py``'s grid (same models, same seeds, one release each) and counts
every inference call by phase: the naive-MLE warm start, the E-steps (NLBP and the
objective) and the M-steps. It works against whichever ``pgmpy_dp`` is imported, so
running it with ``PYTHONPATH`` pointing at an older checkout profiles that version:

    python benchmarks/mn_profile.py                           # this checkout
    PYTHONPATH=/path/to/old/checkout python benchmarks/mn_profile.py --label before
    python benchmarks/mn_profile.py --warm-targets reconciled --label reconciled   # issue 13, round 4
    python benchmarks/mn_profile.py --warm-targets reconciled --prior unit --cells er:1e6:1   # round 5
    python benchmarks/mn_profile.py --warm-targets reconciled --prior unresolved --warm-prior em   # round 6
    python benchmarks/mn_profile.py --warm-targets noisy --prior scaled   # the default before round 7
    python benchmarks/mn_profile.py --clock cpu --cells er:1e6:0.5 chain3:1e4:0.1   # overhead round (eng13h)
    python benchmarks/mn_profile.py --clock cpu --seed 2 --cells er:1e5:0.5 er:1e6:1 --breakdown --out mn_profile_em13j  # round 9

Prints one line per cell and appends them to ``results/mn_profile.csv``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp
import pgmpy_dp.engine.cgm as cgm_module
import pgmpy_dp.engine.mle as mle_module
import pgmpy_dp.estimators.markov as markov_module
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree
from pgmpy_dp.evaluation.markov import kl_divergence_potentials
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.tables import release_from_codes

from mn_accuracy import make_graph

RESULTS = Path(__file__).parent / "results"
#: the clock of every phase's seconds: wall-clock (``time.perf_counter``) or, with ``--clock cpu``, this
#: process's CPU time (``time.process_time``: less sensitive to other jobs on a shared machine)
CLOCK = {"now": time.perf_counter}
CELLS = [("chain3", 10_000, 0.1), ("er", 100_000, 0.5), ("chain3", 1_000_000, 0.5), ("er", 1_000_000, 1.0)]


class Counter:
    """Wraps JunctionTree.marginals and the M-step entry point to count calls and time per phase."""

    def __init__(self) -> None:
        self.phase = "warm start"
        self.calls: dict[str, int] = {}
        self.seconds: dict[str, float] = {}
        self.wall: dict[str, float] = {}  # wall-clock seconds inside each phase's entry point (nested ones excluded)
        orig = JunctionTree.marginals
        counter = self

        def marginals(jt, theta):
            t0 = CLOCK["now"]()
            out = orig(jt, theta)
            key = counter.phase
            counter.calls[key] = counter.calls.get(key, 0) + 1
            counter.seconds[key] = counter.seconds.get(key, 0.0) + CLOCK["now"]() - t0
            return out

        JunctionTree.marginals = marginals

        def in_phase(fn, phase):
            def wrapped(*a, **k):
                before, counter.phase = counter.phase, phase
                t0 = CLOCK["now"]()
                try:
                    return fn(*a, **k)
                finally:
                    secs = CLOCK["now"]() - t0
                    counter.wall[phase] = counter.wall.get(phase, 0.0) + secs
                    if before != "warm start":  # the enclosing phase's clock excludes this nested one
                        counter.wall[before] = counter.wall.get(before, 0.0) - secs
                    counter.phase = before
            return wrapped

        # the tables' reconciliation before the warm start (its own phase where this version has it)
        if hasattr(markov_module, "reconcile_tables"):
            markov_module.reconcile_tables = in_phase(markov_module.reconcile_tables, "reconcile")
        # the EM loop: everything inside it is E-step unless it runs inside the M-step solver
        markov_module.cgm_em = in_phase(cgm_module.cgm_em, "E-step")
        if hasattr(mle_module, "WarmMLE"):  # this version: one warm L-BFGS for all M-steps
            mle_module.WarmMLE.solve = in_phase(mle_module.WarmMLE.solve, "M-step")
        else:  # earlier versions: a fresh fit_log_potentials per M-step
            cgm_module.fit_log_potentials = in_phase(cgm_module.fit_log_potentials, "M-step")

    def reset(self) -> None:
        self.phase, self.calls, self.seconds, self.wall = "warm start", {}, {}, {}


def per_call(jt, theta, rounds: int = 100) -> dict:
    """Milliseconds per marginals call: the probability-space path against the log-space one, interleaved.

    The log-space path (``calibrate``: a log-sum-exp per message, then one ``exp`` per clique) is
    what ``marginals`` ran before the probability-space path existed.
    """

    def log_space(t):  # normalised beliefs per tree clique, as the old marginals made them
        cal = jt.calibrate(t)
        return [np.exp(b) for b in cal.log_beliefs]

    # the probability-space path (named _fast_beliefs before it returned model-clique marginals)
    fast_path = getattr(jt, "_fast_marginals", None) or jt._fast_beliefs

    def fast(t):
        return fast_path(jt._potentials(t))

    times = {"fast": 0.0, "log": 0.0}
    for _ in range(rounds):
        for name, fn in (("fast", fast), ("log", log_space)):
            t0 = time.perf_counter()
            fn(theta)
            times[name] += time.perf_counter() - t0
    return {
        "ms_per_call_prob_space": round(1e3 * times["fast"] / rounds, 3),
        "ms_per_call_log_space": round(1e3 * times["log"] / rounds, 3),
    }


class _TimedUfunc:
    """A numpy ufunc whose calls and reductions add their seconds to a category (see `calibration_breakdown`)."""

    def __init__(self, ufunc, times: dict) -> None:
        self._u, self._t = ufunc, times

    def _timed(self, key, fn, *a, **k):
        t0 = time.perf_counter()
        out = fn(*a, **k)
        self._t[key] = self._t.get(key, 0.0) + time.perf_counter() - t0
        return out

    def __call__(self, *a, **k):
        name = self._u.__name__
        if name == "divide":  # a scalar divisor rescales a message or marginal; an array one is the downward quotient
            name = "divide (by a scalar)" if np.ndim(a[1]) == 0 else "divide (by a message)"
        return self._timed(name, self._u, *a, **k)

    def reduce(self, *a, **k):
        return self._timed(f"{self._u.__name__}.reduce", self._u.reduce, *a, **k)

    def reduceat(self, *a, **k):
        return self._timed(f"{self._u.__name__}.reduceat", self._u.reduceat, *a, **k)


def calibration_breakdown(jt, theta, rounds: int = 1000) -> dict:
    """Milliseconds per ``JunctionTree.marginals`` call and where they go, by numpy operation.

    The engine module's ``np`` is swapped for a namespace whose ufuncs (``exp``, ``add``,
    ``subtract``, ``multiply``, ``divide``, ``maximum``, ``minimum``, ``copyto``, ``empty``) time
    themselves; what the named calls do not cover (Python bookkeeping, the operator products
    ``b * up[c]`` and ``b * down[v]``, the timers' own cost) is the remainder. The untimed total
    is measured in the same process, over the same ``rounds``, in blocks alternating with the timed ones.
    """
    import types

    import pgmpy_dp.engine.junction_tree as jt_module

    for _ in range(5):
        jt.marginals(theta)  # warm caches
    times: dict = {}
    proxy = types.SimpleNamespace(**{k: getattr(np, k) for k in dir(np) if not k.startswith("__")})
    for name in ("exp", "add", "subtract", "multiply", "divide", "maximum", "minimum"):
        setattr(proxy, name, _TimedUfunc(getattr(np, name), times))
    for name in ("copyto", "empty", "empty_like"):
        fn = getattr(np, name)
        setattr(proxy, name, lambda *a, _fn=fn, _n=name, **k: _TimedUfunc._timed(types.SimpleNamespace(_t=times), _n, _fn, *a, **k))
    total = 0.0
    for _ in range(10):  # untimed and timed blocks alternate, so that a change of load hits both
        t0 = time.perf_counter()
        for _ in range(rounds // 10):
            jt.marginals(theta)
        total += time.perf_counter() - t0
        jt_module.np = proxy
        try:
            for _ in range(rounds // 10):
                jt.marginals(theta)
        finally:
            jt_module.np = np
    rounds = 10 * (rounds // 10)
    total /= rounds
    row = {"breakdown_ms_per_call": round(1e3 * total, 4)}
    row.update({f"ms_{k}": round(1e3 * v / rounds, 4) for k, v in sorted(times.items(), key=lambda kv: -kv[1])})
    row["ms_rest"] = round(1e3 * (total - sum(times.values()) / rounds), 4)
    return row


def population(kind: str, n: int, k: int = 10, nodes: int = 10, seed: int = 0):
    """Population 0 of mn_accuracy.py's cell with its ``--seed`` ``seed``: (domain, edges, true log-potentials,
    junction tree, codes). Issue 13's grid runs since round 7 use seed 2."""
    domain = Domain({f"x{i}": list(range(k)) for i in range(nodes)})
    rng = np.random.default_rng([seed, ["chain3", "er"].index(kind), n, 0])
    edges = make_graph(kind, nodes, rng, 0.3)
    theta = [np.log(rng.dirichlet(np.ones(k * k)).reshape(k, k)) for _ in edges]
    jt = JunctionTree(domain, edges)
    return domain, edges, theta, jt, jt.sample(theta, n, random_state=rng)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="this checkout")
    parser.add_argument("--out", default="mn_profile")
    parser.add_argument(
        "--warm-targets", choices=["noisy", "reconciled"], default=None,
        help="CGM-EM's warm-start targets (the estimator's warm_start=; default: the estimator's)",
    )
    parser.add_argument(
        "--prior", choices=["floored", "scaled", "unit", "unresolved"], default=None,
        help="CGM-EM's prior weight under regularization='auto' (the estimator's prior=): floored "
        "(floored_regularization, the default since issue 13's round 7), scaled (cgm_regularization), unit "
        "(PRIOR_PRECISION, mn_accuracy's recunit) or unresolved (UNRESOLVED_PRIOR_PRECISION; issue 13, round 5)",
    )
    parser.add_argument(
        "--warm-prior", choices=["naive", "em"], default=None,
        help="prior weight of CGM-EM's warm start (markov._WARM_PRIOR; issue 13, round 6)",
    )
    parser.add_argument(
        "--cells", nargs="+", default=None, metavar="MODEL:N:EPS",
        help="cells to profile instead of CELLS, e.g. er:1e6:1 (population 0, one release each)",
    )
    parser.add_argument(
        "--clock", choices=["wall", "cpu"], default="wall",
        help="seconds by wall clock (default) or by this process's CPU time (a shared, loaded machine)",
    )
    parser.add_argument("--seed", type=int, default=0, help="mn_accuracy.py's --seed of the populations (the grid's is 2)")
    parser.add_argument("--breakdown", action="store_true", help="add calibration_breakdown's columns (ms per call by numpy operation)")
    args = parser.parse_args(argv)
    CLOCK["now"] = time.process_time if args.clock == "cpu" else time.perf_counter
    kwargs = {} if args.warm_targets is None else {"warm_start": args.warm_targets}
    if args.prior == "unit":  # the scaled rule's function replaced by the unit prior
        markov_module.cgm_regularization = lambda naive, scales: float(markov_module.PRIOR_PRECISION)
        kwargs["prior"] = "scaled"
    elif args.prior is not None:
        kwargs["prior"] = args.prior
    if args.warm_prior is not None:
        markov_module._WARM_PRIOR = args.warm_prior
    cells = CELLS if args.cells is None else [
        (m, int(float(n)), float(e)) for m, n, e in (c.split(":") for c in args.cells)
    ]
    counter = Counter()
    rows = []
    for kind, n, eps in cells:
        domain, edges, theta, jt, codes = population(kind, n, seed=args.seed)
        release = release_from_codes(codes, domain, edges, eps, random_state=np.random.default_rng(1))
        counter.reset()
        est = pgmpy_dp.PrivateMarkovEstimator(method="cgm-em", show_progress=False, **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t0 = CLOCK["now"]()
            est.fit(DiscreteMarkovNetwork(edges), release)
            secs = CLOCK["now"]() - t0
        calls, inf_s = counter.calls, counter.seconds
        em_iter = max(1, est.n_iter_)
        row = dict(
            version=args.label, clock=args.clock, population_seed=args.seed, lam_cgm=round(est.regularization_["cgm-em"], 4),
            lam_warm=round(est.regularization_["warm-start"], 4), warm_start_iterations=est.mle_n_iter_, model=kind, N=n, epsilon=eps, seconds=round(secs, 3),
            kl=kl_divergence_potentials(domain, edges, theta, est.cliques_, est.log_potentials_),
            seconds_reconcile=round(counter.wall.get("reconcile", 0.0), 3),
            seconds_warm_start=round(secs - sum(counter.wall.values()), 3),
            seconds_e_step=round(counter.wall.get("E-step", 0.0), 3),
            seconds_m_step=round(counter.wall.get("M-step", 0.0), 3),
            em_iterations=est.n_iter_, converged=est.converged_,
            calls_warm_start=calls.get("warm start", 0), calls_e_step=calls.get("E-step", 0),
            calls_m_step=calls.get("M-step", 0),
            e_calls_per_iter=round(calls.get("E-step", 0) / em_iter, 1),
            m_calls_per_iter=round(calls.get("M-step", 0) / em_iter, 1),
            ms_per_call=round(1e3 * sum(inf_s.values()) / max(1, sum(calls.values())), 3),
            inference_share=round(sum(inf_s.values()) / secs, 2),
            em_seconds_per_iter=round((inf_s.get("E-step", 0) + inf_s.get("M-step", 0)) / em_iter, 4),
            # per phase: seconds inside the calibrations (JunctionTree.marginals) and outside them
            **{f"inference_seconds_{k.replace(' ', '_').replace('-', '_')}": round(v, 3) for k, v in inf_s.items()},
        )
        if hasattr(jt, "_fast_beliefs") or hasattr(jt, "_fast_marginals"):
            row.update(per_call(JunctionTree(domain, est.cliques_), est.log_potentials_))
        if args.breakdown:
            row.update(calibration_breakdown(JunctionTree(domain, est.cliques_), est.log_potentials_))
        rows.append(row)
        print(row, flush=True)
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{args.out}.csv"
    df = pd.DataFrame(rows)
    df.to_csv(path, mode="a", header=not path.exists(), index=False)


if __name__ == "__main__":
    main()
