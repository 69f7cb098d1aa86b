"""The errors of the public domain: data, a request or a schema that does not fit what is declared.

[`DomainError`][pgmpy_dp.privacy.errors.DomainError] and its kinds are raised by
[`Domain`][pgmpy_dp.privacy.domain.Domain], by encoding ([`pgmpy_dp.privacy.encoding`][pgmpy_dp.privacy.encoding])
and by every release that checks a request against the domain; they live apart so that each can raise them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence


class DomainError(ValueError):
    """Data or a request does not fit the declared public domain."""


class CellLimitError(DomainError):
    """A table over the requested attributes would have too many cells."""


class UndeclaredColumnsError(DomainError):
    """Columns of the data have no public domain; the message lists them all with a schema template to fill.

    ``columns`` holds their names and ``template`` the JSON entries (from names and dtypes only, never values).
    """

    def __init__(self, message: str, columns: Sequence[str], template: str) -> None:
        super().__init__(message)
        self.columns, self.template = list(columns), template


class SchemaError(DomainError):
    """A schema file or text is not a valid ``pgmpy-dp/schema``; ``problems`` lists each, by field path."""

    def __init__(self, problems: Sequence[str], source=None, parameter: str = "") -> None:
        self.problems = list(problems)
        path = isinstance(source, os.PathLike) or (isinstance(source, str) and not source.lstrip().startswith("{"))
        where = f" {os.fspath(source)!r}" if path else ""
        text = "; ".join(self.problems)
        unread = text.startswith("(file): ")  # the file could not be read: nothing to validate
        super().__init__(f"{parameter + ': ' if parameter else ''}"
                         + (text[len("(file): "):] if unread else f"the schema{where} is not valid: {text}"))

