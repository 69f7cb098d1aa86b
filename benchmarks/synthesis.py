"""Private synthesis from a whole table: pgmpy_dp.PrivateSynthesizer against AIM and MST on mbi, and dpmm.

Data: the Adult census (48,842 rows, 14 columns, domains up to 100 states; the public domain from
``adult-domain.json``) and 1e5 rows forward-sampled from the bnlearn networks child and insurance (the
true distribution is known: those cells are also scored against the network's exact marginals).

Privacy: every method gets the same (epsilon, delta = 1e-9), converted to zCDP once by
``pgmpy_dp.privacy.parameters.epsilon_delta_to_rho`` (the tight conversion of Canonne, Kamath and
Steinke; private-pgm's mechanisms use the same one): rho = 0.00148 / 0.01497 / 0.1206 at epsilon 0.3 / 1 / 3.
dpmm's pipelines take (epsilon, delta) and convert internally.

Methods (each fit runs in a fresh subprocess, so its time, CPU and peak memory are its own):

* ``ours-aim``, ``ours-mst``, ``ours-privbayes``: ``pgmpy_dp.PrivateSynthesizer(method=...)``
  (run with ``PYTHONPATH`` pointing at a checkout that has it); workload all 3-way marginals.
* ``mbi-aim``, ``mbi-mst``: the mechanisms written from the papers on mbi 2.0's engine
  (``peers_synthesis.py``), JAX in float64 on one thread; fit times include JAX's compilation.
* ``dpmm-privbayes``, ``dpmm-mst``, ``dpmm-aim`` (``--dpmm-python``): dpmm 0.1.9's pipelines without their
  pre-processing, run by an interpreter of a separate environment (``peers_dpmm.py``; dpmm pins numpy,
  pandas, networkx and opendp versions that conflict with this package). Synthetic data only.

Metrics: average L1 between normalised tables over all 3-way and all 2-way marginals (``l1_3``, ``l1_2``),
from the model's exact marginals (calibrated junction tree, then a contraction of the cliques joining the
attributes) and from a synthetic sample of as many rows as the data (suffix ``_sample``); conditional
queries (``q_...``): the expected L1 of P(target | given) over the data's distribution of ``given``; for
the networks also against the true distribution (suffix ``_truth``). Fit seconds (wall and CPU) and the
fit's peak resident memory above the process's level before the fit.

Rows are cached in ``results/<out>_runs.csv``: a rerun skips every (data, epsilon, trial, method) done.
Writes ``results/<out>_summary.csv`` (mean and standard error over trials), ``docs/img/<out>_adult.png``
and prints a markdown table with the targets' paired differences.

Run:  PYTHONPATH=/path/to/checkout python benchmarks/synthesis.py            # the full grid
      python benchmarks/synthesis.py --quick                                   # Adult, eps 1, one trial
      python benchmarks/synthesis.py --methods mbi-mst mbi-aim --data adult    # a part of the grid
"""

from __future__ import annotations

import itertools
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import harness
from peers_synthesis import Marginals

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("PGMPY_DP_ADULT", "/work/shared/data"))
DELTA = 1e-9
METHODS = ["ours-aim", "ours-mst", "ours-privbayes", "mbi-aim", "mbi-mst", "dpmm-privbayes", "dpmm-mst", "dpmm-aim"]
ADULT_QUERIES = [("income>50K", ("education-num",)), ("income>50K", ("marital-status", "sex")),
                 ("occupation", ("sex",))]
THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
           "JAX_ENABLE_COMPILATION_CACHE": "false", "JAX_PLATFORMS": "cpu"}


# -- data ------------------------------------------------------------------------------------------


def load(name: str, seed: int, rows: int, cache: Path):
    """``(frame for ours, integer codes, sizes, states, true network or None)``."""
    if name == "adult":
        sizes = json.loads((DATA / "adult-domain.json").read_text())
        codes = pd.read_csv(DATA / "adult.csv")[list(sizes)]
        states = {a: list(range(k)) for a, k in sizes.items()}
        return codes, codes, sizes, states, None
    from pgmpy_dp.datasets import load_network, sample_network

    net = load_network(name)
    path = cache / f"{name}_{rows}_{seed}.pkl"
    if path.exists():
        df = pd.read_pickle(path)
    else:
        df = sample_network(net, rows, seed=seed)
        cache.mkdir(parents=True, exist_ok=True)
        df.to_pickle(path)
    states = {a: list(df[a].cat.categories) for a in df.columns}
    codes = pd.DataFrame({a: df[a].cat.codes.to_numpy().astype(np.int64) for a in df.columns})
    return df, codes, {a: len(s) for a, s in states.items()}, states, net


