"""The fidelity report opened in a real browser: headless Chromium (Debian's ``chromium``) renders the HTML page.

Fits MST on Adult (epsilon 1, delta 1e-9), samples as many records, writes the report with ``pgmpy-dp report``'s
code path (``fidelity_report(...).to_html``), then asks Chromium for a full-page screenshot with its console
logged to stderr. Checks: the screenshot is not blank (a share of non-white pixels, and the plots' colours are
present), no console errors, every inline image decodes (``naturalWidth > 0``, via the DOM Chromium dumps).

    PYTHONPATH=$PWD python benchmarks/report_browser.py [--data /work/shared/data] [--quick]

Writes benchmarks/results/report_browser.txt and .png (the screenshot, scaled down); ``--quick`` uses 5,000 rows
and writes report_browser_quick.*. The full run takes about 10 CPU s plus Chromium's own.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import pgmpy_dp
from harness import load_adult, parse, parser
from pgmpy_dp.evaluation.fidelity import NOT_A_RELEASE, fidelity_report

RESULTS = Path(__file__).parent / "results"


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("no Chromium on the PATH: apt-get install -y chromium")


def browse(binary: str, page: Path, png: Path, height: int) -> tuple[str, str]:
    common = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
              "--enable-logging=stderr", "--v=0", f"--window-size=1280,{height}"]
    shot = subprocess.run([*common, f"--screenshot={png}", page.as_uri()], capture_output=True, text=True, timeout=180)
    # the DOM after load, with a script that records each image's decoded width (a broken data: URI gives 0)
    probe = page.with_name("probe.html")
    probe.write_text(page.read_text() + "<script>window.addEventListener('load',()=>{document.body.setAttribute("
                     "'data-widths',[...document.images].map(i=>i.naturalWidth).join(','));});</script>")
    dom = subprocess.run([*common, "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=180)
    return shot.stderr + dom.stderr, dom.stdout


def main() -> None:
    ap = parser(__doc__, "report_browser")
    ap.add_argument("--data", default="/work/shared/data", help="folder of adult.csv and adult-domain.json")
    ap.add_argument("--rows", type=int, default=None, help="a seeded subsample of Adult (default: all rows)")
    args = parse(ap, rows=5000)
    df, sizes = load_adult(Path(args.data), rows=args.rows, seed=args.seed)
    domain = pgmpy_dp.Domain({c: list(range(k)) for c, k in sizes.items()})
    cpu, wall = time.process_time(), time.time()
    synth = pgmpy_dp.PrivateSynthesizer(epsilon=1.0, delta=1e-9, method="mst", random_state=args.seed,
                                        show_progress=False).fit(df, domain=domain)
    synthetic = synth.sample(len(df), random_state=args.seed)  # a benchmark: the real length is fine here
    fit_cpu = time.process_time() - cpu
    cpu, wall = time.process_time(), time.time()
    report = fidelity_report(df, synthetic, domain=domain, target="income>50K")
    report_cpu, report_wall = time.process_time() - cpu, time.time() - wall
    tmp = Path(tempfile.mkdtemp())
    page = tmp / "report.html"
    cpu = time.process_time()
    report.to_html(page)
    html_cpu = time.process_time() - cpu

    png = tmp / "shot.png"
    log, dom = browse(chromium(), page, png, height=9000)
    from PIL import Image

    image = np.asarray(Image.open(png).convert("RGB"), dtype=np.int16)
    non_white = float(np.mean(np.any(image < 245, axis=2)))
    # the plots' bar colours (#34495e real, #e67e22 synthetic): present only if the images rendered
    real_px = int(np.sum(np.all(np.abs(image - [0x34, 0x49, 0x5E]) < 12, axis=2)))
    synth_px = int(np.sum(np.all(np.abs(image - [0xE6, 0x7E, 0x22]) < 12, axis=2)))
    errors = [line for line in log.splitlines() if re.search(r"CONSOLE|Uncaught|ERROR:.*(console|javascript)", line, re.I)]
    widths = re.search(r'data-widths="([^"]*)"', dom)
    widths = [int(w) for w in widths.group(1).split(",")] if widths and widths.group(1) else []
    n_images = page.read_text().count("data:image/png;base64,")
    checks = {
        "first line is the notice": page.read_text().splitlines()[0] == f"<!-- {NOT_A_RELEASE} -->",
        "screenshot not blank (>5% non-white)": non_white > 0.05,
        "plot colours rendered": real_px > 1000 and synth_px > 1000,
        "no console errors": not errors,
        f"all {n_images} inline images decoded": len(widths) == n_images and all(w > 0 for w in widths),
    }
    RESULTS.mkdir(exist_ok=True)
    small = Image.open(png).convert("RGB")
    small.thumbnail((640, 4500))
    small.save(RESULTS / f"{args.out}.png")
    lines = [
        "The fidelity report in headless Chromium (benchmarks/report_browser.py): Adult, MST at (1, 1e-9), "
        f"{len(df):,} rows and as many synthetic records, seed {args.seed}",
        f"fit + sample CPU-s {fit_cpu:.1f}; fidelity_report CPU-s {report_cpu:.1f} (wall {report_wall:.1f}); "
        f"to_html CPU-s {html_cpu:.1f}; page {page.stat().st_size / 1e3:.0f} kB with {n_images} inline PNGs",
        f"screenshot {image.shape[1]}x{image.shape[0]}: {non_white:.1%} non-white; bar pixels real {real_px:,}, "
        f"synthetic {synth_px:,}; image widths decoded {widths[:5]}... ({len(widths)})",
        f"worst 2-way: {report.summary.set_index('k').loc[2, 'worst']} "
        f"(TVD {report.summary.set_index('k').loc[2, 'max_tvd']:.3f}); pMSE {report.utility['pmse']:.4g}, "
        f"S_pMSE {report.utility['s_pmse']:.3g}",
        f"console lines flagged: {errors[:5]}",
        *[f"[{'ok' if ok else 'FAIL'}] {name}" for name, ok in checks.items()],
    ]
    (RESULTS / f"{args.out}.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    if not all(checks.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
