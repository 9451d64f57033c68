"""The class report: pass rates, score histogram, frequent diagnosed mistakes and slow submissions (markdown + PNG)."""

from __future__ import annotations

import io
import statistics
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from autograder.errors import GraderError
from autograder.gradebook.store import ERROR, GRADED, Gradebook, SubmissionRow
from autograder.reports.feedback import code_span, markdown_text
from autograder.reports.similarity import SimilarGroup, export_for_tools, similar_groups
from autograder.spec.assignment import Assignment
from autograder.spec.quiz import QUIZ_CHECK_PREFIX, question_of_check
from autograder.util.atomic import write_atomic
from autograder.util.table import LEFT, RIGHT, table

HISTOGRAM_BINS = 10
TOP = 10
FIGURE_NAME = "class_report.png"
MARKDOWN_NAME = "class_report.md"
_COUNT = [LEFT, LEFT, RIGHT]  # a table whose last column counts students


@dataclass
class TaskStats:
    """One task across the class."""

    id: str
    title: str
    max_score: float
    students: int = 0
    passed: int = 0
    not_implemented: int = 0
    total_score: float = 0.0

    @property
    def pass_rate(self) -> float:
        return self.passed / self.students if self.students else 0.0

    @property
    def mean(self) -> float:
        return self.total_score / self.students if self.students else 0.0


@dataclass
class ClassStats:
    """Everything the class report shows."""

    assignment: str
    students: int = 0
    max_score: float = 0.0
    scores: list[float] = field(default_factory=list)
    tasks: list[TaskStats] = field(default_factory=list)
    hints: list[tuple[str, str, int]] = field(default_factory=list)
    failing_checks: list[tuple[str, str, int]] = field(default_factory=list)
    quiz_missed: list[tuple[str, str, int]] | None = None  # per question; None: not recorded (or no quiz)
    quiz_note: str = ""
    slowest: list[tuple[str, float, float, float]] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    late: list[tuple[str, str, float, float]] = field(default_factory=list)
    untimed: list[str] = field(default_factory=list)
    on_time: int = 0
    similar: list[SimilarGroup] | None = None
    similarity_note: str = ""

    def histogram(self) -> list[int]:
        """Counts of scores per tenth of the maximum (the last bin includes full marks)."""
        counts = [0] * HISTOGRAM_BINS
        for score in self.scores:
            share = score / self.max_score if self.max_score else 0.0
            counts[min(HISTOGRAM_BINS - 1, max(0, int(share * HISTOGRAM_BINS)))] += 1
        return counts


def choose_assignment(book: Gradebook, assignment: str | None) -> str:
    """The assignment to report on: the one named, or the only one in the gradebook.

    Raises:
        GraderError: If the gradebook holds none, or several and none was named.
    """
    known = book.assignments()
    if assignment is not None:
        if assignment not in known:
            listed = ", ".join(known) or "none"
            raise GraderError(f"{book.path} has no submissions of {assignment!r} (it has: {listed})")
        return assignment
    if not known:
        raise GraderError(f"{book.path} holds no graded submissions yet")
    if len(known) > 1:
        raise GraderError(f"{book.path} holds several assignments ({', '.join(known)}); choose one with --assignment")
    return known[0]


def class_stats(book: Gradebook, assignment: str, spec: Assignment | None = None) -> ClassStats:
    """Collect the class statistics of an assignment's current submissions.

    Args:
        book: The gradebook.
        assignment: The assignment's name.
        spec: Its declaration, needed for the similarity review (which functions make a task, the template).
    """
    rows = book.current(assignment, with_reports=False)
    stats = ClassStats(assignment, students=len(rows))
    graded = [r for r in rows if r.status == GRADED]
    stats.errors = [(r.student, r.message) for r in rows if r.status == ERROR]
    stats.scores = [r.score for r in graded]
    stats.max_score = max((r.max_score for r in rows), default=0.0)
    tasks: dict[str, TaskStats] = {}
    for row in graded:
        for task in row.tasks:
            entry = tasks.setdefault(task["task"], TaskStats(task["task"], task["title"], task["max_score"]))
            entry.students += 1
            entry.passed += task["status"] == "passed"
            entry.not_implemented += task["status"] == "not_implemented"
            entry.total_score += task["score"]
    stats.tasks = list(tasks.values())
    _failures(stats, book.check_results(assignment), graded, spec)
    _lateness(stats, rows)
    if spec is not None:
        sources = book.sources(assignment)
        stats.similar = similar_groups(sources, {t.id: t.functions for t in spec.tasks}, template_sources(spec))
        if graded and not sources:  # graded by grader 0.1.0, which kept no sources
            stats.similarity_note = "This gradebook predates stored sources; grade again to compare submissions."
    else:
        stats.similarity_note = "The similarity review needs the assignment's manifest (not found here)."
    stats.slowest = sorted(((r.student, r.seconds, r.score, r.max_score) for r in graded),
                           key=lambda s: -s[1])[:TOP]
    return stats