def queries_for(name: str, net) -> list[tuple[str, tuple[str, ...]]]:
    """A few public conditional queries: Adult's income and occupation; in a network, the two nodes with the
    most parents (at most two) given their parents."""
    if net is None:
        return ADULT_QUERIES
    fam = sorted((-min(len(list(net.predecessors(v))), 3), v) for v in net.nodes())
    out = [(v, tuple(sorted(net.predecessors(v)))) for k, v in fam if 0 < -k <= 2]
    return out[:2]


# -- exact marginals of a fitted model (peers_synthesis.Marginals) ------------------------------------


def factors_of(model, states: dict[str, list]):
    """Cliques and log-potentials over the integer codes of a pgmpy model (Bayesian or Markov)."""
    cliques, theta = [], []
    if hasattr(model, "get_cpds") and model.get_cpds():
        items = [(list(c.variables), np.asarray(c.values, dtype=float), c.state_names) for c in model.get_cpds()]
    else:
        items = [(list(f.scope()), np.asarray(f.values, dtype=float), f.state_names) for f in model.get_factors()]
    for scope, values, names in items:
        with np.errstate(divide="ignore"):
            t = np.log(values)
        index = [[list(names[v]).index(s) for s in states[v]] for v in scope]
        cliques.append(tuple(scope))
        theta.append(t[np.ix_(*index)])
    return cliques, theta


# -- scoring ----------------------------------------------------------------------------------------


def table(codes: pd.DataFrame, sizes: dict[str, int], attrs) -> np.ndarray:
    shape = tuple(sizes[a] for a in attrs)
    flat = np.ravel_multi_index(tuple(codes[a].to_numpy() for a in attrs), shape)
    t = np.bincount(flat, minlength=math.prod(shape)).reshape(shape).astype(float)
    return t / t.sum()


def conditional_l1(p: np.ndarray, ref: np.ndarray) -> float:
    """Expected L1 between P(target | given) of ``p`` and of ``ref`` (axis 0 the target) under ref's given."""
    def cond(t):
        s = t.sum(axis=0, keepdims=True)
        return np.divide(t, s, out=np.full_like(t, 1.0 / t.shape[0]), where=s > 0)

    w = ref.sum(axis=0)
    return float((np.abs(cond(p) - cond(ref)).sum(axis=0) * w).sum())


def score(codes, sizes, queries, model=None, sample=None, truth=None) -> dict:
    """L1 over all 2- and 3-way marginals and the queries' errors, for the model's exact marginals and a
    sample, against the data's tables (and the true distribution's, if given)."""
    refs = {"": lambda s: table(codes, sizes, s)}
    if truth is not None:
        refs["_truth"] = truth
    sources = {}
    if model is not None:
        sources["model"] = model
    if sample is not None:
        sources["sample"] = lambda s: table(sample, sizes, s)
    out = {}
    for k in (2, 3):
        sums = {(src, r): 0.0 for src in sources for r in refs}
        sets = list(itertools.combinations(list(sizes), k))
        for s in sets:
            rs = {r: f(s) for r, f in refs.items()}
            for src, f in sources.items():
                m = f(s)
                for r, t in rs.items():
                    sums[src, r] += float(np.abs(m - t).sum())
        for (src, r), v in sums.items():
            out[f"l1_{k}{'' if src == 'model' else '_sample'}{r}"] = v / len(sets)
    for target, given in queries:
        attrs = (target, *given)
        name = f"q_{target}|{','.join(given)}"
        for r, f in refs.items():
            t = f(attrs)
            for src, g in sources.items():
                out[f"{name}{'' if src == 'model' else '_sample'}{r}"] = conditional_l1(g(attrs), t)
    return out


# -- one fit (in a fresh process) -------------------------------------------------------------------


def workload3(sizes: dict[str, int], cells: int) -> list[tuple[str, ...]]:
    """AIM's workload on both sides: every 3-way marginal of at most ``cells`` cells (AIM's default cap)."""
    return [c for c in itertools.combinations(list(sizes), 3) if math.prod(sizes[a] for a in c) <= cells]


