"""The one intake: what the user gave (package, folder, repository, notebook, zip) becomes one prepared submission.

Every surface calls :func:`prepare_submission` (``grader check``, ``grade``, ``show``, ``grade-all``, Gradescope's
``run_autograder``, the GitHub Classroom workflow), so they find the same work, apply the same size rule and say
the same thing about it, naming what the user gave and never a folder of the grader's.
"""

from __future__ import annotations

import ast
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autograder.errors import NotebookError, SubmissionError
from autograder.spec.assignment import Assignment
from autograder.submission.archive import Unpacked, meant_as_zip, unpack_zip
from autograder.submission.notebook.extract import Extraction, extract_notebook, extraction_summary
from autograder.submission.notebook.read import MAX_NOTEBOOK_BYTES, NOTEBOOK_SUFFIX, is_notebook
from autograder.submission.package import (
    MAX_STUDENT_FILE_BYTES,
    SEARCH_DEPTH,
    PreparedSubmission,
    copy_package,
    find_package,
    ignored_notes,
    not_noted,
    module_files,
    new_prepared,
    take_files,
)
from autograder.util.safety import printable
from autograder.util.syntax import parse
from autograder.util.tomlio import loads_toml

SHIPPED_TEMPLATE = "student_template.json"  # in a student release's assignment folder (see shipped_template)


def default_work(path: Path | None) -> Path:
    """What ``check`` and ``show`` look at: PATH if given, else this folder (its ``<package>/``, or its notebook,
    chosen by the rule of :func:`prepare_submission`, so a filled notebook beside the released stubs is found)."""
    return Path.cwd() if path is None else path


def prepare_submission(path: Path | None, assignment: Assignment, scratch: Path) -> PreparedSubmission:
    """Find the student's work in what they gave and copy its declared files into ``scratch``.

    A folder may be the package, hold it (a repository root, a few levels down) or hold a notebook; a ``.ipynb`` is
    extracted (read, never run); a ``.zip`` is unpacked, only the entries that can be graded. Where a package and a
    notebook are both found, the one holding work is graded (the package when both or neither do), said in one
    sentence (:attr:`PreparedSubmission.choice`). A graded file over the size limit is refused with one message
    (:attr:`PreparedSubmission.refused`); other files are listed as ignored, never read.

    Args:
        path: What the user gave; None: the working folder, where only the folder itself, its ``<package>/`` and
            the notebooks in it count, never the folders below (a shared folder holds other people's work there).
        assignment: The assignment.
        scratch: A private empty folder.

    Returns:
        The prepared submission.

    Raises:
        SubmissionError: If nothing gradable is there (for the working folder: where it looked and what to do), or
            it is ambiguous, unreadable or unsafe.
    """
    if path is None:
        return _from_working_folder(assignment, scratch)
    given = Path(path)
    label = printable(given.name) or "the submission"
    if not given.exists():
        raise SubmissionError(f"{printable(given)} does not exist")
    if given.is_dir():
        return _from_folder(given, given, assignment, scratch, label)
    if is_notebook(given):
        return _from_notebook(given, given, assignment, scratch, label)
    if not meant_as_zip(given):
        raise SubmissionError(f"{label} is neither a folder nor a zip archive (nor a .ipynb notebook)")
    unpacked = unpack_zip(given, scratch / "unzipped", label, _reading_bound(assignment))
    return _from_folder(unpacked.root, given, assignment, scratch, label, unpacked)


def submission_digest(path: Path, assignment: Assignment) -> str:
    """The digest prepare_submission records for ``path`` (same files, same rules), without keeping a copy.

    Raises:
        SubmissionError: If the path is missing or holds no recognisable submission.
    """
    with tempfile.TemporaryDirectory(prefix="digest-") as scratch:
        return prepare_submission(path, assignment, Path(scratch)).digest