def _failures(stats: ClassStats, checks: list[dict[str, Any]], graded: list[SubmissionRow],
              spec: Assignment | None) -> None:
    """The diagnosed mistakes, the code checks failed most often and the quiz questions missed most often."""
    stats.hints = _most_frequent((c["task"], c["hint"], c["student"]) for c in checks if c["hint"])
    quiz = spec.quiz if spec is not None else None
    code, answers = _split_quiz([c for c in checks if c["status"] not in ("passed", "not_implemented")],
                                quiz.task_id if quiz is not None else None)
    stats.failing_checks = _failed_code(code, graded)  # the quiz's checks are answers, not code: said per question
    if quiz is not None:
        _quiz_questions(stats, quiz.feedback, answers)


def _failed_code(code: list[dict[str, Any]], graded: list[SubmissionRow]) -> list[tuple[str, str, int]]:
    """The code checks failed by most students, leaving out tasks not implemented: those have their own column,
    and their checks would crowd out the checks students got wrong."""
    unimplemented = {(r.student, t["task"]) for r in graded for t in r.tasks if t["status"] == "not_implemented"}
    return _most_frequent((c["name"], c["description"], c["student"]) for c in code
                          if (c["student"], c["task"]) not in unimplemented)


def _split_quiz(checks: list[dict[str, Any]], quiz_task: str | None) -> tuple[list[dict[str, Any]],
                                                                               list[dict[str, Any]]]:
    """The code checks and the quiz's: of its task, or (without the manifest) named as quiz checks are."""
    code: list[dict[str, Any]] = []
    answers: list[dict[str, Any]] = []
    for check in checks:
        quiz = check["task"] == quiz_task if quiz_task else str(check["name"]).startswith(QUIZ_CHECK_PREFIX)
        (answers if quiz else code).append(check)
    return code, answers


def _quiz_questions(stats: ClassStats, feedback: str, failed: list[dict[str, Any]]) -> None:
    """The quiz's questions most often missed (wrong, malformed or unanswered), where the checks name them."""
    if feedback == "score":
        stats.quiz_note = ('The quiz\'s feedback is "score": the grades record how many answers each student got '
                           'right, not which (its row in Tasks has the mean).')
        return
    stats.quiz_missed = _most_frequent((question_of_check(c["name"], feedback) or c["name"], c["description"],
                                        c["student"]) for c in failed)


def _lateness(stats: ClassStats, rows: list[SubmissionRow]) -> None:
    if not any(r.due_at or r.late_note for r in rows):
        return
    for row in rows:
        if row.submitted_at is None:
            stats.untimed.append(row.student)
        elif row.penalty > 0:
            stats.late.append((row.student, row.late_note, row.raw, row.score))
        else:
            stats.on_time += 1


def template_sources(spec: Assignment) -> dict[str, str]:
    """The student template's module files (what students start from), empty when it is not installed."""
    if not spec.template.is_dir():
        return {}
    return {f"{m}.py": (spec.template / f"{m}.py").read_text(encoding="utf-8", errors="replace")
            for m in spec.modules if (spec.template / f"{m}.py").is_file()}


def _most_frequent(triples: Iterable[tuple[str, str, str]]) -> list[tuple[str, str, int]]:
    """(key, text, student) triples to the most frequent (key, text) pairs, counted once per student."""
    counts = Counter((key, text) for key, text, _ in set(triples))
    return [(key, text, count) for (key, text), count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))][:TOP]


def _cell(value: object) -> str:
    """Text made safe for a markdown table cell: no raw HTML, no bare pipes, one line, no HTML escapes."""
    return markdown_text(value)