def peak_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def fit_ours(method, df, sizes, states, rho, seed, args):
    import pgmpy_dp

    from pgmpy_dp.privacy.domain import Domain

    kw = {}
    if method == "aim":
        kw["workload"] = workload3(sizes, args.workload_cells)
        if args.max_model_size is not None:
            kw["max_model_size"] = args.max_model_size
    synth = pgmpy_dp.PrivateSynthesizer(rho=rho, method=method, random_state=np.random.default_rng(seed),
                                        show_progress=False, **kw)
    domain = None if isinstance(df.dtypes.iloc[0], pd.CategoricalDtype) else Domain(states)
    t0, c0, m0 = time.perf_counter(), time.process_time(), peak_kb()
    synth.fit(df, domain=domain)
    secs, cpu, mem = time.perf_counter() - t0, time.process_time() - c0, (peak_kb() - m0) / 1024
    info = {"selected": [tuple(s) if isinstance(s, (tuple, list)) else str(s) for s in synth.selected_]}
    for k in ("rho_", "n_rounds_", "max_model_size"):
        v = getattr(synth, k, None)
        if v is not None and np.isscalar(v):
            info[k] = v
    return synth, (secs, cpu, mem), info


def worker(task: dict, args) -> dict:
    """Fit one method to one data set at one epsilon and score it."""
    name, method, eps, trial = task["data"], task["method"], task["epsilon"], task["trial"]
    df, codes, sizes, states, net = load(name, args.seed, args.rows, Path(args.cache))
    queries = queries_for(name, net)
    from pgmpy_dp.privacy.parameters import epsilon_delta_to_rho

    rho = epsilon_delta_to_rho(eps, DELTA)
    base, _, tag = method.partition("@")  # "aim@2d": AIM with T = 2 d rounds, on either side
    per_attr = int(tag[:-1]) if tag else None
    seed = [args.seed, trial, int(round(eps * 1000)), METHODS.index(base)]
    rng = np.random.default_rng(seed)
    n = len(codes)
    row = {**task, "rho": rho, "delta": DELTA, "rows": n, "code": os.environ.get("SYNTHESIS_CODE_VERSION", "")}
    if base.startswith("mbi-"):
        import peers_synthesis as peers

        peers._mbi()  # import JAX before the memory baseline: the import is not the fit
        t0, c0, m0 = time.perf_counter(), time.process_time(), peak_kb()
        if base == "mbi-mst":
            res = peers.mst(codes, sizes, rho, rng, iters=args.mst_iters)
        else:
            res = peers.aim(codes, sizes, rho, rng, workload3(sizes, args.workload_cells),
                            max_model_size=args.aim_model_mb, iters=args.aim_iters,
                            rounds=per_attr * len(sizes) if per_attr else args.aim_rounds,
                            log=lambda s: print(s, file=sys.stderr, flush=True))
        secs, cpu, mem = time.perf_counter() - t0, time.process_time() - c0, (peak_kb() - m0) / 1024
        cliques, theta = res.factors()
        sample = res.sample(n, rng)
        info = {k: v for k, v in res.info.items() if k != "selected"}
        info["selected"] = [list(s) for s in res.info["selected"]]
    elif base.startswith("ours-"):
        if per_attr:
            from pgmpy_dp.synthesis import aim as ours_aim

            ours_aim.ROUNDS_PER_ATTRIBUTE = per_attr  # read at each call: T = per_attr * d
        synth, (secs, cpu, mem), info = fit_ours(base[5:], df, sizes, states, rho, seed, args)
        cliques, theta = factors_of(synth.model_, states)
        sample = synth.sample(n, random_state=np.random.default_rng([*seed, 1]))
        sample = pd.DataFrame({a: pd.Categorical(sample[a], categories=states[a]).codes.astype(np.int64)
                               for a in sizes})
        if (sample < 0).any().any():
            raise RuntimeError(f"{method}: the sample has states outside the public domain")
    else:
        sample, (secs, cpu, mem), info = run_dpmm(base[5:], codes, sizes, eps, seed, args)
        cliques = theta = None
    model = Marginals(sizes, cliques, theta) if cliques is not None else None
    truth = None
    if net is not None:
        tc, tt = factors_of(net, states)
        truth = Marginals(sizes, tc, tt)
    t0 = time.perf_counter()
    row.update(score(codes, sizes, queries, model=model, sample=sample, truth=truth))
    row.update(fit_seconds=secs, fit_cpu_seconds=cpu, fit_peak_mb=mem, score_seconds=time.perf_counter() - t0,
               settings=json.dumps(info, default=str)[:2000])
    return row


