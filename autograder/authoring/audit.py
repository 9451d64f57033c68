"""``grader audit``: grade every known mistake and correct variant to test the hidden tests themselves."""

from __future__ import annotations

import tempfile
import textwrap
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from autograder.authoring.blind import BLIND_KINDS, write_blind_package
from autograder.authoring.escapes import closeness_words, escaped_detail
from autograder.authoring.minimums import Figure, missed_minimums
from autograder.authoring.mutation_imports import import_answers
from autograder.authoring.notebook_template import notebook_path
from autograder.authoring.notebook_variant import NOTEBOOK_VARIANT, write_notebook_variant
from autograder.authoring.template import render_template
from autograder.errors import AssignmentError
from autograder.grading.grader import Grader
from autograder.judge.scoring import paying_checks
from autograder.reports.results import ERROR, PASSED, GradeReport, TaskResult
from autograder.spec.assignment import Assignment
from autograder.spec.mutation import Mutation, apply_mutation, edited_texts, load_mutations
from autograder.spec.reference import module_imports
from autograder.util.table import LEFT, RIGHT, table

CAUGHT, ESCAPED, COLLATERAL, FULL, PENALISED, BROKEN, NO_IMPORT, IMPORT_ONLY = (
    "caught", "ESCAPED", "COLLATERAL", "full marks", "WRONGLY PENALISED", "STALE", "DOES NOT IMPORT",
    "STOPPED BY IMPORT")


@dataclass
class AuditRow:
    """The audit's verdict on one mutation."""

    mutation: Mutation
    kind: str
    verdict: str
    scores: dict[str, tuple[float, float]] = field(default_factory=dict)
    diagnosis: str = ""
    diagnosed: bool = False
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.verdict in (CAUGHT, FULL)


def tasks_to_grade(assignment: Assignment, mutation: Mutation) -> set[str]:
    """Tasks a mutation can affect: its target, and every task whose modules are or import an edited file.

    A task in a module that neither is nor imports an edited file runs exactly the reference's code, so
    grading it would only cost time. Tasks in importing modules are graded (and slow ones when their own
    file changes): a dependency the manifest forgot to declare in ``uses`` shows up there as collateral.
    """
    edited = {edit.file.removesuffix(".py") for edit in mutation.edits}
    imports = module_imports(assignment.reference, assignment.modules)
    reached = {m for m in assignment.modules if m in edited or imports[m] & edited}
    chosen = {t.id for t in assignment.tasks
              if (set(t.modules) & edited) or (not t.slow and set(t.modules) & reached)}
    if mutation.task and mutation.task in {t.id for t in assignment.tasks}:
        chosen.add(mutation.task)
    return chosen


def judge(mutation: Mutation, kind: str, report: GradeReport) -> AuditRow:
    """Decide whether a mistake was caught (only in its task, by a check rather than an import) or a variant kept
    full marks."""
    scores = {t.id: (t.score, t.max_score) for t in report.tasks}
    row = AuditRow(mutation, kind, FULL, scores)
    lost = sorted(t.id for t in report.tasks if t.score < t.max_score)
    if kind == "variant":
        if lost:
            row.verdict = PENALISED
            row.detail = _shorten("; ".join(f"{t.id}: {t.feedback}" for t in report.tasks if t.id in lost), 400)
        return row
    target = next((t for t in report.tasks if t.id == mutation.task), None)
    row.verdict, row.detail = _mistake_verdict(mutation, report, lost, target)
    if target is not None:
        failing = [c for c in target.checks if c.status != PASSED]
        row.diagnosis = next((c.hint for c in failing if c.hint), "")
        row.diagnosed = bool(row.diagnosis) and row.diagnosis == mutation.hint
        if row.verdict == CAUGHT and failing:
            row.detail = _shorten(f"{failing[0].status}: {failing[0].message}", 200)
    return row


def _mistake_verdict(mutation: Mutation, report: GradeReport, lost: list[str],
                     target: TaskResult | None) -> tuple[str, str]:
    """A mistake's verdict and the detail that says why (none for one caught)."""
    collateral = [name for name in lost if name != mutation.task]
    stopped = import_stop(report, lost)
    if stopped:
        return IMPORT_ONLY, (f"it lost points only because {stopped}; a check must catch a mistake, not an import of "
                             f"the graded copy, which holds only [assignment] student_files: is a file it needs "
                             f"missing there?")
    if target is None or target.score >= target.max_score:
        detail = escaped_detail(target)
        if collateral:  # caught, but under another task than the one the mistake file names: said first, as the fix
            detail = f"lost points in {', '.join(collateral)} instead (is its task right?); {detail}"
        return ESCAPED, detail
    if collateral:
        return COLLATERAL, f"also lost points in {', '.join(collateral)}"
    return CAUGHT, ""