def render_markdown(stats: ClassStats, figure: str | None) -> str:
    """The class report as markdown."""
    lines = [f"# {_cell(stats.assignment)}: class report", ""]
    graded = len(stats.scores)
    lines.append(f"{stats.students} students; {graded} graded, {len(stats.errors)} could not be graded.")
    if stats.scores:
        full = sum(1 for s in stats.scores if stats.max_score and s >= stats.max_score)
        lines.append(f"Scores out of {stats.max_score:g}: mean {statistics.fmean(stats.scores):.2f}, median "
                     f"{statistics.median(stats.scores):g}, min {min(stats.scores):g}, max {max(stats.scores):g}; "
                     f"{full} with full marks.")
    if figure:
        lines += ["", f"![class report]({figure})"]
    lines += ["", "## Tasks", ""] + table(
        ["task", "points", "mean", "passed", "pass rate", "not implemented"],
        [(f"{_cell(task.title)} ({code_span(task.id)})", f"{task.max_score:g}", f"{task.mean:.2f}",
          f"{task.passed}/{task.students}", f"{task.pass_rate:.0%}", task.not_implemented) for task in stats.tasks],
        [LEFT] + [RIGHT] * 5, markdown=True)
    lines += ["", "## Score histogram", ""] + table(["score", "students", ""], _histogram_rows(stats),
                                                    [LEFT, RIGHT, LEFT], markdown=True)
    lines += ["", "## Most frequent diagnosed mistakes", ""]
    lines += _table(["task", "hint", "students"], [(t, h, str(n)) for t, h, n in stats.hints], _COUNT) \
        if stats.hints else ["No failure matched a known mistake."]
    lines += ["", "## Most frequently failed checks", ""]
    lines += _table(["check", "what it checks", "students"], [(c, d, str(n)) for c, d, n in stats.failing_checks],
                    _COUNT) \
        if stats.failing_checks else ["Every check passed for every student."]
    lines += _quiz_section(stats)
    lines += ["", "## Slowest submissions", ""]
    lines += _table(["student", "seconds", "score"],
                    [(s, f"{sec:.2f}", f"{sc:g} / {mx:g}") for s, sec, sc, mx in stats.slowest], [LEFT, RIGHT, RIGHT]) \
        if stats.slowest else ["None graded yet."]
    if stats.errors:
        lines += ["", "## Could not be graded", ""] + _table(["student", "reason"], stats.errors)
    lines += _late_section(stats) + _similarity_section(stats)
    return "\n".join(lines) + "\n"


def _quiz_section(stats: ClassStats) -> list[str]:
    if stats.quiz_missed is None and not stats.quiz_note:
        return []
    lines = ["", "## Quiz questions most often missed", ""]
    if stats.quiz_missed is None:
        return lines + [stats.quiz_note]
    return lines + (_table(["question", "what it asks", "students"], [(q, d, str(n)) for q, d, n in stats.quiz_missed],
                           _COUNT)
                    if stats.quiz_missed else ["Every student answered every question right."])


def _late_section(stats: ClassStats) -> list[str]:
    if not (stats.late or stats.untimed or stats.on_time):
        return []
    lines = ["", "## Deadline", "", f"{stats.on_time} on time (or within the grace period), {len(stats.late)} late, "
             f"{len(stats.untimed)} with no time recorded (no penalty)."]
    if stats.late:
        lines += [""] + _table(["student", "lateness", "raw score", "final score"],
                               [(s, note, f"{raw:g}", f"{final:g}") for s, note, raw, final in stats.late],
                               [LEFT, LEFT, RIGHT, RIGHT])
    if stats.untimed:
        lines += ["", "No time recorded: " + ", ".join(_cell(s) for s in stats.untimed)]
    return lines


def _similarity_section(stats: ClassStats) -> list[str]:
    lines = ["", "## Similar submissions (review)", ""]
    if stats.similar is None:
        return lines + [stats.similarity_note]
    lines.append("Code per task compared after dropping names, literals, comments, docstrings and formatting; code "
                 "as handed out and very short code are left out. A group is a reason to look at the code, "
                 "not a finding: independent students do write the same code.")
    if stats.similarity_note:
        lines += ["", stats.similarity_note]
    if not stats.similar:
        return lines + ["", "No submissions are similar enough to list."]
    rows = [(g.task, ", ".join(g.students), "identical" if g.similarity >= 1.0 else f"{g.similarity:.0%} similar",
             "similar — review") for g in stats.similar]
    return lines + [""] + _table(["task", "students", "normalised code", ""], rows)


def _histogram_rows(stats: ClassStats) -> list[tuple[str, int, str]]:
    """Each tenth of the maximum score: its range, how many students scored in it, and as many ``#``."""
    rows = []
    for index, count in enumerate(stats.histogram()):
        low, high = index * 100 // HISTOGRAM_BINS, (index + 1) * 100 // HISTOGRAM_BINS
        rows.append((f"{low}–{high}%" + (" (incl. full)" if index == HISTOGRAM_BINS - 1 else ""), count, "#" * count))
    return rows


def _table(header: list[str], rows: list[tuple[str, ...]], align: list[str] | None = None) -> list[str]:
    """A markdown table of report text: every cell made inert (``_cell``)."""
    return table(header, [[_cell(value) for value in row] for row in rows], align, markdown=True)