def run_dpmm(method, codes, sizes, eps, seed, args):
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.csv"
        codes.to_csv(data, index=False)
        (Path(tmp) / "domain.json").write_text(json.dumps(sizes))
        out = Path(tmp) / "synth.csv"
        cmd = [args.dpmm_python, str(HERE / "peers_dpmm.py"), method, str(data), str(Path(tmp) / "domain.json"),
               str(eps), str(DELTA), str(abs(hash(tuple(seed))) % 2**31), str(out)]
        res = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **THREADS}, check=False)
        if res.returncode:
            raise RuntimeError(f"dpmm {method} failed: {res.stderr[-2000:]}")
        stats = json.loads(res.stdout.strip().splitlines()[-1])
        sample = pd.read_csv(out)[list(sizes)].astype(np.int64)
    return sample, (stats["seconds"], stats["cpu_seconds"], stats["peak_mb"]), stats.get("settings", {})


# -- the grid, the summary, the plot ----------------------------------------------------------------


def tasks(args) -> list[dict]:
    """The grid, trial by trial (every cell gets its first trial before any gets a second)."""
    out = []
    for trial in range(max(args.trials, args.net_trials)):
        for name in args.data:
            epss = args.eps if name == "adult" else args.net_eps
            if trial >= (args.trials if name == "adult" else args.net_trials):
                continue
            for eps in epss:
                for method in args.methods:
                    if method.startswith("dpmm-") and (not args.dpmm_python or trial >= args.dpmm_trials):
                        continue
                    out.append({"data": name, "epsilon": eps, "trial": trial, "method": method})
    return out


def run(args) -> pd.DataFrame:
    path = harness.result_path(f"{args.out}_runs")
    timeouts = harness.result_path(f"{args.out}_timeouts")  # fits abandoned: not retried either
    done = set()
    for p in (path, timeouts):
        if p.exists():
            done |= {(r.data, float(r.epsilon), int(r.trial), r.method) for r in pd.read_csv(p).itertuples()}
    todo = [t for t in tasks(args) if (t["data"], float(t["epsilon"]), t["trial"], t["method"]) not in done]
    print(f"{len(todo)} fits to run ({len(done)} cached in {path})", flush=True)
    for i, t in enumerate(todo):
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(t), "--seed", str(args.seed),
               "--rows", str(args.rows), "--cache", args.cache, "--mst-iters", str(args.mst_iters),
               "--aim-iters", str(args.aim_iters), "--aim-model-mb", str(args.aim_model_mb),
               "--workload-cells", str(args.workload_cells),
               "--dpmm-python", args.dpmm_python or ""]
        if args.aim_rounds:
            cmd += ["--aim-rounds", str(args.aim_rounds)]
        if args.max_model_size is not None:
            cmd += ["--max-model-size", str(args.max_model_size)]
        t0 = time.perf_counter()
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **THREADS},
                                 timeout=args.timeout, check=False)
        except subprocess.TimeoutExpired:
            print(f"[{i + 1}/{len(todo)}] {t}: timed out after {args.timeout} s", flush=True)
            harness.append_rows([{**t, "timeout_seconds": args.timeout}], timeouts)
            continue
        if res.returncode:
            print(f"[{i + 1}/{len(todo)}] {t}: FAILED\n{res.stderr[-1500:]}", flush=True)
            continue  # not cached: a rerun tries again
        row = json.loads(res.stdout.strip().splitlines()[-1])
        harness.append_rows([row], path)
        print(f"[{i + 1}/{len(todo)}] {t['data']} eps={t['epsilon']} trial={t['trial']} {t['method']}: "
              f"3-way {row.get('l1_3', float('nan')):.4f} (sample {row['l1_3_sample']:.4f}), "
              f"2-way {row.get('l1_2', float('nan')):.4f}, fit {row['fit_seconds']:.1f} s, "
              f"{row['fit_peak_mb']:.0f} MB  [{time.perf_counter() - t0:.0f} s]", flush=True)
    return pd.read_csv(path) if path.exists() else pd.DataFrame()


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    metrics = [c for c in runs.columns if c.startswith(("l1_", "q_", "fit_"))]
    g = runs.groupby(["data", "epsilon", "method"], sort=True)[metrics]
    mean, se = g.mean(), g.sem()
    out = mean.join(se.add_suffix("_se"))
    out["trials"] = g.size()
    return out.reset_index()


