"""``grader release``: the student release, the Gradescope autograder and a GitHub Classroom starter repository."""

from __future__ import annotations

import os
import re
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

from autograder.authoring.closure import module_closure
from autograder.authoring.dependencies import student_dependencies
from autograder.authoring.hidden_names import file_hidden_imports, hidden_modules
from autograder.authoring.readme import STUDENT_README
from autograder.authoring.template import find_regions, render_template, template_drift
from autograder.errors import ReleaseError
from autograder.spec.assignment import Assignment, assignments_root, missing_paths
from autograder.spec.manifest import FORBIDDEN_NAME_PARTS
from autograder.spec.quiz import load_key
from autograder.submission.intake import SHIPPED_TEMPLATE, shipped_template
from autograder.util.paths import PACKAGE_DIR, PACKAGE_ROOT, display_path, project_file
from autograder.util.pins import CONSTRAINTS, pinned_version
from autograder.util.tomlio import dumps_toml, load_toml

TEMPLATES = PACKAGE_DIR / "templates"
MIN_LEAK_LINE = 16
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_PLACEHOLDER = re.compile(r"@@[A-Z_]+@@")
# `grader check` and `grader show` run the student's code in the grader's sandbox, whose template module a fresh
# interpreter imports by name (the parent never does; the template imports the zygote and boot modules), and a
# check's zygote its session module (named in its configuration).
_CHECK_ENTRY_POINTS = ("autograder.cli", "autograder.cli.check", "autograder.public.session",
                       "autograder.public.plugin", "autograder.public.notebook", "autograder.sandbox.template")
_SHOW_ENTRY_POINTS = ("autograder.cli.show", "autograder.show")
_STUDENT_CLI = ("__init__", "__main__", "base", "check", "show")  # of autograder/cli/: what `grader --help` lists
_SHOW_TEMPLATES = "templates/html/show"  # of autograder/: the page and the notebook view `grader show` renders


@dataclass(frozen=True)
class Release:
    """What ``grader release`` wrote.

    Attributes:
        root: The output folder.
        student: The student release folder.
        student_zip: The student release as a zip (one top folder).
        gradescope_zip: The Gradescope autograder zip (setup.sh and run_autograder at its root).
        classroom: The GitHub Classroom starter repository (the student release plus the workflow).
        readme: What each output is for.
    """

    root: Path
    student: Path
    student_zip: Path
    gradescope_zip: Path
    classroom: Path
    readme: Path


# -- templates -----------------------------------------------------------------------------------------


def fill(template_name: str, values: dict[str, str]) -> str:
    """Read ``autograder/templates/<name>`` and replace each ``@@KEY@@``; every placeholder must be known.

    A placeholder alone on its line takes the value indented like the placeholder (for scripts in YAML).
    """
    text = (TEMPLATES / template_name).read_text(encoding="utf-8")
    for key, value in values.items():
        text = re.sub(rf"^([ \t]*)@@{key}@@[ \t]*$", lambda m, v=value: _indent(v, m.group(1)), text, flags=re.M)
        text = text.replace(f"@@{key}@@", value)
    left = _PLACEHOLDER.search(text)
    if left:
        raise ReleaseError(f"template {template_name}: no value for {left.group(0)}")
    return text


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line if line.strip() else "" for line in text.rstrip("\n").split("\n"))


def template_values(assignment: Assignment) -> dict[str, str]:
    """The values every release template may use."""
    return {
        "ASSIGNMENT": assignment.name,
        "PACKAGE": assignment.package,
        "TITLE": assignment.title,
        "TORCH_VERSION": pinned_version("torch"),  # the build grades are computed with, which the README names
        "STUDENT": f"{assignment.name}-student",
        "GRADESCOPE": f"{assignment.name}-gradescope",
        "VISIBILITY": assignment.visibility,  # [gradescope]: run_autograder's own result when grading fails
        "STDOUT_VISIBILITY": assignment.stdout_visibility,
        "SUMMARY_SCRIPT": (TEMPLATES / "grade_summary.py").read_text(encoding="utf-8"),
    }


# -- copying -------------------------------------------------------------------------------------------


def _write(path: Path, data: bytes | str, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    os.chmod(path, 0o755 if executable else 0o644)


def _copy_tree(source: Path, destination: Path) -> None:
    shutil.copytree(source, destination, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))


def _repository_root(assignment: Assignment) -> Path:
    """The folder that holds ``assignments/`` (the reference and template paths are relative to it)."""
    return assignment.root.parent.parent


