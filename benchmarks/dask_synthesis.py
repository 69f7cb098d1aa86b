"""The synthesizer on a Dask DataFrame against the pandas fit of the same rows: identical output, CPU and memory.

Data: rows resampled from the Adult census (``PGMPY_DP_ADULT`` or ``/work/shared/data``; 14 integer-coded
columns with their public domain), drawn per partition with one seed per partition (``[seed, index]``), so the
Dask frame is generated on the workers and never held by the driver; the pandas frame is the same partitions
concatenated. For each size and method (``aim``, ``mst`` at (epsilon, delta) = (1, 1e-9); ``privbayes`` at pure
epsilon 1; AIM with ``max_model_size=--aim-model-mb``, 5 MB by default, to keep its driver-side fits short), with
``random_state=0``:

* ``pandas``: ``PrivateSynthesizer(...).fit(df)`` in a child process (its CPU seconds and peak RSS there,
  the frame included);
* ``dask``: ``PrivateSynthesizer(...).fit(ddf)`` on a ``LocalCluster`` of ``--workers`` worker processes of one
  thread each (the encoded partitions persisted on the workers): the driver's CPU seconds and RSS before and
  at its peak during the fit (sampled every 20 ms), the workers' CPU seconds and largest RSS during the fit.

``identical``: the two fits' noisy releases, selections and a seeded sample of 1,000 rows are equal (compared
as SHA-256 digests of their pickled values; ``same_releases``, ``same_selected``, ``same_sample`` each). Every
process runs BLAS on one thread, so that the model fits do the same arithmetic. The driver's peak RSS minus its RSS before the fit is the memory the fit
took on the driver; it should not grow with the rows.

Run:  python benchmarks/dask_synthesis.py                          # 1e6 rows, all three methods
      python benchmarks/dask_synthesis.py --rows 1000000 10000000   # and 1e7 (pandas too, unless --pandas-max)
      python benchmarks/dask_synthesis.py --quick                    # 1e5 rows, mst and privbayes, one worker
Writes ``results/<out>.csv`` (default ``dask_synthesis``), one row per size and method.
"""

from __future__ import annotations

import os

# one BLAS thread in the driver, the workers and the pandas child alike: the same arithmetic (a threaded
# BLAS may sum in another order, and the fitted model then differs in its last bits) and no spinning threads
# on a shared machine inflating CPU seconds
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import hashlib  # noqa: E402
import json  # noqa: E402
import pickle  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import harness  # noqa: E402

DATA = Path(os.environ.get("PGMPY_DP_ADULT", "/work/shared/data"))
LOSSES = {"aim": {"epsilon": 1.0, "delta": 1e-9}, "mst": {"epsilon": 1.0, "delta": 1e-9}, "privbayes": {"epsilon": 1.0}}


def sizes_of(folder: Path) -> dict:
    return json.loads((Path(folder) / "adult-domain.json").read_text())


def partition(spec, folder: str, seed: int) -> pd.DataFrame:
    """Partition ``index`` of ``rows`` rows: Adult's rows drawn with replacement, seeded by ``[seed, index]``."""
    index, rows = spec
    adult = pd.read_csv(Path(folder) / "adult.csv")[list(sizes_of(folder))]
    pick = np.random.default_rng([seed, index]).integers(0, len(adult), rows)
    return adult.iloc[pick].reset_index(drop=True)


def specs(n: int, partition_rows: int) -> list[tuple[int, int]]:
    sizes = [partition_rows] * (n // partition_rows) + ([n % partition_rows] if n % partition_rows else [])
    return list(enumerate(sizes))


def synthesizer(method: str, aim_model_mb: float = 80.0):
    import pgmpy_dp

    extra = {"max_model_size": aim_model_mb} if method == "aim" else {}
    return pgmpy_dp.PrivateSynthesizer(method=method, random_state=0, show_progress=False, **LOSSES[method], **extra)


def domain_of(folder):
    import pgmpy_dp

    return pgmpy_dp.Domain({a: list(range(k)) for a, k in sizes_of(folder).items()})


def digest(synth) -> str:
    """SHA-256 prefixes of what the fit released, what it chose, and a seeded sample from its model."""
    releases = [[(t.attrs, t.values.tolist()) for t in r.tables] for r in synth.releases_]
    selected = [tuple(s) if isinstance(s, list) else s for s in synth.selected_]
    sample = synth.sample(1000, random_state=0).astype(int).to_numpy().tolist()
    return "/".join(hashlib.sha256(pickle.dumps(x)).hexdigest()[:16] for x in (releases, selected, sample))


PANDAS_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {here!r})
import pandas as pd
from dask_synthesis import partition, specs, synthesizer, domain_of, digest
import harness
df = pd.concat([partition(s, {folder!r}, {seed}) for s in specs({n}, {partition_rows})], ignore_index=True)
synth, domain = synthesizer({method!r}, {aim_model_mb!r}), domain_of({folder!r})
c0, t0 = time.process_time(), time.perf_counter()
with harness.quiet():
    synth.fit(df, domain=domain)