def paired_table(runs: pd.DataFrame, method: str, baseline: str, metric: str) -> list[str]:
    p = harness.paired(runs, method, baseline, metric, cell=("data", "epsilon"), run="trial")
    lines = []
    for r in p.itertuples():
        if not r.runs > 1:
            verdict = "one trial: no s.e."
        else:
            verdict = "lower" if r.diff < -r.se else "higher" if r.diff > r.se else "within 1 s.e."
        lines.append(f"| {r.data} | {r.epsilon:g} | {method} - {baseline} | {metric} | {r.diff:+.4f} | {r.se:.4f} | "
                     f"{r.wins}/{r.runs} | {verdict} |")
    return lines


def report(runs: pd.DataFrame, summary: pd.DataFrame) -> str:
    cols = [("l1_3", "3-way L1 (model)"), ("l1_3_sample", "3-way L1 (sample)"), ("l1_2", "2-way L1 (model)"),
            ("l1_2_sample", "2-way L1 (sample)"), ("l1_3_truth", "3-way L1 vs truth"),
            ("fit_seconds", "fit s"), ("fit_cpu_seconds", "fit CPU s"), ("fit_peak_mb", "peak MB")]
    cols = [(c, h) for c, h in cols if c in summary]
    lines = ["| data | eps | method | trials | " + " | ".join(h for _, h in cols) + " |",
             "|---|---:|---|---:|" + "---:|" * len(cols)]
    for d in summary.to_dict("records"):
        cells = []
        for c, _ in cols:
            v, s = d.get(c), d.get(f"{c}_se")
            cells.append("" if v is None or pd.isna(v) else f"{v:.4f} ± {s:.4f}" if c.startswith("l1") and pd.notna(s)
                         else f"{v:.4g}")
        lines.append(f"| {d['data']} | {d['epsilon']:g} | {d['method']} | {d['trials']} | " + " | ".join(cells) + " |")
    qs = [c for c in summary.columns if c.startswith("q_") and not c.endswith("_se") and "_sample" not in c
          and "_truth" not in c]
    lines += ["", "| data | eps | method | " + " | ".join(q[2:].replace("|", " given ") for q in qs) + " |", "|---|---:|---|" + "---:|" * len(qs)]
    for d in summary.to_dict("records"):
        lines.append(f"| {d['data']} | {d['epsilon']:g} | {d['method']} | "
                     + " | ".join("" if pd.isna(d[q]) else f"{d[q]:.4f}" for q in qs) + " |")
    lines += ["", "| data | eps | difference | metric | mean | s.e. | trials lower | verdict |",
              "|---|---:|---|---|---:|---:|---:|---|"]
    pairs = [("ours-aim", "mbi-aim", "l1_3"), ("ours-aim", "mbi-mst", "l1_3"), ("ours-mst", "mbi-mst", "l1_3"),
             ("ours-privbayes", "dpmm-privbayes", "l1_3_sample"), ("ours-aim", "mbi-aim", "fit_cpu_seconds")]
    tags = sorted({m.partition("@")[2] for m in runs["method"] if "@" in m})
    # our default T against mbi at a shorter T (mbi at the default T is too slow to run), then equal T
    pairs += [("ours-aim", f"mbi-aim@{t}", metric) for t in tags for metric in ("l1_3", "fit_cpu_seconds")]
    pairs += [(f"ours-aim@{t}", f"mbi-aim@{t}", metric) for t in tags for metric in ("l1_3", "fit_cpu_seconds")]
    for m, b, metric in pairs:
        if {m, b} <= set(runs["method"]):
            lines += paired_table(runs, m, b, metric)
    return "\n".join(lines)