def student_grader_modules(figures: bool = True) -> list[Path]:
    """The grader's module files the student's commands need (see :func:`module_closure`).

    Args:
        figures: Include ``grader show`` (for an assignment that declares figures).
    """
    return module_closure(_CHECK_ENTRY_POINTS + (_SHOW_ENTRY_POINTS if figures else ()))


def _student_pyproject(figures: bool) -> str:
    """The project file of the student release: the grader's, without the instructor and dev extras, the tool
    settings but setuptools', and the dependencies no student command imports (``dependencies.student_dependencies``).

    Args:
        figures: The release ships ``grader show``.
    """
    project = load_toml(project_file("the student release"))
    project["project"]["dependencies"] = student_dependencies(figures)
    project["project"].pop("optional-dependencies", None)
    project["tool"] = {"setuptools": project["tool"]["setuptools"]}
    commands = "`grader check` and `grader show`" if figures else "`grader check`"
    return f"# The grader as `grader release` ships it to students, for {commands}.\n" + dumps_toml(project)


def write_student_grader(destination: Path, figures: bool = True) -> None:
    """A minimal grader: the modules ``grader check`` (and ``grader show``) import, and of the commands only those.

    The click group registers the command modules it finds (autograder.cli), so ``grader --help`` in the student
    release shows what a student can run, and nothing that needs the instructor's copy.

    Args:
        destination: The student release folder.
        figures: Ship ``grader show`` too (for an assignment that declares figures).
    """
    package = destination / "autograder"
    commands = _STUDENT_CLI if figures else tuple(name for name in _STUDENT_CLI if name != "show")
    main = PACKAGE_DIR / "cli" / "__main__.py"  # `python -m autograder.cli`; importing it would run the CLI
    for path in [*student_grader_modules(figures), main]:
        relative = path.relative_to(PACKAGE_DIR)
        if relative.parts[0] != "cli" or relative.stem in commands:
            _write(package / relative, path.read_bytes())
    for path in sorted((PACKAGE_DIR / _SHOW_TEMPLATES).iterdir()) if figures else []:
        _write(package / path.relative_to(PACKAGE_DIR), path.read_bytes())
    _write(package / CONSTRAINTS.relative_to(PACKAGE_DIR), CONSTRAINTS.read_bytes())  # the course's torch: check's note
    _write(destination / "pyproject.toml", _student_pyproject(figures))


# -- the student release -------------------------------------------------------------------------------


_SHOW_SECTION = """## Look at what your code does

```
grader show @@ASSIGNMENT@@ --open
```

runs your functions on the course's fixed examples (in the same sandbox as grading) and draws the figures of the
course notes from your results into `@@PACKAGE@@-figures/index.html`, each with what it should show, a note on
what yours shows and, where your instructor allows it, the expected figure beside it. In the notebook, the last
cell does the same. The figures show public properties only; the hidden tests at grading time check more."""


def build_student_release(assignment: Assignment, destination: Path, template: dict[str, bytes]) -> Path:
    """The student release folder: the stubs, the public tests, a README and the minimal grader.

    Args:
        assignment: The assignment.
        destination: The folder to create.
        template: The template's files (from render_template).

    Returns:
        The folder.
    """
    from autograder.show.render import declares_figures, release_figures

    figures = declares_figures(assignment)
    # The section goes first: it holds placeholders that the template values fill afterwards.
    values = {"SHOW_SECTION": _SHOW_SECTION if figures else ""} | template_values(assignment)
    for name, data in template.items():
        _write(destination / assignment.package / name, data)
    from autograder.authoring.notebook_template import render_notebook  # the student notebook, from the same template

    _write(destination / f"{assignment.name}.ipynb", render_notebook(assignment, template))
    _write(destination / "README.md", fill("student_release_README.md", values))
    write_student_grader(destination, figures)
    target = destination / "assignments" / assignment.name
    _write(target / "assignment.toml", (assignment.root / "assignment.toml").read_bytes())
    _write(target / SHIPPED_TEMPLATE, shipped_template(template, assignment))  # a notebook beside untouched stubs
    if assignment.quiz is not None:
        _write(target / assignment.quiz.questions_file.name, assignment.quiz.questions_file.read_bytes())
    readme = assignment.root / STUDENT_README
    if readme.is_file():
        _write(target / STUDENT_README, readme.read_bytes())
    _copy_tree(assignment.public_tests, target / assignment.public_tests.relative_to(assignment.root))
    if figures:
        release_figures(assignment, target)  # the figure files and, if the manifest allows, the expected PNGs
    return destination


