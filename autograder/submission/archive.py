"""Unpack the entries of a zip archive the grader may use, safely and within bounds; list the others unread."""

from __future__ import annotations

import stat
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from autograder.errors import SubmissionError
from autograder.util.safety import printable

MAX_ARCHIVE_MEMBERS = 5000
# What the wanted entries of one archive may amount to once unpacked (each is also bounded on its own).
MAX_UNPACKED_BYTES = 200 * 1024 * 1024


@dataclass
class Unpacked:
    """What :func:`unpack_zip` did.

    Attributes:
        root: The folder the wanted entries were written to.
        skipped: The entries left in the archive, unread (posix names as in the archive).
        sizes: The uncompressed size each unpacked file has in the archive, by its path on disk: a file cut at its
            bound keeps its real size here, for the message about it.
    """

    root: Path
    skipped: list[str] = field(default_factory=list)
    sizes: dict[Path, int] = field(default_factory=dict)


def unpack_zip(archive: Path, destination: Path, label: str, bound: Callable[[str], int | None]) -> Unpacked:
    """Unpack the entries ``bound`` wants: no absolute or ``..`` paths, no links, each at most its bound plus one byte.

    An entry the grader does not want is never read, so it counts toward no limit; a wanted entry larger than its
    bound is cut one byte past it (the reader sees it is too large, and :attr:`Unpacked.sizes` says by how much).

    Args:
        archive: The zip file.
        destination: An empty folder to unpack into (created).
        label: How messages name the archive (the name the user gave).
        bound: For an entry's posix name, the most bytes the grader may read of it, or None to leave it.

    Returns:
        Where the entries went, and which were left.

    Raises:
        SubmissionError: If the archive is broken, holds unsafe entries, or its wanted entries are too large.
    """
    unpacked = Unpacked(destination)
    destination.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(archive) as bundle:
            members = bundle.infolist()
            if len(members) > MAX_ARCHIVE_MEMBERS:
                raise SubmissionError(f"{label}: too many files ({len(members)} > {MAX_ARCHIVE_MEMBERS})")
            for member in members:
                _check_member(label, member)
            total = 0
            for member in members:
                limit = None if member.is_dir() else bound(_posix(member.filename))
                if limit is None:
                    if not member.is_dir():
                        unpacked.skipped.append(_posix(member.filename))
                    continue
                total += min(member.file_size, limit + 1)
                if total > MAX_UNPACKED_BYTES:
                    raise SubmissionError(f"{label}: the files the grader reads in it are more than "
                                          f"{MAX_UNPACKED_BYTES >> 20} MiB uncompressed")
                target = destination.joinpath(*PurePosixPath(_posix(member.filename)).parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                with bundle.open(member) as source, open(target, "wb") as sink:
                    sink.write(source.read(limit + 1))  # a lying header cannot make this read more
                unpacked.sizes[target] = max(member.file_size, target.stat().st_size)
    except UnicodeDecodeError:
        raise SubmissionError(f"{label}: a file name in it is not valid UTF-8 although the archive says it is; "
                              f"make the zip again (e.g. `zip -r`) or rename that file") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError, ValueError) as exc:
        raise SubmissionError(f"{label} is a damaged zip archive ({printable(exc)[:200]}): make it again (e.g. "
                              f"`zip -r`) or download it again") from None
    except OSError as exc:
        raise SubmissionError(f"cannot unpack {label}: {exc.strerror or exc}") from None
    return unpacked


def meant_as_zip(path: Path) -> bool:
    """Whether a file is a zip archive, or was meant to be one (named ``.zip``, or starting as one does): a damaged
    one is said to be damaged (by :func:`unpack_zip`), not to be something else."""
    if zipfile.is_zipfile(path) or path.suffix.lower() == ".zip":
        return True
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def _posix(name: str) -> str:
    return name.replace("\\", "/")


def _check_member(label: str, member: zipfile.ZipInfo) -> None:
    path = PurePosixPath(_posix(member.filename))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise SubmissionError(f"{label}: unsafe path {printable(member.filename)!r} in archive")
    if stat.S_ISLNK(member.external_attr >> 16):
        raise SubmissionError(f"{label}: symbolic link {printable(member.filename)!r} in archive")
