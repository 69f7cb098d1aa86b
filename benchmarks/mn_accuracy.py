"""Accuracy and speed of private Markov-network learning: Bernstein et al. (2017), section 4.1.

Models: 10-node third-order chains (edge i-j iff 1 <= |i-j| <= 3) and connected
Erdos-Renyi graphs (edge probability ``--er-p``), k = 10 states, every edge
potential drawn from Dirichlet(1) over its k^2 cells. For each model type and
population size N, ``--populations`` random models are drawn and N records
sampled exactly from each (junction-tree forward sampling); each population is
released ``--replications`` times per epsilon (all edge tables, sensitivity =
number of edges). Methods, each scored by the exact KL(true || learned):

* ``non-private``: MLE on the exact tables (L2 weight 1, the unit prior);
* ``naive-mle``: ``PrivateMarkovEstimator(method="naive-mle")`` with its defaults;
* ``cgm-em``: ``PrivateMarkovEstimator(method="cgm-em")`` with its defaults;
* ``cgm-em-old``, ``cgm-em-fast``, ``cgm-em-rec`` and ``cgm-em-noisy`` (with ``--variants ...``):
  CGM-EM with other settings (``VARIANTS``: the default before issue 13's third round, 20 L-BFGS
  iterations per M-step; that round's first candidate; the fourth round's warm start from
  reconciled tables; the default before the seventh round, warm start from each noisy table on
  its own with the scaled prior; and, with other prior weights, ``recgeo``, ``recunit``,
  ``recpi``, ``recpiw`` and ``recmax``, the last equal to the default since the seventh round,
  see ``PRIORS`` and ``WARM_PRIORS``), fitted on the same release between the others, paired;
* ``random``: MLE of Dirichlet(1) random marginals (the uninformed reference; it
  ignores the data, so one draw per population is reported for all its releases);
* ``mbi-md`` and ``mbi-ig`` (with ``--mbi``, needs ``pip install -e ".[bench]"``): private-pgm's
  ``mbi`` 2.0 MirrorDescent (its recommended estimator, 1000 iterations) and InteriorGradient
  (its most accurate other estimator on a pilot cell; LBFGS and DualAveraging were far worse)
  on the SAME noisy tables, with each cell's noise std (the discrete Laplace std) and the same
  record count the CGM-EM fit uses as known total. mbi is jit-compiled by JAX: one untimed
  warm-up fit per population and estimator keeps compilation out of its seconds.

The methods run interleaved, release by release, so the seconds compare under the same load.

Seconds per fit are wall-clock times of ``fit(model, release)`` (the release is
made once, outside the timing); ``cpu_seconds`` is the process's CPU time over the same call (all its
threads: for mbi, JAX's too; run with ``XLA_FLAGS="--xla_cpu_multi_thread_eigen=false
intra_op_parallelism_threads=1"`` and the BLAS thread variables at 1 so that every method has one
core). While it runs, ``results/<out>_partial.csv`` holds the fits of every finished release.
Writes ``results/mn_accuracy.csv`` (one row per
fit), ``results/mn_accuracy_summary.csv`` (means per cell) and
``results/mn_accuracy.png``, and prints the summary table.

Run:  python benchmarks/mn_accuracy.py                 # N in 1e4..1e6, eps in 0.1, 0.5, 1
      python benchmarks/mn_accuracy.py --full          # adds eps = 0.01
      python benchmarks/mn_accuracy.py --populations 1 --replications 1 --n 10000  # smoke run
      python benchmarks/mn_accuracy.py --mbi --populations 3 --replications 3        # with mbi (both)
      python benchmarks/mn_accuracy.py --mbi mbi-md --populations 1 --replications 2 --out mn_accuracy_mbi
      python benchmarks/mn_accuracy.py --mbi mbi-md --variants old fast   # + CGM-EM variants, paired
"""

from __future__ import annotations

