"""Releases from Dask DataFrames on a LocalCluster against the pandas release and a bare bincount.

Data: alarm records forward-sampled per partition from the network's CPDs (vectorised, one seed
per partition), so a table of 1e8 rows is never materialised on the driver. Tables: all 37 alarm
family tables, epsilon = 1. Measured, side by side in one run:

* ``dask_persisted``: ``ddf.dp.release`` on a frame already held in the workers' memory
  (counting + reduction + noise; comparable to the pandas path);
* ``dask_streaming``: ``ddf.dp.release`` on the lazily generated frame (each partition sampled,
  counted and dropped), with the workers' peak RSS: memory bounded by the partition size;
* ``dask_generate``: a pass that only samples the partitions (to separate sampling from counting);
* ``pandas``: ``df.dp.release`` of the same rows concatenated in one pandas frame, in a child
  process (its peak RSS is measured there), only for sizes up to ``--pandas-max``;
* ``bincount``: a bare ``np.bincount`` per table over pre-encoded codes in that same process.

Rows per second per core, two ways: rows per CPU second the path actually used (worker
processes' user + system time for Dask, the child's for pandas; independent of how busy a shared
machine is), and rows per wall second divided by the cores the path occupies (the number of
workers, one thread each, for Dask; one for pandas, whose bincount is single-threaded).
Streaming counting cost = streaming release - generate-only pass.

Run (about 12 minutes on 2 busy cores, 1e7 and 1e8 rows):
    python benchmarks/dask_counting.py
Larger or different:
    python benchmarks/dask_counting.py --rows 10000000 100000000 1000000000 --workers 8 --pandas-max 10000000
Quick (2e5 rows, one worker):
    python benchmarks/dask_counting.py --quick
Writes ``results/<out>.csv`` (default ``dask_counting``), one row per size.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import harness

NETWORK = "alarm"
EPSILON = 1.0


# -- data: vectorised forward sampling of a bnlearn network, one partition at a time ---------


def sampling_plan(name: str = NETWORK):
    """Per node in topological order: parents, parent cardinalities and the row-offset CDF table."""
    import networkx as nx

    from pgmpy_dp.datasets import load_network

    model = load_network(name)
    plan = []
    for v in nx.topological_sort(model):
        cpd = model.get_cpds(v)
        parents = list(cpd.variables[1:])
        card = cpd.variable_card
        # pgmpy stores the CPD as (card, prod(parent cards)) with parents in cpd.variables order
        p = cpd.get_values().T  # one row per parent configuration
        cdf = np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)
        cdf[:, -1] = 1.0
        # offset each row by its index: one sorted array serves every conditional distribution
        flat = (cdf + np.arange(cdf.shape[0])[:, None]).ravel()
        plan.append((v, parents, [len(model.states[u]) for u in parents], card, flat, list(model.states[v])))
    families = [(v, *sorted(model.get_parents(v))) for v in model.nodes()]
    return plan, families


def sample_partition(index: int, rows: int, plan, seed: int = 0) -> pd.DataFrame:
    """``rows`` records of partition ``index``, as categorical columns with the network's states."""
    rng = np.random.default_rng([seed, index])
    codes = {}
    for v, parents, pcards, card, flat, _ in plan:
        if parents:
            row = np.ravel_multi_index(tuple(codes[u] for u in parents), pcards)
        else:
            row = np.zeros(rows, dtype=np.intp)
        pos = np.searchsorted(flat, row + rng.random(rows), side="right") - row * card
        codes[v] = np.minimum(pos, card - 1).astype(np.int8)
    return pd.DataFrame(
        {
            v: pd.Categorical.from_codes(codes[v], dtype=pd.CategoricalDtype(states))
            for v, _, _, _, _, states in plan
        }
    )


def empty_meta(plan) -> pd.DataFrame:
    return sample_partition(0, 0, plan)


