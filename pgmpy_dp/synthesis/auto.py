"""``method="auto"``: AIM or MST, chosen from the public number of columns before anything is spent.

AIM chooses what to measure from the current model's errors and wins on mid-sized tables of few columns;
on wide tables its rounds are many (16 per column) and each is thinly funded, so MST, which spends a third
of the budget on each of three steps, is both more accurate and an order of magnitude faster
(docs/decisions.md, "The default method"). The choice reads the declared domain only (its number of
columns), never the data and never a noisy output: it is the same on any two neighbouring tables, spends
nothing, and a saved synthesizer's choice is recomputed from its published domain.
"""

from __future__ import annotations

from ..privacy.domain import Domain
from ..privacy.loss import PrivacyLoss
from .aim import AIM, check_max_seconds
from .method import Measurements, Method, Plan
from .mst import MST

#: Tables of more than this many columns are fitted by MST; up to it, by AIM.
AUTO_MST_COLUMNS = 20


def choose_method(domain: Domain) -> Method:
    """The method ``"auto"`` runs on ``domain``: MST beyond ``AUTO_MST_COLUMNS`` columns, else AIM.

    Examples
    --------
    >>> choose_method(Domain({f"c{i}": [0, 1] for i in range(20)})).name
    'aim'
    >>> choose_method(Domain({f"c{i}": [0, 1] for i in range(21)})).name
    'mst'
    """
    return MST if len(domain.attrs) > AUTO_MST_COLUMNS else AIM


class Auto(Method):
    """AIM up to ``AUTO_MST_COLUMNS`` columns, MST beyond; it reads AIM's settings when it runs AIM.

    With MST chosen, ``max_seconds`` goes unused (MST's three steps are fixed and take seconds) and a
    ``workload`` is refused: only AIM fits one, so ask for ``method="aim"``.

    Examples
    --------
    >>> from pgmpy_dp.privacy.loss import ZCDP
    >>> plan = AUTO.check(Domain({"a": [0, 1], "b": [0, 1]}), ZCDP(1.0))
    >>> plan.options["method"].name, plan.loss
    ('aim', ZCDP(rho=1.0))
    """

    name = "auto"
    settings = AIM.settings

    def chosen(self, domain: Domain) -> str:
        """The name of the method run on ``domain`` (public facts only)."""
        return choose_method(domain).name

    def check(self, domain: Domain, loss: PrivacyLoss, workload=None, max_model_size: float = 80.0,
              max_seconds: float | None = None) -> Plan:
        method = choose_method(domain)
        if method is AIM:
            inner = AIM.check(domain, loss, workload=workload, max_model_size=max_model_size, max_seconds=max_seconds)
        else:
            if workload is not None:
                raise ValueError(
                    f"method='auto' runs MST on this table ({len(domain.attrs)} columns, more than "
                    f"{AUTO_MST_COLUMNS}), and MST fits no workload; use method='aim' to fit AIM to the "
                    "workload, or leave workload=None"
                )
            check_max_seconds(max_seconds)  # refused as AIM would, though MST has no use for it
            inner = MST.check(domain, loss)
        return Plan(domain, inner.loss, {"method": method, "plan": inner})

    def run(self, codes, plan: Plan, recorder: Measurements, rng, show_progress: bool):
        return plan.options["method"].run(codes, plan.options["plan"], recorder, rng, show_progress)


#: The auto method object of the synthesizer's registry.
AUTO = Auto()