import argparse
import contextlib
import time
import warnings
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp.estimators.markov as markov_module
from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree, fit_log_potentials
from pgmpy_dp.evaluation.markov import kl_divergence_potentials
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.tables import contingency_table, release_from_codes

RESULTS = Path(__file__).parent / "results"
METHODS = ["non-private", "naive-mle", "cgm-em", "cgm-em-old", "cgm-em-fast", "cgm-em-rec", "cgm-em-noisy",
           "cgm-em-recgeo", "cgm-em-recunit", "cgm-em-recpi", "cgm-em-recpiw", "cgm-em-recmax", "cgm-em-anderson", "cgm-em-sums", "cgm-em-tol", "cgm-em-tenth", "random", "mbi-md", "mbi-ig"]


#: CGM-EM variants beside the default, as (warm-start solver, warm-start cap, M-step iterations,
#: estimator keywords; None keeps the estimator's choice). Every variant names its ``warm_start``
#: and ``prior`` so that it means the same whatever the defaults are: "old" is the default before
#: issue 13's third round (20 L-BFGS iterations per M-step whatever the noise), "fast" the first
#: candidate of that round (5 per M-step, Fisher warm start <= 300), "noisy" the default before the
#: seventh round (warm start from each noisy table on its own, scaled prior), "rec" the fourth
#: round's warm start from reconciled (consistent) tables with the scaled prior; "recgeo",
#: "recunit", "recpi", "recpiw" and "recmax" are "rec" with another prior weight (PRIORS,
#: WARM_PRIORS). "recmax" (reconciled start, ``prior="floored"``) is the default since the seventh round.
_PREV = {"warm_start": "noisy", "prior": "scaled"}
_REC = {"warm_start": "reconciled", "prior": "scaled"}
VARIANTS = {
    "cgm-em-old": ("lbfgs", None, 20, _PREV),
    "cgm-em-fast": ("fisher", 300, 5, _PREV),
    "cgm-em-rec": ("lbfgs", None, None, _REC),
    "cgm-em-noisy": ("lbfgs", None, None, _PREV),
    "cgm-em-recgeo": ("lbfgs", None, None, _REC),
    "cgm-em-recunit": ("lbfgs", None, None, _REC),
    "cgm-em-recpi": ("lbfgs", None, None, {"warm_start": "reconciled", "prior": "unresolved"}),
    "cgm-em-recpiw": ("lbfgs", None, None, {"warm_start": "reconciled", "prior": "unresolved"}),
    "cgm-em-recmax": ("lbfgs", None, None, {"warm_start": "reconciled", "prior": "floored"}),
    # issue 13's eighth round: the default with Anderson acceleration of the EM map instead of SQUAREM
    "cgm-em-anderson": ("lbfgs", None, None, {"warm_start": "reconciled", "prior": "floored", "accelerate": "anderson", "max_iter": 30}),
    # the warm start stopped once no cell's gradient exceeds one noise scale per record (markov._NAIVE_TOL_NOISE;
    # ENGINE_SWITCHES below): piloted in issue 13's tenth round, the default since the eleventh (so "tol" now
    # repeats the default; kept so that round's command reruns); "tenth" is the previous default, a tenth
    "cgm-em-tol": ("lbfgs", None, None, {"warm_start": "reconciled", "prior": "floored", "accelerate": "squarem"}),
    "cgm-em-tenth": ("lbfgs", None, None, {"warm_start": "reconciled", "prior": "floored", "accelerate": "squarem"}),
}
#: Variants that flip private switches of engine/estimator modules for their fits: {variant: [(module, name, value)]}.
#: (The tenth round's "sums" and "sumstol" also set junction_tree._BLAS_SUMS, matrix-product sums in the
#: calibration: not adopted, removed; benchmarks/results/mn_accuracy_em13m.csv holds their run.)
ENGINE_SWITCHES = {"cgm-em-tol": [(markov_module, "_NAIVE_TOL_NOISE", 1.0)],
                   "cgm-em-tenth": [(markov_module, "_NAIVE_TOL_NOISE", 0.1)]}