def _reading_bound(assignment: Assignment) -> Callable[[str], int | None]:
    """Which entries of a zip the intake reads, and how much of each: the declared files and notebooks only."""
    declared = set(assignment.student_files)

    def bound(name: str) -> int | None:
        base = name.rsplit("/", 1)[-1]
        if base in declared:
            return MAX_STUDENT_FILE_BYTES
        return MAX_NOTEBOOK_BYTES if is_notebook(Path(base)) else None

    return bound


def _from_working_folder(assignment: Assignment, scratch: Path) -> PreparedSubmission:
    """The work in the working folder, looked for where a student can predict: the folder itself, its
    ``<package>/`` and the notebooks in it, never the folders below (see :func:`find_package`); else one line
    saying where it looked and what to do."""
    try:
        here = Path.cwd()
    except OSError:  # removed while the shell stayed in it
        raise SubmissionError("the working folder no longer exists: cd into your work, or give its path after the "
                              "assignment's name") from None
    label = printable(here.name) or "this folder"
    package = find_package(here, assignment, label, nested=False)
    notebook = _find_notebook(here, assignment, label, quiet=package is not None, depth=0)
    if package is None and notebook is None:
        raise SubmissionError(f"no {assignment.package}/ package nor notebook here: looked in {printable(here)} (the "
                              f"folder itself, {assignment.package}/ in it and its {NOTEBOOK_SUFFIX} files, not the "
                              f"folders below); cd into your work, or give its path after the assignment's name")
    return _take_work(here, here, package, notebook, assignment, scratch, label)


def _from_folder(root: Path, given: Path, assignment: Assignment, scratch: Path, label: str,
                 unpacked: Unpacked | None = None) -> PreparedSubmission:
    """The work in a folder (one the user gave, or an unpacked zip's): its package, its notebook, or the rule's pick."""
    root = root.absolute()
    package = find_package(root, assignment, label)
    notebook = _find_notebook(root, assignment, label, quiet=package is not None, depth=SEARCH_DEPTH)
    if package is None and notebook is None:
        archive = _single_zip(root) if unpacked is None else None
        if archive is not None:  # Gradescope keeps an uploaded zip as it is: grade what it holds
            inner = unpack_zip(archive, scratch / "inner", archive.name, _reading_bound(assignment))
            return _from_folder(inner.root, archive, assignment, scratch, archive.name, inner)
        expected = ", ".join(sorted(module_files(assignment)))
        raise SubmissionError(f"no {assignment.package}/ package found in {label} (looked for {expected}), "
                              f"nor a notebook ({NOTEBOOK_SUFFIX})")
    return _take_work(root, given, package, notebook, assignment, scratch, label, unpacked)


def _take_work(root: Path, given: Path, package: Path | None, notebook: Path | None, assignment: Assignment,
               scratch: Path, label: str, unpacked: Unpacked | None = None) -> PreparedSubmission:
    """The package or the notebook found in ``root`` (at least one), chosen by the rule of :func:`_choose`, copied
    into ``scratch``; ``given`` is what the user named (the folder, or the zip ``root`` was unpacked from)."""

    def shown(found: Path) -> Path:
        return given / found.relative_to(root) if given.is_dir() else given

    if package is None:
        return _from_notebook(notebook, shown(notebook), assignment, scratch, label)  # type: ignore[arg-type]
    choice, use_notebook = _choose(package, notebook, assignment, root)
    if use_notebook:
        prepared = _from_notebook(notebook, shown(notebook), assignment, scratch, label)  # type: ignore[arg-type]
    else:
        prepared = new_prepared(scratch, assignment, package, label, shown(package))
        copy_package(prepared, assignment, unpacked.sizes if unpacked else None)
        if unpacked is not None:
            prepared.ignored.extend(_ignored_in_archive(unpacked, package, assignment))
    prepared.choice = choice
    return prepared


def _from_notebook(notebook: Path, shown: Path, assignment: Assignment, scratch: Path,
                   label: str) -> PreparedSubmission:
    return prepare_extraction(extract_notebook(notebook, assignment), assignment, scratch, notebook, label, shown)