def solution_lines(assignment: Assignment) -> set[str]:
    """Lines of the reference's solution regions that would betray a solution if they were released.

    Stripped lines longer than 15 characters, minus those that also occur outside the regions, in the public
    tests or in the grader's own modules (published on purpose: a line there, such as ``with torch.no_grad():``
    or ``optimizer.step()``, is no secret).
    """
    inside: set[str] = set()
    public = [*sorted(assignment.public_tests.rglob("*.py")), *sorted(PACKAGE_DIR.rglob("*.py"))]
    outside: set[str] = {line.strip() for path in public for line in path.read_text(encoding="utf-8").split("\n")}
    for path in sorted(assignment.reference.glob("*.py")):
        lines = path.read_text(encoding="utf-8").split("\n")
        regions = find_regions("\n".join(lines), display_path(path))
        marked = {n for r in regions for n in range(r.begin, r.end + 1)}
        for number, line in enumerate(lines, start=1):
            (inside if number in marked else outside).add(line.strip())
    return {line for line in inside - outside if len(line) >= MIN_LEAK_LINE}


def scan_for_leaks(assignment: Assignment, folder: Path) -> list[str]:
    """What in a student-facing folder should not be there: hidden file names, solution lines, the quiz key, an
    import of a module only the instructor's copy has (``authoring/hidden_names.py``).

    Args:
        assignment: The assignment.
        folder: The student release (or any folder meant for students).

    Returns:
        One line per problem (empty when the folder is clean).
    """
    secrets = solution_lines(assignment)
    explanations = []
    if assignment.quiz is not None and assignment.quiz.key_file.is_file():
        explanations = [" ".join(e["explanation"].split()) for e in load_key(assignment.quiz).values()
                        if len(e["explanation"].strip()) >= MIN_LEAK_LINE]
    problems = []
    hidden = hidden_modules(assignment)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        problems += [f"{relative}:{found.line}: {found.sentence()}" for found in file_hidden_imports(path, hidden)]
        bad = [part for part in FORBIDDEN_NAME_PARTS if part in relative.lower()]
        if bad:
            problems.append(f"{relative}: file name contains {bad[0]!r}")
        texts, members = _file_texts(path, relative)
        problems += members
        for data in texts:
            problems += _content_leaks(relative, data.decode("utf-8", errors="replace"), secrets, explanations)
    return problems


def _file_texts(path: Path, relative: str) -> tuple[list[bytes], list[str]]:
    """What a file holds to scan (each member of a zip), and a line for each zip member with a hidden name."""
    if path.suffix != ".zip":
        return [path.read_bytes()], []
    with zipfile.ZipFile(path) as bundle:
        names = bundle.namelist()
        return [bundle.read(name) for name in names], [f"{relative}: member {name} contains {part!r}" for name in names
                                                       for part in FORBIDDEN_NAME_PARTS if part in name.lower()]


def _content_leaks(name: str, text: str, secrets: set[str], explanations: list[str]) -> list[str]:
    stripped = {line.strip() for line in text.split("\n")}
    problems = [f"{name}: holds the solution line {line!r}" for line in sorted(secrets & stripped)]
    flat = " ".join(text.split())
    problems += [f"{name}: holds a quiz key explanation ({e[:40]!r}...)" for e in explanations if e in flat]
    return problems


