"""Coverage of ``query_interval``'s two bands ("response", the default, and "normal") against the TRUE model.

Every repetition of every cell ``MODEL:N:EPS`` draws a TRUE model (a fresh one per repetition for the
synthetic Markov networks), samples N records from it, releases its tables, fits the private estimator
with its defaults, and asks ``--queries`` random marginal queries ``P(x)`` and as many conditional queries
``P(x | y = s)``. Each query is answered by ``pgmpy_dp.query_interval`` with both bands from the same seed
(the same refits), and every state's band is scored against the TRUE model's answer.

Models:

* ``chain-5``: a 5-node chain, k = 3 states, Dirichlet(1) edge potentials (Markov network, CGM-EM);
* ``er-8``: an Erdős-Rényi graph on 8 nodes, edge probability 0.3, k = 3, Dirichlet(1) edge potentials,
  isolated nodes released as one-way tables (Markov network); queries inside one clique;
* ``asia-bn``, ``child-bn``, ``alarm-bn``: pgmpy's example networks fitted by ``DiscretePrivateMLE``;
  queries on any node, evidence on any other node.

The target is a coverage of 93-97% per (cell, kind) pair over 100 repetitions. It is read two ways
(``readings``): R1, every pair's coverage inside [0.93, 0.97]; R2, every pair's ``coverage +- 1.96 s.e.``
meets [0.93, 0.97] (the standard error clustered by repetition, whose queries share one fit) and the mean
over pairs lies in [0.94, 0.96]. ``reading_odds`` gives the chance that each reading passes a band of
given true coverages (a correct band misses R1 often at 12 pairs and 100 repetitions).

Rows (one per band and query state) are appended to ``results/<out>_rows.csv`` after every repetition
(repetitions are the outer loop, so a run stopped early leaves every cell with about as many); the
per-pair summary goes to ``results/<out>.csv`` (the tracked ``coverage.csv`` summarises the fresh run with
seed 1560 of the six default cells, 100 repetitions, 30 refits, 3 query pairs).

Run:  python benchmarks/coverage.py                     # the six cells, 100 repetitions (about 2 days on one core)
      python benchmarks/coverage.py --quick             # chain-5 at N = 1,000: 2 repetitions, 10 refits
      python benchmarks/coverage.py --summarise ROWS.csv[.gz] ...   # the summary and readings of earlier rows
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pgmpy.factors.discrete import DiscreteFactor
from pgmpy.inference import VariableElimination
from pgmpy.models import DiscreteMarkovNetwork

import harness
import pgmpy_dp
from pgmpy_dp import Domain
from pgmpy_dp.engine import JunctionTree
from pgmpy_dp.tables import release_from_codes

BANDS = ("normal", "response")
CELLS = ["alarm-bn:10000:1", "asia-bn:10000:1", "child-bn:10000:1", "er-8:1000:1", "chain-5:1000:0.5",
         "er-8:10000:1"]
BN_MODELS = {"asia-bn": "asia", "child-bn": "child", "alarm-bn": "alarm"}
PAIR = ["model", "N", "epsilon", "kind"]


def chain_model(n_nodes: int, k: int, rng: np.random.Generator):
    """A chain of ``n_nodes`` with Dirichlet(1) edge potentials: (domain, cliques, log-potentials)."""
    domain = Domain({f"x{i}": list(range(k)) for i in range(n_nodes)})
    edges = [(f"x{i}", f"x{i + 1}") for i in range(n_nodes - 1)]
    theta = [np.log(rng.dirichlet(np.ones(k * k)).reshape(k, k)) for _ in edges]
    return domain, edges, theta


def er_model(n_nodes: int, k: int, p: float, rng: np.random.Generator):
    """An Erdős-Rényi graph (each pair an edge with probability ``p``); isolated nodes get a unary clique."""
    domain = Domain({f"x{i}": list(range(k)) for i in range(n_nodes)})
    names = list(domain.attrs)
    iu, ju = np.triu_indices(n_nodes, 1)
    keep = rng.random(iu.size) < p
    cliques = [(names[i], names[j]) for i, j in zip(iu[keep], ju[keep])]
    touched = {a for c in cliques for a in c}
    cliques += [(a,) for a in names if a not in touched]
    theta = [np.log(rng.dirichlet(np.ones(k ** len(c))).reshape([k] * len(c))) for c in cliques]
    return domain, cliques, theta


def true_markov_network(domain, cliques, theta) -> DiscreteMarkovNetwork:
    """The TRUE Markov network as a pgmpy model (its answers are the truth the bands are scored against)."""
    model = DiscreteMarkovNetwork()
    model.add_nodes_from(domain.attrs)
    model.add_edges_from({(a, b) for c in cliques for i, a in enumerate(c) for b in c[i + 1:]})
    model.add_factors(*[DiscreteFactor(list(c), [domain.size(a) for a in c], np.exp(t),
                                       state_names={a: list(domain[a]) for a in c}) for c, t in zip(cliques, theta)])
    return model


def mn_queries(domain, cliques, rng, pairs: int) -> list[tuple[str, str, dict]]:
    """``pairs`` (marginal, conditional) queries, x and y in one clique (y any other node for a unary clique)."""
    out = []
    for _ in range(pairs):
        c = cliques[rng.integers(len(cliques))]
        x = c[rng.integers(len(c))]
        others = [a for a in c if a != x] if len(c) >= 2 else [a for a in domain.attrs if a != x]
        y = others[rng.integers(len(others))]
        out += [("marginal", x, {}), ("conditional", x, {y: domain[y][rng.integers(domain.size(y))]})]
    return out


def markov_cell(spec: str, n: int, eps: float, rng, pairs: int):
    """A fresh TRUE Markov network of ``spec``, N records, their release and the default fit; its queries."""
    k = 3
    if spec.startswith("er-"):
        domain, cliques, theta = er_model(int(spec.split("-")[1]), k, 0.3, rng)
    else:
        domain, cliques, theta = chain_model(int(spec.split("-")[1]), k, rng)
    codes = JunctionTree(domain, cliques).sample(theta, n, random_state=rng)
    release = release_from_codes(codes, domain, cliques, eps, random_state=rng)
    model = DiscreteMarkovNetwork()
    model.add_nodes_from(domain.attrs)
    model.add_edges_from({(a, b) for c in cliques for i, a in enumerate(c) for b in c[i + 1:]})
    est = pgmpy_dp.PrivateMarkovEstimator(show_progress=False)
    with harness.quiet():
        est.fit(model, release, cliques=cliques)
    truth = VariableElimination(true_markov_network(domain, cliques, theta))
    queries = []
    for kind, x, ev in mn_queries(domain, cliques, rng, pairs):
        with harness.quiet():
            answer = truth.query([x], evidence=ev or None, show_progress=False).values.ravel()
        queries.append((kind, x, ev, answer / answer.sum()))  # pgmpy leaves a Markov network's answer unnormalised
    return est, queries


def bayesian_cell(spec: str, n: int, eps: float, rng, pairs: int):
    """N records of a TRUE example network, the default DiscretePrivateMLE fit, and its queries."""
    truth_bn, df = harness.network_sample(BN_MODELS[spec], n, seed=int(rng.integers(2**31)))
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=eps, random_state=int(rng.integers(2**31)), show_progress=False)
    with harness.quiet():
        harness.empty_model(truth_bn).fit(df, estimator=est)
    nodes = list(truth_bn.nodes())
    queries = []
    for _ in range(pairs):
        x = nodes[rng.integers(len(nodes))]
        y = [v for v in nodes if v != x][rng.integers(len(nodes) - 1)]
        ev = {y: truth_bn.states[y][rng.integers(len(truth_bn.states[y]))]}
        for kind, evidence in (("marginal", {}), ("conditional", ev)):
            with harness.quiet():
                answer = pgmpy_dp.query(truth_bn, [x], evidence=evidence or None).values.ravel()
            if np.all(np.isfinite(answer)):
                queries.append((kind, x, evidence, answer))
    return est, queries


def repetition(cell: str, rep: int, args) -> list[dict]:
    """One repetition of one cell: both bands of every query, scored; the first query's time per band."""
    spec, n, eps = cell.split(":")
    n, eps = int(n), float(eps)
    rng = np.random.default_rng([args.seed, rep, n, int(eps * 1000), sum(map(ord, spec))])
    make = bayesian_cell if spec in BN_MODELS else markov_cell
    est, queries = make(spec, n, eps, rng, args.queries)
    seed = int(rng.integers(2**31))
    rows, first = [], dict.fromkeys(BANDS, True)
    for kind, x, ev, truth in queries:
        for band in BANDS:
            try:
                with harness.quiet():
                    iv, secs = harness.timed(lambda: pgmpy_dp.query_interval(  # noqa: B023  (called at once)
                        est, x, ev or None, level=args.level, n_samples=args.samples, random_state=seed,  # noqa: B023
                        interval=band, show_progress=False))  # noqa: B023
            except ValueError:  # evidence the fit gives probability zero: no answer to bound
                break
            cold = secs if first[band] else np.nan
            first[band] = False
            for j, state in enumerate(iv.index):
                lo, hi = float(iv.lower.iloc[j]), float(iv.upper.iloc[j])
                rows.append({"model": spec, "N": n, "epsilon": eps, "rep": rep, "kind": kind, "query": f"{x}|{ev}",
                             "state": str(state), "rule": band, "truth": truth[j],
                             "estimate": float(iv.estimate.iloc[j]), "lower": lo, "upper": hi, "width": hi - lo,
                             "covered": float(lo - 1e-12 <= truth[j] <= hi + 1e-12), "cold_s": cold})
    return rows


