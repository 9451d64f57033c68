"""Atomic file writes: readers see the old file or the whole new one, never half of it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: str | bytes, mode: int = 0o644) -> None:
    """Write a file so that readers see either the old content or the whole new content.

    Args:
        path: The file to write (its folder is created if missing).
        data: Text (written as UTF-8) or bytes.
        mode: Its permissions (mkstemp's temporary file is private; reports and feedback are handed out).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
            os.fchmod(handle.fileno(), mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
