"""``grader verify``: the reference scores full marks, the template scores 0, the template and quiz key are sound."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from autograder.authoring.lint import lint_assignment, points_total
from autograder.authoring.quiz_cues import blind_bound, blind_summary, cue_problems, key_pattern_problems
from autograder.authoring.template import template_drift
from autograder.errors import GraderError
from autograder.judge.scoring import paying_checks
from autograder.reports.results import NOT_IMPLEMENTED, GradeReport, TaskResult
from autograder.show.render import declares_figures
from autograder.spec.assignment import MANIFEST, Assignment, absent_file
from autograder.spec.quiz import load_key, load_questions, read_answers
from autograder.util.paths import display_path


@dataclass
class Finding:
    """One verified property: its name, whether it holds, and what is wrong (or what was seen)."""

    name: str
    ok: bool
    details: list[str] = field(default_factory=list)


@dataclass
class Verification:
    """Everything ``grader verify`` found."""

    assignment: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.findings)

    @property
    def problems(self) -> list[str]:
        """One line per problem, prefixed by the finding it belongs to."""
        return [f"{f.name}: {d}" for f in self.findings if not f.ok for d in f.details]


def check_quiz_key(assignment: Assignment) -> Finding:
    """The key answers every question with one of its options; the reference's answers file equals the key; no
    blind strategy (always the longest option, ...) scores above the bound, and the key's letters have no pattern."""
    finding = Finding("quiz key", True)
    quiz = assignment.quiz
    if quiz is None:
        finding.details.append("no quiz declared")
        return finding
    try:
        questions = load_questions(quiz)
        key = load_key(quiz, absent_file(assignment, quiz.key_file))
    except GraderError as exc:
        return Finding("quiz key", False, [str(exc)])
    problems = _key_problems(questions, key)
    problems += _reference_answers_problems(assignment, {q.id for q in questions}, key)
    bound = blind_bound(quiz, len(questions))
    problems += cue_problems(questions, key, bound) + key_pattern_problems(questions, key)
    if problems:
        return Finding("quiz key", False, problems)
    finding.details.append(f"{len(questions)} questions, each answered with a valid option; "
                           f"the reference's {quiz.answers_file} matches")
    finding.details.append(blind_summary(questions, key, bound))
    return finding


def _key_problems(questions: list, key: dict[str, dict[str, str]]) -> list[str]:
    problems = []
    for question in questions:
        entry = key.get(question.id)
        if entry is None:
            problems.append(f"{question.id} has no answer in the key")
        elif entry["answer"] not in question.options:
            options = ", ".join(sorted(question.options))
            problems.append(f"{question.id}: key answer {entry['answer']!r} is not an option ({options})")
    known = {q.id for q in questions}
    problems += [f"{name} is in the key but is not a question" for name in sorted(set(key) - known)]
    return problems


def _reference_answers_problems(assignment: Assignment, question_ids: set[str],
                                key: dict[str, dict[str, str]]) -> list[str]:
    if assignment.quiz is None:
        return []
    path = assignment.reference / assignment.quiz.answers_file
    answers, problem = read_answers(path)
    if problem:
        return [f"reference answers: {problem} ({display_path(path)})"]
    problems = []
    for qid in sorted(question_ids, key=_question_order):
        given = answers.get(qid)
        expected = key.get(qid, {}).get("answer")
        normalised = given.strip().lower() if isinstance(given, str) else given
        if expected is not None and normalised != expected:
            problems.append(f"reference answers: {qid} is {given!r}, the key says {expected!r}")
    problems += [f"reference answers: {name} is not a question" for name in sorted(set(answers) - question_ids)]
    return problems


def _question_order(qid: str) -> tuple[int, str]:
    digits = "".join(ch for ch in qid if ch.isdigit())
    return (int(digits) if digits else 0, qid)


def check_template_current(assignment: Assignment) -> Finding:
    """The committed template is byte-identical to a fresh generation from the reference."""
    try:
        drift = template_drift(assignment)
    except GraderError as exc:
        return Finding("student template", False, [str(exc)])
    if drift:
        return Finding("student template", False,
                       drift + [f"run `grader template {assignment.name}` and commit the result"])
    return Finding("student template", True, [f"{display_path(assignment.template)} (and its notebook "
                                              f"{assignment.name}.ipynb) is byte-identical to a fresh generation"])


def check_reference_report(report: GradeReport) -> Finding:
    """The reference scores full marks, task by task, with no notes (nothing missing, nothing broken)."""
    problems = [f"{task.id}: {task.score:g} / {task.max_score:g} ({task.status}): {task.feedback}"
                for task in report.tasks if task.score < task.max_score]
    problems += [f"note: {note}" for note in report.notes]
    summary = f"{report.score:g} / {report.max_score:g} in {report.seconds:g} s"
    if problems or report.score < report.max_score:
        return Finding("reference scores full marks", False, [f"scored {summary}"] + problems)
    return Finding("reference scores full marks", True, [summary])


def check_template_report(report: GradeReport, assignment: Assignment) -> Finding:
    """The untouched template scores 0, every code task ``not_implemented``, with no notes (no crash)."""
    quiz_id = assignment.quiz.task_id if assignment.quiz else None
    problems = []
    for task in report.tasks:
        if task.score > 0:
            problems.append(_paid_problem(task, task.id == quiz_id))
        elif task.id != quiz_id and task.status != NOT_IMPLEMENTED:
            problems.append(f"{task.id}: status {task.status}, expected {NOT_IMPLEMENTED} ({task.feedback})")
    problems += [f"note: {note}" for note in report.notes]
    summary = f"{report.score:g} / {report.max_score:g} in {report.seconds:g} s"
    if problems or report.score != 0:
        return Finding("template scores 0", False, [f"scored {summary}"] + problems)
    return Finding("template scores 0", True, [f"{summary}, every task not implemented"])


