"""Grade one submission: prepare it, run each hidden check in the sandbox, compare with the reference, score."""

from __future__ import annotations

import dataclasses
import platform
import shutil
import time
from pathlib import Path
from typing import Any

import torch

from autograder import __version__
from autograder.errors import AssignmentError, WorkerDied
from autograder.grading.dependencies import OwnDependencies, own_dependencies
from autograder.grading.jobs import CheckBatch, Jobs, read_outputs
from autograder.grading.records import truncate
from autograder.judge.refcache import ReferenceStore
from autograder.judge.scoring import score_task
from autograder.judge.verdict import Judge
from autograder.probe.checks import Check, helper_sources, task_checks
from autograder.probe.context import derive_seed
from autograder.reports.results import (
    ERROR,
    TIMEOUT,
    CheckResult,
    GradeReport,
    TaskResult,
)
from autograder.sandbox.host import (
    JobResult,
    Zygote,
    describe_isolation,
    new_scratch,
    start_zygotes,
)
from autograder.sandbox.memory import GRADER_OOM_SCORE_ADJ, current_plan, set_oom_score_adj
from autograder.spec.assignment import Assignment, Task, absent_file, short_names
from autograder.spec.fingerprint import assignment_fingerprint
from autograder.spec.mutation import diagnosable_mistakes
from autograder.spec.quiz import grade_answers, load_key, load_questions, quiz_checks, quiz_summary, read_answers
from autograder.spec.reference import load_package, prune_reference
from autograder.submission.imports import NOT_IMPORTED, unneeded_modules
from autograder.submission.intake import prepare_submission
from autograder.submission.notebook.places import CellMap
from autograder.submission.package import PreparedSubmission
from autograder.util.syntax import parse


