"""The account behind a privacy budget: its ledger, in-flight reservations, lock and budget file.

An account holds the exact total, the committed [`LedgerEntry`][pgmpy_dp.privacy.ledger.LedgerEntry] charges and the
reservations of charges in flight. A file-backed account (a budget opened with
[`PrivacyBudget.open`][pgmpy_dp.privacy.budget.PrivacyBudget.open]) re-reads its JSON file under an exclusive lock
for every operation and writes it back atomically, so several processes share one budget.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path

from .loss import ApproxDP
from .parameters import check_delta, epsilon_delta_to_rho, rho_to_epsilon_delta

_BUDGET_FORMAT = "pgmpy-dp/privacy-budget"
_BUDGET_FORMAT_VERSION = 2
#: Versions this module reads: 1 had no ``declared`` field (the user's (epsilon, delta)).
_READABLE_VERSIONS = (1, 2)


@dataclass(frozen=True)
class LedgerEntry:
    """One committed charge: how much, for what, and when (UTC).

    Attributes
    ----------
    epsilon : float or None
        The charge's epsilon when it was charged as pure epsilon-DP, else ``None``.
    label : str
        What the charge paid for.
    time : datetime
        When it was committed (UTC).
    rho : float or None
        The charge's zCDP cost in a zCDP budget (``epsilon**2 / 2`` for an epsilon charge), else ``None``.
    unit : str
        The budget's unit, ``"epsilon"`` or ``"rho"``; [`amount`][pgmpy_dp.privacy.ledger.LedgerEntry.amount] is in it.
    delta : float or None
        For a ``delta``-approximately zCDP charge (a thresholded release such as private key discovery),
        its ``delta``; ``None`` for a plain charge.
    shown_at : float or None
        The budget's delta when it was given as (epsilon, delta), else ``None`` (display only, not stored per
        entry): ``str(entry)`` then shows the charge as the epsilon its rho converts to at that delta.

    Examples
    --------
    >>> print(LedgerEntry(None, "AIM", datetime(2026, 1, 1, tzinfo=timezone.utc), 0.005, "rho", shown_at=1e-9))
    2026-01-01T00:00:00+00:00  epsilon=0.5649 at delta=1e-09 [rho=0.005]  AIM
    """

    epsilon: float | None
    label: str
    time: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    rho: float | None = None
    unit: str = "epsilon"
    delta: float | None = None
    shown_at: float | None = field(default=None, compare=False)

    def __str__(self) -> str:
        if self.epsilon is not None:  # charged as pure epsilon-DP: that is its tightest statement
            what = f"epsilon={self.epsilon:.4g}" + ("" if self.rho is None else f" [rho={self.rho:.4g}]")
        elif self.shown_at is not None:
            what = (f"epsilon={rho_to_epsilon_delta(self.rho, self.shown_at):.4g} at delta={self.shown_at:g} "
                    f"[rho={self.rho:.4g}]")
        else:
            what = f"rho={self.rho:.4g}"
        if self.delta is not None:
            what += f" (approximate: its own delta={self.delta:g})"
        return f"{self.time.isoformat()}  {what}  {self.label}"

    @property
    def amount(self) -> float:
        """The charge in the budget's own unit."""
        return self.epsilon if self.unit == "epsilon" else self.rho

    def _to_dict(self, exact: Fraction) -> dict:
        return {
            "label": self.label,
            "time": self.time.isoformat(),
            "unit": self.unit,
            "amount": self.amount,
            "exact": f"{exact.numerator}/{exact.denominator}",
            "epsilon": self.epsilon,
            "rho": self.rho,
            **({} if self.delta is None else {"delta": self.delta}),
        }

    @staticmethod
    def _from_dict(d: dict) -> tuple[LedgerEntry, Fraction]:
        delta = d.get("delta")  # absent in version 1
        entry = LedgerEntry(
            d["epsilon"], d["label"], datetime.fromisoformat(d["time"]), d["rho"], d["unit"],
            None if delta is None else check_delta(delta),
        )
        return entry, Fraction(d["exact"])


