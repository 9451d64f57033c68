"""Load an assignment's declaration (tasks, points, student files, checks, quiz) from assignments/<name>/."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from autograder.errors import AssignmentError
from autograder.spec.course import MANIFEST, assignments_root, available_assignments, elsewhere
from autograder.spec.late import LatePolicy, parse_when, policy_from_table
from autograder.spec.manifest import (
    ManifestProblem,
    declared_paths,
    forbidden_name_problem,
    location,
    missing_file_problem,
    table,
    validate_all,
)
from autograder.util.paths import display_path
from autograder.util.tomlio import TOMLDecodeError, load_toml

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")  # Gradescope's test visibilities


@dataclass(frozen=True)
class Task:
    """One graded unit of an assignment.

    Attributes:
        id: Stable identifier used in reports (e.g. ``"attention"``).
        title: Human-readable name.
        points: Points the task is worth.
        functions: Qualified names (``"module.name"``) the student writes for this task.
        uses: Qualified names of other tasks' code this task builds on; graded with the reference for them.
        checks: Path of the hidden checks file, or None for the quiz.
        timeout: Wall-clock seconds allowed per check.
        slow: Whether grading the task is expensive (e.g. trains a model); the audit grades it only when
            a mutation edits its files.
        assets: Files of ``hidden/assets/`` its checks read through ``ctx.assets``.
        visibility: When Gradescope shows the task's test to the student (one of ``VISIBILITIES``).
        check_visibility: ``(check name, visibility)`` pairs for checks shown at another time than their task.
        public_timeout: Wall-clock seconds each of its public tests may take in ``grader check`` (None: the
            assignment's ``public_timeout``).
    """

    id: str
    title: str
    points: float
    functions: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    checks: Path | None = None
    timeout: float = table("tasks").key("timeout").default
    slow: bool = table("tasks").key("slow").default
    assets: tuple[str, ...] = ()
    visibility: str = table("tasks").key("visibility").default
    check_visibility: tuple[tuple[str, str], ...] = ()
    public_timeout: float | None = None

    @property
    def modules(self) -> tuple[str, ...]:
        """The student modules that hold this task's functions."""
        return tuple(dict.fromkeys(name.split(".")[0] for name in self.functions))


def short_names(qualified: Iterable[str]) -> str:
    """``("tiny_gpt.TinyGPT", "attention.causal_mask")`` as ``"TinyGPT and causal_mask"`` for a sentence."""
    names = [q.split(".", 1)[1] for q in qualified]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


QUIZ_FEEDBACK = ("score", "answers", "explanations")


@dataclass(frozen=True)
class Quiz:
    """A multiple-choice quiz graded against a hidden key.

    Attributes:
        feedback: What a report shows of the key (see ``QUIZ_FEEDBACK``): ``score`` only how many answers are
            right (and which are malformed), ``answers`` which questions are right, ``explanations`` also the
            key's explanations, which give the answers away (for after the deadline).
        max_blind_score: The most a blind strategy (always the longest option, always "a", ...) may score; None
            for the default of ``autograder.quiz_cues.default_bound``.
    """

    task_id: str
    title: str
    points: float
    questions_file: Path
    key_file: Path
    answers_file: str
    feedback: str = "score"
    max_blind_score: int | None = None


@dataclass(frozen=True)
class AuditMinimums:
    """What ``grader verify`` and ``grader audit`` hold an assignment to (``[audit]`` in the manifest).

    Attributes:
        min_mistakes: Known mistakes the assignment must have.
        min_variants: Correct variants it must have.
        min_right_hints: Known mistakes the audit must diagnose with their own hint.
        balanced_key: Whether the quiz key must use each letter as often as the others, within one.
    """

    min_mistakes: int = table("audit").key("min_mistakes").default
    min_variants: int = table("audit").key("min_variants").default
    min_right_hints: int = table("audit").key("min_right_hints").default
    balanced_key: bool = table("audit").key("balanced_key").default


@dataclass(frozen=True)
class Assignment:
    """An assignment as declared in its manifest.

    Attributes:
        name: Folder name under ``assignments/``.
        title: Human-readable title.
        root: The assignment's folder.
        package: The Python package name students submit (e.g. ``"attention101"``).
        modules: Student modules in import order (without ``.py``).
        student_files: Files taken from a submission, relative to the package folder.
        seed: Base seed from which every check's seed is derived.
        reference: Folder of the reference solution package.
        template: Folder of the generated student template package.
        public_tests: Folder of the public tests.
        tasks: Graded code tasks, in report order.
        quiz: The quiz, if any.
        due: The deadline (timezone-aware), or None.
        late: How work after the deadline loses points.
        visibility: Gradescope's top-level visibility of the results (``[gradescope] visibility``).
        stdout_visibility: Whether Gradescope shows the autograder's output (``[gradescope] stdout_visibility``).
        public_timeout: Wall-clock seconds each public test may take in ``grader check`` unless its task or a
            ``time_limit`` marker says otherwise.
        audit: The minimums of mistakes, variants and key balance (``[audit]``).
        figure_files: The figure files of ``[figures] files``, relative to the assignment folder.
    """

    name: str
    title: str
    root: Path
    package: str
    modules: tuple[str, ...]
    student_files: tuple[str, ...]
    seed: int
    reference: Path
    template: Path
    public_tests: Path
    tasks: tuple[Task, ...]
    quiz: Quiz | None = None
    max_output_bytes: int = 64 * 1024
    memory_mb: int = 2048
    due: datetime | None = None
    late: LatePolicy = field(default_factory=LatePolicy)
    visibility: str = "visible"
    stdout_visibility: str = "hidden"
    audit: AuditMinimums = field(default_factory=AuditMinimums)
    figure_files: tuple[str, ...] = ()

    @property
    def private_folders(self) -> list[Path]:
        """Folders no job may see: the assignment's own (hidden checks, key, assets) and its reference, wherever
        the manifest puts it."""
        return [self.root, self.reference]
    public_timeout: float = 5.0

    @property
    def max_score(self) -> float:
        """Total points of all tasks and the quiz."""
        return sum(t.points for t in self.tasks) + (self.quiz.points if self.quiz else 0.0)

    @property
    def task_ids(self) -> list[str]:
        """Ids of every graded unit, the quiz last."""
        return [t.id for t in self.tasks] + ([self.quiz.task_id] if self.quiz else [])

    def task(self, task_id: str) -> Task:
        """Return the code task with this id.

        Raises:
            AssignmentError: If no such task is declared.
        """
        for task in self.tasks:
            if task.id == task_id:
                return task
        owners = [t.id for t in self.tasks if any(task_id in (q, q.split(".", 1)[1]) for q in t.functions)]
        owned = f"; {task_id} is a function of task {owners[0]!r}" if owners else ""
        raise AssignmentError(f"assignment {self.name!r} has no task {task_id!r}{owned}; tasks: "
                              f"{', '.join(self.task_ids)}")

    def owner_of(self, qualified_name: str) -> Task | None:
        """Return the task whose student functions include this qualified name."""
        for task in self.tasks:
            if qualified_name in task.functions:
                return task
        return None

    def reaches(self, task_ids: Iterable[str]) -> set[str]:
        """The qualified names the code of these tasks can run: their functions and what they ``use``, and,
        transitively, the functions and uses of every task that owns a used name.

        What a change to one function can affect (``check --watch``'s re-runs, ``show``'s figure cache) is read
        from this one closure.
        """
        wanted = set(task_ids)
        names: set[str] = set()
        todo = [task for task in self.tasks if task.id in wanted]
        while todo:
            task = todo.pop()
            for name in task.functions + task.uses:
                if name not in names:
                    names.add(name)
                    owner = self.owner_of(name)
                    if owner is not None:
                        todo.append(owner)
        return names


class ManifestErrors(AssignmentError):
    """A manifest that does not fit its schema: said in one line (its first problem and how many more), with
    ``problems`` listing every one, which ``grader verify`` prints.

    Args:
        name: The assignment's name.
        problems: One line per problem (``file:line: ...``), in the file's order.
    """

    def __init__(self, name: str, problems: list[str]) -> None:
        more = f" (and {len(problems) - 1} more: `grader verify {name}` lists each)" if len(problems) > 1 else ""
        super().__init__(problems[0] + more)
        self.problems = problems


def load_assignment(name: str, root: Path | None = None) -> Assignment:
    """Load and validate an assignment's manifest.

    Args:
        name: The assignment's folder name (e.g. ``"attention101"``).
        root: Folder of assignments; defaults to assignments_root().

    Returns:
        The validated assignment.

    Raises:
        AssignmentError: If the assignment does not exist or its manifest is inconsistent.
    """
    root = root or assignments_root()
    name = name.rstrip("/")  # ``assignment3/``: the shell's completion of the package folder of the same name
    folder = root / name
    manifest_path = folder / MANIFEST
    if not _NAME.match(name) or not manifest_path.is_file():
        known = ", ".join(available_assignments(root)) or "none"
        raise AssignmentError(f"no assignment named {name!r} in {display_path(root)} (available: {known})"
                              + (elsewhere(name, root) if _NAME.match(name) else ""))
    text, data, filled, problems = _read_manifest(manifest_path)
    if problems:
        raise ManifestErrors(name, problems)
    try:
        _refuse_bad_figure_files(filled, text, manifest_path)
    except ManifestProblem as exc:
        raise AssignmentError(str(exc)) from None
    try:
        return _build(name, folder, filled, data)
    except (KeyError, TypeError, ValueError) as exc:
        raise AssignmentError(f"{manifest_path}: invalid manifest ({exc})") from None


def _read_manifest(path: Path) -> tuple[str, dict[str, Any], dict[str, Any], list[str]]:
    """A manifest's text, its parsed data, the data with the schema's defaults filled in, and one line for each
    problem the schema finds in it (:func:`autograder.spec.manifest.validate_all`): the one reader of a manifest.

    Raises:
        AssignmentError: If the file cannot be read or is not TOML (one line).
    """
    try:
        text = path.read_text(encoding="utf-8")
        data = load_toml(path)
    except (OSError, UnicodeDecodeError, TOMLDecodeError) as exc:
        raise AssignmentError(f"cannot read {path}: {exc}") from None
    filled, problems = validate_all(data, text, path)
    return text, data, filled, problems


def missing_paths(assignment: Assignment) -> dict[Path, str]:
    """Each file or folder the manifest names that does not exist: its resolved path, and one line naming the
    manifest's line, the key and the path (``assignment.toml:44: checks names 'hidden/checks/gleu.py', which does
    not exist``).

    The loader refuses only missing figure files: the hidden ones (checks, the quiz key) are absent from a student's
    copy by design, so ``grader verify``, ``grader release`` and grading beside the reference ask here.
    """
    manifest = assignment.root / MANIFEST
    text, _, filled, problems = _read_manifest(manifest)
    if problems:
        raise AssignmentError(f"cannot read {manifest}: {problems[0]}")
    found = {}
    for declared in declared_paths(filled):
        problem = missing_file_problem(manifest, text, declared.table, declared.key, declared.index, declared.name,
                                       declared.folder)
        if problem:
            found[(assignment.root / declared.name).resolve()] = problem
    return found


def absent_file(assignment: Assignment, path: Path) -> str:
    """Why ``path``, a hidden file the manifest names, is absent, when the manifest is to blame ('' otherwise).

    Beside the reference (the instructor's repository, the Gradescope autograder) every declared file must exist:
    the answer is the manifest's line of :func:`missing_paths`. A student's copy has no reference and no hidden
    files by design: '' (the caller says the file is not part of the installation).
    """
    if path.exists() or not assignment.reference.is_dir():
        return ""
    return missing_paths(assignment).get(path.resolve(), "")


def _refuse_bad_figure_files(filled: dict, text: str, path: Path) -> None:
    """Figure files ship to students: refuse a missing one, or a name the release's leak scan would refuse, now."""
    for name in (filled["figures"] or {}).get("files", []):
        problem = missing_file_problem(path, text, "figures", "files", 0, name)
        if not problem and forbidden_name_problem(name):
            problem = location(path, text, "figures", "files") + f"[figures] files: {forbidden_name_problem(name)}"
        if problem:
            raise ManifestProblem(problem)


def _build(name: str, folder: Path, filled: dict, data: dict) -> Assignment:
    meta = filled["assignment"]
    repo = folder.parent.parent
    gradescope = filled["gradescope"] or {key.name: key.default for key in table("gradescope").keys}
    audit = filled["audit"] or {}
    assignment = Assignment(
        name=name,
        title=meta["title"] or name,
        root=folder,
        package=meta["package"] or name,
        modules=tuple(meta["modules"]),
        student_files=tuple(meta["student_files"]),
        seed=int(meta["seed"]),
        reference=(repo / (meta["reference"] or f"reference_solutions/{name}")).resolve(),
        template=(repo / (meta["template"] or f"student_template/{name}")).resolve(),
        public_tests=(folder / meta["public_tests"]).resolve(),
        tasks=tuple(_build_task(folder, raw) for raw in filled["tasks"]),
        quiz=_build_quiz(folder, filled["quiz"]) if filled["quiz"] else None,
        max_output_bytes=int(meta["max_output_bytes"]),
        memory_mb=int(meta["memory_mb"]),
        due=parse_when(meta["due"], "[assignment] due") if meta["due"] is not None else None,
        late=policy_from_table(data.get("late", {})),
        visibility=gradescope["visibility"],
        stdout_visibility=gradescope["stdout_visibility"],
        public_timeout=float(meta["public_timeout"]),
        audit=AuditMinimums(**audit),
        figure_files=tuple((filled["figures"] or {}).get("files", ())),
    )
    _validate(assignment)
    return assignment


def _build_task(folder: Path, raw: dict) -> Task:
    return Task(
        id=raw["id"],
        title=raw["title"] or raw["id"],
        points=float(raw["points"]),
        functions=tuple(raw["functions"]),
        uses=tuple(raw["uses"]),
        checks=(folder / raw["checks"]).resolve(),
        timeout=float(raw["timeout"]),
        slow=raw["slow"],
        assets=tuple(raw["assets"]),
        visibility=raw["visibility"],
        check_visibility=tuple(raw["check_visibility"].items()),
        public_timeout=float(raw["public_timeout"]) if raw["public_timeout"] is not None else None,
    )


def _build_quiz(folder: Path, raw: dict) -> Quiz:
    return Quiz(
        task_id=raw["id"],
        title=raw["title"],
        points=float(raw["points"]),
        questions_file=(folder / raw["questions"]).resolve(),
        key_file=(folder / raw["key"]).resolve(),
        answers_file=raw["answers_file"],
        feedback=raw["feedback"],
        max_blind_score=raw["max_blind_score"],
    )


def _validate(assignment: Assignment) -> None:
    if assignment.quiz and assignment.quiz.feedback not in QUIZ_FEEDBACK:
        raise ValueError(f"quiz feedback must be one of {', '.join(QUIZ_FEEDBACK)}, not {assignment.quiz.feedback!r}")
    for where, value in [("[gradescope] visibility", assignment.visibility),
                         ("[gradescope] stdout_visibility", assignment.stdout_visibility),
                         *((f"task {t.id!r} visibility", t.visibility) for t in assignment.tasks),
                         *((f"task {t.id!r} check_visibility {name!r}", value) for t in assignment.tasks
                           for name, value in t.check_visibility)]:
        if value not in VISIBILITIES:
            raise ValueError(f"{where} must be one of {', '.join(VISIBILITIES)}, not {value!r}")
    if assignment.late.rate and assignment.due is None:
        raise ValueError("[late] penalty is set but [assignment] due is not; add the deadline")
    if assignment.public_timeout <= 0:
        raise ValueError("public_timeout must be a positive number of seconds")
    taken = set(assignment.student_files)
    for module in assignment.modules:
        if f"{module}.py" not in taken:
            raise ValueError(f"[assignment] student_files has no {module}.py, a module of [assignment] modules: the "
                             f"intake would drop every student's {module}.py; add it")
    if assignment.quiz and assignment.quiz.answers_file not in taken:
        raise ValueError(f"[assignment] student_files has no {assignment.quiz.answers_file}, the quiz's answers_file: "
                         f"the intake would drop every student's answers; add it")
    ids = assignment.task_ids
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate task ids in {ids}")
    for task in assignment.tasks:
        if task.points < 0:
            raise ValueError(f"task {task.id!r} has negative points")
        if task.public_timeout is not None and task.public_timeout <= 0:
            raise ValueError(f"task {task.id!r}: public_timeout must be a positive number of seconds")
        for qualified in task.functions + task.uses:
            module = qualified.split(".")[0]
            if "." not in qualified or module not in assignment.modules:
                raise ValueError(f"task {task.id!r}: {qualified!r} is not 'module.name' of a student module")
        own = set(task.functions) & set(task.uses)
        if own:
            raise ValueError(f"task {task.id!r} cannot use the reference for its own code {sorted(own)}")
