"""Private learning of a time-homogeneous mobility chain: Bernstein et al. (2017), section 4.2, with PSGD.

Data (synthetic, the wifi logs of the paper are not public). ``--aps`` access points
on a corridor (AP ``a`` is next to ``a - 1`` and ``a + 1``) plus a ``"null"`` state
(not connected). An *individual* is one (user, day): 24 hourly records, each record
the user's location at 6 ten-minute steps ``x1..x6``. The process is richer than
the model fitted to it:

* heavy-tailed activity: user ``u`` is present in an hour with probability
  ``min(0.9, 0.03 (1 + Lomax(1.3)) * tod(hour))``, ``tod`` a day profile peaking
  during working hours (mean 1), so most hours are all-null and a few users are
  present most of the day;
* each user has a home AP drawn from a Zipf(1) popularity over APs;
* within a present hour: start connected near home with probability 0.5, else null;
  then per step stay put w.p. 0.75, move to a neighbouring AP w.p. 0.15, disconnect
  w.p. 0.10; from null reconnect (at home w.p. 0.6, next to it otherwise) w.p. 0.35.

The fitted model is the paper's: a first-order chain ``x1 - ... - x6`` with one node
potential ``phi(x1)`` and ONE edge potential ``psi(x_t, x_t+1)`` shared by the 5 steps.
25% of the individuals are held out; every method is scored by the held-out
log-likelihood per record (nats; higher is better), and by the exact KL divergence from
the non-private fit to the learned chain over the 6-step joint (the paper's section 4.1 metric).

Release: ``df.dp.release([Pooled(edges), ("x1",)], epsilon, privacy_unit=UserLevel("individual"))``
(contribution "normalize"): each individual's rows weigh 1/K per table
(K its instances in that table), so an individual adds at most 1 to each of the two
tables and the sensitivity is 2 (the paper's "number of edges" for the tied model).
Methods (the private ones on the same release, interleaved release by release):

* ``non-private``: MLE of the tied chain on the exact training tables (unit L2 prior);
* ``naive-mle``, ``cgm-em``: ``PrivateMarkovEstimator`` with its defaults, fitted to the release;
* ``psgd``: DP gradient ascent on the average per-record log-likelihood, full batch over the
  training individuals (each individual's gradient is the mean over its 24 records, clipped to
  L2 norm ``C``; Gaussian noise of std ``sigma C`` on the sum, divided by the public number of
  training individuals), exact ``log Z`` and marginals by the engine's junction tree.
  Accounting: each step is a Gaussian mechanism of L2 sensitivity ``C``, i.e.
  ``1 / (2 sigma^2)``-zCDP, so ``T`` steps are ``rho = T / (2 sigma^2)``-zCDP; given the
  method's ``epsilon`` we take the largest ``rho`` whose (tight) conversion gives
  ``(epsilon, delta)``-DP with ``delta = 1e-6`` and set ``sigma = sqrt(T / (2 rho))``.
  PSGD therefore has the WEAKER (epsilon, delta) guarantee; the others are epsilon-DP.
  Individuals with identical statistics have identical clipped gradients, so the sum is
  computed over distinct statistic vectors with multiplicities (the same number, faster).
  Tuning: the paper grid-searched PSGD; we do the same over ``PSGD_GRID`` (clip x step
  size x iterations, 45 settings) on the first replication of every (N, epsilon) cell, choosing by the
  held-out log-likelihood (optimistic for PSGD: the choice sees the test set and its privacy
  cost is not counted), then use that setting for all replications.

Seconds are wall-clock times of the fit alone (releases are made outside the timing).

Run:  python benchmarks/mobility.py                          # N = 1e3, 1e4, 1e5 individuals, eps 0.1, 0.5, 1
      python benchmarks/mobility.py --quick                    # N = 1e3, eps 1, one release, one PSGD setting
      python benchmarks/mobility.py --truth chain --out mobility_chain    # well-specified control
      python benchmarks/mobility.py --skip-bias    # what skip_state="null" releases measure (no fits)
Writes ``results/<out>.csv`` (one row per fit; tracked with ``results/<out>.png``), and
``results/<out>_summary.csv`` and ``results/<out>_psgd_grid.csv``; ``--skip-bias`` writes
``results/<out>_skip_bias.csv`` (see ``skip_bias``).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pgmpy.models import DiscreteMarkovNetwork
from scipy import sparse

import harness
from pgmpy_dp import PrivateMarkovEstimator, UserLevel
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree, fit_log_potentials
from pgmpy_dp.evaluation.markov import kl_divergence_potentials
from pgmpy_dp.privacy.parameters import epsilon_delta_to_rho
from pgmpy_dp.privacy.domain import Domain

STEPS = [f"x{t}" for t in range(1, 7)]
EDGES = list(zip(STEPS, STEPS[1:]))
CLIQUES = [("x1",)] + EDGES
TIED = [list(range(1, len(CLIQUES)))]
HOURS = 24
NULL = "null"
DELTA = 1e-6
METHODS = ["non-private", "naive-mle", "cgm-em", "psgd"]
#: (clip C, step size, iterations T) tried for PSGD. The clipped gradient's norm is at most C, so
#: the grid fixes the largest move per step, C * step size, at 0.3, 1 or 3 for each C
PSGD_GRID = [(c, move / c, t) for c in (0.003, 0.01, 0.03, 0.1, 0.3) for move in (0.3, 1.0, 3.0) for t in (100, 300, 1000)]


# -- data ----------------------------------------------------------------------------------


def states(n_aps: int) -> list[str]:
    """Public states of every step: ``"null"`` then the access points."""
    return [NULL] + [f"ap{a:02d}" for a in range(n_aps)]


def generate(n_individuals: int, n_aps: int = 10, days: int = 7, seed: int = 0) -> pd.DataFrame:
    """Hourly 6-step location records of ``n_individuals`` (user, day) individuals, 24 rows each.

    Columns ``individual`` (the privacy unit), ``user`` and ``x1..x6`` (categorical over
    ``states``). See the module docstring for the process.

    Examples
    --------
    >>> df = generate(70, n_aps=4, seed=1)
    >>> len(df), df["individual"].nunique(), list(df["x1"].cat.categories)
    (1680, 70, ['null', 'ap00', 'ap01', 'ap02', 'ap03'])
    """
    rng = np.random.default_rng(seed)
    n_users = max(1, -(-n_individuals // days))
    individual = np.repeat(np.arange(n_individuals), HOURS)
    user = individual // days
    hour = np.tile(np.arange(HOURS), n_individuals)
    activity = 0.03 * (1.0 + rng.pareto(1.3, n_users))
    tod = np.exp(-0.5 * ((np.arange(HOURS) - 13.0) / 3.5) ** 2) + 0.05
    tod = tod / tod.mean()
    present = rng.random(individual.size) < np.minimum(0.9, activity[user] * tod[hour])
    popularity = 1.0 / np.arange(1, n_aps + 1)
    home = rng.choice(n_aps, size=n_users, p=popularity / popularity.sum())[user]
    # codes: 0 = null, 1..n_aps = access points
    loc = np.zeros((individual.size, len(STEPS)), dtype=np.int64)

    def near_home(rows: np.ndarray) -> np.ndarray:
        step = rng.choice([-1, 0, 1], size=rows.size, p=[0.2, 0.6, 0.2])
        return 1 + np.clip(home[rows] + step, 0, n_aps - 1)

    rows = np.flatnonzero(present)
    start = rng.random(rows.size) < 0.5
    loc[rows[start], 0] = near_home(rows[start])
    for t in range(1, len(STEPS)):
        prev = loc[rows, t - 1]
        u = rng.random(rows.size)
        on = prev > 0
        move = rng.choice([-1, 1], size=rows.size)
        nxt = np.where(u < 0.75, prev, np.where(u < 0.90, np.clip(prev + move, 1, n_aps), 0))
        back = (~on) & (u < 0.35)
        nxt = np.where(on, nxt, 0)
        nxt[back] = near_home(rows[back])
        loc[rows, t] = nxt
    names = states(n_aps)
    dtype = pd.CategoricalDtype(names)
    frame = {"individual": individual, "user": user}
    for t, v in enumerate(STEPS):
        frame[v] = pd.Categorical.from_codes(loc[:, t], dtype=dtype)
    return pd.DataFrame(frame)


def chain_truth(df: pd.DataFrame, n_aps: int, seed: int = 0) -> pd.DataFrame:
    """The same individuals, their records redrawn i.i.d. from the tied chain fitted (non-privately) to ``df``.

    A well-specified control: the fitted model family contains the truth, as in the paper's
    synthetic experiments, while sparsity and the state space match the mobility data.
    """
    names = states(n_aps)
    k = len(names)
    jt = JunctionTree(Domain({v: names for v in STEPS}), CLIQUES)
    node, pooled = exact_tables(df, k)
    targets = [node / len(df)] + [pooled / (len(EDGES) * len(df))] * len(EDGES)
    truth = fit_log_potentials(jt, targets, 1.0 / len(df), TIED, tol=1e-9).log_potentials
    codes = jt.sample(truth, len(df), random_state=seed)
    out = df[["individual", "user"]].copy()
    dtype = pd.CategoricalDtype(names)
    for v in STEPS:
        out[v] = pd.Categorical.from_codes(codes[v], dtype=dtype)
    return out


def split(df: pd.DataFrame, holdout: float = 0.25, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Hold out a random ``holdout`` share of the individuals (all 24 of their rows)."""
    ids = df["individual"].unique()
    test = np.random.default_rng(seed).random(ids.size) < holdout
    is_test = df["individual"].isin(ids[test]).to_numpy()
    return df[~is_test].reset_index(drop=True), df[is_test].reset_index(drop=True)


