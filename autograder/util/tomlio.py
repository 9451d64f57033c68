"""Read TOML on every supported Python (tomllib from 3.11, tomli before)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

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