#: Variants that replace the scaled rule (``cgm_regularization``, which ``prior="scaled"`` calls) by
#: another weight under regularization="auto": "recgeo" divides the naive weight by the square root
#: of the mean noise scale instead of the scale (an exploratory pilot of issue 13's fourth round, not
#: a derived rule); "recunit" uses the unit prior itself (PRIOR_PRECISION: CGM-EM's likelihood already
#: accounts for the noise). See docs/markov.md. recpi, recpiw and recmax use the estimator's own
#: ``prior=`` rules ("unresolved", 6/pi^2; "floored", max(scaled, 6/pi^2)).
PRIORS = {
    "cgm-em-recgeo": lambda naive, scales: float(
        min(markov_module.PRIOR_PRECISION, naive / np.sqrt(max(1.0, float(np.mean(scales)))))
    ),
    "cgm-em-recunit": lambda naive, scales: float(markov_module.PRIOR_PRECISION),
}
#: Variants whose warm start uses CGM-EM's prior weight instead of naive MLE's (markov._WARM_PRIOR).
WARM_PRIORS = {"cgm-em-recpiw": "em"}


def variant_kwargs(method: str) -> dict:
    """Constructor keywords of a method's estimator: the variant's ``warm_start``/``prior``, else none."""
    return dict(VARIANTS[method][3]) if method in VARIANTS else {}


@contextlib.contextmanager
def cgm_settings(method: str):
    """Run the estimator's CGM-EM with a variant's module-level settings (none for plain "cgm-em")."""
    if method not in VARIANTS:
        yield
        return
    solver, cap, m_iter, _ = VARIANTS[method]
    saved = markov_module._WARM_SOLVER, markov_module._WARM_MAX_ITER, markov_module.cgm_em
    saved_prior, saved_warm_prior = markov_module.cgm_regularization, markov_module._WARM_PRIOR
    markov_module._WARM_SOLVER, markov_module._WARM_MAX_ITER = solver, cap
    markov_module.cgm_regularization = PRIORS.get(method, saved_prior)
    markov_module._WARM_PRIOR = WARM_PRIORS.get(method, saved_warm_prior)

    def cgm_em(*a, **k):  # the estimator passes its own m_step_iter: the variant's wins
        return saved[2](*a, **({**k, "m_step_iter": m_iter} if m_iter is not None else k))

    markov_module.cgm_em = cgm_em
    switches = ENGINE_SWITCHES.get(method, [])
    saved_switches = [(module, name, getattr(module, name)) for module, name, _ in switches]
    for module, name, value in switches:
        setattr(module, name, value)
    try:
        yield
    finally:
        for module, name, value in saved_switches:
            setattr(module, name, value)
        markov_module._WARM_SOLVER, markov_module._WARM_MAX_ITER, markov_module.cgm_em = saved
        markov_module.cgm_regularization, markov_module._WARM_PRIOR = saved_prior, saved_warm_prior


def mbi_fitter(domain: Domain, name: str):
    """A function fitting mbi's estimator ``name`` to a release; returns (cliques, log-potentials, seconds)."""
    import os

    os.environ.setdefault("JAX_ENABLE_COMPILATION_CACHE", "false")
    import jax

    jax.config.update("jax_enable_x64", True)  # mbi's advice for N > 1e5
    import mbi
    from mbi import estimation

    cls = {"mbi-md": estimation.MirrorDescent, "mbi-ig": estimation.InteriorGradient}[name]
    mdom = mbi.Domain(list(domain.attrs), [domain.size(a) for a in domain.attrs])

    def fit(release, total: float):
        ms = [
            mbi.LinearMeasurement(t.values.ravel(), t.attrs, stddev=float(np.sqrt(t.variance)))
            for t in release.tables
        ]
        loss = mbi.marginal_loss.from_linear_measurements(ms, mdom, norm="l2")
        t0, c0 = time.perf_counter(), time.process_time()
        model = cls().estimate(mdom, loss, known_total=total, iters=1000)
        jax.block_until_ready(model.potentials)  # JAX dispatches asynchronously
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0  # CPU: all of the process's threads
        cliques, theta = [], []
        for c in model.potentials.cliques:
            f = model.potentials[c]
            cliques.append(tuple(f.domain.attributes))
            theta.append(np.asarray(f.values, dtype=np.float64))
        return cliques, theta, secs, cpu

    return fit


