"""Find a student's package in a folder or zip and copy only the files the assignment declares as theirs."""

from __future__ import annotations

import ast
import hashlib
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from autograder.errors import SubmissionError
from autograder.spec.assignment import Assignment
from autograder.util.safety import printable

MAX_ARCHIVE_BYTES = 50 * 1024 * 1024
MAX_ARCHIVE_MEMBERS = 5000
MAX_STUDENT_FILE_BYTES = 2 * 1024 * 1024
SEARCH_DEPTH = 3


@dataclass
class PreparedSubmission:
    """A submission copied into a private folder.

    Attributes:
        workdir: Folder that holds the copied package (``workdir/<package>/``).
        package_dir: The copied package folder.
        source: Where the student's package was found.
        copied: Declared files that were present and copied.
        missing: Declared files that were absent.
        ignored: Other files found in the student's package that were not taken, with the reason.
        digest: SHA-256 over the copied files' names and contents.
    """

    workdir: Path
    package_dir: Path
    source: Path
    copied: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    digest: str = ""


def unpack_zip(archive: Path, destination: Path) -> Path:
    """Safely extract a zip archive: no absolute or ``..`` paths, no links, bounded size and member count.

    Args:
        archive: The zip file.
        destination: An empty folder to extract into.

    Returns:
        The destination folder.

    Raises:
        SubmissionError: If the archive is broken, too large or contains unsafe entries.
    """
    try:
        with zipfile.ZipFile(archive) as bundle:
            members = bundle.infolist()
            if len(members) > MAX_ARCHIVE_MEMBERS:
                raise SubmissionError(f"{archive.name}: too many files ({len(members)} > {MAX_ARCHIVE_MEMBERS})")
            total = sum(m.file_size for m in members)
            if total > MAX_ARCHIVE_BYTES:
                raise SubmissionError(f"{archive.name}: uncompressed size {total} bytes exceeds {MAX_ARCHIVE_BYTES}")
            for member in members:
                _check_member(archive, member)
            for member in members:
                target = destination.joinpath(*PurePosixPath(member.filename).parts)
                if member.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with bundle.open(member) as source, open(target, "wb") as sink:
                    shutil.copyfileobj(source, sink, length=1 << 20)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError, UnicodeDecodeError,
            ValueError) as exc:
        raise SubmissionError(f"{archive.name} is not a readable zip archive ({printable(exc)[:200]})") from None
    except OSError as exc:
        raise SubmissionError(f"cannot extract {archive.name}: {exc.strerror or exc}") from None
    return destination


