"""The fidelity report as one self-contained HTML page: tables, and plots inline as base64 PNG.

Plots need matplotlib (the ``plot`` extra); without it the page holds the same tables and says how to get
the plots. Nothing is fetched from the network: styles are inline, images are ``data:`` URIs.
"""

from __future__ import annotations

import base64
import html
import io

import numpy as np
import pandas as pd

#: Coefficients shown on the page (the largest |z| first); the DataFrame has them all.
_TOP_TERMS = 25

_STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1200px; }
.notice { background: #fde8e8; border: 2px solid #c0392b; padding: 0.8em; font-weight: bold; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #eef; }
.bad { background: #f8d7da; }
.plots { display: flex; flex-wrap: wrap; gap: 0.5em; }
.plots figure { margin: 0; }
img { max-width: 100%; }
figcaption { font-size: 0.85em; text-align: center; }
"""


def _escape(value) -> str:
    return html.escape(str(value))


def _png(fig) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def _table(df: pd.DataFrame, bad_rows=()) -> str:
    head = "".join(f"<th>{_escape(c)}</th>" for c in df.columns)
    body = []
    for i, row in enumerate(df.itertuples(index=False)):
        cells = "".join(f"<td>{_escape(_fmt(v))}</td>" for v in row)
        mark = ' class="bad"' if i in bad_rows else ""
        body.append(f"<tr{mark}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _fmt(v) -> str:
    if isinstance(v, tuple):
        return " x ".join(map(str, v))
    if isinstance(v, (float, np.floating)):
        return f"{v:.4g}"
    return str(v)


def _column_plots(report, plt, order) -> str:
    figures = []
    for a in order:
        d = report.distributions[report.distributions["column"] == a]
        x = np.arange(len(d))
        fig, ax = plt.subplots(figsize=(min(3.2 + 0.12 * len(d), 7.0), 2.6))
        if len(d) <= 30:
            ax.bar(x - 0.2, d["real"], width=0.4, label="real", color="#34495e")
            ax.bar(x + 0.2, d["synthetic"], width=0.4, label="synthetic", color="#e67e22")
            ax.set_xticks(x, [str(s)[:12] for s in d["state"]], rotation=60, ha="right", fontsize=7)
        else:  # many states: two step lines read better than hundreds of bars
            ax.step(x, d["real"], where="mid", label="real", color="#34495e", linewidth=1.6)
            ax.step(x, d["synthetic"], where="mid", label="synthetic", color="#e67e22", linewidth=1.6)
            ticks = x[:: max(1, len(d) // 12)]
            ax.set_xticks(ticks, [str(d["state"].iloc[i])[:12] for i in ticks], rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("proportion", fontsize=8)
        ax.legend(fontsize=7)
        fig.tight_layout()
        tvd = report.marginals[(report.marginals["k"] == 1) & (report.marginals["attrs"] == (a,))]["tvd"]
        caption = f"{a} (TVD {float(tvd.iloc[0]):.3f})" if len(tvd) else a
        figures.append(f'<figure><img alt="{_escape(a)}" src="{_png(fig)}"><figcaption>{_escape(caption)}</figcaption></figure>')
    return f"<div class=\"plots\">{''.join(figures)}</div>"


def _pair_heatmap(report, plt) -> str:
    pairs = report.marginals[report.marginals["k"] == 2]
    if pairs.empty:
        return ""
    attrs = list(report.domain.attrs)
    m = np.full((len(attrs), len(attrs)), np.nan)
    for (a, b), v in zip(pairs["attrs"], pairs["tvd"]):
        i, j = attrs.index(a), attrs.index(b)
        m[i, j] = m[j, i] = v
    fig, ax = plt.subplots(figsize=(1.0 + 0.45 * len(attrs), 0.8 + 0.4 * len(attrs)))
    im = ax.imshow(m, cmap="Reds", vmin=0)
    ax.set_xticks(range(len(attrs)), attrs, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(attrs)), attrs, fontsize=7)
    fig.colorbar(im, ax=ax, label="2-way TVD")
    fig.tight_layout()
    return f'<img alt="2-way TVD by pair" src="{_png(fig)}">'


def render(report, notice: str) -> str:
    """The report's page; its first line is the ``notice`` (an HTML comment), repeated as a banner."""
    plt = _pyplot()
    one = report.marginals[report.marginals["k"] == 1]
    order = [t[0] for t in one["attrs"]] or list(report.domain.attrs)
    parts = [
        f"<!-- {_escape(notice)} -->",
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>pgmpy-dp fidelity report</title>',
        f"<style>{_STYLE}</style></head><body>",
        f'<p class="notice">{_escape(notice)}</p>',
        "<h1>Fidelity of the synthetic table</h1>",
        f"<p>{report.utility['n_real']:,} real and {report.utility['n_synthetic']:,} synthetic records, "
        f"{len(report.domain.attrs)} columns. Total variation distance (TVD): half the L1 distance between "
        "the two tables' normalised marginals, 0 (identical) to 1 (disjoint).</p>",
        "<h2>Marginal distances</h2>",
        _table(report.summary),
    ]
    for k in sorted(report.marginals["k"].unique()):
        worst = report.worst(int(k), 10)
        parts += [f"<h3>The {int(k)}-way marginals the synthetic table gets most wrong</h3>",
                  _table(worst, bad_rows=range(min(3, len(worst))))]
    parts.append("<h2>Columns, real beside synthetic (worst first)</h2>")
    if plt is None:
        parts.append("<p>Plots need matplotlib (the plot extra): pip install matplotlib.</p>")
    else:
        parts += [_column_plots(report, plt, order), "<h2>2-way TVD of every pair</h2>", _pair_heatmap(report, plt)]
    u = report.utility
    parts += [
        "<h2>Propensity-score utility (pMSE)</h2>",
        "<p>A logistic regression on the one-hot columns tries to tell synthetic records from real ones. "
        "pMSE near its null expectation (S_pMSE near 1) means it cannot; larger S_pMSE means the synthetic "
        "table is easier to tell apart.</p>",
        _table(pd.DataFrame([{k: u[k] for k in ("pmse", "expected_null_pmse", "s_pmse", "parameters")}])),
    ]
    if report.coefficients is not None:
        c = report.coefficients
        shown = c.reindex(c["z"].abs().sort_values(ascending=False, na_position="last").index).head(_TOP_TERMS)
        bad = [i for i, z in enumerate(shown["z"]) if np.isfinite(z) and abs(z) > 2]
        parts += [
            f"<h2>One model on both tables: logistic regression of {_escape(report.target)} = "
            f"{_escape(report.positive)}</h2>",
            "<p>Coefficients fitted on the real and on the synthetic table; z is their difference in the real "
            f"fit's standard errors. The {len(shown)} terms of largest |z| of {len(c)} (rows with |z| &gt; 2 "
            "are marked; all of them are in the report's <code>coefficients</code> DataFrame).</p>",
            _table(shown, bad_rows=bad),
        ]
    parts += ["<details><summary>Every column's distribution, as numbers</summary>",
              _table(report.distributions), "</details>", "</body></html>"]
    return "\n".join(parts) + "\n"