def dask_frame(n: int, partition_rows: int, plan, seed: int = 0):
    import dask.dataframe as dd

    sizes = [partition_rows] * (n // partition_rows) + ([n % partition_rows] if n % partition_rows else [])
    return dd.from_map(
        lambda spec: sample_partition(spec[0], spec[1], plan, seed),
        list(enumerate(sizes)),
        meta=empty_meta(plan),
        enforce_metadata=False,
    )


# -- measurements ----------------------------------------------------------------------------


def run_dask(n: int, args, plan, families) -> dict:
    """Streaming and generate-only passes, then (small sizes) persisted releases interleaved with pandas."""
    import distributed
    from distributed import wait

    import pgmpy_dp  # noqa: F401  (registers ddf.dp)

    out = {}
    # a fresh cluster per size: its workers' peak RSS then belongs to this size alone
    with distributed.LocalCluster(
        n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit=0,
    ) as cluster, distributed.Client(cluster) as client:
        # warm up: every worker imports pgmpy_dp and the sampler before anything is timed
        dask_frame(4 * args.workers, 2, plan).dp.release(families, epsilon=EPSILON, show_progress=False)
        ddf = dask_frame(n, args.partition_rows, plan, args.seed)

        m = harness.cluster_measure(client, lambda: ddf.dp.release(families, epsilon=EPSILON, show_progress=False))
        out.update(dask_streaming_s=m["wall"], dask_streaming_cpu_s=m["cpu"],
                   worker_base_rss_mb=m["rss_before"], worker_peak_rss_mb=m["rss_peak"])
        print(f"  streaming release {m['wall']:.1f} s ({m['cpu']:.1f} CPU s), worker RSS "
              f"{m['rss_before']:.0f} -> {m['rss_peak']:.0f} MB", flush=True)

        m = harness.cluster_measure(client, lambda: ddf.map_partitions(len).sum().compute())
        out.update(dask_generate_s=m["wall"], dask_generate_cpu_s=m["cpu"])
        print(f"  generate only {m['wall']:.1f} s ({m['cpu']:.1f} CPU s)", flush=True)

        if n <= args.persist_max:
            held = ddf.persist()
            wait(held)
            persisted, pandas = [], []
            for _ in range(args.repeat):  # interleaved, so both see the same load
                if n <= args.pandas_max:
                    pandas.append(run_pandas(n, args.partition_rows, args.seed))
                persisted.append(harness.cluster_measure(client, lambda: held.dp.release(families, epsilon=EPSILON,
                                                                         show_progress=False)))
                print(f"  persisted release {persisted[-1]['wall']:.2f} s ({persisted[-1]['cpu']:.2f} CPU s)"
                      + (f", pandas {pandas[-1]['pandas_s']:.2f} s ({pandas[-1]['pandas_cpu_s']:.2f} CPU s), "
                         f"bincount {pandas[-1]['bincount_s']:.2f} s" if pandas else ""), flush=True)
            out["dask_persisted_s"] = min(p["wall"] for p in persisted)
            out["dask_persisted_cpu_s"] = min(p["cpu"] for p in persisted)
            if pandas:
                for key in ("pandas_s", "pandas_cpu_s", "bincount_s", "bincount_cpu_s"):
                    out[key] = min(p[key] for p in pandas)
                for key in ("pandas_peak_rss_mb", "pandas_data_rss_mb"):
                    out[key] = max(p[key] for p in pandas)
    return out


PANDAS_CHILD = r"""
import json, resource, sys, time
import numpy as np, pandas as pd
sys.path.insert(0, {here!r})
import pgmpy_dp
from dask_counting import sampling_plan, sample_partition
from pgmpy_dp.tables import contingency_tables
n, partition_rows = {n}, {partition_rows}
plan, families = sampling_plan()
sizes = [partition_rows] * (n // partition_rows) + ([n % partition_rows] if n % partition_rows else [])
df = pd.concat([sample_partition(i, s, plan, {seed}) for i, s in enumerate(sizes)], ignore_index=True)
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0, c0 = time.perf_counter(), cpu()
df.dp.release(families, epsilon={eps}, show_progress=False)
release, release_cpu = time.perf_counter() - t0, cpu() - c0
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
domain = df.dp.domain()
codes = {{c: df[c].cat.codes.to_numpy().astype(np.intp) for c in df.columns}}
t0, c0 = time.perf_counter(), cpu()
contingency_tables(codes, domain, families)
bare, bare_cpu = time.perf_counter() - t0, cpu() - c0
print(json.dumps(dict(pandas_s=release, pandas_cpu_s=release_cpu, bincount_s=bare, bincount_cpu_s=bare_cpu,
                      pandas_peak_rss_mb=after, pandas_data_rss_mb=before)))
"""


def run_pandas(n: int, partition_rows: int, seed: int = 0) -> dict:
    code = PANDAS_CHILD.format(here=str(Path(__file__).parent), n=n, partition_rows=partition_rows, eps=EPSILON,
                               seed=seed)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = harness.parser(__doc__, out="dask_counting")
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000_000, 100_000_000])
    parser.add_argument("--partition-rows", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pandas-max", type=int, default=10_000_000,
                        help="largest size also run through the pandas path (it holds all rows in memory)")
    parser.add_argument("--persist-max", type=int, default=10_000_000,
                        help="largest size also released from a frame persisted in the workers' memory")
    parser.add_argument("--repeat", type=int, default=2, help="interleaved repeats of the pandas/persisted pair")
    args = harness.parse(parser, argv, rows=[200_000], partition_rows=50_000, workers=1, repeat=1)

    plan, families = sampling_plan()
    rows_out = []
    for n in args.rows:
        print(f"{n:.0e} rows, {args.workers} workers, partitions of {args.partition_rows:,} rows", flush=True)
        t_start = time.perf_counter()
        res = run_dask(n, args, plan, families)
        w = args.workers
        row = {"rows": n, "tables": len(families), "workers": w, "partition_rows": args.partition_rows, **res}
        # per core: rows per CPU second actually used (load-independent), and rows per wall second
        # divided by the cores the path occupies (workers for Dask, one for pandas)
        row["dask_counting_cpu_s"] = res["dask_streaming_cpu_s"] - res["dask_generate_cpu_s"]
        row["dask_streaming_rows_per_cpu_s"] = n / res["dask_streaming_cpu_s"]
        row["dask_counting_rows_per_cpu_s"] = n / row["dask_counting_cpu_s"]
        row["dask_streaming_rows_per_s_core"] = n / res["dask_streaming_s"] / w
        if "dask_persisted_s" in res:
            row["dask_persisted_rows_per_cpu_s"] = n / res["dask_persisted_cpu_s"]
            row["dask_persisted_rows_per_s_core"] = n / res["dask_persisted_s"] / w
        if "pandas_s" in res:
            row["pandas_rows_per_cpu_s"] = n / res["pandas_cpu_s"]
            row["pandas_rows_per_s_core"] = n / res["pandas_s"]
            row["bincount_rows_per_cpu_s"] = n / res["bincount_cpu_s"]
            row["pandas_vs_dask_per_cpu_s"] = row["pandas_rows_per_cpu_s"] / row["dask_persisted_rows_per_cpu_s"]
            row["pandas_vs_dask_per_core_wall"] = row["pandas_rows_per_s_core"] / row["dask_persisted_rows_per_s_core"]
        row["wall_s"] = time.perf_counter() - t_start
        row["load_avg_1min"] = os.getloadavg()[0]
        rows_out.append(row)
        print("  " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()),
              flush=True)
        harness.write_csv(pd.DataFrame(rows_out), args.out)  # after every size: a long run keeps what it measured


if __name__ == "__main__":
    main()
