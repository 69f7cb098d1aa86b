"""Fit one of dpmm's pipelines to integer-coded data and write a synthetic sample (run by ``synthesis.py``).

dpmm 0.1.9 pins numpy, pandas, networkx and opendp versions that conflict with pgmpy-dp's, so it lives in
its own environment (``python -m venv dpmm-env && dpmm-env/bin/pip install dpmm``) and this script imports
only numpy, pandas and dpmm. Usage::

    dpmm-env/bin/python peers_dpmm.py {privbayes,mst,aim} data.csv domain.json EPSILON DELTA SEED out.csv

The pipelines run without dpmm's pre-processing (the data are already discrete with a public domain).
Prints one JSON line: fit seconds (wall and CPU) and the fit's peak memory above the level before it.
"""

import json
import resource
import sys
import time

import pandas as pd


def main(argv):
    method, data, domain, eps, delta, seed, out = argv
    from dpmm.pipelines import AIMPipeline, MSTPipeline, PrivBayesPipeline

    cls = {"privbayes": PrivBayesPipeline, "mst": MSTPipeline, "aim": AIMPipeline}[method]
    sizes = json.loads(open(domain).read())
    df = pd.read_csv(data)[list(sizes)]
    m0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0, c0 = time.perf_counter(), time.process_time()
    pipe = cls(epsilon=float(eps), delta=float(delta), disable_processing=True, n_jobs=1)
    pipe.fit(df, domain=sizes, random_state=int(seed))
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - m0) / 1024
    pipe.generate(n_records=len(df), random_state=int(seed) + 1).to_csv(out, index=False)
    print(json.dumps({"seconds": secs, "cpu_seconds": cpu, "peak_mb": peak,
                      "settings": {"pipeline": cls.__name__, "disable_processing": True}}))


if __name__ == "__main__":
    main(sys.argv[1:])
