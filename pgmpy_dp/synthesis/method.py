"""The protocol of the synthesizer's selection methods, and the recorder that keeps what was paid for.

[`Method.check`][pgmpy_dp.synthesis.method.Method.check] reads public facts only and returns a
[`Plan`][pgmpy_dp.synthesis.method.Plan] (nothing is spent); the caller charges ``plan.loss`` and calls
[`Method.run`][pgmpy_dp.synthesis.method.Method.run], which hands every noisy output to a
[`Measurements`][pgmpy_dp.synthesis.method.Measurements] recorder the moment it exists: the first commits the
charge, and whatever fails afterwards (an error, Ctrl-C), the recorder holds what the budget paid for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..privacy.domain import Domain
from ..privacy.loss import PrivacyLoss, PureDP


class Measurements:
    """The noisy outputs of one run, kept as they are drawn; the first commits the charge.

    Parameters
    ----------
    on_noise : callable, optional
        Called once when the first noisy output exists (a charge's ``commit``).

    Attributes
    ----------
    releases : list of MarginalRelease
        Every release, in the order drawn.
    selected : list
        Every noisy selection, in the order drawn (a method may also record data-free choices).
    noisy : bool
        Whether any noisy output exists yet.

    Examples
    --------
    >>> committed = []
    >>> rec = Measurements(on_noise=lambda: committed.append(True))
    >>> rec.noisy, committed
    (False, [])
    >>> rec.select(("a", "b"))
    ('a', 'b')
    >>> rec.noisy, committed, rec.selected
    (True, [True], [('a', 'b')])
    """

    def __init__(self, on_noise=None) -> None:
        self.releases: list = []
        self.selected: list = []
        self.noisy = False
        self.on_noise = on_noise

    def noise(self) -> None:
        """Say that a noisy output exists (commits the charge on the first call)."""
        if not self.noisy:
            self.noisy = True
            if self.on_noise is not None:
                self.on_noise()

    def release(self, release):
        """Keep one release (a noisy output); returns it."""
        self.noise()
        self.releases.append(release)
        return release

    def select(self, choice):
        """Keep one noisy selection; returns it."""
        self.noise()
        self.selected.append(choice)
        return choice


@dataclass(frozen=True)
class Plan:
    """What a method will do, checked from public facts only.

    Attributes
    ----------
    domain : Domain
        The public domain of every column.
    loss : PureDP, ZCDP or ApproxDP
        What the run spends, exactly: the amount to charge.
    options : dict
        The method's own checked settings (e.g. AIM's workload).
    """

    domain: Domain
    loss: PrivacyLoss
    options: dict[str, Any] = field(default_factory=dict)


class Method:
    """A selection method of the synthesizer: ``check`` (public facts -> plan), then ``run`` (with the charge).

    Subclasses set ``name`` and ``settings`` (the synthesizer parameters they read, e.g. AIM's
    ``workload``) and implement both steps.
    """

    name: str = ""
    settings: tuple[str, ...] = ()

    def check(self, domain: Domain, loss: PrivacyLoss, **settings) -> Plan:
        """Refuse, from public facts only, what the method cannot run; return its plan (nothing is spent)."""
        raise NotImplementedError

    def chosen(self, domain: Domain, releases=(), **settings) -> str:
        """The name of the method that ran on ``domain``: this one (a delegating method names its choice,
        recomputed from public facts, its ``settings`` and the published ``releases``)."""
        return self.name

    def run(self, codes, plan: Plan, recorder: Measurements, rng, show_progress: bool):
        """Run under ``plan`` on the rows' [`Counter`][pgmpy_dp.tables.counter.Counter] (in memory or on Dask;
        encoded codes are accepted too); return ``(model, releases, selected)``. A method only asks the
        counter for exact tables, so it never sees a row.

        Every noisy output goes to ``recorder`` as soon as it exists (the first commits the charge).
        """
        raise NotImplementedError

    def zcdp_rho(self, loss: PrivacyLoss) -> float:
        """The rho a zCDP method spends; a pure epsilon has no delta to convert with.

        Examples
        --------
        >>> from pgmpy_dp.privacy.loss import ApproxDP
        >>> m = Method()
        >>> m.name = "mst"
        >>> round(m.zcdp_rho(ApproxDP(1.0, 1e-6)), 5)
        0.02436
        >>> m.zcdp_rho(PureDP(1.0))
        Traceback (most recent call last):
        ...
        ValueError: method='mst' is a zCDP method: epsilon needs a delta, e.g. PrivateSynthesizer(epsilon=1, delta=1e-9), or give rho= directly
        """
        if isinstance(loss, PureDP):
            raise ValueError(
                f"method={self.name!r} is a zCDP method: epsilon needs a delta, e.g. "
                f"PrivateSynthesizer(epsilon={loss.epsilon:g}, delta=1e-9), or give rho= directly"
            )
        return loss.rho
