"""The reference's outputs persisted on disk by assignment fingerprint, so a fresh grader need not recompute them.

One submission graded alone (a fresh Gradescope container, a CI runner) would otherwise run every probe twice:
on the student's code in the sandbox and on the reference in the parent. The store keeps what the parent
computed, under a key that changes whenever anything that decides those outputs changes (the assignment's
checks, reference, assets and seed: :func:`autograder.spec.fingerprint.assignment_fingerprint`; the grader's
own probe and transport code; torch's version).

Only the grader writes the store (a private folder, mode 0700, hidden from jobs like the assignments: see
:func:`cache_root`). It is still read as if it could be damaged: an entry that is missing, truncated, of another
key or not decodable is recomputed and rewritten, never trusted half-way.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import platformdirs

APP_NAME = "transformer-autograder"  # the cache folder's name under the platform's cache folder
CACHE_VARIABLE = "GRADER_CACHE_DIR"  # a folder for the store; "off" disables it
FORMAT = 1
MAX_ENTRY_BYTES = 256 * 1024 * 1024  # far above any check's outputs (the transport caps them lower)
_ENGINE_FILES = ("probe/checks.py", "probe/context.py", "probe/helpers.py", "judge/transport.py",
                 "judge/refcache.py")


def cache_root() -> Path | None:
    """The folder of the store, created (mode 0700) if needed; None when disabled or impossible here.

    ``$GRADER_CACHE_DIR`` if set (``off`` disables the store), else the platform's cache folder for
    ``transformer-autograder`` as platformdirs names it (``$XDG_CACHE_HOME/transformer-autograder``, else
    ``~/.cache/transformer-autograder`` on Linux). Created before any worker starts, so that the workers'
    protected folders (autograder.sandbox.host.default_protected) include it.
    """
    chosen = os.environ.get(CACHE_VARIABLE, "")
    if chosen.strip().lower() == "off":
        return None
    root = Path(chosen) if chosen else Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        if root.is_symlink() or not root.is_dir() or root.stat().st_uid != os.geteuid():
            return None  # a folder someone else owns is not the grader's own
        os.chmod(root, 0o700)
    except OSError:
        return None
    return root.resolve()


def engine_digest() -> str:
    """A hash of the grader code that decides how a probe runs and how outputs are encoded, and torch's version."""
    import torch

    from autograder.util.paths import PACKAGE_ROOT

    digest = hashlib.sha256(f"format {FORMAT}; torch {torch.__version__}".encode())
    for name in _ENGINE_FILES:
        path = PACKAGE_ROOT / "autograder" / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"<missing>") + b"\0")
    return digest.hexdigest()


class ReferenceStore:
    """The reference's encoded outputs of one assignment version, one pair of files per check and seed.

    Args:
        folder: The store's folder for this key (created on the first write).
        key: The key its entries must carry (fingerprint and engine digest).
    """

    def __init__(self, folder: Path, key: str) -> None:
        self.folder = folder
        self.key = key
        self.hits = 0
        self.misses = 0

    @classmethod
    def for_assignment(cls, fingerprint: str) -> "ReferenceStore | None":
        """The store for an assignment's fingerprint, or None when there is no usable cache folder."""
        root = cache_root()
        if root is None:
            return None
        key = hashlib.sha256(f"{fingerprint}:{engine_digest()}".encode()).hexdigest()
        return cls(root / f"reference-{key[:32]}", key)

    def _paths(self, name: str) -> tuple[Path, Path]:
        stem = hashlib.sha256(name.encode()).hexdigest()[:40]
        return self.folder / f"{stem}.json", self.folder / f"{stem}.safetensors"

    def get(self, name: str) -> tuple[dict[str, Any], bytes | None] | None:
        """The encoded outputs stored under ``name`` (``check:seed``), or None if absent or not intact."""
        meta_path, tensor_path = self._paths(name)
        try:
            with open(meta_path, "rb") as handle:
                meta = json.loads(handle.read(MAX_ENTRY_BYTES))
            if not isinstance(meta, dict) or meta.get("key") != self.key or meta.get("name") != name:
                raise ValueError("an entry of another key")
            values, digest = meta.get("values"), meta.get("tensors_sha256")
            if not isinstance(values, dict):
                raise ValueError("no values")
            tensors = None
            if digest is not None:
                with open(tensor_path, "rb") as handle:
                    tensors = handle.read(MAX_ENTRY_BYTES)
                if hashlib.sha256(tensors).hexdigest() != digest:
                    raise ValueError("tensors of another entry")
        except (OSError, ValueError):  # absent, truncated or foreign: recomputed by the caller
            self.misses += 1
            return None
        self.hits += 1
        return values, tensors

    def put(self, name: str, values: dict[str, Any], tensors: bytes | None) -> None:
        """Store encoded outputs atomically (tensors first: an entry is complete once its JSON file exists).

        A store that cannot be written (a full or read-only disk) only costs the next grader the recomputation.
        """
        meta_path, tensor_path = self._paths(name)
        meta = {"key": self.key, "name": name, "values": values,
                "tensors_sha256": hashlib.sha256(tensors).hexdigest() if tensors is not None else None}
        try:
            self.folder.mkdir(mode=0o700, exist_ok=True)
            if tensors is not None:
                _write_atomic_bytes(tensor_path, tensors)
            _write_atomic_bytes(meta_path, json.dumps(meta).encode())
        except (OSError, ValueError):
            pass


def _write_atomic_bytes(path: Path, data: bytes) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
