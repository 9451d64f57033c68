"""The fingerprint of a raw submission that cannot be graded, so an unchanged one is not retried."""

from __future__ import annotations

import hashlib
from pathlib import Path

RAW_DIGEST_MAX_FILES = 5000


RAW_DIGEST_MAX_BYTES = 1 << 20


def raw_digest(path: Path) -> str:
    """A content hash of an unusable submission (a broken zip, no package), so an unchanged one is not retried.

    Bounded: at most RAW_DIGEST_MAX_FILES files and the first RAW_DIGEST_MAX_BYTES of each (plus its size).
    """
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    for file in files[:RAW_DIGEST_MAX_FILES]:
        name = b"" if file == path else file.relative_to(path).as_posix().encode()
        try:
            digest.update(name + b"\0" + str(file.stat().st_size).encode() + b"\0")
            with open(file, "rb") as handle:
                digest.update(handle.read(RAW_DIGEST_MAX_BYTES))
        except OSError:
            digest.update(b"<unreadable>")
    return "raw:" + digest.hexdigest()