def zip_folder(folder: Path, archive: Path, top: str | None = None) -> Path:
    """Zip a folder reproducibly (sorted, fixed timestamps, permissions kept), under ``top/`` if given."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            name = path.relative_to(folder).as_posix()
            info = zipfile.ZipInfo(f"{top}/{name}" if top else name, date_time=_ZIP_TIME)
            info.external_attr = ((0o755 if path.stat().st_mode & 0o111 else 0o644) | 0o100000) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            bundle.writestr(info, path.read_bytes())
    return archive


# -- the Gradescope autograder -------------------------------------------------------------------------


def build_gradescope_source(assignment: Assignment, destination: Path) -> Path:
    """The Gradescope autograder's source: scripts, the grader, the assignment with its hidden part, the reference,
    and the student template (the intake tells untouched stubs from work by it).

    Laid out like the repository, so the grader finds everything relative to itself.
    """
    values = template_values(assignment)
    repo = _repository_root(assignment)
    _write(destination / "setup.sh", fill("setup.sh", values), executable=True)
    _write(destination / "run_autograder", fill("run_autograder", values), executable=True)
    _write(destination / "pyproject.toml", project_file("the Gradescope autograder").read_bytes())
    _write(destination / "README.md", f"Gradescope autograder for {assignment.name}, generated by "
                                      f"`grader release`. Contains the hidden tests: never give it to students.\n")
    _copy_tree(PACKAGE_DIR, destination / "autograder")
    _copy_tree(assignment.root, destination / "assignments" / assignment.name)
    _copy_tree(assignment.reference, destination / assignment.reference.relative_to(repo))
    _copy_tree(assignment.template, destination / assignment.template.relative_to(repo))
    return destination


# -- the GitHub Classroom starter repository -----------------------------------------------------------


def build_classroom(assignment: Assignment, student: Path, destination: Path) -> Path:
    """A GitHub Classroom starter repository: the student release plus the grading workflow."""
    shutil.copytree(student, destination)
    _write(destination / ".github" / "workflows" / "grade.yml", fill("grade.yml", template_values(assignment)))
    return destination


# -- the whole release ---------------------------------------------------------------------------------


def check_releasable(assignment: Assignment) -> dict[str, bytes]:
    """The fast checks a release never skips, before anything is written; returns the freshly generated template.

    Raises:
        ReleaseError: If a file or folder the manifest names does not exist, a figure file does not load, the
            committed template drifted from the reference or the quiz key is unsound.
    """
    from autograder.authoring.lint import figure_problems
    from autograder.authoring.verify import check_quiz_key

    missing = list(missing_paths(assignment).values())
    if missing:
        raise ReleaseError(missing[0] + (f" (and {len(missing) - 1} more: `grader verify {assignment.name}` lists "
                                         f"them)" if len(missing) > 1 else ""))
    figures = figure_problems(assignment)  # one at most: show and the release stop at the first broken file
    if figures:
        raise ReleaseError(figures[0])
    drift = template_drift(assignment)
    if drift:
        raise ReleaseError(f"{drift[0]}" + (f" (and {len(drift) - 1} more)" if len(drift) > 1 else "")
                           + f"; run `grader template {assignment.name}` first")
    key = check_quiz_key(assignment)
    if not key.ok:
        raise ReleaseError(f"quiz key: {key.details[0]}")
    return render_template(assignment)


def build_release(assignment: Assignment, out: Path) -> Release:
    """Build every release output into ``out`` (replacing earlier outputs of this assignment).

    Args:
        assignment: The assignment.
        out: The output folder.

    Returns:
        Where each output was written.

    Raises:
        ReleaseError: If a check fails or the student release would leak hidden material.
    """
    from autograder.util.progress import progress_bar

    with progress_bar(5, f"release {assignment.name}") as bar:
        bar.set_postfix_str("checking the template and the quiz key")
        template = check_releasable(assignment)
        bar.update(1)
        values = template_values(assignment)
        out = out.resolve()
        release = Release(root=out, student=out / values["STUDENT"], student_zip=out / f"{values['STUDENT']}.zip",
                          gradescope_zip=out / f"{values['GRADESCOPE']}.zip", classroom=out / "github-classroom",
                          readme=out / "README.md")
        _refuse_unsafe_output(out)
        staging = out / f".{values['GRADESCOPE']}"
        for stale in (release.student, release.student_zip, release.gradescope_zip, release.classroom, staging):
            _remove(stale)
        bar.set_postfix_str("student release")
        build_student_release(assignment, release.student, template)
        bar.update(1)
        bar.set_postfix_str("scanning it for leaks")
        leaks = scan_for_leaks(assignment, release.student)
        if leaks:
            _remove(release.student)  # never leave a leaking student release on disk to be handed out
            raise ReleaseError(f"the student release would leak: {leaks[0]}" +
                               (f" (and {len(leaks) - 1} more)" if len(leaks) > 1 else ""))
        bar.update(1)
        bar.set_postfix_str("student zip and GitHub Classroom")
        zip_folder(release.student, release.student_zip, top=values["STUDENT"])
        build_classroom(assignment, release.student, release.classroom)
        bar.update(1)
        bar.set_postfix_str("Gradescope autograder")
        try:
            zip_folder(build_gradescope_source(assignment, staging), release.gradescope_zip)
        finally:
            _remove(staging)
        bar.update(1)
    _write(release.readme, fill("release_README.md", values))
    return release


def _refuse_unsafe_output(out: Path) -> None:
    """Never write the release into the repository's own folders or over the grader."""
    protected = {PACKAGE_ROOT, PACKAGE_DIR, assignments_root()}
    if out in protected or out in PACKAGE_DIR.parents:
        raise ReleaseError(f"refusing to write the release into {display_path(out)}; choose an output folder "
                           f"such as ./release")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def render_release(release: Release) -> str:
    """What was written, one line per output."""
    rows = [(release.student, "student release (folder)"), (release.student_zip, "student release (zip)"),
            (release.gradescope_zip, "Gradescope autograder (hidden tests inside: never give to students)"),
            (release.classroom, "GitHub Classroom starter repository"), (release.readme, "what each output is for")]
    return "".join(f"{display_path(path)}  {what}\n" for path, what in rows)