class Account:
    """The shared state of a budget: total, ledger, in-flight reservations, and their lock.

    Copies of a [`PrivacyBudget`][pgmpy_dp.privacy.budget.PrivacyBudget] share one account, so a copy can never
    spend what the original has reserved; file-backed accounts work as the module docstring says.
    """

    def __init__(self, accounting: str, total: Fraction, path: Path | None = None) -> None:
        self.accounting = accounting
        self.total = total
        self.path = path
        self.lock = threading.RLock()
        self.entries: list[LedgerEntry] = []
        self.exact: list[Fraction] = []
        self.spent = Fraction(0)
        # the user's (epsilon, delta) of a zCDP budget given in those units (display and file only)
        self.declared: ApproxDP | None = None
        # id -> (exact amount, label, time, pid, own delta or None): in the file too, so other processes see them
        self.pending: dict[str, tuple] = {}

    @property
    def reserved(self) -> Fraction:
        return sum((p[0] for p in self.pending.values()), Fraction(0))

    def deltas(self, extra: float | None = None) -> Fraction:
        """Exact sum of the own deltas of committed and in-flight approximately-zCDP charges (and ``extra``)."""
        parts = [e.delta for e in self.entries] + [p[4] for p in self.pending.values()] + [extra]
        return sum((Fraction(repr(float(d))) for d in parts if d is not None), Fraction(0))

    def capacity(self, extra_delta: float | None = None) -> Fraction:
        """The rho (or epsilon) this account may spend in all, given the deltas its charges took.

        An (epsilon, delta) budget whose charges take deltas of their own (a thresholded key release)
        keeps its promise only if what they spend in rho converts to its epsilon at the delta left:
        its capacity is ``epsilon_delta_to_rho(epsilon, delta - deltas)``, never more than its total.
        """
        deltas = self.deltas(extra_delta)
        if deltas == 0:
            return self.total
        if self.declared is None or deltas >= Fraction(repr(float(self.declared.delta))):
            return Fraction(0)
        left = float(Fraction(repr(float(self.declared.delta))) - deltas)
        return min(self.total, Fraction(repr(epsilon_delta_to_rho(self.declared.epsilon, left))))

    # -- persistence ---------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "format": _BUDGET_FORMAT,
            "version": _BUDGET_FORMAT_VERSION,
            "accounting": self.accounting,
            "total": f"{self.total.numerator}/{self.total.denominator}",
            "declared": None if self.declared is None else {
                "epsilon": self.declared.epsilon, "delta": self.declared.delta, "rho": float(self.total),
            },
            "ledger": [e._to_dict(x) for e, x in zip(self.entries, self.exact)],
            "pending": [
                {"id": k, "exact": f"{v[0].numerator}/{v[0].denominator}", "label": v[1], "time": v[2], "pid": v[3],
                 **({} if v[4] is None else {"delta": v[4]})}
                for k, v in self.pending.items()
            ],
        }

    def load_dict(self, data: dict, source: str) -> None:
        """Load a record read from ``source`` (named in every error), refusing one that could overspend."""
        def corrupt(why: str) -> ValueError:
            return ValueError(
                f"{source} is not a valid pgmpy-dp privacy budget: {why}. Restore it from a backup; "
                "do not recreate it, which would forget what was spent"
            )

        if not isinstance(data, dict) or data.get("format") != _BUDGET_FORMAT:
            raise corrupt("missing or wrong 'format' field")
        if data.get("version") not in _READABLE_VERSIONS:
            raise corrupt(f"unsupported format version {data.get('version')!r}")
        try:
            accounting = data["accounting"]
            total = Fraction(data["total"])
            parsed = [LedgerEntry._from_dict(d) for d in data["ledger"]]
            pending = {
                p["id"]: (Fraction(p["exact"]), p["label"], p["time"], int(p["pid"]),
                          None if p.get("delta") is None else check_delta(p["delta"]))
                for p in data["pending"]
            }
            d = data.get("declared")  # absent in version 1
            declared = None if d is None else ApproxDP(d["epsilon"], d["delta"])
        except (KeyError, TypeError, ValueError, ZeroDivisionError, AttributeError) as exc:
            raise corrupt(f"unreadable field ({exc!r})") from None
        if declared is not None and accounting != "zcdp":
            raise corrupt(f"an (epsilon, delta) total in a {accounting} budget")
        if accounting not in ("pure-dp", "zcdp") or total <= 0:
            raise corrupt(f"accounting={accounting!r}, total={total}")
        unit = "epsilon" if accounting == "pure-dp" else "rho"
        for entry, exact in parsed:
            # every charge is positive and was written in the budget's own unit: a negative amount would
            # give budget back, and entries of the other accounting would be summed in the wrong unit
            if exact <= 0 or entry.unit != unit or entry.amount is None or float(exact) != entry.amount:
                raise corrupt(
                    f"ledger entry {entry.label!r} ({entry.unit} {entry.amount!r}, exact {exact}) is not a "
                    f"positive charge in {unit}, the unit of its {accounting} accounting"
                )
        if any(p[0] <= 0 for p in pending.values()):
            raise corrupt("an in-flight charge has a non-positive amount")
        spent = sum((x for _, x in parsed), Fraction(0))
        if spent + sum((p[0] for p in pending.values()), Fraction(0)) > total:
            raise corrupt(f"its charges add up to more than its total {format_amount(total)}")
        self.accounting, self.total, self.declared = accounting, total, declared
        shown = None if declared is None else declared.delta
        self.entries = [replace(e, shown_at=shown) for e, _ in parsed]
        self.exact = [x for _, x in parsed]
        self.spent = spent
        self.pending = pending

    def settle(self, dead_only: bool = True) -> bool:
        """Move reservations whose process has ended (or, ``dead_only=False``, all of them) into the ledger.

        Such a reservation may have paid for noise that was drawn, so it counts as spent everywhere. Returns
        whether anything moved.
        """
        unit = "epsilon" if self.accounting == "pure-dp" else "rho"
        moved = False
        for key, (exact, label, time, pid, delta) in list(self.pending.items()):
            if dead_only and (pid == os.getpid() or _process_alive(pid)):
                continue
            amount = float(exact)
            why = "ended" if dead_only else "was in flight when the budget was saved"
            entry = LedgerEntry(
                amount if unit == "epsilon" else None,
                f"{label} (reservation of process {pid}, which {why}; counted as spent)",
                _parse_time(time), amount if unit == "rho" else None, unit, delta,
                shown_at=None if self.declared is None else self.declared.delta,
            )
            self.entries.append(entry)
            self.exact.append(exact)
            self.spent += exact
            del self.pending[key]
            moved = True
        return moved

    @contextmanager
    def transaction(self, write: bool = False):
        """Hold the thread lock (and, file-backed, the file lock with a fresh read) around a block."""
        with self.lock:
            if self.path is None:
                yield
                return
            import fcntl  # POSIX only; imported here so in-memory budgets work everywhere

            lock_path = self.path.with_name(self.path.name + ".lock")
            with open(lock_path, "a+") as lock_file:
                fcntl.flock(lock_file, fcntl.LOCK_EX)
                try:
                    self.load_dict(read_record(self.path), str(self.path))
                    settled = self.settle()
                    yield
                    if write or settled:
                        self.save()
                finally:
                    fcntl.flock(lock_file, fcntl.LOCK_UN)

    def save(self) -> None:
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
        with open(tmp, "w") as fh:
            json.dump(self.to_dict(), fh, indent=1)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)  # atomic: readers see the old or the new file, never half of one