def _shorten(text: str, width: int) -> str:
    """At most ``width`` characters, cut at a word's end (never mid-word), with an ellipsis where cut."""
    return textwrap.shorten(text, width, placeholder=" …")


def import_stop(report: GradeReport, lost: list[str]) -> str:
    """The note saying which module could not be imported, when that alone cost the ``lost`` tasks their points
    (every check that did not pass erred with that note: a student module that fails to import), else ''."""
    failing = [c for t in report.tasks if t.id in lost for c in t.checks if c.status != PASSED]
    notes = set(report.notes)
    return failing[0].message if failing and all(c.status == ERROR and c.message in notes for c in failing) else ""


def run_audit(assignment: Assignment, jobs: int = 2, progress=None) -> list[AuditRow]:
    """Grade every mistake and variant of the assignment, ``jobs`` at a time.

    Args:
        assignment: The assignment to audit.
        jobs: Number of graders working in parallel (each has its own worker process).
        progress: Optional callback ``progress(row)`` called as each row completes.

    Returns:
        One row per mutation, mistakes first, in declaration order.
    """
    work = [(m, "mistake") for m in load_mutations(assignment, "mistakes")]
    work += [(m, "variant") for m in load_mutations(assignment, "variants")]
    with ThreadPoolExecutor(1) as pool:
        # a child process imports every mutation while the graders start (both import torch)
        failing = pool.submit(import_failures, assignment, [mutation for mutation, _ in work])
        if notebook_path(assignment).is_file():  # the reference as an awkwardly shaped notebook: a variant too
            work.append((NOTEBOOK_VARIANT, "variant"))

        def one(grader: Grader, tmp: Path, item: tuple[Mutation, str]) -> AuditRow:
            return _audit_one(grader, assignment, item[0], item[1], tmp, _failure(failing, item[0]))

        return _in_parallel(assignment, work, jobs, one, progress)


def import_failures(assignment: Assignment, mutations: list[Mutation]) -> dict[Mutation, str]:
    """The line ``grader verify`` prints for each mutation whose package does not import
    (:func:`autograder.authoring.mutation_imports.import_answers`): graded, such a mistake would lose points in
    every task of its module, as if caught (or collateral), and its hint could never be shown. A mutation whose
    edits do not apply is not imported: its row says it is stale."""
    edited = []
    for mutation in mutations:
        try:
            edited.append((mutation, edited_texts(assignment.reference, mutation)))
        except AssignmentError:
            continue
    answers = import_answers(assignment.reference, assignment.modules, edited)
    return {mutation: answer for (mutation, _), answer in zip(edited, answers) if answer}


def _failure(failing: Future[dict[Mutation, str]], mutation: Mutation) -> str:
    """Why the mutation's package does not import ('' when it does), once the child process has tried them all."""
    return failing.result().get(mutation, "")


@dataclass
class BlindRow:
    """How much one kind of blind submission earned, task by task.

    Attributes:
        kind: The blind kind (autograder.authoring.blind.BLIND_KINDS).
        scores: Task id to (points earned, points possible).
        paying: Task id to the checks that passed (what a gate on the task's values must cover).
    """

    kind: str
    scores: dict[str, tuple[float, float]] = field(default_factory=dict)
    paying: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return bool(self.scores) and all(score <= 0 for score, _ in self.scores.values())


def run_blind(assignment: Assignment, jobs: int = 2, kinds: tuple[str, ...] = BLIND_KINDS,
              progress=None) -> list[BlindRow]:
    """Grade one blind submission per kind (every task's functions blind at once), ``jobs`` at a time.

    Args:
        assignment: The assignment to audit.
        jobs: Number of graders working in parallel.
        kinds: The blind kinds to grade.
        progress: Optional callback ``progress(row)`` called as each row completes.

    Returns:
        One row per kind, in the order of ``kinds``.
    """
    template = render_template(assignment)
    tasks = {task.id for task in assignment.tasks}

    def one(grader: Grader, tmp: Path, kind: str) -> BlindRow:
        folder = write_blind_package(assignment, kind, tmp / f"blind-{kind}" / assignment.package, template)
        return blind_row(kind, grader.grade(folder, only=tasks).tasks)

    return _in_parallel(assignment, list(kinds), jobs, one, progress)


def blind_row(kind: str, tasks: list[TaskResult]) -> BlindRow:
    """The scores of a graded blind submission, with the checks that paid it."""
    return BlindRow(kind, {t.id: (t.score, t.max_score) for t in tasks},
                    {t.id: [name for name, _ in paying_checks(t)] for t in tasks if t.score > 0})


