"""Privacy accounting: pure epsilon-DP or rho-zCDP under sequential composition, shown in the user's units.

A [`PrivacyBudget`][pgmpy_dp.privacy.budget.PrivacyBudget] is charged *before* any noise is drawn and refunded
if the guarded work fails before its noisy output exists; once noise is drawn the charge is committed
([`Charge.commit`][pgmpy_dp.privacy.budget.Charge.commit]) and stays spent. ``"pure-dp"`` budgets add
epsilons; ``"zcdp"`` budgets add rhos (Bun and Steinke 2016), an ``epsilon``-DP charge costing
``epsilon**2 / 2``. Amounts are read as the decimal their ``repr`` shows and added as fractions, so
the cap is exact. See docs/privacy.md.
"""

from __future__ import annotations

import json
import os
import uuid
from contextlib import contextmanager
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path

from .ledger import LedgerEntry, Account, check_path, format_amount, read_record
from .loss import LOSS_TYPES, ZCDP, ApproxDP, PureDP, check_keywords, privacy_loss
from .parameters import check_delta, check_epsilon, check_rho, rho_to_epsilon_delta


class BudgetExceededError(RuntimeError):
    """A charge would spend more than the remaining privacy budget."""


def _exact(x: float) -> Fraction:
    # The decimal the user sees (repr is the shortest string that reads back as x):
    # 0.1 is one tenth, so ten charges of 0.1 sum to exactly 1.
    return Fraction(repr(float(x)))


class Charge:
    """Handle of an in-flight charge (what [`PrivacyBudget.charge`][pgmpy_dp.privacy.budget.PrivacyBudget.charge] yields).

    Call [`commit`][pgmpy_dp.privacy.budget.Charge.commit] as soon as noisy output exists: from then on an error
    in the guarded block no longer refunds the charge.

    Attributes
    ----------
    epsilon, rho : float or None
        What was asked for (exactly one is set).
    amount : float
        Its cost in the budget's unit.
    """

    def __init__(self, epsilon: float | None, label: str, rho: float | None = None, amount: float | None = None):
        self.epsilon = epsilon
        self.rho = rho
        self.delta: float | None = None
        self.label = label
        self.amount = amount if amount is not None else (epsilon if epsilon is not None else rho)
        self.committed = False

    def commit(self) -> None:
        """Mark the charge spent even if the rest of the guarded block fails."""
        self.committed = True