def format_amount(x: Fraction | float) -> str:
    return f"{float(x):.12g}"


def _process_alive(pid: int) -> bool:
    """Whether process ``pid`` (on this machine) still runs; a zombie has ended."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # another user's process, or a pid we cannot test: assume it may still spend
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]


def _parse_time(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return datetime.now(timezone.utc)


def read_record(path: Path) -> dict:
    """The JSON record of a budget file, or a ValueError naming the file."""
    try:
        text = path.read_text()
    except IsADirectoryError:
        raise ValueError(f"{path} is a directory, not a privacy budget file; give a file path") from None
    except UnicodeDecodeError:
        text = ""
    try:
        return json.loads(text)
    except ValueError:
        raise ValueError(
            f"{path} is not a valid pgmpy-dp privacy budget: the file is empty, truncated or not JSON. "
            "Restore it from a backup; do not recreate it, which would forget what was spent"
        ) from None


def check_path(path) -> Path:
    """``path`` as a Path to a budget file, or a clear error naming it."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"path must be a str or os.PathLike naming a budget file, got {path!r} ({type(path).__name__})"
        )
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a privacy budget file; give a file path such as {path / 'budget.json'}")
    if not path.parent.is_dir():
        raise ValueError(f"the folder of the budget file {path} does not exist; create {path.parent} first")
    return path