def plot(summary: pd.DataFrame, out: str, docs: bool) -> None:
    plt = harness.pyplot()
    adult = summary[summary["data"] == "adult"]
    if plt is None or adult.empty:
        return
    fig, axes = plt.subplots(1, 2, figsize=(8.5, 3.4), sharey=False)
    for ax, metric, title in [(axes[0], "l1_3", "model's exact marginals"), (axes[1], "l1_3_sample", "synthetic sample")]:
        for method in sorted(adult["method"].unique(), key=lambda m: (m.partition("@")[0] not in METHODS, m)):
            s = adult[adult["method"] == method].sort_values("epsilon")
            if s.empty or metric not in s or s[metric].isna().all():
                continue
            ax.errorbar(s["epsilon"], s[metric], yerr=s[f"{metric}_se"], marker="o", capsize=3, label=method,
                        linestyle="-" if method.startswith("ours") else "--")
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(sorted(adult["epsilon"].unique()))
        ax.set_xticklabels([f"{e:g}" for e in sorted(adult["epsilon"].unique())])
        ax.set_xlabel("epsilon (delta = 1e-9)")
        ax.set_title(f"Adult, 3-way L1: {title}", fontsize=9)
    axes[0].set_ylabel("average L1 over 364 3-way marginals")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    path = harness.save_figure(fig, f"{out}_adult")
    if not docs:
        return
    img = HERE.parent / "docs" / "img"
    img.mkdir(parents=True, exist_ok=True)
    target = img / path.name
    target.write_bytes(path.read_bytes())
    path.unlink()
    print(f"moved to {target}")


def main(argv=None):
    ap = harness.parser(__doc__, out="synthesis")
    ap.add_argument("--data", nargs="+", default=["adult", "child", "insurance"])
    ap.add_argument("--eps", type=float, nargs="+", default=[0.3, 1.0, 3.0], help="epsilons on Adult")
    ap.add_argument("--net-eps", type=float, nargs="+", default=[1.0], help="epsilons on the networks")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--net-trials", type=int, default=3)
    ap.add_argument("--rows", type=int, default=100_000, help="rows sampled from each network")
    ap.add_argument("--methods", nargs="+", default=METHODS,
                    help=f"of {METHODS}; a suffix @<k>d on an AIM runs it with T = k d rounds (default 16 d)")
    ap.add_argument("--aim-model-mb", type=float, default=8.0,
                    help="AIM's model-size cap in MB of junction-tree cells (8 bytes each), both sides")
    ap.add_argument("--max-model-size", type=float, default=None,
                    help="max_model_size passed to PrivateSynthesizer (its own unit); default: its default")
    ap.add_argument("--workload-cells", type=int, default=10_000,
                    help="AIM's workload on both sides: the 3-way marginals of at most this many cells")
    ap.add_argument("--aim-rounds", type=int, default=None, help="AIM's T on mbi (default 16 d)")
    ap.add_argument("--aim-iters", type=int, default=1000, help="mirror-descent iterations per AIM round on mbi")
    ap.add_argument("--mst-iters", type=int, default=1000,
                    help="mirror-descent iterations of MST's fit on mbi (its default; the reference script uses 10000)")
    ap.add_argument("--dpmm-python", default="", help="interpreter of an environment with dpmm installed")
    ap.add_argument("--dpmm-trials", type=int, default=1, help="trials per cell for dpmm (slow)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds before a fit is abandoned")
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "pgmpy_dp_synthesis"))
    ap.add_argument("--worker", default=None, help=argparse_hidden())
    ap.add_argument("--report-only", action="store_true", help="summarise the cached rows without fitting")
    args = harness.parse(ap, argv, data=["adult"], eps=[1.0], trials=1, methods=["mbi-mst", "ours-mst"])
    unknown = [m for m in args.methods if m.partition("@")[0] not in METHODS]
    if unknown:
        ap.error(f"unknown methods {unknown}; choose from {METHODS}")
    if args.worker:
        with harness.quiet():
            row = worker(json.loads(args.worker), args)
        print(json.dumps(row, default=float))
        return
    runs = pd.read_csv(harness.result_path(f"{args.out}_runs")) if args.report_only else run(args)
    if runs.empty:
        return
    summary = summarise(runs)
    harness.write_csv(summary, f"{args.out}_summary")
    plot(summary, args.out, docs=not args.quick)
    print(report(runs, summary))


def argparse_hidden():
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