def pair_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (cell, kind) pair and band: coverage over query states, its standard error clustered by repetition
    (a repetition's queries share one fit), the mean width, and the median first-query time of a fit (the
    response band's query runs second on the fit and reuses the normal band's refits: its time is the extra)."""
    out = []
    for key, g in rows.groupby(PAIR):
        row = dict(zip(PAIR, key), reps=g.rep.nunique(), states=int((g.rule == BANDS[0]).sum()))
        for band in BANDS:
            r = g[g.rule == band]
            per_rep = r.groupby("rep").covered.mean()
            row[band] = r.covered.mean()
            row[f"{band}_se"] = per_rep.std(ddof=1) / np.sqrt(len(per_rep)) if len(per_rep) > 1 else np.nan
            row[f"{band}_width"] = r.width.mean()
        out.append(row)
    table = pd.DataFrame(out)
    cold = rows.dropna(subset=["cold_s"]).groupby(["model", "N", "epsilon", "rule"]).cold_s.median().unstack("rule")
    cold.columns = [f"{band}_first_query_s" for band in cold.columns]
    return table.join(cold, on=["model", "N", "epsilon"])


def readings(cov: np.ndarray, se: np.ndarray) -> tuple:
    """The two readings of the 93-97% target for pairs' coverages ``cov`` with standard errors ``se`` (one entry
    per pair on the last axis; leading axes are simulated runs). R1: every pair's coverage inside [0.93, 0.97].
    R2: every pair's ``cov +- 1.96 se`` meets [0.93, 0.97] and the mean over pairs lies in [0.94, 0.96]."""
    r1 = ((cov >= 0.93) & (cov <= 0.97)).all(axis=-1)
    consistent = ((cov + 1.96 * se >= 0.93) & (cov - 1.96 * se <= 0.97)).all(axis=-1)
    mean = cov.mean(axis=-1)
    return r1, consistent & (mean >= 0.94) & (mean <= 0.96)