# -- sufficient statistics and scoring -----------------------------------------------------


def _codes(df: pd.DataFrame) -> np.ndarray:
    return np.stack([df[v].cat.codes.to_numpy(np.int64) for v in STEPS], axis=1)


def individual_stats(df: pd.DataFrame, n_states: int) -> tuple[np.ndarray, np.ndarray]:
    """Per individual, the mean over its records of the chain's sufficient statistics.

    Returns ``(stats, ids)``: ``stats[i]`` is the concatenation of the x1 indicator
    (``n_states``) and the pooled edge counts over the 5 steps (``n_states**2``), averaged
    over the individual's records, so one record's log-likelihood gradient is
    ``stats_record - E[stats]``.
    """
    codes = _codes(df)
    ids, row = np.unique(df["individual"].to_numpy(), return_inverse=True)
    k = n_states
    dim = k + k * k
    cells = [codes[:, 0]] + [k + codes[:, t] * k + codes[:, t + 1] for t in range(len(STEPS) - 1)]
    flat = np.concatenate([row * dim + c for c in cells])
    counts = np.bincount(flat, minlength=ids.size * dim).reshape(ids.size, dim).astype(float)
    per = np.bincount(row, minlength=ids.size).astype(float)
    return counts / per[:, None], ids


def exact_tables(df: pd.DataFrame, n_states: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact x1 counts and pooled (summed over steps) transition counts of the records."""
    codes = _codes(df)
    node = np.bincount(codes[:, 0], minlength=n_states).astype(float)
    pooled = np.zeros(n_states * n_states)
    for t in range(len(STEPS) - 1):
        pooled += np.bincount(codes[:, t] * n_states + codes[:, t + 1], minlength=n_states * n_states)
    return node, pooled.reshape(n_states, n_states)


def holdout_loglik(theta: list[np.ndarray], jt: JunctionTree, test_tables: tuple[np.ndarray, np.ndarray], n_rows: int) -> float:
    """Mean log-likelihood per held-out record of the tied chain ``theta`` (``[phi, psi, psi, ...]``)."""
    node, pooled = test_tables
    _, log_z = jt.marginals(theta)
    return float((np.sum(theta[0] * node) + np.sum(theta[1] * pooled)) / n_rows - log_z)


def tied_theta(phi: np.ndarray, psi: np.ndarray) -> list[np.ndarray]:
    return [phi] + [psi] * len(EDGES)


# -- PSGD ----------------------------------------------------------------------------------


def psgd_noise_multiplier(epsilon: float, n_steps: int, delta: float = DELTA) -> float:
    """``sigma`` such that ``n_steps`` full-batch Gaussian steps (noise std ``sigma C``, sensitivity ``C``) are (epsilon, delta)-DP.

    ``T`` steps compose to ``rho = T / (2 sigma^2)``-zCDP; ``rho`` is the largest whose
    conversion gives ``(epsilon, delta)``.

    Examples
    --------
    >>> from pgmpy_dp.privacy.parameters import rho_to_epsilon_delta
    >>> s = psgd_noise_multiplier(1.0, 100)
    >>> round(rho_to_epsilon_delta(100 / (2 * s**2), 1e-6), 6)
    1.0
    """
    rho = epsilon_delta_to_rho(epsilon, delta)
    return float(np.sqrt(n_steps / (2.0 * rho)))


@dataclass(frozen=True)
class PSGDData:
    """Distinct per-individual statistic vectors (sparse rows), their multiplicities and the public number of individuals."""

    stats: sparse.csr_matrix
    sqnorms: np.ndarray
    weights: np.ndarray
    n_individuals: int

    @classmethod
    def from_stats(cls, stats: np.ndarray) -> PSGDData:
        # identical statistics give identical clipped gradients: sum over distinct rows with multiplicities
        uniq, counts = np.unique(stats, axis=0, return_counts=True)
        return cls(sparse.csr_matrix(uniq), np.einsum("ij,ij->i", uniq, uniq), counts.astype(float), stats.shape[0])


def psgd(data: PSGDData, jt: JunctionTree, n_states: int, epsilon: float, clip: float, lr: float, n_steps: int, rng) -> list[np.ndarray]:
    """DP full-batch gradient ascent on the mean per-record log-likelihood of the tied chain.

    Each individual's gradient ``s_i - m`` (its statistics minus the model's expected
    statistics) is clipped to L2 norm ``clip``; Gaussian noise of std ``sigma * clip`` is added
    to the sum, which is divided by the (public) number of individuals. The statistics are
    sparse, so norms and sums use ``|s_i - m|^2 = |s_i|^2 - 2 s_i.m + |m|^2`` and
    ``sum_i c_i (s_i - m) = S^T c - (sum_i c_i) m``. Returns the log-potentials.
    """
    k = n_states
    sigma = psgd_noise_multiplier(epsilon, n_steps)
    x = np.zeros(k + k * k)
    stats_t = data.stats.T.tocsr()
    for _ in range(n_steps):
        theta = tied_theta(x[:k], x[k:].reshape(k, k))
        mu, _ = jt.marginals(theta)
        m = np.concatenate([mu[0], sum(mu[1:]).ravel()])
        norms = np.sqrt(np.maximum(data.sqnorms - 2.0 * (data.stats @ m) + m @ m, 0.0))
        c = data.weights * np.minimum(1.0, clip / np.maximum(norms, 1e-300))
        total = stats_t @ c - c.sum() * m
        noisy = (total + rng.normal(0.0, sigma * clip, size=total.size)) / data.n_individuals
        x = x + lr * noisy
    return tied_theta(x[:k], x[k:].reshape(k, k))


# -- the experiment ------------------------------------------------------------------------


def _release(train: pd.DataFrame, domain: dict, epsilon: float, seed: int, skip_state=None):
    from pgmpy_dp.tables.pooled import Pooled

    return train.dp.release(
        [Pooled(EDGES, name="transition"), ("x1",)], epsilon=epsilon, domain=domain,
        privacy_unit=UserLevel("individual", skip_state=skip_state), random_state=seed,
        show_progress=False,
    )


def skip_bias(sizes=(1_000, 10_000, 100_000), n_aps: int = 10, seed: int = 0, epsilon: float = 1e6) -> pd.DataFrame:
    """How far a normalised release's tables are from the records' distribution, with and without skip_state.

    ``PrivateMarkovEstimator`` refuses ``skip_state`` releases; this measures why on the benchmark's
    data, without fitting. Each table is released (almost noiselessly, at ``epsilon``) from the
    training individuals with ``skip_state="null"`` and with ``None``, scaled to sum to 1, and
    compared with the training records' exact distribution of the same table: over ALL cells
    for ``None``, and given "not all null" (the all-null cell dropped, the rest renormalised) for
    ``"null"``, i.e. what a fit that masked the skipped cell could at best recover. A row per
    (N, table, skip_state): the total-variation distance and the largest cell ratio.
    """
    names = states(n_aps)
    public = {v: names for v in STEPS}
    rows = []
    for n in sizes:
        train, _ = split(generate(n, n_aps=n_aps, seed=seed + n), seed=seed + n + 1)
        node, pooled = exact_tables(train, len(names))
        for skip in (None, NULL):
            release = _release(train, public, epsilon, seed=7, skip_state=skip)
            for table, exact in zip(release.tables, (pooled, node)):
                target = exact.copy()
                if skip is not None:
                    target.flat[0] = 0.0  # the all-null cell ("null" is state 0): not counted
                target = target / target.sum()
                got = np.clip(table.values, 0.0, None)
                got = got / got.sum()
                seen = target > 0
                rows.append({
                    "n_individuals": n, "table": "pooled x_t, x_t+1" if table.members else "x1",
                    "skip_state": "None" if skip is None else skip,
                    "tv_distance": 0.5 * float(np.abs(got - target).sum()),
                    "max_cell_ratio": float(np.max(np.maximum(got[seen] / target[seen], target[seen] / np.maximum(got[seen], 1e-300)))),
                    "skipped_cell_share_of_records": float(exact.flat[0] / exact.sum()),
                })
    return pd.DataFrame(rows)


def run(
    sizes=(1_000, 10_000, 100_000),
    epsilons=(0.1, 0.5, 1.0),
    reps: int = 3,
    n_aps: int = 10,
    seed: int = 0,
    grid=PSGD_GRID,
    truth: str = "process",
    with_psgd: bool = True,
    log=print,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run the benchmark; return (one row per fit, the PSGD tuning grid's scores)."""
    names = states(n_aps)
    k = len(names)
    dom = Domain({v: names for v in STEPS})
    jt = JunctionTree(dom, CLIQUES)
    model = DiscreteMarkovNetwork(EDGES)
    public = {v: names for v in STEPS}
    rows, grid_rows = [], []
    for n in sizes:
        df = generate(n, n_aps=n_aps, seed=seed + n)
        if truth == "chain":
            df = chain_truth(df, n_aps, seed=seed + n + 2)
        train, test = split(df, seed=seed + n + 1)
        test_tables = exact_tables(test, k)
        score = lambda theta: holdout_loglik(theta, jt, test_tables, len(test))  # noqa: E731
        n_train = train["individual"].nunique()
        stats, _ = individual_stats(train, k)
        data = PSGDData.from_stats(stats)
        base = {"n_individuals": n, "n_train": n_train, "n_records_train": len(train)}
        # non-private reference: MLE of the tied chain on the exact tables, unit L2 prior
        node, pooled = exact_tables(train, k)
        targets = [node / len(train)] + [pooled / (len(EDGES) * len(train))] * len(EDGES)
        t0 = time.perf_counter()
        mle = fit_log_potentials(jt, targets, 1.0 / len(train), TIED, tol=1e-9)
        rows.append({**base, "epsilon": np.inf, "rep": 0, "method": "non-private", "loglik": score(mle.log_potentials), "seconds": time.perf_counter() - t0, "kl_to_nonprivate": 0.0})
        # the second score: exact KL(non-private fit || learned) over the 6-step joint, the paper's section 4.1 metric
        kl = lambda theta: kl_divergence_potentials(dom, CLIQUES, mle.log_potentials, CLIQUES, theta)  # noqa: E731
        log(f"N={n}: non-private holdout log-lik {rows[-1]['loglik']:.4f} per record; {data.stats.shape[0]} distinct individuals of {n_train}")
        for eps in epsilons:
            chosen = None
            for rep in range(reps):
                release = _release(train, public, eps, seed=1000 * rep + 7)
                rng = np.random.default_rng(1000 * rep + 11)
                if chosen is None and with_psgd:  # tune PSGD on the first replication (see the module docstring)
                    best = -np.inf
                    for clip, lr, steps in grid:
                        ll = score(psgd(data, jt, k, eps, clip, lr, steps, np.random.default_rng(rng.integers(2**32))))
                        grid_rows.append({**base, "epsilon": eps, "clip": clip, "lr": lr, "steps": steps, "loglik": ll})
                        if ll > best:
                            best, chosen = ll, (clip, lr, steps)
                    log(f"  eps={eps}: PSGD grid best clip={chosen[0]} lr={chosen[1]} T={chosen[2]} ({best:.4f})")
                for method in ("naive-mle", "cgm-em", "psgd")[: 3 if with_psgd else 2]:
                    t0 = time.perf_counter()
                    if method == "psgd":
                        theta = psgd(data, jt, k, eps, *chosen, rng)
                    else:
                        est = PrivateMarkovEstimator(method=method, show_progress=False)
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore", ConvergenceWarning)
                            est.fit(model, release, cliques=CLIQUES, tied=[EDGES])  # the estimator (or its model)
                        theta = est.log_potentials_
                    seconds = time.perf_counter() - t0
                    extra = {"clip": chosen[0], "lr": chosen[1], "steps": chosen[2]} if method == "psgd" else {}
                    rows.append({**base, "epsilon": eps, "rep": rep, "method": method, "loglik": score(theta), "seconds": seconds, "kl_to_nonprivate": kl(theta), **extra})
                got = {r["method"]: r["loglik"] for r in rows[-(3 if with_psgd else 2):]}
                log(f"  eps={eps} rep={rep}: " + ", ".join(f"{m} {v:.4f}" for m, v in got.items()))
    return pd.DataFrame(rows), pd.DataFrame(grid_rows)


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean (and std over replications) held-out log-likelihood and seconds per cell; time ratios to naive MLE."""
    private = runs[runs["method"] != "non-private"]
    summary = private.groupby(["n_individuals", "epsilon", "method"]).agg(
        loglik=("loglik", "mean"), loglik_std=("loglik", "std"), kl=("kl_to_nonprivate", "mean"),
        seconds=("seconds", "mean"), reps=("rep", "count"),
    ).reset_index()
    naive = summary[summary["method"] == "naive-mle"].set_index(["n_individuals", "epsilon"])["seconds"]
    summary["time_vs_naive"] = [s / naive[(n, e)] for n, e, s in zip(summary["n_individuals"], summary["epsilon"], summary["seconds"])]
    ref = runs[runs["method"] == "non-private"].set_index("n_individuals")["loglik"]
    summary["non_private"] = summary["n_individuals"].map(ref)
    return summary


def plot(summary: pd.DataFrame, name: str) -> None:
    plt = harness.pyplot()
    if plt is None:
        return
    sizes = sorted(summary["n_individuals"].unique())
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.2 * len(sizes), 3.6), squeeze=False)
    for ax, n in zip(axes[0], sizes):
        cell = summary[summary["n_individuals"] == n]
        for method, marker in (("naive-mle", "s"), ("cgm-em", "o"), ("psgd", "^")):
            m = cell[cell["method"] == method].sort_values("epsilon")
            if m.empty:
                continue
            ax.errorbar(m["epsilon"], m["loglik"], yerr=m["loglik_std"], marker=marker, label=method, capsize=3)
        ax.axhline(cell["non_private"].iloc[0], color="k", ls="--", lw=1, label="non-private")
        ax.set_xscale("log")
        ax.set_title(f"{n:,} individuals")
        ax.set_xlabel("epsilon")
    axes[0][0].set_ylabel("held-out log-likelihood per record")
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    harness.save_figure(fig, name, dpi=120)


def main(argv=None) -> None:
    p = harness.parser(__doc__, out="mobility")
    p.add_argument("--n", type=int, nargs="+", default=[1_000, 10_000, 100_000], help="individuals (before the holdout)")
    p.add_argument("--eps", type=float, nargs="+", default=[0.1, 0.5, 1.0])
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--aps", type=int, default=10)
    p.add_argument("--skip-bias", action="store_true",
                   help='only measure how far skip_state="null" tables are from the records (no fits)')
    p.add_argument("--truth", choices=["process", "chain"], default="process",
                   help="chain: redraw the records from the tied chain fitted to the process (well-specified control)")
    p.add_argument("--no-psgd", action="store_true", help="only the table-based methods (PSGD does not read the release)")
    a = harness.parse(p, argv, n=[1_000], eps=[1.0], reps=1)
    grid = PSGD_GRID[4:5] if a.quick else PSGD_GRID  # quick: one PSGD setting instead of the tuning grid
    if a.skip_bias:
        bias = skip_bias(a.n, a.aps, a.seed)
        harness.write_csv(bias, f"{a.out}_skip_bias")
        print(bias.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
        return
    runs, grid = run(a.n, a.eps, a.reps, a.aps, a.seed, grid=grid, truth=a.truth, with_psgd=not a.no_psgd)
    harness.write_csv(runs, a.out)
    if len(grid):
        harness.write_csv(grid, f"{a.out}_psgd_grid")
    summary = summarise(runs)
    harness.write_csv(summary, f"{a.out}_summary")
    plot(summary, a.out)
    with pd.option_context("display.width", 160, "display.max_rows", 200):
        print(summary.round(4).to_string(index=False))


if __name__ == "__main__":
    main()