def _in_parallel(assignment: Assignment, work: list, jobs: int, one, progress=None) -> list:
    """``one(grader, tmp, item)`` for every item on a pool of ``jobs`` threads, each with its own Grader (started on
    the thread's first item, closed when all are done); results in the items' order.

    Raises:
        The first exception an item raised (the items not started by then are cancelled).
    """
    lock = threading.Lock()  # the ExitStack, and the progress callback, are shared by the threads
    own = threading.local()
    with ExitStack() as stack, ThreadPoolExecutor(max(1, min(jobs, len(work)))) as pool:  # the pool ends first

        def run(item):
            if not hasattr(own, "grader"):
                with lock:
                    own.tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="grader-audit-")))
                grader = Grader(assignment)  # outside the lock: the threads' graders start at once
                with lock:
                    own.grader = stack.enter_context(grader)
            row = one(own.grader, own.tmp, item)
            if progress:
                with lock:
                    progress(row)
            return row

        futures = [pool.submit(run, item) for item in work]
        for future in as_completed(futures):
            if future.exception() is not None:
                for waiting in futures:
                    waiting.cancel()
                raise future.exception()
        return [future.result() for future in futures]


def audit_notebook_variant(grader: Grader, assignment: Assignment, tmp: Path) -> AuditRow:
    """Grade the reference as a notebook whose decorators and defaults reach helpers three levels down
    (autograder.authoring.notebook_variant): every code task must keep full marks."""
    path = write_notebook_variant(assignment, notebook_path(assignment),
                                  tmp / NOTEBOOK_VARIANT.id / f"{assignment.name}.ipynb")
    return judge(NOTEBOOK_VARIANT, "variant", grader.grade(path, only={task.id for task in assignment.tasks}))


def _audit_one(grader: Grader, assignment: Assignment, mutation: Mutation, kind: str, tmp: Path,
               not_importing: str = "") -> AuditRow:
    """One mutation's row: graded, unless it is stale or its package does not import (``not_importing``: the line
    saying so, :func:`import_failures`)."""
    if mutation is NOTEBOOK_VARIANT:
        return audit_notebook_variant(grader, assignment, tmp)
    try:
        folder = apply_mutation(assignment.reference, mutation, tmp / mutation.id / assignment.package)
    except Exception as exc:  # noqa: BLE001 - a stale edit is reported as a row, the audit goes on
        return AuditRow(mutation, kind, BROKEN, detail=str(exc))
    if not_importing:
        return AuditRow(mutation, kind, NO_IMPORT, detail=not_importing)
    only = tasks_to_grade(assignment, mutation)
    report = grader.grade(folder, only=only)
    row = judge(mutation, kind, report)
    target = next((t for t in report.tasks if t.id == mutation.task), None)
    if row.verdict == ESCAPED and target is not None:  # why: how near each check it passed came to failing
        row.detail = row.detail.replace(escaped_detail(target),
                                        escaped_detail(target, closeness_words(grader, mutation, target)))
    return row


def render_audit(rows: list[AuditRow], seconds: float) -> str:
    """The audit table, the kill rate and the diagnosis rate."""
    lines = table(["case", "kind", "expected task", "verdict", "diagnosis / detail"],
                  [(row.mutation.id, row.kind, row.mutation.task or "(full marks)", row.verdict, _shown_note(row))
                   for row in rows])
    mistakes = [r for r in rows if r.kind == "mistake"]
    variants = [r for r in rows if r.kind == "variant"]
    caught = sum(r.verdict == CAUGHT for r in mistakes)
    diagnosed = sum(r.diagnosed for r in mistakes)
    kept = sum(r.verdict == FULL for r in variants)
    stale = [r.mutation.id for r in rows if r.verdict == BROKEN]
    failing = [r.mutation.id for r in rows if r.verdict == NO_IMPORT]
    lines += [
        "",
        f"mistakes caught only in their task: {caught} / {len(mistakes)}"
        + (f" (kill rate {caught / len(mistakes):.0%})" if mistakes else ""),
        f"mistakes with the right diagnosis: {diagnosed} / {len(mistakes)}"
        + (f" ({diagnosed / len(mistakes):.0%})" if mistakes else ""),
        f"variants with full marks: {kept} / {len(variants)}",
    ]
    if stale:  # not graded at all: the rows above say which line of which file to fix
        lines.append(f"stale mutations, not graded (an edit no longer applies to the reference): {len(stale)}: "
                     f"{', '.join(stale)}")
    if failing:
        lines.append(f"mutations that do not import, not graded: {len(failing)}: {', '.join(failing)}")
    lines.append(f"wall time: {seconds:.1f} s")
    return "\n".join(lines) + "\n"


