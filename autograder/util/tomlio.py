"""Read TOML on every supported Python (tomllib from 3.11, tomli before) and write it (tomli_w)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import tomli_w

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

TOMLDecodeError = tomllib.TOMLDecodeError


def load_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file.

    Args:
        path: The file to read.

    Returns:
        The parsed document.

    Raises:
        OSError: If the file cannot be read.
        TOMLDecodeError: If the file is not valid TOML.
    """
    with open(path, "rb") as handle:
        return tomllib.load(handle)


def loads_toml(text: str) -> dict[str, Any]:
    """Parse TOML text (see load_toml)."""
    return tomllib.loads(text)


def dumps_toml(document: dict[str, Any]) -> str:
    """A document as TOML text (tomli_w: every key and string quoted and escaped as TOML requires).

    Raises:
        TypeError: If a value has no TOML type (None, an object).
    """
    return tomli_w.dumps(document)
