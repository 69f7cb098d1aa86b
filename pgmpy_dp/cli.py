"""The command line ``pgmpy-dp``: synthesize, sample, query, report and budget, for custodians who work from a shell.

Data goes to files or stdout, messages and progress bars to stderr. Bad input (a missing file, a bad schema,
a bad epsilon) ends with exit code 2 and one line on stderr, before anything is charged: every check of
``PrivateSynthesizer.fit`` runs before its one charge, and the output paths are checked before the fit.
See docs/cli.md.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from .privacy.budget import BudgetExceededError, PrivacyBudget
from .privacy.domain import Domain

#: Exit code of a refused input (argparse's own for a bad command line).
BAD_INPUT = 2


class InputError(ValueError):
    """Bad input from the command line: reported in one line, exit code 2."""


# -- files --------------------------------------------------------------------------------------


def load_schema(path) -> Domain:
    """The public schema in ``path`` (the format of [`Domain.to_json`][pgmpy_dp.privacy.domain.Domain.to_json])."""
    return Domain.from_json(_existing(path, "schema"))


def _existing(path, what: str) -> Path:
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no {what} file {str(path)!r}")
    return path


def _writable(path, what: str) -> None:
    if path is None or str(path) == "-":
        return
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise InputError(f"cannot write the {what} {str(path)!r}: no directory {str(parent)!r}")


def read_table(path, domain: Domain, other=None) -> pd.DataFrame:
    """A CSV or Parquet file (by its suffix) as the schema's columns: numeric and still-unresolved columns raw
    (bounds only, discover: the synthesizer resolves them), the others as categoricals of their declared
    states (a CSV's text ``"1"`` is the state ``1``)."""
    from .evaluation.fidelity import encode_table

    path = _existing(path, "table")
    try:
        frame = pd.read_parquet(path) if path.suffix.lower() in (".parquet", ".pq") else pd.read_csv(path)
    except (ValueError, OSError, ImportError) as exc:
        raise InputError(f"cannot read the table {str(path)!r}: {exc}") from None
    raw = set(domain.discover) | set(domain.bounds) | set(domain.bins)
    states = [a for a in domain.attrs if a not in raw]
    codes = encode_table(frame, domain.project(states), path.name, other) if states else {}
    missing = [a for a in domain.attrs if a not in frame.columns]
    if missing:
        raise InputError(f"the table {path.name!r} has no column(s) {missing}; the schema declares {list(domain.attrs)}")
    return pd.DataFrame({a: pd.Categorical.from_codes(codes[a], list(domain[a])) if a in codes else frame[a]
                         for a in domain.attrs})


def write_table(frame: pd.DataFrame, path) -> None:
    """``frame`` to ``path`` (Parquet by suffix, else CSV), or as CSV to stdout for ``-``."""
    if str(path) == "-":
        frame.to_csv(sys.stdout, index=False)
    elif Path(path).suffix.lower() in (".parquet", ".pq"):
        # numbers stay numbers; other columns as text (Parquet has no column of mixed Python objects), NaN kept
        typed = {c: frame[c] if pd.api.types.is_numeric_dtype(frame[c]) else frame[c].astype("string")
                 for c in frame.columns}
        try:
            pd.DataFrame(typed).to_parquet(path, index=False)
        except ImportError as exc:
            raise InputError(f"writing Parquet needs pyarrow ({exc}); pip install pyarrow, or write a .csv") from None
    else:
        frame.to_csv(path, index=False)


def _say(args, message: str) -> None:
    if not getattr(args, "quiet", False):
        print(message, file=sys.stderr)


def _state(domain: Domain, attr: str, text: str):
    if attr not in domain:
        raise InputError(f"{attr!r} is not a column of the model; columns: {list(domain.attrs)}")
    for s in domain[attr]:
        if str(s) == text:
            return s
    raise InputError(f"{text!r} is not a state of {attr!r}; states: {[str(s) for s in domain[attr]]}")


# -- commands -----------------------------------------------------------------------------------


def _synthesize(args) -> None:
    from .estimators.evidence import pooled_n_records
    from .synthesis import PrivateSynthesizer

    domain = load_schema(args.schema)
    for path, what in ((args.out, "synthetic table"), (args.artifact, "artifact")):
        _writable(path, what)
    if args.out is None and args.artifact is None:
        raise InputError("give --out (the synthetic table) and/or --artifact (the saved synthesizer); nothing would be kept")
    budget = None if args.budget is None else PrivacyBudget.open(_existing(args.budget, "budget"))
    frame = read_table(args.table, domain)
    synth = PrivateSynthesizer(args.epsilon, rho=args.rho, delta=args.delta, method=args.method, budget=budget,
                               random_state=args.seed, show_progress=not args.quiet)
    synth.fit(frame, domain=domain)
    _say(args, f"pgmpy-dp: spent {synth.loss_} on {synth.n_rounds_} selected marginals ({args.method})")
    if args.artifact is not None:
        synth.save(args.artifact)
        _say(args, f"pgmpy-dp: saved the synthesizer to {args.artifact}")
    if args.out is not None:
        # a public number of rows: the given one, or the model's noisy record count (len(df) is private)
        rows = args.rows if args.rows is not None else max(1, int(round(pooled_n_records(synth.releases_))))
        write_table(synth.sample(rows, random_state=args.seed), args.out)
        _say(args, f"pgmpy-dp: wrote {rows:,} synthetic records to {args.out}")


def _load(path):
    from .synthesis import PrivateSynthesizer

    return PrivateSynthesizer.load(_existing(path, "artifact"))


def _sample(args) -> None:
    _writable(args.out, "synthetic table")
    synth = _load(args.artifact)
    write_table(synth.sample(args.rows, random_state=args.seed), args.out)
    _say(args, f"pgmpy-dp: wrote {args.rows:,} synthetic records to {'stdout' if args.out == '-' else args.out}")


def _query(args) -> None:
    from .querying import query

    synth = _load(args.artifact)
    domain = synth.domain_
    variables = args.variables
    for v in variables:
        if v not in domain:
            raise InputError(f"{v!r} is not a column of the model; columns: {list(domain.attrs)}")
    evidence = {}
    for item in args.given or []:
        attr, sep, text = item.partition("=")
        if not sep:
            raise InputError(f"--given takes column=state, got {item!r}")
        evidence[attr] = _state(domain, attr, text)
    factor = query(synth.model_, variables, evidence=evidence or None)
    states = [list(factor.state_names[v]) for v in factor.variables]
    index = pd.MultiIndex.from_product(states, names=list(factor.variables))
    table = pd.DataFrame({"probability": np.asarray(factor.values).ravel()}, index=index)
    table = table.reorder_levels(variables) if len(variables) > 1 else table
    if args.interval:
        from .uncertainty import query_interval

        try:
            band = query_interval(synth, variables, evidence=evidence or None, level=args.level,
                                  n_samples=args.n_samples, interval=args.interval_type, random_state=args.seed,
                                  show_progress=not args.quiet)
        except (TypeError, ValueError, NotImplementedError) as exc:  # e.g. a format-1 file, saved without its fit
            raise InputError(f"no interval for this saved synthesizer ({exc}); drop --interval") from None
        # by state, not by position: the band's rows follow VARIABLES, the factor's its own order
        table[["lower", "upper"]] = band[["lower", "upper"]].reindex(table.index).to_numpy()
    table.reset_index().to_csv(sys.stdout, index=False)


def _report(args) -> None:
    from .evaluation.fidelity import fidelity_report

    _writable(args.out, "report")
    synth = None if args.artifact is None else _load(args.artifact)
    domain = synth.domain_ if args.schema is None else load_schema(args.schema)
    record = getattr(synth, "schema_release_", None) if args.schema is None else None
    # a discovered column's unreleased values took its "other" state in the fit: count the real ones there too
    other = {c: record["other"] for c in record["keys"]} if record else None
    unresolved = [a for a in domain.attrs if a in domain.discover or (a in domain.bounds and a not in domain.bins)]
    if unresolved:
        raise InputError(f"the schema leaves {unresolved} to be resolved privately; pass --artifact (the saved "
                         "synthesizer, whose schema is resolved) instead of --schema")
    if args.target is not None and args.target not in domain:
        raise InputError(f"--target {args.target!r} is not a column of the schema {list(domain.attrs)}")
    real, synthetic = read_table(args.real, domain, other), read_table(args.synthetic, domain)
    report = fidelity_report(real, synthetic, domain=domain, target=args.target)
    report.to_html(args.out)
    for row in report.summary.itertuples(index=False):
        _say(args, f"pgmpy-dp: {row.k}-way TVD mean {row.mean_tvd:.3f}, worst {row.max_tvd:.3f} "
                   f"({' x '.join(row.worst)})")
    _say(args, f"pgmpy-dp: pMSE {report.utility['pmse']:.3g} (S_pMSE {report.utility['s_pmse']:.3g}); "
               f"wrote {args.out}: it reads the real table, do not publish it")


def _budget(args) -> None:
    if args.create:
        if Path(args.file).exists():
            raise InputError(f"{args.file!r} exists already; drop --create to read it")
        if (args.epsilon is None) == (args.rho is None):
            raise InputError("--create needs exactly one of --epsilon (pure DP) or --rho (zCDP)")
        _writable(args.file, "budget file")
        budget = PrivacyBudget.open(args.file, args.epsilon, rho=args.rho)
    else:
        budget = PrivacyBudget.open(_existing(args.file, "budget"))
    unit = budget.unit
    lines = [f"accounting: {budget.accounting}", f"total: {unit}={budget.total:g}",
             f"spent: {unit}={budget.spent:g}", f"remaining: {unit}={budget.remaining:g}"]
    if args.delta is not None and unit == "rho":
        eps, delta = budget.epsilon_delta(args.delta)
        lines.append(f"spent as (epsilon, delta): ({eps:.6g}, {delta:g})")
    for e in budget.ledger:
        lines.append(f"  {e.time:%Y-%m-%d %H:%M:%S} UTC  {unit}={e.amount:g}  {e.label}")
    for label, amount in budget.pending:
        lines.append(f"  (in flight)  {unit}={amount:g}  {label}")
    print("\n".join(lines))


# -- the parser ---------------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text!r}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (the usage is one ``--help`` away)."""

    def error(self, message):
        self.exit(BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from .synthesis import METHODS

    parser = _Parser(
        prog="pgmpy-dp",
        description="Differentially private synthetic data from a CSV or Parquet table, and the custodian's tools "
                    "around it. Data goes to files or stdout; messages to stderr.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="command")

    p = sub.add_parser("synthesize", help="fit a private synthesizer to a table (spends the budget once)",
                       description="Fit a private synthesizer to TABLE under a public schema, spending the given "
                                   "privacy loss once; write synthetic records and/or the saved synthesizer.")
    p.add_argument("table", help="the private table: a .csv or .parquet file")
    p.add_argument("--schema", required=True, help="the public schema (JSON, format pgmpy-dp/schema)")
    p.add_argument("--epsilon", type=_number, help="(epsilon, delta)-DP budget's epsilon (with --delta), or "
                                                   "pure epsilon-DP for --method privbayes")
    p.add_argument("--delta", type=_number, help="the delta that goes with --epsilon, e.g. 1e-9")
    p.add_argument("--rho", type=_number, help="a zCDP budget instead of --epsilon")
    p.add_argument("--method", choices=list(METHODS), default="auto",
                   help="selection method (default: auto, as PrivateSynthesizer: MST on small or wide tables, else AIM)")
    p.add_argument("--budget", help="a budget file (see `pgmpy-dp budget --create`) charged with the loss")
    p.add_argument("--out", help="where to write the synthetic table (.csv, .parquet, or - for stdout)")
    p.add_argument("--rows", type=_positive_int, help="synthetic records to write (default: the model's noisy "
                                                      "record count)")
    p.add_argument("--artifact", help="where to save the synthesizer (JSON; public by construction)")
    p.add_argument("--seed", type=int, help="seed, for reproducible experiments only (default: OpenDP's samplers)")
    p.add_argument("--quiet", action="store_true", help="no progress bars or messages")
    p.set_defaults(run=_synthesize)

    p = sub.add_parser("sample", help="draw more synthetic records from a saved synthesizer (spends nothing)",
                       description="Draw synthetic records from a saved synthesizer (post-processing: spends nothing).")
    p.add_argument("artifact", help="a synthesizer saved by `synthesize --artifact`")
    p.add_argument("--rows", type=_positive_int, required=True, help="number of records")
    p.add_argument("--out", default="-", help="output file (.csv or .parquet; default: CSV on stdout)")
    p.add_argument("--seed", type=int, help="seed: the same seed gives the same records")
    p.add_argument("--quiet", action="store_true", help="no messages")
    p.set_defaults(run=_sample)

    p = sub.add_parser("query", help="a probability from a saved synthesizer's model (spends nothing)",
                       description="P(VARIABLES | --given ...) from a saved synthesizer's model, as CSV on stdout.")
    p.add_argument("artifact", help="a synthesizer saved by `synthesize --artifact`")
    p.add_argument("variables", nargs="+", help="the query columns")
    p.add_argument("--given", action="append", metavar="COLUMN=STATE", help="evidence (repeat for several)")
    p.add_argument("--interval", action="store_true", help="add a bootstrap interval per state (pgmpy_dp.query_interval)")
    p.add_argument("--level", type=float, default=0.95, help="the interval's coverage (default 0.95)")
    p.add_argument("--seed", type=int, help="seed of the interval's simulation")
    p.add_argument("--n-samples", type=int, default=30, help="bootstrap refits of the interval (default 30)")
    p.add_argument("--interval-type", choices=["response", "normal"], default="response",
                   help="the interval's kind (pgmpy_dp.query_interval's interval; default response)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(run=_query)

    p = sub.add_parser("report", help="the fidelity report: real vs synthetic, as one HTML file (not a release)",
                       description="Compare a synthetic table with the real one (distributions, 1-3-way TVD, pMSE, "
                                   "a model on both) and write one self-contained HTML page. It reads the real "
                                   "table: it is for the custodian, not for publication.")
    p.add_argument("real", help="the real table (.csv or .parquet)")
    p.add_argument("synthetic", help="the synthetic table (.csv or .parquet)")
    p.add_argument("--out", required=True, help="the HTML file to write")
    p.add_argument("--schema", help="the public schema (default: the --artifact's)")
    p.add_argument("--artifact", help="a saved synthesizer whose schema to use")
    p.add_argument("--target", help="a column to model by logistic regression on both tables")
    p.add_argument("--quiet", action="store_true", help="no messages")
    p.set_defaults(run=_report)

    p = sub.add_parser("budget", help="what a budget file has spent, in its units",
                       description="Show a budget file's total, spent and remaining amounts and its ledger; or "
                                   "create one with --create.")
    p.add_argument("file", help="the budget file (JSON)")
    p.add_argument("--create", action="store_true", help="create the file with --epsilon or --rho as its total")
    p.add_argument("--epsilon", type=_number, help="total of a new pure-DP budget")
    p.add_argument("--rho", type=_number, help="total of a new zCDP budget")
    p.add_argument("--delta", type=_number, help="also show a zCDP budget's spending as (epsilon, delta)")
    p.set_defaults(run=_budget)
    return parser


def main(argv=None) -> int:
    """Run ``pgmpy-dp`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "report" and args.schema is None and args.artifact is None:
        parser.error("report needs --schema or --artifact (the public schema of the tables)")
    try:
        args.run(args)
    except (InputError, ValueError, TypeError, OSError, BudgetExceededError) as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"pgmpy-dp {args.command}: error: {message}", file=sys.stderr)
        return BAD_INPUT
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