class PrivacyBudget:
    """A total privacy budget, spent by sequential composition, with an auditable ledger.

    Give exactly one of ``epsilon`` (pure epsilon-DP accounting; with ``delta``, an (epsilon, delta)
    budget) or ``rho`` (rho-zCDP accounting). A zCDP budget also accepts epsilon charges, at
    ``epsilon**2 / 2``; a pure-DP budget refuses rho charges (a zCDP fit such as AIM or MST needs
    ``delta``).

    An ``(epsilon, delta)`` budget accounts in rho: its total is the largest rho whose tight
    conversion (Canonne, Kamath and Steinke 2020) gives ``(epsilon, delta)``-DP, so AIM, MST,
    PrivBayes and zCDP releases charge it. It shows the user's units: what was spent is reported as
    the epsilon at the budget's delta *converted from the rho spent* (epsilons of several charges do not
    add; their rhos do), with the rho beside it.

    Parameters
    ----------
    epsilon : float or PrivacyLoss, optional
        The total pure-DP budget, or the epsilon of an (epsilon, delta) budget; or a loss value
        (``PureDP``, ``ZCDP``, or ``ApproxDP``).
    rho : float, optional
        The total zCDP budget (keyword only).
    delta : float, optional
        With ``epsilon``: an (epsilon, delta)-DP budget (keyword only); e.g. ``delta=1e-9``, well below
        one over the number of records.

    Attributes
    ----------
    accounting : str
        ``"pure-dp"`` or ``"zcdp"`` (an (epsilon, delta) budget accounts in zCDP).
    delta : float or None
        The delta of an (epsilon, delta) budget, else ``None``.
    unit : str
        ``"epsilon"`` or ``"rho"``: the unit of [`total`][pgmpy_dp.privacy.budget.PrivacyBudget.total], [`spent`][pgmpy_dp.privacy.budget.PrivacyBudget.spent] and [`remaining`][pgmpy_dp.privacy.budget.PrivacyBudget.remaining].

    Examples
    --------
    >>> budget = PrivacyBudget(1.0)
    >>> with budget.charge(0.4, "age x sex"):
    ...     pass  # draw noise here; an exception refunds the charge
    >>> budget.spent, budget.remaining
    (0.4, 0.6)
    >>> [(e.epsilon, e.label) for e in budget.ledger]
    [(0.4, 'age x sex')]

    Once noise is drawn the charge is committed, and a later failure keeps it:

    >>> try:
    ...     with budget.charge(0.1, "post-processed") as charge:
    ...         charge.commit()  # noisy output exists from here on
    ...         raise ArithmeticError("solver failed")
    ... except ArithmeticError:
    ...     pass
    >>> [e.label for e in budget.ledger]
    ['age x sex', 'post-processed (failed after noise was drawn)']

    A zCDP budget, charged in rho and in epsilon:

    >>> zb = PrivacyBudget(rho=0.5)
    >>> with zb.charge(rho=0.125, label="gaussian tables"):
    ...     pass
    >>> with zb.charge(0.5, "laplace table"):  # costs 0.5**2 / 2 = 0.125
    ...     pass
    >>> zb.spent, zb.remaining, round(zb.epsilon_delta(1e-6)[0], 3)
    (0.25, 0.25, 3.542)

    An (epsilon, delta) budget, in the user's units:

    >>> ab = PrivacyBudget(1.0, delta=1e-9)
    >>> with ab.charge(rho=0.005, label="a zCDP release"):
    ...     pass
    >>> ab
    PrivacyBudget(epsilon=1, delta=1e-09 [rho=0.01497]; spent epsilon=0.5649 at delta=1e-09 [rho=0.005]; left epsilon=0.809 at delta=1e-09 [rho=0.009973])
    """

    def __init__(self, epsilon: float | None = None, *, rho: float | None = None, delta: float | None = None) -> None:
        loss = privacy_loss(epsilon, rho, delta, who="PrivacyBudget",
                            example="PrivacyBudget(1.0), PrivacyBudget(1.0, delta=1e-9) or PrivacyBudget(rho=0.5)")
        if isinstance(loss, PureDP):
            self._account = Account("pure-dp", _exact(loss.epsilon))
        else:  # a zCDP budget; an (epsilon, delta) value gives the rho it allows, and is remembered
            self._account = Account("zcdp", _exact(loss.rho))
            if isinstance(loss, ApproxDP):
                self._account.declared = loss

    # -- construction --------------------------------------------------------------------
    @classmethod
    def from_epsilon_delta(cls, epsilon: float, delta: float) -> PrivacyBudget:
        """A zCDP budget with the largest rho whose tight conversion gives ``(epsilon, delta)``-DP.

        The same as ``PrivacyBudget(epsilon, delta=delta)``. See [`rho_to_epsilon_delta`][pgmpy_dp.privacy.parameters.rho_to_epsilon_delta] for the conversion (Canonne, Kamath
        and Steinke 2020).

        Examples
        --------
        >>> b = PrivacyBudget.from_epsilon_delta(1.0, 1e-6)
        >>> b.accounting, round(b.total, 5)
        ('zcdp', 0.02436)
        """
        return cls(epsilon, delta=delta)

    @classmethod
    def open(
        cls, path: str | Path, epsilon: float | None = None, *, rho: float | None = None, delta: float | None = None
    ) -> PrivacyBudget:
        """A budget stored in a JSON file and shared by every session and process that opens it.

        Creates the file with the given total if it does not exist (then ``epsilon``, ``epsilon`` with
        ``delta``, or ``rho`` is required); otherwise loads it, and a given total must equal the stored
        one. The file records the total in the user's units (``epsilon`` and ``delta`` of an (epsilon,
        delta) budget) beside the rho it accounts in; files written by earlier versions stay readable. Every charge is
        checked and recorded under an exclusive file lock (``fcntl``, POSIX) and written atomically, so
        concurrent processes can never overspend it. A process killed mid-release leaves its reservation
        in the file's ``pending`` list; the next operation moves it to the ledger, as spent. A file that
        is not a valid budget is refused with a ``ValueError`` naming it.

        Examples
        --------
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "budget.json")
        >>> b = PrivacyBudget.open(path, 1.0)
        >>> with b.charge(0.25, "monday"):
        ...     pass
        >>> PrivacyBudget.open(path).spent  # a later session
        0.25
        >>> PrivacyBudget.open(os.path.join(os.path.dirname(path), "approx.json"), epsilon=1.0, delta=1e-9)
        PrivacyBudget(epsilon=1, delta=1e-09 [rho=0.01497]; spent nothing, path=...)
        """
        path = check_path(path)
        given = None if epsilon is None and rho is None and delta is None else cls(epsilon, rho=rho, delta=delta)
        budget = cls.__new__(cls)
        lock_path = path.with_name(path.name + ".lock")
        import fcntl

        try:
            lock_file = open(lock_path, "a+")
        except OSError as exc:
            raise ValueError(f"cannot use {path} as a privacy budget file: {exc.strerror} ({lock_path})") from None
        with lock_file:
            fcntl.flock(lock_file, fcntl.LOCK_EX)
            try:
                if path.exists():
                    account = Account("pure-dp", Fraction(1), path)
                    account.load_dict(read_record(path), str(path))
                    if given is not None and (
                        given.accounting != account.accounting or given._account.total != account.total
                    ):
                        raise ValueError(
                            f"{path} holds a {account.accounting} budget of total {_given_as(account)}, "
                            f"not {given.accounting} {_given_as(given._account)}; "
                            "open it without epsilon/delta/rho to continue it, or choose another path"
                        )
                    if given is not None and account.declared is None and given._account.declared is not None:
                        account.declared = given._account.declared  # an older file: the same rho, now in the user's units
                        account.save()
                else:
                    if given is None:
                        raise FileNotFoundError(
                            f"no budget file at {path}; create one with PrivacyBudget.open(path, epsilon), "
                            "PrivacyBudget.open(path, epsilon, delta=...) or PrivacyBudget.open(path, rho=...)"
                        )
                    account = given._account
                    account.path = path
                    account.save()
            finally:
                fcntl.flock(lock_file, fcntl.LOCK_UN)
        budget._account = account
        return budget

    def to_json(self, path: str | Path | None = None) -> str | None:
        """A JSON snapshot of the budget (total, ledger with exact amounts, in-flight charges).

        Returns the text, or writes it atomically to ``path``. A snapshot loaded with
        [`from_json`][pgmpy_dp.privacy.budget.PrivacyBudget.from_json] is an *independent* budget (spending both
        spends the data's privacy twice); to continue one budget, use [`open`][pgmpy_dp.privacy.budget.PrivacyBudget.open].
        """
        with self._account.transaction():
            text = json.dumps(self._account.to_dict(), indent=1)
        if path is None:
            return text
        snapshot = Account(self.accounting, self._account.total, check_path(path))  # load_dict sets the rest
        snapshot.load_dict(json.loads(text), str(path))
        snapshot.save()
        return None

    @classmethod
    def from_json(cls, source: str | Path) -> PrivacyBudget:
        """Read a budget written by [`to_json`][pgmpy_dp.privacy.budget.PrivacyBudget.to_json] (JSON text or a path); in-flight charges count as spent.

        Examples
        --------
        >>> b = PrivacyBudget(rho=1.0)
        >>> with b.charge(rho=0.1, label="q"):
        ...     pass
        >>> c = PrivacyBudget.from_json(b.to_json())
        >>> c.accounting, c.spent, [e.label for e in c.ledger]
        ('zcdp', 0.1, ['q'])
        """
        if not isinstance(source, (str, os.PathLike)):
            raise TypeError(f"source must be JSON text or a path, got {type(source).__name__}")
        if isinstance(source, str) and source.lstrip().startswith("{"):
            name = "the JSON text"
            try:
                record = json.loads(source)
            except ValueError:
                raise ValueError(
                    "the JSON text is not a valid pgmpy-dp privacy budget: it is truncated or not JSON"
                ) from None
        else:
            path = Path(source)
            if not path.exists():
                raise FileNotFoundError(f"no budget file at {path} (and the text is not a JSON budget)")
            name, record = str(path), read_record(path)
        budget = cls.__new__(cls)
        budget._account = Account("pure-dp", Fraction(1))
        budget._account.load_dict(record, name)
        budget._account.settle(dead_only=False)  # a snapshot's in-flight charges have no one to finish them
        return budget

    # A copy must not be able to spend what the original has reserved (or spent), so every
    # copy is a second handle on the same account.
    def __copy__(self) -> PrivacyBudget:
        other = type(self).__new__(type(self))
        other._account = self._account
        return other

    def __deepcopy__(self, memo) -> PrivacyBudget:
        return self.__copy__()

    def __reduce__(self):
        if self._account.path is not None:
            return (type(self).open, (str(self._account.path),))
        raise TypeError(
            "an in-memory PrivacyBudget cannot be pickled: the copy would be a second, independent "
            "budget for the same data. Use PrivacyBudget.open(path, ...) to share one across processes"
        )

    # -- facts ---------------------------------------------------------------------------
    @property
    def accounting(self) -> str:
        """``"pure-dp"`` or ``"zcdp"``."""
        return self._account.accounting

    @property
    def delta(self) -> float | None:
        """The delta of an (epsilon, delta) budget, else ``None``."""
        declared = self._account.declared
        return None if declared is None else declared.delta

    @property
    def loss(self):
        """The total as a loss value, in the units it was given: ``PureDP``, ``ZCDP`` or ``ApproxDP``.

        Examples
        --------
        >>> PrivacyBudget(1.0, delta=1e-9).loss
        ApproxDP(epsilon=1.0, delta=1e-09)
        """
        a = self._account
        if a.declared is not None:
            return a.declared
        return PureDP(float(a.total)) if a.accounting == "pure-dp" else ZCDP(float(a.total))

    @property
    def unit(self) -> str:
        """``"epsilon"`` for a pure-DP budget, ``"rho"`` for a zCDP budget."""
        return "epsilon" if self._account.accounting == "pure-dp" else "rho"

    @property
    def total(self) -> float:
        """The total budget, in [`unit`][pgmpy_dp.privacy.budget.PrivacyBudget.unit]."""
        return float(self._account.total)

    @property
    def path(self) -> Path | None:
        """The file backing this budget (see [`open`][pgmpy_dp.privacy.budget.PrivacyBudget.open]), or ``None``."""
        return self._account.path

    @property
    def ledger(self) -> tuple[LedgerEntry, ...]:
        """Committed charges, oldest first."""
        with self._account.transaction():
            return tuple(self._account.entries)

    @property
    def pending(self) -> tuple[tuple[str, float], ...]:
        """In-flight charges ``(label, amount)``: reserved, neither committed nor refunded yet."""
        with self._account.transaction():
            return tuple((v[1], float(v[0])) for v in self._account.pending.values())

    @property
    def spent(self) -> float:
        """Exact sum of committed charges, in [`unit`][pgmpy_dp.privacy.budget.PrivacyBudget.unit], rounded to the nearest float.

        Reservations left by a process that ended before committing or refunding count as committed.
        """
        with self._account.transaction():
            return float(self._account.spent)

    @property
    def remaining(self) -> float:
        """What is still available (committed and in-flight charges subtracted), in [`unit`][pgmpy_dp.privacy.budget.PrivacyBudget.unit]."""
        return self.available()

    def available(self, delta: float | None = None) -> float:
        """What a charge could still spend, in [`unit`][pgmpy_dp.privacy.budget.PrivacyBudget.unit], if it took ``delta`` of its own.

        A charge's own delta (a thresholded release) comes out of an (epsilon, delta) budget's delta, so the
        rho left for everything shrinks with it; ``available()`` is [`remaining`][pgmpy_dp.privacy.budget.PrivacyBudget.remaining].

        Examples
        --------
        >>> b = PrivacyBudget(1.0, delta=1e-9)
        >>> b.available(1e-10) < b.remaining
        True
        """
        with self._account.transaction():
            a = self._account
            return float(max(Fraction(0), a.capacity(delta) - a.spent - a.reserved))

    @property
    def delta_spent(self) -> float:
        """Exact sum of the ``delta`` of committed approximately-zCDP charges (``charge(..., delta=)``), else 0.

        Everything spent is then ``delta_spent``-approximately ``spent``-zCDP (Bun and Steinke 2016, section 8).
        """
        with self._account.transaction():
            return float(self._account.deltas())

    def epsilon_delta(self, delta: float | None = None) -> tuple[float, float]:
        """The (epsilon, delta)-DP guarantee of everything spent so far.

        A zCDP budget converts the rho spent by
        [`rho_to_epsilon_delta`][pgmpy_dp.privacy.parameters.rho_to_epsilon_delta] (the conversion of the
        sum of the rhos, not a sum of epsilons); a pure-DP budget's epsilon is what was spent, valid for
        any ``delta``. ``delta`` defaults to the budget's own for an (epsilon, delta) budget.
        Approximately-zCDP charges add their
        [`delta_spent`][pgmpy_dp.privacy.budget.PrivacyBudget.delta_spent] to the returned delta.

        Examples
        --------
        >>> b = PrivacyBudget(2.0)
        >>> with b.charge(0.5, "q"):
        ...     pass
        >>> b.epsilon_delta(1e-6)
        (0.5, 1e-06)
        """
        if delta is None:
            if self.delta is None:
                raise TypeError("epsilon_delta() needs a delta for a budget not given as (epsilon, delta); e.g. epsilon_delta(1e-9)")
            own = self.delta_spent  # the charges' own deltas come out of the budget's
            if own:
                return rho_to_epsilon_delta(self.spent, self.delta - own), self.delta
            delta = self.delta
        delta = check_delta(delta)
        spent = self.spent
        if self.accounting == "pure-dp" or spent == 0:
            return spent, delta
        return rho_to_epsilon_delta(spent, delta), delta + self.delta_spent

    # -- charging ------------------------------------------------------------------------
    def _cost(self, epsilon, rho) -> tuple[Fraction, Charge]:
        """Validate one charge's arguments; its exact cost in the budget's unit and its handle."""
        check_keywords(epsilon, rho, who="a charge", example="charge(0.5, label) or charge(rho=0.1, label=...)", with_delta=False)
        if rho is not None:
            rho = check_rho(rho)
            self.require(ZCDP(rho), who="a charge")  # a rho charge has no pure-DP meaning
            return _exact(rho), Charge(None, "", rho=rho, amount=rho)
        epsilon = check_epsilon(epsilon)
        if self.accounting == "pure-dp":
            return _exact(epsilon), Charge(epsilon, "", amount=epsilon)
        cost = _exact(epsilon) ** 2 / 2  # epsilon-DP implies (epsilon^2/2)-zCDP
        return cost, Charge(epsilon, "", rho=float(cost), amount=float(cost))

    def require(self, loss, *, who: str = "the fit") -> None:
        """Refuse, before anything is spent, a privacy loss this budget cannot account.

        A pure-epsilon budget accounts only [`PureDP`][pgmpy_dp.privacy.loss.PureDP] losses; a zCDP
        budget accounts all three kinds (a pure or approximate loss at the rho it implies).
        ``who`` names the spender in the error.

        Examples
        --------
        >>> from pgmpy_dp.privacy.loss import ZCDP
        >>> PrivacyBudget(1.0).require(ZCDP(0.5))
        Traceback (most recent call last):
        ...
        ValueError: the fit spends rho (zCDP), here rho=0.5, but this budget accounts in pure epsilon; pass delta for an (epsilon, delta) budget that zCDP fits can charge, e.g. PrivacyBudget(1, delta=1e-9) or PrivacyBudget.open(path, epsilon=1, delta=1e-9) (a new file: a pure-epsilon file stays pure), or create the budget as PrivacyBudget(rho=...)
        """
        if not isinstance(loss, LOSS_TYPES):
            raise TypeError(f"loss must be a PureDP, ZCDP or ApproxDP value, got {type(loss).__name__}")
        if self.accounting == "pure-dp" and not isinstance(loss, PureDP):
            eps = format_amount(self._account.total)
            raise ValueError(
                f"{who} spends rho (zCDP), here {loss}, but this budget accounts in pure epsilon; pass delta for an "
                f"(epsilon, delta) budget that zCDP fits can charge, e.g. PrivacyBudget({eps}, delta=1e-9) or "
                f"PrivacyBudget.open(path, epsilon={eps}, delta=1e-9) (a new file: a pure-epsilon file stays pure), "
                "or create the budget as PrivacyBudget(rho=...)"
            )

    @contextmanager
    def charge(self, epsilon: float | None = None, label: str = "", *, rho: float | None = None,
               delta: float | None = None):
        """Reserve a charge for the enclosed block; commit on success, refund on error.

        ``delta`` (zCDP budgets, with ``rho``) marks a ``delta``-approximately ``rho``-zCDP charge, such as a
        thresholded key release: the ledger entry keeps it, and
        [`epsilon_delta`][pgmpy_dp.privacy.budget.PrivacyBudget.epsilon_delta] adds it.

        Give exactly one of ``epsilon`` (pure DP; in a zCDP budget it costs
        ``epsilon**2 / 2``) or ``rho`` (zCDP budgets only), or a loss value
        (``PureDP``, ``ZCDP``, ``ApproxDP``) as the first argument. Yields a
        [`Charge`][pgmpy_dp.privacy.budget.Charge]; once the block calls its ``commit()`` (noise has been
        drawn) an error no longer refunds: the ledger records the charge with
        the label suffixed ``(failed after noise was drawn)``. Raises
        [`BudgetExceededError`][pgmpy_dp.privacy.budget.BudgetExceededError] on entry, before the block runs, if the
        charge does not fit.
        """
        if isinstance(epsilon, LOSS_TYPES) and rho is None:  # a loss value
            self.require(epsilon)
            kwargs = epsilon.charge_kwargs()
            epsilon, rho = kwargs.get("epsilon"), kwargs.get("rho")
        exact, handle = self._cost(epsilon, rho)
        handle.label = label
        if delta is not None:
            if rho is None:
                raise ValueError("a charge with delta= is delta-approximately rho-zCDP: give rho= with it")
            handle.delta = check_delta(delta)
        what = f"epsilon={epsilon:g}" if epsilon is not None else f"rho={rho:g}"
        if self.accounting == "zcdp" and epsilon is not None:
            what += f" (rho={float(exact):g})"
        key = uuid.uuid4().hex
        account = self._account
        with account.transaction(write=True):
            if handle.delta is not None and account.declared is None:
                raise ValueError(
                    f"a charge with its own delta ({label or 'a thresholded release'}, delta={handle.delta:g}) is "
                    "approximate DP, but this budget was given as rho alone and promises pure zCDP; open it as an "
                    "(epsilon, delta) budget, e.g. PrivacyBudget(1, delta=1e-9)"
                )
            capacity = account.capacity(handle.delta)  # the deltas taken shrink what the rho may reach
            available = capacity - account.spent - account.reserved
            if exact > available:  # strict: exact sums, no tolerance
                raise BudgetExceededError(
                    f"charge of {what} for {label or 'a release'} exceeds the remaining budget "
                    f"{format_amount(max(available, Fraction(0)))} of {format_amount(capacity)} ({self.unit}); "
                    "lower it or use a new budget"
                )
            account.pending[key] = (exact, label, datetime.now(timezone.utc).isoformat(), os.getpid(), handle.delta)
        # a reservation that is no longer pending was already counted as spent (another process took
        # this one for dead): recording it again would count it twice, refunding it would be unsafe
        try:
            yield handle
        except BaseException:
            with account.transaction(write=True):
                if account.pending.pop(key, None) is not None and handle.committed:
                    self._record(exact, handle, f"{label} (failed after noise was drawn)")
            raise
        with account.transaction(write=True):
            if account.pending.pop(key, None) is not None:
                self._record(exact, handle, label)

    def _record(self, exact: Fraction, handle: Charge, label: str) -> None:
        entry = LedgerEntry(handle.epsilon, label, rho=handle.rho, unit=self.unit, delta=handle.delta,
                            shown_at=self.delta)
        self._account.entries.append(entry)
        self._account.exact.append(exact)
        self._account.spent += exact

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path is not None else ""
        if self.delta is not None:
            with self._account.transaction():
                a = self._account
                spent, left = a.spent, max(Fraction(0), a.capacity() - a.spent - a.reserved)
                own = float(a.deltas())
            delta = self.delta - own  # the charges' own deltas come out of the budget's
            head = f"PrivacyBudget({_describe_total(a)}"
            spent_text = "spent nothing" if spent == 0 else f"spent {at_delta(float(spent), delta)}"
            left_text = "" if left == 0 or spent == 0 else f"; left {at_delta(float(left), delta)}"
            own_text = f" (and delta={own:g} taken by thresholded releases)" if own else ""
            return f"{head}; {spent_text}{own_text}{left_text}{where})"
        kind = "epsilon" if self.accounting == "pure-dp" else "rho"
        return f"PrivacyBudget({kind}={format_amount(self.total)}, spent={format_amount(self.spent)}{where})"


def at_delta(rho: float, delta: float) -> str:
    """``rho`` shown in the user's units: the epsilon its conversion gives at ``delta``, rho beside it.

    Examples
    --------
    >>> at_delta(0.005, 1e-9)
    'epsilon=0.5649 at delta=1e-09 [rho=0.005]'
    """
    return f"epsilon={rho_to_epsilon_delta(rho, delta):.4g} at delta={delta:g} [rho={rho:.4g}]"


def _given_as(account: Account) -> str:
    """A budget's total in its unit, with the user's (epsilon, delta) beside it when given so."""
    d = account.declared
    return format_amount(account.total) + ("" if d is None else f" (epsilon={d.epsilon:g}, delta={d.delta:g})")


def _describe_total(account: Account) -> str:
    """A budget's total in the user's units: ``epsilon=1, delta=1e-09 [rho=0.01497]``, ``epsilon=1`` or ``rho=0.5``."""
    declared = account.declared
    if declared is not None:
        return f"epsilon={declared.epsilon:g}, delta={declared.delta:g} [rho={float(account.total):.4g}]"
    kind = "epsilon" if account.accounting == "pure-dp" else "rho"
    return f"{kind}={format_amount(account.total)}"