def prepare_extraction(extraction: Extraction, assignment: Assignment, scratch: Path, source: Path, label: str,
                       shown: Path) -> PreparedSubmission:
    """A notebook's extracted files as a prepared submission, under the same size rule as every other container
    (also for the cells a kernel ran, which ``check_notebook`` extracts without a file).

    Args:
        extraction: What the notebook's cells gave.
        assignment: The assignment.
        scratch: A private empty folder.
        source: The notebook (its name labels the extraction's notes).
        label: How messages name it.
        shown: How the work is named to the user.
    """
    prepared = new_prepared(scratch, assignment, source, label, shown)
    files: dict[str, bytes | int | None] = {name: extraction.files[name].encode("utf-8") if name in extraction.files
                                            else None for name in assignment.student_files}
    take_files(prepared, assignment, files, extraction.cell_map, extraction.notes)
    prepared.ignored.append(extraction_summary(source.name, extraction))
    return prepared


def _choose(package: Path, notebook: Path | None, assignment: Assignment, root: Path) -> tuple[str, bool]:
    """The rule for a package beside a notebook: the one holding work; the package when both or neither do.

    Returns:
        The sentence that says which one was used (empty when there was no choice to make), and whether it is the
        notebook. It says "used", not "graded": ``grader check`` and ``grader show`` say it too.
    """
    if notebook is None:
        return "", False
    folder = _relative(package, root) + "/"
    book = _relative(notebook, root)
    template = _template_work(assignment)
    if template is None:
        return (f"used {folder}; {book} beside it was not read (this installation has no student template to "
                f"tell which one holds work)"), False
    package_work = _package_work(package, assignment) != template
    try:
        notebook_work = _notebook_work(notebook, assignment) != template
    except NotebookError:
        return "", False  # a file that is not a notebook holds no work to weigh against the package
    if notebook_work and not package_work:
        return f"used the notebook {book}, which holds work; {folder} is the untouched template", True
    if package_work and notebook_work:
        return (f"both {folder} and {book} hold work: used {folder} (the package is used when both do; "
                f"move it away to have the notebook used)"), False
    if not package_work:
        return f"neither {folder} nor {book} holds work yet (both are as released): used {folder}", False
    return "", False


def _relative(path: Path, root: Path) -> str:
    relative = path.relative_to(root).as_posix()
    return path.name if relative == "." else relative


def _template_work(assignment: Assignment) -> dict[str, Any] | None:
    """The work signature of the student template: from its package where it is installed (the course's repository,
    the Gradescope bundle), else from the copy of its files a student release ships (:func:`shipped_template`);
    None where there is neither."""
    if assignment.template.is_dir():
        return _package_work(assignment.template, assignment)
    shipped = assignment.root / SHIPPED_TEMPLATE
    if not shipped.is_file():
        return None
    texts = json.loads(shipped.read_text(encoding="utf-8"))
    return _work_signature({name: text.encode("utf-8") for name, text in texts.items()}, assignment)


def shipped_template(template: dict[str, bytes], assignment: Assignment) -> str:
    """What a student release ships as ``assignments/<name>/`` :data:`SHIPPED_TEMPLATE`: the template's files that
    tell work from untouched stubs (the graded modules and the answers file), as text. A release has no
    ``student_template/`` package, and one beside the student's would be a second ``<package>/`` to find.

    Args:
        template: The template's files by name (``authoring.template.render_template``).
        assignment: The assignment.
    """
    names = [*sorted(module_files(assignment)), *_answers_file(assignment)]
    return json.dumps({name: template[name].decode("utf-8") for name in names if name in template}, indent=1) + "\n"


def _package_work(folder: Path, assignment: Assignment) -> dict[str, Any]:
    files: dict[str, bytes | None] = {}
    for name in [*sorted(module_files(assignment)), *_answers_file(assignment)]:
        file = folder / name
        # sizes first: a file over the limit is never read just to learn it is not the template
        ok = file.is_file() and not file.is_symlink() and file.stat().st_size <= MAX_STUDENT_FILE_BYTES
        files[name] = file.read_bytes() if ok else None
    return _work_signature(files, assignment)


