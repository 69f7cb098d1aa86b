"""Thin data, said: a warning when the noisy outputs show that the noise swamps the table.

A synthesizer's model can only be as good as its 1-way marginals. When the typical cell of a
column's noisy 1-way table holds fewer records than one noise standard deviation, the model is
mostly noise; the fit then warns once with the numbers. The rule reads only released values (the
noisy tables and their public noise scales): it is post-processing and spends nothing, and its
decision is the same function of the release on either of two neighbouring tables.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

from ..tables.artifact import pooled_record_count

#: A column is thin when its noisy record count per cell is below this many noise standard deviations.
THIN_CELL_SNR = 1.0


class ThinDataWarning(UserWarning):
    """The noise of a synthesizer's measurements swamps the table (see ``thin_data``)."""


@dataclass(frozen=True)
class ThinData:
    """What the noisy outputs say about the table's size against the noise.

    Attributes
    ----------
    n_records : float
        The noisy record count (inverse-variance mean of every released table's total).
    snr : dict of str to float
        Per column: noisy records per cell of a 1-way table over the noise standard deviation of its
        cells, for the best resolved of the 1-way tables implied by the released tables holding it.
    noise_sd : dict of str to float
        Per column: the noise standard deviation of each cell of that implied 1-way table.
    """

    n_records: float
    snr: dict
    noise_sd: dict

    @property
    def thin(self) -> list[str]:
        """The columns whose typical cell is below ``THIN_CELL_SNR`` noise deviations."""
        return [a for a, r in self.snr.items() if r < THIN_CELL_SNR]

    @property
    def swamped(self) -> bool:
        """Whether the noise swamps the table: at least half of the columns are thin."""
        return 2 * len(self.thin) >= len(self.snr) > 0

    def message(self) -> str:
        """The warning's text: the numbers and what to do."""
        worst = sorted(self.snr, key=self.snr.get)[:3]
        shown = ", ".join(
            f"{a!r} {self.snr[a]:.2g} (noise sd {self.noise_sd[a]:.3g} per cell)" for a in worst
        )
        return (
            f"the noise swamps the table: its noisy record count is {self.n_records:,.0f}, and in "
            f"{len(self.thin)} of {len(self.snr)} columns a typical cell of the noisy 1-way marginal holds fewer "
            f"records than one noise standard deviation (records per cell over noise sd: {shown}); the model "
            "will be mostly noise. Use a larger epsilon, coarser domains (fewer states or bins per column) or "
            "fewer columns"
        )


def thin_data(releases) -> ThinData | None:
    """The noisy record count against each column's 1-way noise, from released values alone.

    Summing a released table over its other columns gives a noisy 1-way table of each of its
    columns (post-processing) whose cells carry the summed noise variance; each column is judged by
    the best resolved such table (records per cell over noise sd; a table over merged states counts its
    merged cells). ``None`` when nothing noisy was released.

    Examples
    --------
    >>> import numpy as np
    >>> from pgmpy_dp.tables.artifact import NoisyTable
    >>> t = NoisyTable(("a",), np.array([40.0, 35.0, 30.0, 20.0]), epsilon=None, scale=50.0,
    ...                mechanism="discrete_gaussian", rho=0.0002)
    >>> report = thin_data([[t]])
    >>> round(report.n_records), round(report.snr["a"], 2), report.swamped
    (125, 0.62, True)
    """
    tables = [t for release in releases for t in release if t.members is None and t.variance > 0]
    if not tables:
        return None
    n_records = pooled_record_count(tables)
    snr: dict[str, float] = {}
    noise_sd: dict[str, float] = {}
    for t in tables:
        for axis, a in enumerate(t.attrs):
            states = t.values.shape[axis]  # a compressed table (MST's merged states) has fewer
            if states < 2:  # every state merged into one: the table says nothing of this column
                snr.setdefault(a, 0.0)
                noise_sd.setdefault(a, math.sqrt(t.variance * t.values.size))
                continue
            sd = math.sqrt(t.variance * t.values.size / states)
            ratio = max(n_records, 0.0) / states / sd
            if ratio > snr.get(a, -math.inf):
                snr[a], noise_sd[a] = ratio, sd
    return ThinData(n_records, snr, noise_sd)


def warn_if_thin(releases, who: str = "PrivateSynthesizer") -> ThinData | None:
    """Warn once (``ThinDataWarning``) when ``thin_data(releases)`` is swamped; returns the report."""
    report = thin_data(releases)
    if report is not None and report.swamped:
        warnings.warn(f"{who}: {report.message()}", ThinDataWarning, stacklevel=3)
    return report