class Grader:
    """Grades submissions of one assignment; reusable across many submissions (reference outputs are cached),
    one at a time (``grade`` uses every zygote itself; use one Grader per thread).

    Args:
        assignment: The assignment.
        scratch: A private folder for submissions and job files (a temporary one by default).
        workers: Worker processes grading tasks of one submission in parallel.
        zygotes: Already started workers to use instead (see sandbox.start_zygotes); ``workers`` is then ignored.
        require_isolation: Refuse to grade unless this isolation tier is in force (autograder.sandbox.tiers.TIERS).

    Attributes:
        stale_mistakes: One line per known mistake left out of diagnosis because its edits no longer apply to the
            reference (an authoring problem for the instructor, never shown in a report).
        unimportable_mistakes: The same for each known mistake whose package does not import, found when the judge
            first tries it (importing all of them when the grader starts would cost a second or more).
    """

    def __init__(self, assignment: Assignment, scratch: Path | None = None, workers: int = 1,
                 zygotes: list[Zygote] | None = None, require_isolation: str | None = None) -> None:
        self.assignment = assignment
        self.scratch = scratch or new_scratch()
        self.memory = current_plan(assignment.memory_mb, len(zygotes) if zygotes else workers)
        set_oom_score_adj(GRADER_OOM_SCORE_ADJ)  # before the zygotes start: they inherit it, their jobs raise it
        self.zygotes = zygotes or start_zygotes(self.memory.workers, self.scratch, protect=assignment.private_folders)
        for zygote in self.zygotes:
            zygote.required = require_isolation or zygote.required
            zygote.ensure_protected(assignment.private_folders)
        self.reference = load_package(assignment.reference, f"_reference_{assignment.name}", assignment.modules)
        self.checks = {task.id: self._load_checks(task) for task in assignment.tasks}
        pruned = {task.id: prune_reference(assignment.reference, assignment.modules, task.uses)
                  for task in assignment.tasks}
        _refuse_own_reference(assignment, pruned)
        self.assets = _load_assets(assignment.root / "hidden" / "assets")
        for task in assignment.tasks:
            missing = [name for name in task.assets if name not in self.assets]
            if missing:
                raise AssignmentError(f"task {task.id!r} needs assets {missing} missing from hidden/assets/")
        self.batches = {task.id: CheckBatch(label=task.id, timeout=task.timeout,
                                            checks_source=task.checks.read_text(),
                                            helper_sources=helper_sources(task.checks),
                                            reference_sources=pruned[task.id], uses=tuple(task.uses),
                                            assets={n: self.assets[n] for n in task.assets})
                        for task in assignment.tasks}
        # A stale mistake (its old text gone from the reference) can diagnose nothing: left out, and said once to
        # whoever runs the grader (never in a report: the student did nothing wrong; see cli/grade.py); so is one
        # that does not import, once the judge has tried it (unimportable_mistakes).
        mistakes, self.stale_mistakes = diagnosable_mistakes(assignment)
        store = ReferenceStore.for_assignment(assignment_fingerprint(assignment))
        self.judge = Judge(assignment, self.reference, self.assets, mistakes, self.scratch / "mistakes", store)
        self.jobs = Jobs(assignment, self.zygotes, self.memory)
        self._own_batches: dict[tuple[str, tuple[str, ...]], CheckBatch | None] = {}

    @property
    def unimportable_mistakes(self) -> list[str]:
        """The judge's lines for the known mistakes it found do not import (see the class's attributes)."""
        return list(self.judge.unimportable.values())

    def close(self) -> None:
        """Stop the worker and remove the scratch folder."""
        for zygote in self.zygotes:
            zygote.close()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self) -> "Grader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- loading ---------------------------------------------------------------------------------------

    def _load_checks(self, task: Task) -> list[Check]:
        return task_checks(task.checks, task.id, self.assignment.task_ids, absent_file(self.assignment, task.checks))

    # -- grading ---------------------------------------------------------------------------------------

    def grade(self, submission: Path, only: set[str] | None = None,
              prepared: PreparedSubmission | None = None) -> GradeReport:
        """Grade one submission end to end.

        Args:
            submission: What the user gave: a package folder, a folder containing it, a notebook or a zip.
            only: Grade just these task ids (the quiz included if named); all tasks by default.
            prepared: What the intake already made of ``submission`` (the caller removes it), so that a bad
                submission can be refused before any work starts; the intake runs here when None.

        Returns:
            The report.

        Raises:
            SubmissionError: If the submission cannot be found or unpacked.
        """
        started = time.monotonic()
        scratch: Path | None = None
        try:
            if prepared is None:
                scratch = new_scratch(prefix="submission-")  # the jobs' copies of the work go beside it
                prepared = prepare_submission(Path(submission), self.assignment, scratch)
            outputs: list[str] = []
            broken = self.jobs.probe_imports(prepared, outputs)
            chosen = [task for task in self.assignment.tasks if only is None or task.id in only]
            printed: dict[str, list[str]] = {task.id: [] for task in chosen}

            graded = self._grade_tasks(chosen, prepared, broken, printed)
            self._grade_again_with_own_dependencies(chosen, graded, prepared, broken, printed)
            tasks = [graded[task.id] for task in chosen]
            outputs += [text for task in chosen for text in printed[task.id]]
            if self.assignment.quiz and (only is None or self.assignment.quiz.task_id in only):
                tasks.append(self._grade_quiz(prepared))
        finally:
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
        notes = prepared.notes()
        notes += prepared.import_notes(broken)
        return GradeReport(
            assignment=self.assignment.name,
            submission=str(submission),
            score=round(sum(t.score for t in tasks), 2),
            max_score=sum(t.max_score for t in tasks),
            tasks=tasks,
            digest=prepared.digest,
            notes=notes,
            student_output=truncate("\n".join(outputs), self.assignment.max_output_bytes),
            environment=self.environment(),
            seconds=round(time.monotonic() - started, 2),
        ).make_printable()

    def _grade_tasks(self, chosen: list[Task], prepared: PreparedSubmission, broken: dict[str, str],
                     printed: dict[str, list[str]]) -> dict[str, TaskResult]:
        """Grade tasks on every zygote at once (within the memory budget), longest first (see :meth:`Jobs.serve`)."""
        longest_first = sorted(chosen, key=lambda t: (not t.slow, -len(self.checks[t.id])))
        graded: dict[str, TaskResult] = {}

        def grade(task: Task, zygote: Zygote) -> None:
            graded[task.id] = self._grade_task(task, prepared, broken, printed[task.id], zygote)

        left = self.jobs.serve(longest_first, grade, self.memory.workers)
        if left:
            raise WorkerDied(f"every sandboxed worker died; not graded: {', '.join(t.id for t in left)}")
        return graded

    def environment(self) -> dict[str, Any]:
        """Versions, seeds and the isolation in force: what makes a grade reproducible."""
        return {
            "grader": __version__,
            "python": platform.python_version(),
            "torch": str(torch.__version__),  # a plain str: a TorchVersion would make grade-all's parent import torch
            "platform": platform.platform(),
            "seed": self.assignment.seed,
            **_isolation_fields(self.zygotes),
        }

    def _grade_task(self, task: Task, prepared: PreparedSubmission, broken: dict[str, str],
                    outputs: list[str], zygote: Zygote | None = None) -> TaskResult:
        """Grade one task with the reference standing in for what it ``uses`` (see :meth:`_task_results`)."""
        checks = [(check, derive_seed(self.assignment.seed, check.name)) for check in self.checks[task.id]]
        results = self._task_results(task, checks, self.batches[task.id], prepared, broken, outputs, zygote)
        return score_task(task.id, task.title, task.points, results)

    def _task_results(self, task: Task, checks: list[tuple[Check, int]], batch: CheckBatch,
                      prepared: PreparedSubmission, broken: dict[str, str], outputs: list[str],
                      zygote: Zygote | None = None) -> list[CheckResult]:
        """Run checks of a task in one sandboxed job; a check that ends its job early costs that check alone:
        the checks after it run in a fresh job (after a timeout they are not run, so a hang costs one wait)."""
        own_broken = [m for m in task.modules if m in broken]
        if own_broken:
            module = own_broken[0]
            why = prepared.refused.get(f"{module}.py") or prepared.cannot_import(module, broken[module])
            return [CheckResult(check.name, check.description, check.weight, ERROR, why, seed=seed)
                    for check, seed in checks]
        unneeded = unneeded_modules(prepared.package_dir, self.assignment.package, self.assignment.modules,
                                    task.modules, batch.uses)
        broken = broken | {m: NOT_IMPORTED.format(module=m) for m in unneeded if m not in broken}
        results: list[CheckResult] = []
        pending = checks
        while pending:
            done = self.jobs.run_checks(batch, pending, prepared, broken, outputs, self._read_check, zygote)
            results += done
            pending = pending[len(done):]
            if done[-1].status == TIMEOUT:  # only the check a job ended during can time out
                results += [CheckResult(check.name, check.description, check.weight, TIMEOUT,
                                        "not run: an earlier check of this task timed out", seed=seed)
                            for check, seed in pending]
                break
        return results

    def _grade_again_with_own_dependencies(self, chosen: list[Task], graded: dict[str, TaskResult],
                                           prepared: PreparedSubmission, broken: dict[str, str],
                                           printed: dict[str, list[str]]) -> None:
        """Substitution must not punish correct code: the checks a task failed with the reference standing in
        for what it uses run again with the student's own dependencies where those scored full marks in their
        own task (:func:`own_dependencies`); each check keeps the better of its two results. Only a task that
        lost points and has such a dependency costs a second job, for its failed checks only (not those that
        timed out: a hang costs one wait)."""
        first = dict(graded)  # a dependency counts as verified by its first run alone
        extra: dict[str, TaskResult] = {}

        def full_marks(owner: Task) -> bool:
            if owner.id not in first and owner.id not in extra:  # not chosen (`--task`): graded for this only
                extra[owner.id] = self._grade_task(owner, prepared, broken, [])
            result = first.get(owner.id) or extra[owner.id]
            return result.score >= result.max_score

        for task in chosen:
            result = first[task.id]
            if result.score >= result.max_score or not task.uses:
                continue
            context = own_dependencies(self.assignment, task, full_marks)
            batch = self._own_batch(task, context) if context is not None else None
            if context is None or batch is None:
                continue
            failed = {c.name for c in result.checks if not c.passed and c.status != TIMEOUT}  # a hang: one wait
            if not failed:
                continue
            checks = [(check, derive_seed(self.assignment.seed, check.name)) for check in self.checks[task.id]
                      if check.name in failed]
            again = {r.name: r for r in self._task_results(task, checks, batch, prepared, broken,
                                                           printed[task.id])}
            merged = [again[c.name] if c.name in again and again[c.name].passed else c for c in result.checks]
            rescued = sum(c.name in again and again[c.name].passed for c in result.checks)
            if rescued:
                graded[task.id] = score_task(task.id, task.title, task.points, merged)
                graded[task.id].feedback += (f" ({rescued} check(s) graded with your own "
                                             f"{short_names(context.kept)}, which pass their own task, because "
                                             f"the reference's stand-in made them fail.)")

    def _own_batch(self, task: Task, context: OwnDependencies) -> CheckBatch | None:
        """The task's code for a second run with the student's own dependencies (None if the reference that
        still stands in would bring the task's own functions along)."""
        key = (task.id, context.uses)
        if key not in self._own_batches:
            pruned = prune_reference(self.assignment.reference, self.assignment.modules, context.uses)
            self._own_batches[key] = (None if _own_functions_in(task, pruned) else
                                      dataclasses.replace(self.batches[task.id], reference_sources=pruned,
                                                          uses=context.uses))
        return self._own_batches[key]

    def _read_check(self, check: Check, seed: int, record: dict[str, Any], result: JobResult,
                    base: CheckResult, cells: CellMap | None) -> CheckResult:
        actual = read_outputs(record, result, base, cells)
        if actual is None and record.get("status") == "error":  # the probe raised: the student's code, or the check's
            self.judge.refuse_broken_check(check, seed)
        return base if actual is None else self.judge.judge(check, seed, actual, base)

    def _grade_quiz(self, prepared: PreparedSubmission) -> TaskResult:
        quiz = self.assignment.quiz
        if quiz is None:
            raise AssignmentError(f"{self.assignment.name} has no quiz")
        answers, problem = read_answers(prepared.package_dir / quiz.answers_file)
        graded = grade_answers(load_questions(quiz), load_key(quiz, absent_file(self.assignment, quiz.key_file)),
                               answers)
        checks = quiz_checks(graded, quiz.feedback, problem)
        result = score_task(quiz.task_id, quiz.title, quiz.points, checks)
        result.feedback = quiz_summary(graded, quiz.feedback, problem)
        return result


def _refuse_own_reference(assignment: Assignment, pruned: dict[str, dict[str, str]]) -> None:
    """A task's worker must never hold the reference of the task's own functions."""
    for task in assignment.tasks:
        qualified = _own_functions_in(task, pruned[task.id])
        if qualified:
            raise AssignmentError(f"task {task.id!r}: what it uses pulls in the reference {qualified}; "
                                  "the task would be graded against itself")


def _own_functions_in(task: Task, pruned: dict[str, str]) -> str | None:
    """The first of the task's own functions that a pruned reference defines, or None."""
    for qualified in task.functions:
        module, name = qualified.split(".", 1)
        tree = parse(pruned.get(module, ""))
        if any(getattr(node, "name", None) == name for node in tree.body):
            return qualified
    return None


def _load_assets(folder: Path) -> dict[str, bytes]:
    if not folder.is_dir():
        return {}
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _isolation_fields(zygotes: list[Zygote]) -> dict[str, Any]:
    """The isolation tier in force (the weakest among the workers) and its features, for the report."""
    summary = describe_isolation(zygotes)
    return {"isolation": summary["tier"], "isolation_features": summary["features"]}