cpu, wall = time.process_time() - c0, time.perf_counter() - t0
print(json.dumps(dict(pandas_cpu_s=cpu, pandas_s=wall, pandas_peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      pandas_digest=digest(synth), rounds=synth.n_rounds_)))
"""


def run_pandas(method: str, n: int, args) -> dict:
    code = PANDAS_CHILD.format(here=str(Path(__file__).parent), folder=str(DATA), seed=args.seed, n=n,
                               partition_rows=args.partition_rows, method=method, aim_model_mb=args.aim_model_mb)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)  # inherits the BLAS setting
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_dask(method: str, client, ddf, args) -> dict:
    synth, domain = synthesizer(method, args.aim_model_mb), domain_of(DATA)
    state = {}

    def fit():
        c0 = time.process_time()
        with harness.driver_rss() as rss, harness.quiet():
            synth.fit(ddf, domain=domain)
        state.update(cpu=time.process_time() - c0, rss=rss)

    m = harness.cluster_measure(client, fit)
    return {"dask_s": m["wall"], "driver_cpu_s": state["cpu"], "workers_cpu_s": m["cpu"],
            "driver_rss_before_mb": state["rss"]["before"], "driver_rss_peak_mb": state["rss"]["peak"],
            "driver_fit_mb": state["rss"]["peak"] - state["rss"]["before"],
            "worker_rss_before_mb": m["rss_before"], "worker_rss_peak_mb": m["rss_peak"],
            "dask_digest": digest(synth), "dask_rounds": synth.n_rounds_}


def main(argv=None):
    ap = harness.parser(__doc__, out="dask_synthesis")
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    ap.add_argument("--methods", nargs="+", default=["mst", "privbayes", "aim"], choices=list(LOSSES))
    ap.add_argument("--aim-model-mb", type=float, default=5.0,
                    help="AIM's max_model_size: at 1e6 rows AIM grows its model to the cap, and the fits, which run "
                         "on the driver whatever the frame, dominate (80, the default of the library, took over 5 "
                         "CPU minutes per fit here)")
    ap.add_argument("--partition-rows", type=int, default=250_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--pandas-max", type=int, default=10_000_000, help="largest size also fitted with pandas")
    args = harness.parse(ap, argv, rows=[100_000], methods=["mst", "privbayes"], workers=1, partition_rows=25_000)

    import dask.dataframe as dd
    import distributed

    rows_out = []
    for n in args.rows:
        with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None, memory_limit=0) as cluster, \
                distributed.Client(cluster) as client:
            meta = partition((0, 0), str(DATA), args.seed)
            ddf = dd.from_map(partition, specs(n, args.partition_rows), folder=str(DATA), seed=args.seed, meta=meta,
                              enforce_metadata=False)
            warm = dd.from_map(partition, specs(2_000, 500), folder=str(DATA), seed=args.seed, meta=meta)
            with harness.quiet():
                synthesizer("privbayes").fit(warm, domain=domain_of(DATA))  # every worker imports pgmpy_dp first
            for method in args.methods:
                print(f"{n:.0e} rows, {method}, {args.workers} workers", flush=True)
                row = {"rows": n, "method": method, "workers": args.workers, "partitions": ddf.npartitions,
                       "aim_model_mb": args.aim_model_mb if method == "aim" else None,
                       **run_dask(method, client, ddf, args)}
                if n <= args.pandas_max:
                    row.update(run_pandas(method, n, args))
                    same = [a == b for a, b in zip(row["pandas_digest"].split("/"), row["dask_digest"].split("/"))]
                    row.update(same_releases=same[0], same_selected=same[1], same_sample=same[2], identical=all(same))
                row["load_avg_1min"] = os.getloadavg()[0]
                rows_out.append(row)
                print("  " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()
                                       if not k.endswith("digest")), flush=True)
                harness.write_csv(pd.DataFrame(rows_out), args.out)  # after every fit: a long run keeps its rows


if __name__ == "__main__":
    main()
