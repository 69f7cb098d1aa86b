"""``method="auto"``: AIM or MST, chosen from public facts and one noisy record count.

AIM chooses what to measure from the current model's errors and wins on large tables of few columns; on
wide tables its rounds are many (16 per column) and each is thinly funded, and on small tables its
thinly funded rounds lose to MST, which spends a third of the budget on each of three steps and is both
more accurate there and an order of magnitude faster (docs/decisions.md, "The default method").

The rule: MST beyond ``AUTO_MST_COLUMNS`` declared columns (public, nothing spent); with a ``workload``,
AIM (only AIM fits one; nothing spent). Otherwise ``AUTO_COUNT_SHARE`` of rho buys one noisy record count
(the 1-way table of the column of fewest states, the first release of ``releases_``) and MST runs when
its total is below ``AUTO_MST_RECORDS``, AIM otherwise, on the rest of rho. The decision reads that
release only, so it is post-processing of a charged output, and a saved synthesizer's choice is
recomputed from its published releases.
"""

from __future__ import annotations

import numpy as np

from ..privacy.domain import Domain
from ..privacy.loss import ZCDP, PrivacyLoss
from .aim import AIM, check_max_seconds
from .marginals import measure
from .method import Measurements, Method, Plan
from .mst import MST

#: Tables of more than this many columns are fitted by MST, whatever their size.
AUTO_MST_COLUMNS = 20
#: Up to ``AUTO_MST_COLUMNS`` columns (and no workload), tables of fewer noisy records are fitted by MST.
AUTO_MST_RECORDS = 20_000
#: The share of rho spent on the noisy record count when the count decides.
AUTO_COUNT_SHARE = 0.02
#: The ledger label of the count's release.
COUNT_LABEL = "auto: record count"


def counts(domain: Domain, workload=None) -> bool:
    """Whether ``"auto"`` spends a noisy record count on ``domain`` (public facts only).

    Examples
    --------
    >>> counts(Domain({"a": [0, 1]})), counts(Domain({f"c{i}": [0, 1] for i in range(21)}))
    (True, False)
    >>> counts(Domain({"a": [0, 1], "b": [0, 1]}), workload=[("a", "b")])
    False
    """
    return len(domain.attrs) <= AUTO_MST_COLUMNS and workload is None


def count_column(domain: Domain) -> str:
    """The column whose 1-way table carries the count: the one of fewest states (first on ties; public)."""
    return min(domain.attrs, key=lambda a: int(np.prod(domain.shape((a,)))))


def noisy_count(release) -> float:
    """The noisy record count of the count's release: the total of its one 1-way table (post-processing)."""
    return float(release.tables[0].values.sum())


def choose_method(domain: Domain, n_hat: float | None = None, workload=None) -> Method:
    """The method ``"auto"`` runs: MST beyond ``AUTO_MST_COLUMNS`` columns; AIM with a workload; else MST
    when the noisy count ``n_hat`` is below ``AUTO_MST_RECORDS``, AIM otherwise.

    Examples
    --------
    >>> wide = Domain({f"c{i}": [0, 1] for i in range(21)})
    >>> narrow = Domain({f"c{i}": [0, 1] for i in range(20)})
    >>> choose_method(wide).name, choose_method(narrow, 1_000.0).name, choose_method(narrow, 50_000.0).name
    ('mst', 'mst', 'aim')
    """
    if len(domain.attrs) > AUTO_MST_COLUMNS:
        return MST
    if workload is not None:
        return AIM
    if n_hat is None:
        raise ValueError("method='auto' on this table chooses from its noisy record count; give n_hat")
    return MST if n_hat < AUTO_MST_RECORDS else AIM


class Auto(Method):
    """MST beyond ``AUTO_MST_COLUMNS`` columns; else a noisy record count picks MST (small) or AIM (large).

    AIM's settings are read when AIM runs. With MST chosen, ``max_seconds`` goes unused (MST's three steps
    are fixed and take seconds). A ``workload`` runs AIM on narrow tables and is refused on wide ones: only
    AIM fits one, so ask for ``method="aim"`` there.

    Examples
    --------
    >>> plan = AUTO.check(Domain({"a": [0, 1], "b": [0, 1]}), ZCDP(1.0))
    >>> plan.loss, plan.options["count_rho"], sorted(plan.options["plans"])
    (ZCDP(rho=1.0), 0.02, ['aim', 'mst'])
    """

    name = "auto"
    settings = AIM.settings

    def chosen(self, domain: Domain, releases=(), workload=None, **settings) -> str:
        """The name of the method run on ``domain``, recomputed from public facts and the published releases."""
        if not counts(domain, workload):
            return choose_method(domain, workload=workload).name
        if not releases or [t.attrs for t in releases[0].tables] != [(count_column(domain),)]:
            raise ValueError("method='auto' chose from a noisy record count: the first release must be the "
                             f"1-way table of {count_column(domain)!r}")
        return choose_method(domain, noisy_count(releases[0])).name

    def check(self, domain: Domain, loss: PrivacyLoss, workload=None, max_model_size: float = 80.0,
              max_seconds: float | None = None) -> Plan:
        if len(domain.attrs) > AUTO_MST_COLUMNS and workload is not None:
            raise ValueError(
                f"method='auto' runs MST on this table ({len(domain.attrs)} columns, more than "
                f"{AUTO_MST_COLUMNS}), and MST fits no workload; use method='aim' to fit AIM to the "
                "workload, or leave workload=None"
            )
        check_max_seconds(max_seconds)  # refused as AIM would, though MST has no use for it
        rho = self.zcdp_rho(loss)
        if not counts(domain, workload):
            method = choose_method(domain, workload=workload)
            inner = (AIM.check(domain, loss, workload=workload, max_model_size=max_model_size, max_seconds=max_seconds)
                     if method is AIM else MST.check(domain, loss))
            return Plan(domain, inner.loss, {"count_rho": 0.0, "plans": {method.name: inner}})
        count_rho = AUTO_COUNT_SHARE * rho
        rest = ZCDP(rho - count_rho)
        plans = {"aim": AIM.check(domain, rest, max_model_size=max_model_size, max_seconds=max_seconds),
                 "mst": MST.check(domain, rest)}  # both checked before any charge
        return Plan(domain, loss, {"count_rho": count_rho, "plans": plans})  # the claim, charged once

    def run(self, codes, plan: Plan, recorder: Measurements, rng, show_progress: bool):
        plans = plan.options["plans"]
        if plan.options["count_rho"] == 0.0:
            (name, inner), = plans.items()
            return {"aim": AIM, "mst": MST}[name].run(codes, inner, recorder, rng, show_progress)
        column = count_column(plan.domain)
        count = recorder.release(measure(codes, plan.domain, [(column,)], plan.options["count_rho"], rng, COUNT_LABEL))
        method = choose_method(plan.domain, noisy_count(count))
        inner = Measurements()  # the chosen method fits on its own releases; all are kept in ``recorder``
        try:
            model, _, selected = method.run(codes, plans[method.name], inner, rng, show_progress)
        finally:
            recorder.releases.extend(inner.releases)
            recorder.selected.extend(inner.selected)
        return model, list(recorder.releases), selected


#: The auto method object of the synthesizer's registry.
AUTO = Auto()