def render_figure(stats: ClassStats, path: Path) -> None:
    """Draw the four panels (histogram, pass rates, mistakes, slowest) into a PNG.

    Raises:
        GraderError: If matplotlib is not installed.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise GraderError("the figure needs matplotlib: pip install 'transformer-autograder[instructor]'") from None
    figure, axes = plt.subplots(2, 2, figsize=(14, 9), layout="constrained")
    _plot_histogram(axes[0][0], stats)
    _plot_tasks(axes[0][1], stats)
    _plot_bars(axes[1][0], [(f"{t}: {h}", n) for t, h, n in stats.hints], "most frequent diagnosed mistakes",
               "students", "no failure matched a known mistake")
    _plot_bars(axes[1][1], [(s, sec) for s, sec, _, _ in stats.slowest], "slowest submissions", "seconds",
               "nothing graded yet")
    figure.suptitle(f"{stats.assignment}: {stats.students} students")
    image = io.BytesIO()
    figure.savefig(image, dpi=100, format="png", bbox_inches="tight", pad_inches=0.15)  # no empty margins
    plt.close(figure)
    write_atomic(path, image.getvalue())  # 0644: handed out like the markdown, whatever the umask


def _plot_histogram(axis: Any, stats: ClassStats) -> None:
    counts = stats.histogram()
    labels = [f"{i * 100 // HISTOGRAM_BINS}" for i in range(HISTOGRAM_BINS)]
    axis.bar(range(HISTOGRAM_BINS), counts, color="#4c72b0")
    axis.set_xticks(range(HISTOGRAM_BINS), labels)
    axis.set_xlabel(f"score (% of {stats.max_score:g}, bin start)")
    axis.set_ylabel("students")
    _integer_ticks(axis.yaxis)
    axis.set_title("score histogram")


def _plot_tasks(axis: Any, stats: ClassStats) -> None:
    names = [t.id for t in stats.tasks][::-1]
    axis.barh(names, [t.pass_rate * 100 for t in stats.tasks][::-1], color="#55a868",
              label="passed (%)")
    axis.barh(names, [t.mean / t.max_score * 100 if t.max_score else 0 for t in stats.tasks][::-1],
              color="none", edgecolor="black", label="mean score (% of points)")
    axis.set_xlim(0, 100)
    axis.set_xlabel("% of students (filled) / mean % of points (outline)")
    axis.set_title("per-task pass rate")
    # Below the panel, never over the bars.
    axis.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize="small", frameon=False)


def _plot_bars(axis: Any, items: list[tuple[str, float]], title: str, unit: str, empty: str) -> None:
    axis.set_title(title)
    if not items:
        axis.text(0.5, 0.5, empty, ha="center", va="center")
        axis.set_axis_off()
        return
    labels = [textwrap.shorten(label, 70, placeholder="...") for label, _ in items][::-1]
    axis.barh(range(len(items)), [value for _, value in items][::-1], color="#c44e52")
    axis.set_yticks(range(len(items)), labels, fontsize="small")
    axis.set_xlabel(unit)
    if unit == "students":
        _integer_ticks(axis.xaxis)


def _integer_ticks(axis: Any) -> None:
    """Whole-number ticks on an axis that counts students."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def write_class_report(gradebook: Path | str, out: Path, assignment: str | None = None,
                       figure: bool = True, spec: Assignment | None = None,
                       similarity_export: Path | None = None) -> list[Path]:
    """Write the class report (markdown, and the PNG figure unless ``figure`` is False) into ``out``.

    Args:
        gradebook: The gradebook (a file or a database URL).
        out: The report folder.
        assignment: The assignment (needed when the gradebook holds several).
        figure: Draw the PNG.
        spec: The assignment's declaration (for the similarity review); None leaves the review out.
        similarity_export: Also write one folder per student's sources here, for JPlag, Dolos or MOSS.

    Returns:
        The files written.

    Raises:
        GraderError: If the gradebook cannot be read, or matplotlib is missing for the figure.
    """
    written = []
    with Gradebook(gradebook, readonly=True) as book:
        name = choose_assignment(book, assignment)
        stats = class_stats(book, name, spec)
        if similarity_export is not None:
            sources = book.sources(name)
            if not sources:
                raise GraderError(f"{gradebook} holds no source files for {name!r}; grade the class again with "
                                  f"this version of the grader to keep them")
            export_for_tools(sources, template_sources(spec) if spec else {}, Path(similarity_export))
            written.append(Path(similarity_export))
    if figure:
        render_figure(stats, out / FIGURE_NAME)
        written.append(out / FIGURE_NAME)
    write_atomic(out / MARKDOWN_NAME, render_markdown(stats, FIGURE_NAME if figure else None))
    written.append(out / MARKDOWN_NAME)
    return written