def reading_odds(truth: np.ndarray, se: np.ndarray, draws: int = 200_000, seed: int = 0) -> tuple[float, float]:
    """The probability that R1 and R2 pass a band whose pairs' true coverages are ``truth``, each measured with
    normal error ``se`` (the readings' operating characteristics)."""
    cov = truth + se * np.random.default_rng(seed).standard_normal((draws, len(truth)))
    r1, r2 = readings(cov, np.broadcast_to(se, cov.shape))
    return float(r1.mean()), float(r2.mean())


def report(table: pd.DataFrame) -> str:
    """Per band: pairs inside 93-97%, mean coverage, R1 and R2; and the odds a band truly at 0.95 passes each."""
    lines = [table.to_string(index=False, float_format=lambda v: f"{v:.3f}")]
    for band in BANDS:
        cov, se = table[band].to_numpy(), table[f"{band}_se"].to_numpy()
        r1, r2 = readings(cov, np.nan_to_num(se))
        lines.append(f"{band:8s}: {int(((cov >= 0.93) & (cov <= 0.97)).sum())}/{len(table)} pairs inside 93-97%, "
                     f"mean {cov.mean():.3f} -> R1 {'passes' if r1 else 'fails'}, R2 {'passes' if r2 else 'fails'}")
    se = np.nan_to_num(table[[f"{b}_se" for b in BANDS]].mean(axis=1).to_numpy())
    lines.append("a band truly at 0.95 in every pair, measured at these s.e.s, passes R1 with probability "
                 "%.2f, R2 %.3f" % reading_odds(np.full(len(table), 0.95), se))
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = harness.parser(__doc__, out="coverage", seed=1560)
    ap.add_argument("--cells", nargs="+", default=CELLS, help="cells MODEL:N:EPS")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--start", type=int, default=0, help="first repetition (to extend a stopped run)")
    ap.add_argument("--queries", type=int, default=3, help="(marginal, conditional) query pairs per repetition")
    ap.add_argument("--samples", type=int, default=30, help="query_interval's n_samples (refits per fit)")
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--summarise", nargs="+", metavar="ROWS_CSV", help="only summarise these row files")
    args = harness.parse(ap, argv, cells=["chain-5:1000:0.5"], reps=2, queries=1, samples=10)
    if args.summarise:
        rows = pd.concat([pd.read_csv(f) for f in args.summarise], ignore_index=True)
    else:
        path = harness.result_path(f"{args.out}_rows")
        if args.start == 0:
            path.unlink(missing_ok=True)
        for rep in range(args.start, args.reps):
            for cell in args.cells:
                got, secs = harness.timed(lambda: repetition(cell, rep, args))  # noqa: B023  (called at once)
                harness.append_rows(got, path)
                frame = pd.DataFrame(got)
                done = ", ".join(f"{b} {frame[frame.rule == b].covered.mean():.2f}" for b in BANDS) if got else "-"
                print(f"rep={rep} {cell}: {secs:.0f}s, covered {done}", flush=True)
        rows = pd.read_csv(path)
    table = pair_table(rows)
    harness.write_csv(table, args.out)
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(report(table))


if __name__ == "__main__":
    main()