def _shown_note(row: AuditRow) -> str:
    """A row's last cell: the hint its mistake got (marked when it is the right one), else what went wrong."""
    note = row.diagnosis if row.kind == "mistake" and row.diagnosis else row.detail
    in_full = row.verdict in (BROKEN, NO_IMPORT, ESCAPED, IMPORT_ONLY)  # what to fix, and where, in full
    shown = note if in_full else _shorten(note, 110)
    return shown + (" [right hint]" if row.diagnosed else "")


def render_blind(rows: list[BlindRow]) -> str:
    """The blind family's table (task by kind, points earned) and the checks that paid a blind submission."""
    if not rows:
        return ""
    tasks = list(rows[0].scores)
    cells = [[task, *(f"{row.scores.get(task, (0.0, 0.0))[0]:.2f}" for row in rows), f"{rows[0].scores[task][1]:g}"]
             for task in tasks]
    lines = ["blind submissions (points earned; each must be 0):"]
    lines += table(["task", *(row.kind for row in rows), "of"], cells, [LEFT] + [RIGHT] * (len(rows) + 1))
    paid = [(row.kind, task, names) for row in rows for task, names in row.paying.items()]
    for kind, task, names in paid:
        lines.append(f"  PAID {task} x {kind}: {', '.join(names)}")
    clean = sum(score <= 0 for row in rows for score, _ in row.scores.values())
    total = sum(len(row.scores) for row in rows)
    lines.append(f"blind submissions scoring 0 on their task: {clean} / {total}")
    return "\n".join(lines) + "\n"


def audit_figures(rows: list[AuditRow]) -> list[Figure]:
    """The audit's own counts that ``[audit]`` holds to minimums: mistakes caught only in their task, declared
    variants with full marks (the notebook variant every assignment gets is not one), right diagnoses."""
    mistakes = [r for r in rows if r.kind == "mistake"]
    variants = [r for r in rows if r.kind == "variant" and r.mutation is not NOTEBOOK_VARIANT]
    return [
        Figure("min_mistakes", sum(r.verdict == CAUGHT for r in mistakes), "audit",
               "mistakes caught only in their task", "add mistakes the checks catch"),
        Figure("min_variants", sum(r.verdict == FULL for r in variants), "audit", "variants with full marks",
               "add variants"),
        Figure("min_right_hints", sum(r.diagnosed for r in mistakes), "audit", "mistakes with the right diagnosis",
               "make the rows without [right hint] diagnosable (a probe whose outputs tell them apart)"),
    ]


FAMILIES = ("all", "mutations", "blind")


def audit_and_render(assignment: Assignment, jobs: int, families: str = "all") -> tuple[bool, str, list[str]]:
    """Run the audit (the mistakes and variants, the blind submissions, or both).

    Returns:
        Whether every row holds (each mistake caught in its task only, each variant at full marks, each blind
        submission at 0), the tables, and one line per ``[audit]`` minimum the run falls below.

    Raises:
        ValueError: If ``families`` is not one of FAMILIES.
    """
    from autograder.util.progress import progress_bar

    if families not in FAMILIES:
        raise ValueError(f"unknown audit family {families!r}; expected one of {', '.join(FAMILIES)}")
    started = time.monotonic()
    rows: list[AuditRow] = []
    blind: list[BlindRow] = []
    if families != "blind":
        total = len(load_mutations(assignment, "mistakes")) + len(load_mutations(assignment, "variants")) \
            + notebook_path(assignment).is_file()
        with progress_bar(total, f"audit {assignment.name}", unit="mutation") as bar:
            def advance(row: AuditRow) -> None:
                bar.set_postfix_str(row.mutation.id, refresh=False)
                bar.update(1)

            rows = run_audit(assignment, jobs=jobs, progress=advance)
    if families != "mutations":
        with progress_bar(len(BLIND_KINDS), f"blind submissions of {assignment.name}", unit="kind") as bar:
            blind = run_blind(assignment, jobs=jobs, progress=lambda row: bar.update(1))
    ok = (bool(rows) or families == "blind") and all(row.ok for row in rows) and all(row.ok for row in blind)
    missed = missed_minimums(assignment, audit_figures(rows)) if families != "blind" else []
    seconds = time.monotonic() - started
    table = render_audit(rows, seconds) if rows else f"wall time: {seconds:.1f} s\n"
    return ok, (render_blind(blind) + "\n" if blind else "") + table, missed
