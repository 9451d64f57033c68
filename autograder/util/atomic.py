"""Atomic file writes: readers see the old file or the whole new one, never half of it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from autograder.errors import WriteFailed
from autograder.util.paths import display_path


def write_atomic(path: Path, data: str | bytes, mode: int = 0o644) -> None:
    """Write a file so that readers see either the old content or the whole new content.

    Args:
        path: The file to write (its folder is created if missing).
        data: Text (written as UTF-8) or bytes.
        mode: Its permissions (mkstemp's temporary file is private; reports and feedback are handed out).

    Raises:
        WriteFailed: If the file cannot be written (a full disk, a read-only folder): one sentence for the user;
            the file holds what it held before, and no temporary file is left beside it.
    """
    temporary: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
            os.fchmod(handle.fileno(), mode)
        os.replace(temporary, path)
    except BaseException as exc:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise WriteFailed(write_failed_message(path, exc, atomic=True)) from exc  # the cause, for a caller
        raise


def write_failed_message(path: Path | str | None, error: OSError, atomic: bool = False) -> str:
    """``could not write class.csv: no space left on device; ...``: the one sentence of a write that failed
    (``atomic``: by :func:`write_atomic`, which leaves no file half-written)."""
    reason = (error.strerror or str(error)).lower()
    shown = display_path(Path(path)) if path else "a file"
    kept = (" no file was left half-written (this one is as it was, those written before it are whole):" if atomic
            else "")
    return f"could not write {shown}: {reason};{kept} make room or choose another place, then run the command again"