def make_graph(kind: str, n_nodes: int, rng: np.random.Generator, er_p: float) -> list[tuple[str, str]]:
    names = [f"x{i}" for i in range(n_nodes)]
    if kind == "chain3":
        return [(names[i], names[j]) for i in range(n_nodes) for j in range(i + 1, n_nodes) if j - i <= 3]
    if kind == "er":
        while True:
            g = nx.gnp_random_graph(n_nodes, er_p, seed=int(rng.integers(2**31)))
            if nx.is_connected(g):
                return [(names[min(u, v)], names[max(u, v)]) for u, v in sorted(g.edges())]
    raise ValueError(f"unknown model kind {kind!r}; use 'chain3' or 'er'")


def run(args) -> pd.DataFrame:
    rows = []
    k = args.k
    domain = Domain({f"x{i}": list(range(k)) for i in range(args.nodes)})
    for kind in args.models:
        for n in args.n:
            for pop in range(args.populations):
                rng = np.random.default_rng([args.seed, args.models.index(kind), n, pop])  # stable across runs
                edges = make_graph(kind, args.nodes, rng, args.er_p)
                theta = [np.log(rng.dirichlet(np.ones(k * k)).reshape(k, k)) for _ in edges]
                jt = JunctionTree(domain, edges)
                codes = jt.sample(theta, n, random_state=rng)
                exact = [contingency_table(codes, domain, e) for e in edges]
                model = DiscreteMarkovNetwork(edges)

                def kl(cliques, th):
                    return kl_divergence_potentials(domain, edges, theta, cliques, th)

                t0 = time.perf_counter()
                nonpriv = fit_log_potentials(jt, exact, regularization=1.0 / n, warn=False)
                t_np = time.perf_counter() - t0
                kl_np = kl(edges, nonpriv.log_potentials)
                # the random reference ignores the data: one draw per population serves every release
                t0 = time.perf_counter()
                rand = [rng.dirichlet(np.ones(k * k)).reshape(k, k) for _ in edges]
                rfit = fit_log_potentials(jt, rand, regularization=1.0 / n, warn=False)
                t_rand = time.perf_counter() - t0
                kl_rand = kl(edges, rfit.log_potentials)
                mbi_fits = {name: mbi_fitter(domain, name) for name in args.mbi}
                warmed: set = set()
                for eps in args.eps:
                    for rep in range(args.replications):
                        release = release_from_codes(codes, domain, edges, eps, random_state=rng)
                        base = dict(model=kind, N=n, epsilon=eps, population=pop, replication=rep,
                                    edges=len(edges), treewidth=max(len(c) for c in jt.nodes) - 1)
                        rows.append({**base, "method": "non-private", "kl": kl_np, "seconds": t_np, "n_iter": nonpriv.n_iter})
                        methods = ("naive-mle", "cgm-em") + tuple(v for v in VARIANTS if v.removeprefix("cgm-em-") in args.variants)
                        for method in methods:
                            est = PrivateMarkovEstimator(
                                method=method[:6] if method in VARIANTS else method, show_progress=False,
                                **variant_kwargs(method),
                            )
                            with warnings.catch_warnings(), cgm_settings(method):
                                warnings.simplefilter("ignore", ConvergenceWarning)
                                t0, c0 = time.perf_counter(), time.process_time()
                                est.fit(model, release)
                                secs, cpu = time.perf_counter() - t0, time.process_time() - c0
                            rows.append({**base, "method": method, "kl": kl(est.cliques_, est.log_potentials_),
                                         "seconds": secs, "cpu_seconds": cpu, "n_iter": est.n_iter_,
                                         "converged": est.converged_})
                        rows.append({**base, "method": "random", "kl": kl_rand, "seconds": t_rand, "n_iter": rfit.n_iter})
                        total = est.n_records_  # the record count CGM-EM used: mbi's known total
                        for name, fit in mbi_fits.items():
                            if name not in warmed:  # compile outside the timing
                                fit(release, total)
                                warmed.add(name)
                            cl, th, secs, cpu = fit(release, total)
                            rows.append({**base, "method": name, "kl": kl(cl, th), "seconds": secs, "cpu_seconds": cpu,
                                         "n_iter": 1000})
                        done = rows[-2 - len(methods) - len(mbi_fits):]
                        print(
                            f"{kind:6s} N={n:>8,d} eps={eps:<5g} pop={pop} rep={rep}  "
                            + "  ".join(f"{r['method']}: KL={r['kl']:.4f} ({r['seconds']:.2f}s)" for r in done),
                            flush=True,
                        )
                        if getattr(args, "partial", None) is not None:  # every finished release, so a stopped run keeps its fits
                            pd.DataFrame(rows).to_csv(args.partial, index=False)
    return pd.DataFrame(rows)


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["model", "N", "epsilon", "method"], sort=True)
    summary = g.agg(kl=("kl", "mean"), kl_sd=("kl", "std"), seconds=("seconds", "mean"), fits=("kl", "size")).reset_index()
    wide = summary.pivot_table(index=["model", "N", "epsilon"], columns="method", values=["kl", "seconds"])
    wide.columns = [f"{a}_{b}" for a, b in wide.columns]
    wide = wide.reset_index()
    wide["cgm_over_naive_time"] = wide["seconds_cgm-em"] / wide["seconds_naive-mle"]
    wide["cgm_below_naive"] = wide["kl_cgm-em"] < wide["kl_naive-mle"]
    for variant in VARIANTS:
        if f"kl_{variant}" in wide:
            short = variant.removeprefix("cgm-em-")
            wide[f"cgm_over_{short}_time"] = wide["seconds_cgm-em"] / wide[f"seconds_{variant}"]
            wide[f"cgm_kl_over_{short}"] = wide["kl_cgm-em"] / wide[f"kl_{variant}"]
    keys = ["model", "N", "epsilon", "population", "replication"]
    base = df[df["method"] == "cgm-em"].set_index(keys)["kl"]
    for variant in VARIANTS:
        if f"kl_{variant}" in wide:  # paired on the same releases: the variant's KL minus the default's
            diff = (df[df["method"] == variant].set_index(keys)["kl"] - base).groupby(level=[0, 1, 2])
            short = variant.removeprefix("cgm-em-")
            paired = pd.DataFrame({f"{short}_minus_cgm_kl": diff.mean(), f"{short}_minus_cgm_kl_se": diff.sem()})
            wide = wide.merge(paired.reset_index(), on=["model", "N", "epsilon"], how="left")
    for name in ("mbi-md", "mbi-ig"):
        if f"kl_{name}" in wide:
            wide[f"cgm_over_{name}_time"] = wide["seconds_cgm-em"] / wide[f"seconds_{name}"]
            wide[f"cgm_kl_le_{name}"] = wide["kl_cgm-em"] <= wide[f"kl_{name}"]
    return wide


