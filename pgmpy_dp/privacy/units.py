"""The privacy unit as one value: who is protected when one individual owns many rows.

Record-level privacy (``privacy_unit=None``) protects one row; ``UserLevel`` (or a plain column label)
protects every row of one individual. The bounding is done by ``pgmpy_dp.tables.contribution`` (docs/privacy.md).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass


@dataclass(frozen=True)
class UserLevel:
    """Individual-level privacy: neighbouring datasets differ by all rows of one individual.

    Parameters
    ----------
    column : column label
        The column naming the individual (any hashable values, NaN refused). It is read only
        to group rows: never released, never a table attribute or a declared domain.
    max_records : int, optional
        Rows kept per individual, sampled uniformly at random before counting (required
        by ``"clip"``, optional with ``"normalize"``).
    contribution : {"normalize", "clip"}
        ``"normalize"``: in each table an individual's counted rows share weight 1, so every
        table has sensitivity 1 (released counts are then fractional). ``"clip"``: at most
        ``max_records`` rows per individual count with weight 1; sensitivity ``max_records``.
    skip_state : public state, optional
        A row whose values on a table's attributes all equal this state (e.g. ``"null"`` for
        a null-to-null transition) is not counted in that table. Estimators refuse such
        releases: skipped tables do not measure the model's ``p(x)``.

    Examples
    --------
    >>> import pandas as pd, pgmpy_dp
    >>> df = pd.DataFrame({"a": ["x", "y", "y"], "person": ["ann", "bob", "bob"]})
    >>> unit = pgmpy_dp.UserLevel("person", max_records=1, contribution="clip")
    >>> rel = df.dp.release(["a"], epsilon=1.0, domain={"a": ["x", "y"]}, privacy_unit=unit)
    >>> rel.privacy_unit["column"], rel["a"].sensitivity
    ('person', 1.0)
    """

    column: Hashable
    max_records: int | None = None
    contribution: str = "normalize"
    skip_state: object = None


def unit_keywords(privacy_unit) -> dict:
    """The contribution keywords ``privacy_unit`` stands for (``None`` means record-level privacy).

    The keywords of ``pgmpy_dp.tables.contribution.check_contribution``, which checks their values.

    Examples
    --------
    >>> unit_keywords("person") == unit_keywords(UserLevel("person"))
    True
    >>> unit_keywords(None)["privacy_unit"] is None
    True
    """
    if privacy_unit is None:
        return dict(privacy_unit=None, contribution="normalize", max_records_per_user=None, skip_state=None)
    if not isinstance(privacy_unit, UserLevel):
        try:
            hash(privacy_unit)
        except TypeError:
            raise TypeError(
                f"privacy_unit must be a column label or a pgmpy_dp.UserLevel, got {type(privacy_unit).__name__}"
            ) from None
        privacy_unit = UserLevel(privacy_unit)
    if privacy_unit.column is None:
        raise ValueError("UserLevel needs the column naming the individual, e.g. UserLevel('person'), got None")
    return dict(
        privacy_unit=privacy_unit.column, contribution=privacy_unit.contribution,
        max_records_per_user=privacy_unit.max_records, skip_state=privacy_unit.skip_state,
    )