def _check_member(archive: Path, member: zipfile.ZipInfo) -> None:
    path = PurePosixPath(member.filename.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise SubmissionError(f"{archive.name}: unsafe path {member.filename!r} in archive")
    mode = member.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise SubmissionError(f"{archive.name}: symbolic link {member.filename!r} in archive")


def find_package(root: Path, assignment: Assignment, label: str | None = None) -> Path:
    """Locate the student's package folder at or under ``root``.

    Accepts the package folder itself, a folder containing it (a repository root, Gradescope's
    ``/autograder/submission``) up to a few levels deep, or a folder holding the package's files directly.
    Messages name the submission by ``label`` (default: the folder's name), never by a path of this machine.

    Raises:
        SubmissionError: If no package is found, or several are.
    """
    marker_files = {f for f in assignment.student_files if f.endswith(".py") and f != "__init__.py"}
    label = label or root.name or "the submission"
    if _looks_like_package(root, marker_files):
        return root
    candidates = [
        path for path in _folders(root, SEARCH_DEPTH)
        if path.name == assignment.package and _looks_like_package(path, marker_files)
    ]
    if not candidates:
        candidates = [path for path in _folders(root, SEARCH_DEPTH) if _looks_like_package(path, marker_files)]
    candidates = [c for c in candidates if "__MACOSX" not in c.parts]
    if not candidates:
        expected = ", ".join(sorted(marker_files))
        raise SubmissionError(f"no {assignment.package}/ package found in {label} "
                              f"(looked for {expected})")
    if len(candidates) > 1:
        listed = ", ".join(str(c.relative_to(root)) for c in candidates[:4])
        raise SubmissionError(f"several candidate {assignment.package}/ packages in {label}: "
                              f"{listed}")
    return candidates[0]


def _folders(root: Path, depth: int) -> list[Path]:
    found: list[Path] = []
    frontier = [root]
    for _ in range(depth):
        nxt = []
        for folder in frontier:
            try:
                children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
            except OSError:
                continue
            found.extend(children)
            nxt.extend(children)
        frontier = nxt
    return found


def _looks_like_package(folder: Path, marker_files: set[str]) -> bool:
    return any((folder / name).is_file() for name in marker_files)


def prepare_submission(path: Path, assignment: Assignment, scratch: Path) -> PreparedSubmission:
    """Copy a submission's declared files into ``scratch`` (unzipping first if needed).

    Args:
        path: A package folder, a folder containing it, or a ``.zip`` of either.
        assignment: The assignment being graded.
        scratch: A private empty folder.

    Returns:
        The prepared submission.

    Raises:
        SubmissionError: If the path is missing or holds no recognisable submission.
    """
    if not path.exists():
        raise SubmissionError(f"submission not found: {path}")
    from autograder.submission.notebook.extract import use_notebook  # a notebook is read, never run
    from autograder.submission.notebook.read import is_notebook

    label = path.name
    if path.is_file() and not is_notebook(path):
        if not zipfile.is_zipfile(path):
            raise SubmissionError(f"{path.name} is neither a folder nor a zip archive (nor a .ipynb notebook)")
        path = unpack_zip(path, scratch / "unzipped")
    try:
        found, notebook_notes = use_notebook(path, assignment, scratch)
        source = find_package(found.absolute(), assignment, label)
    except SubmissionError:
        archive = _single_zip(path) if path.is_dir() else None
        if archive is None:
            raise
        # Gradescope keeps an uploaded zip as it is, inside /autograder/submission/: grade what it holds.
        label = archive.name
        found, notebook_notes = use_notebook(unpack_zip(archive, scratch / "inner"), assignment, scratch)
        source = find_package(found.absolute(), assignment, label)
    if source.is_symlink():  # e.g. a repository's package folder -> a copy of the reference elsewhere
        raise SubmissionError(f"the {assignment.package}/ package folder is a symbolic link; submit the "
                              f"files themselves")
    workdir = scratch / "submission"
    package_dir = workdir / assignment.package
    package_dir.mkdir(parents=True)
    prepared = PreparedSubmission(workdir=workdir, package_dir=package_dir, source=source)
    digest = hashlib.sha256()
    for name in assignment.student_files:
        file = source / name
        if file.is_file() and not file.is_symlink():
            data = file.read_bytes()[: MAX_STUDENT_FILE_BYTES + 1]
            if len(data) > MAX_STUDENT_FILE_BYTES:
                prepared.ignored.append(f"{name} (larger than {MAX_STUDENT_FILE_BYTES // 1024} KiB)")
                prepared.missing.append(name)
                continue
            (package_dir / name).write_bytes(data)
            prepared.copied.append(name)
            digest.update(name.encode() + b"\0" + data + b"\0")
        else:
            prepared.missing.append(name)
    _use_original_init(prepared, assignment)
    prepared.ignored.extend(notebook_notes + _ignored_files(source, set(assignment.student_files)))
    prepared.digest = digest.hexdigest()
    return prepared


def _single_zip(folder: Path) -> Path | None:
    """The one zip archive at the top of a folder (not a link), if there is exactly one."""
    if not folder.is_dir():
        return None
    archives = [p for p in folder.iterdir() if p.suffix.lower() == ".zip" and p.is_file() and not p.is_symlink()]
    return archives[0] if len(archives) == 1 else None


def _use_original_init(prepared: PreparedSubmission, assignment: Assignment) -> None:
    """Grade with the package's original ``__init__.py`` (students are told to leave it as it is): code added there
    would run before every task, so one broken import in it would cost every task, not one. The original is the
    student template's (generated, so never a solution), or an empty file where the template is not installed."""
    original = assignment.template / "__init__.py"
    text = original.read_bytes() if original.is_file() else b""
    target = prepared.package_dir / "__init__.py"
    if target.is_file() and not _holds_no_code(target.read_bytes()):
        prepared.ignored.append("__init__.py (changed; graded with the original, which the README asks you to "
                                "leave as it is)")
    target.write_bytes(text)


def _holds_no_code(source: bytes) -> bool:
    """Whether a module is empty or only a docstring (and comments)."""
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError):
        return False
    return not body or (len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                        and isinstance(body[0].value.value, str))


def submission_digest(path: Path, assignment: Assignment) -> str:
    """The digest prepare_submission records for ``path`` (same files, same rules), without keeping a copy.

    Raises:
        SubmissionError: If the path is missing or holds no recognisable submission.
    """
    with tempfile.TemporaryDirectory(prefix="digest-") as scratch:
        return prepare_submission(path, assignment, Path(scratch)).digest


def _ignored_files(source: Path, declared: set[str]) -> list[str]:
    notes = []
    for file in sorted(source.rglob("*")):
        relative = file.relative_to(source).as_posix()
        if relative in declared or "__pycache__" in relative or not file.is_file():
            continue
        if file.name in {"conftest.py", "sitecustomize.py", "usercustomize.py"} or file.suffix == ".pth":
            notes.append(f"{relative} (would run code before grading; not used)")
        elif file.suffix == ".py":
            notes.append(f"{relative} (not a file of this assignment; not used)")
        if len(notes) >= 20:
            break
    return notes