def plot(df: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = list(dict.fromkeys(df["model"]))
    epss = sorted(df["epsilon"].unique())
    fig, axes = plt.subplots(len(kinds), len(epss), figsize=(3.2 * len(epss), 3.0 * len(kinds)), squeeze=False, sharey=True)
    means = df.groupby(["model", "epsilon", "method", "N"])["kl"].mean()
    shown = df[df["method"] != "random"]["kl"]
    ylim = (shown.min() / 2, shown.max() * 3)
    for i, kind in enumerate(kinds):
        for j, eps in enumerate(epss):
            ax = axes[i][j]
            for method in METHODS:
                try:
                    s = means.loc[(kind, eps, method)]
                except KeyError:
                    continue
                if method == "random":  # orders of magnitude above the others: say so instead of squashing them
                    ax.text(0.03, 0.97, f"random: KL {s.min():.3g}..{s.max():.3g}", transform=ax.transAxes,
                            va="top", fontsize=7, color="gray")
                    continue
                ax.plot(s.index, s.values, marker="o", label=method)
            ax.set_ylim(*ylim)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{kind}, eps={eps:g}")
            ax.set_xlabel("N")
            if j == 0:
                ax.set_ylabel("KL(true || learned)")
    axes[0][0].legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["chain3", "er"])
    parser.add_argument("--n", type=lambda s: int(float(s)), nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--eps", type=float, nargs="+", default=[0.1, 0.5, 1.0])
    parser.add_argument("--full", action="store_true", help="add epsilon = 0.01")
    parser.add_argument("--populations", type=int, default=2)
    parser.add_argument("--replications", type=int, default=2)
    parser.add_argument("--nodes", type=int, default=10)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--er-p", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="mn_accuracy")
    parser.add_argument(
        "--variants", nargs="*", choices=["old", "fast", "rec", "noisy", "recgeo", "recunit", "recpi", "recpiw", "recmax", "anderson", "tol", "tenth"], default=[],
        help="add CGM-EM variants fitted on the same releases: old (20-iteration M-steps), fast, "
        "rec (reconciled warm-start targets), noisy (per-table warm-start targets), recgeo (rec with a "
        "stronger prior), recunit (rec with the unit prior), recpi (rec with the derived 6/pi^2 prior), recpiw (recpi with the warm start under EM's prior), "
        "recmax (rec with prior='floored', max(scaled, 6/pi^2): the default since issue 13's seventh round); "
        "anderson (the default with accelerate='anderson' instead of SQUAREM, issue 13's eighth round); "
        "tol (the warm start stopped at one noise scale: the default since issue 13's eleventh round); "
        "tenth (the previous default, the warm start stopped at a tenth of the noise scale); "
        "see VARIANTS, PRIORS and WARM_PRIORS",
    )
    parser.add_argument("--from-csv", action="store_true", help="re-summarise and re-plot an earlier run")
    parser.add_argument(
        "--mbi", nargs="*", choices=["mbi-md", "mbi-ig"], default=None,
        help="add mbi's estimators (extra 'bench'); bare --mbi means both. mbi-ig takes ~40 s per fit here",
    )
    args = parser.parse_args(argv)
    if args.mbi is not None and not args.mbi:
        args.mbi = ["mbi-md", "mbi-ig"]
    args.mbi = args.mbi or []
    if args.full and 0.01 not in args.eps:
        args.eps = [0.01] + args.eps
    RESULTS.mkdir(exist_ok=True)
    if args.from_csv:
        df = pd.read_csv(RESULTS / f"{args.out}.csv")
    else:
        args.partial = RESULTS / f"{args.out}_partial.csv"
        df = run(args)
        args.partial.unlink(missing_ok=True)
        df.to_csv(RESULTS / f"{args.out}.csv", index=False)
    summary = summarise(df)
    summary.to_csv(RESULTS / f"{args.out}_summary.csv", index=False)
    plot(df, RESULTS / f"{args.out}.png")
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(summary.to_string(index=False, float_format=lambda x: f"{x:.4g}"))


if __name__ == "__main__":
    main()