def _paid_problem(task: TaskResult, quiz: bool) -> str:
    """The line for a task the untouched template earns points in: the checks that paid (as ``grader audit``'s
    blind table names them), and the fix."""
    paid = ", ".join(f"{name} ({points:g} point{'' if points == 1 else 's'})"
                     for name, points in paying_checks(task)) or "none passed"
    fix = ("the blank answers file must earn nothing" if quiz else "a check a stub passes pays for code the students "
           "were given: gate it on the function's values (gated) or move what it tests into a solution region")
    return f"{task.id}: the untouched template earns {task.score:g} / {task.max_score:g}; the checks that paid: " \
           f"{paid}; {fix}"


def grade_reference_and_template(assignment: Assignment) -> list[Finding]:
    """Grade the reference and the committed template with one Grader."""
    from autograder.grading.grader import Grader
    from autograder.util.progress import progress_bar

    try:
        with progress_bar(2, f"verify {assignment.name}", unit="grading") as bar, Grader(assignment) as grader:
            bar.set_postfix_str("reference")
            reference = grader.grade(assignment.reference)
            bar.update(1)
            bar.set_postfix_str("template")
            template = grader.grade(assignment.template)
            bar.update(1)
    except GraderError as exc:
        return [Finding("grading", False, [str(exc)])]
    return [check_reference_report(reference), check_template_report(template, assignment)]


def run_reference_as_students(assignment: Assignment) -> list[Finding]:
    """Grade the reference and the template, and run what students run on the reference: the public tests and,
    where the assignment declares figures, the figures (``authoring/reference_runs.py``): code that is right must
    pass them. Each runs in its own processes, so the three run at once."""
    from autograder.authoring.reference_runs import figures_on_reference, public_tests_on_reference

    with ThreadPoolExecutor(3) as pool:
        graded = pool.submit(grade_reference_and_template, assignment)
        public = pool.submit(public_tests_on_reference, assignment)
        figures = pool.submit(figures_on_reference, assignment) if declares_figures(assignment) else None
        findings = graded.result() + [Finding("public tests pass on the reference", public.result().ok,
                                              public.result().details)]
        if figures is not None:
            findings.append(Finding("reference figures show no ✗", figures.result().ok, figures.result().details))
    return findings


def check_authoring(assignment: Assignment, imports: bool = True) -> Finding:
    """Files and folders the manifest names exist, checks files load and bind every check to a real task, public
    tests are tagged with real tasks and import nothing hidden, the reference imports only student files, manifest
    names exist in the reference, the points add up to ``total_points``, mutations have one form, unique ids and
    edits that apply to the reference, leave Python and (with ``imports``) import, and meet the ``[audit]``
    minimums, the quiz key is balanced, the figure files load (``authoring/lint.py``)."""
    problems = lint_assignment(assignment, imports)
    if problems:
        return Finding("authoring", False, problems)
    figures = ", figure files load" if declares_figures(assignment) else ""
    return Finding("authoring", True, [f"declared files exist, checks and public tests bound to real tasks{figures}, "
                                       "manifest names defined in the reference, "
                                       f"at least {assignment.audit.min_mistakes} mistakes and "
                                       f"{assignment.audit.min_variants} variants, each applying to the reference"
                                       f"{' and importing' if imports else ''}", points_sentence(assignment)])


def points_sentence(assignment: Assignment) -> str:
    """What the points add up to, and whether the manifest holds them to a total."""
    total, declared = points_total(assignment)
    if declared is not None:
        return f"the points add up to {total:g}, as [assignment] total_points says"
    return (f"the points add up to {total:g} (reports show scores out of {total:g}); declare [assignment] "
            f"total_points = {total:g} in {MANIFEST} to have verify hold them to it")


def verify_assignment(assignment: Assignment, grade: bool = True) -> Verification:
    """Run every check; the cheap ones first.

    Args:
        assignment: The assignment.
        grade: Also import every mistake and variant, grade the reference and the template, and run the public
            tests and draw the figures on the reference (the slow parts; skipped while authoring problems remain,
            which they would only report less clearly).

    Returns:
        The findings, ok or not.
    """
    authoring = check_authoring(assignment, imports=grade)
    verification = Verification(assignment.name, [authoring, check_quiz_key(assignment),
                                                  check_template_current(assignment)])
    if grade and authoring.ok:
        verification.findings += run_reference_as_students(assignment)
    elif grade:
        verification.findings.append(Finding("grading", False, ["not graded: fix the authoring problems first"]))
    return verification


def render_verification(verification: Verification) -> str:
    """One line per finding, its details indented below; a closing verdict."""
    lines = [f"verify {verification.assignment}"]
    for finding in verification.findings:
        lines.append(f"  {'ok  ' if finding.ok else 'FAIL'}  {finding.name}")
        lines += [f"          {detail}" for detail in finding.details]
    failed = [f for f in verification.findings if not f.ok]
    lines.append("verified: ready to release" if not failed else
                 f"verify failed: {len(failed)} of {len(verification.findings)} checks did not hold")
    return "\n".join(lines) + "\n"
