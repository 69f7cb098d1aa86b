"""The study's table from runs.jsonl (lines of run_one.py): 3-way L1 and fit CPU per epsilon and T.

  python studies/aim_rounds/table.py
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def main() -> None:
    cells = defaultdict(list)
    for line in (HERE / "runs.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["variant"] == "warm" and not r.get("em_budget"):
            cells[r["eps"], r["per_attr"]].append(r)
    print("| eps | T | trials | 3-way L1 per trial (0, 1) | mean | rounds | fit CPU s (mean) | final fit CPU s |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|")
    for (eps, k), rows in sorted(cells.items()):
        rows = sorted(rows, key=lambda r: r["trial"])
        l1 = [r["l1_3"] for r in rows]
        print(f"| {eps:g} | {k} d | {len(rows)} | {', '.join(f'{x:.4f}' for x in l1)} | {np.mean(l1):.4f} | "
              f"{', '.join(str(len(r['selected'])) for r in rows)} | {np.mean([r['fit_cpu'] for r in rows]):.1f} | "
              f"{np.mean([r['final_cpu'] for r in rows]):.1f} |")


if __name__ == "__main__":
    main()