def _notebook_work(notebook: Path, assignment: Assignment) -> dict[str, Any]:
    extraction = extract_notebook(notebook, assignment)
    return _work_signature({name: text.encode("utf-8") for name, text in extraction.files.items()}, assignment)


def _answers_file(assignment: Assignment) -> list[str]:
    return [assignment.quiz.answers_file] if assignment.quiz is not None else []


def _work_signature(files: dict[str, bytes | None], assignment: Assignment) -> dict[str, Any]:
    """What a student changes when they work: each graded function's definition (as parsed, so layout and comments
    do not count) and the quiz answers (as read). Equal to the template's: no work yet."""
    signature: dict[str, Any] = {}
    wanted = {tuple(q.split(".", 1)) for task in assignment.tasks for q in task.functions}
    for module in sorted({m for m, _ in wanted}):
        data = files.get(f"{module}.py")
        try:
            tree = parse(data) if data is not None else None
        except (SyntaxError, ValueError):
            signature[module] = data  # unparsable text is work in progress
            continue
        nodes = {n.name: ast.dump(n) for n in (tree.body if tree else [])
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        signature |= {f"{module}.{name}": nodes.get(name) for m, name in wanted if m == module}
    for name in _answers_file(assignment):
        data = files.get(name)
        try:
            signature[name] = loads_toml(data.decode("utf-8")) if data is not None else None
        except ValueError:  # not UTF-8 or not TOML: work in progress, not an error here
            signature[name] = data
    return signature


def _find_notebook(root: Path, assignment: Assignment, label: str, quiet: bool, depth: int) -> Path | None:
    """The student's notebook at or below ``root`` (``depth`` levels below), or None.

    Checkpoints (``.ipynb_checkpoints``), hidden folders and ``__MACOSX`` are skipped. Several notebooks: the one
    named after the assignment or its package wins.

    Raises:
        SubmissionError: If several notebooks are found and none is named after the assignment (unless ``quiet``:
            beside a package, an unclear notebook is not a reason to refuse the package).
    """
    found = _notebooks_below(root, depth)
    if len(found) <= 1:
        return found[0] if found else None
    named = [p for p in found if p.stem in {assignment.name, assignment.package}]
    if len(named) == 1:
        return named[0]
    if quiet:
        return None
    listed = ", ".join(p.relative_to(root).as_posix() for p in found[:4])
    raise SubmissionError(f"several notebooks in {label}: {listed}; submit one, or name it "
                          f"{assignment.name}{NOTEBOOK_SUFFIX}")


def _notebooks_below(root: Path, depth: int) -> list[Path]:
    found, frontier = [], [root]
    for _ in range(depth + 1):
        following = []
        for folder in frontier:
            try:
                children = sorted(folder.iterdir())
            except OSError:
                continue
            for child in children:
                if child.name.startswith(".") or child.name == "__MACOSX" or child.is_symlink():
                    continue
                if child.is_dir():
                    following.append(child)
                elif is_notebook(child) and child.is_file():
                    found.append(child)
        frontier = following
    return found


def _single_zip(folder: Path) -> Path | None:
    """The one zip archive at the top of a folder (not a link), if there is exactly one."""
    archives = [p for p in folder.iterdir() if p.suffix.lower() == ".zip" and p.is_file() and not p.is_symlink()]
    return archives[0] if len(archives) == 1 else None


def _ignored_in_archive(unpacked: Unpacked, package: Path, assignment: Assignment) -> list[str]:
    """The archive's entries inside the package that were left unread, said as a folder's would be."""
    prefix = package.relative_to(unpacked.root.absolute()).as_posix()
    inside = [name if prefix == "." else name[len(prefix) + 1:] for name in unpacked.skipped
              if prefix == "." or name.startswith(prefix + "/")]
    return ignored_notes(sorted(inside), not_noted(assignment))
