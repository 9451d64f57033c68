"""What grade-all did (``BatchSummary``) and the summary it prints when it ends: counts, scores, tasks, problems."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.gradebook.export import feedback_written
from autograder.gradebook.store import ERROR, GRADED, Outcome, SubmissionRow
from autograder.spec.late import NO_TIME, Lateness
from autograder.util.table import LEFT, RIGHT, table


@dataclass
class BatchSummary:
    """What a batch did."""

    assignment: str
    root: Path
    gradebook: Path
    jobs: int
    selected: list[str] = field(default_factory=list)
    graded: list[tuple[str, Outcome]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    wall_seconds: float = 0.0
    rows: list[SubmissionRow] = field(default_factory=list)
    late: dict[str, Lateness] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)
    deadline: str = ""
    csv_rows: int | None = None
    feedback_files: int | None = None
    figure_pages: int | None = None  # None: figures were not asked for
    figure_failures: list[tuple[str, str]] = field(default_factory=list)
    figures_note: str = ""  # e.g. that the assignment declares no figures
    left_out_mistakes: list[str] = field(default_factory=list)  # left out of diagnosis (WorkerPool.left_out)

    @property
    def errors(self) -> list[tuple[str, Outcome]]:
        """Submissions of this run that could not be graded."""
        return [(s, o) for s, o in self.graded if o.status == ERROR]


def _earlier_errors(summary: BatchSummary) -> list[SubmissionRow]:
    """Current rows that could not be graded in an earlier run and were skipped as unchanged in this one."""
    now = {student for student, _ in summary.graded}
    return [r for r in summary.rows if r.status == ERROR and r.student not in now]


def render_summary(summary: BatchSummary) -> str:
    """The table printed when a batch ends: counts, scores, per-task means and pass counts, problems."""
    graded_rows = [r for r in summary.rows if r.status == GRADED]
    earlier = _earlier_errors(summary)
    lines = [f"{summary.assignment}: {len(summary.selected)} submissions in {summary.root}", ""]
    lines += table([], _counts(summary, graded_rows, len(earlier)) + _late_counts(summary), indent="  ")
    lines += _unknown_students(summary)
    lines += _task_table(graded_rows)
    problems = [(s, o.message) for s, o in summary.errors] + [(r.student, r.message) for r in earlier]
    if problems:
        lines += ["", "could not grade:"] + [f"  {student}: {message}" for student, message in problems[:20]]
        if len(problems) > 20:
            lines.append(f"  ... and {len(problems) - 20} more")
    if summary.ignored:
        lines += ["", f"not used: {', '.join(summary.ignored[:10])}" + (" ..." if len(summary.ignored) > 10 else "")]
    lines += ["", f"gradebook: {summary.gradebook}"]
    if summary.csv_rows is not None:
        lines.append(f"csv: {summary.csv_rows} students")
    if summary.feedback_files is not None:
        lines.append(f"feedback: {feedback_written(summary.feedback_files)}")
    lines += _figure_lines(summary)
    return "\n".join(lines) + "\n"


def _counts(summary: BatchSummary, graded_rows: list[SubmissionRow], earlier: int) -> list[tuple[str, str]]:
    """The summary's first rows, ``(label, value)``: how many were graded, skipped and not gradable, the scores, the
    wall time (``earlier``: the submissions that could not be graded in an earlier run and were skipped now)."""
    now_graded = len(summary.graded) - len(summary.errors)
    them = "it" if earlier == 1 else "them"
    again = f" ({earlier} unchanged since an earlier run; --retry-errors grades {them} again)"
    counts = [("graded now", str(now_graded)),
              ("unchanged", f"{len(summary.skipped)} (skipped; --force re-grades them)"),
              ("could not grade", f"{len(summary.errors) + earlier}" + (again if earlier else ""))]
    counts += [("scores", _scores(graded_rows))] if graded_rows else []
    per = f" ({summary.wall_seconds / now_graded:.2f} s per graded submission)" if now_graded else ""
    workers = f" with {summary.jobs} worker{'s' * (summary.jobs != 1)}" if summary.jobs else ""
    return counts + [("wall time", f"{summary.wall_seconds:g} s{workers}{per}")]


def _scores(graded_rows: list[SubmissionRow]) -> str:
    """The mean and median score of the graded submissions, and how many have full marks."""
    scores = [r.score for r in graded_rows]
    top = max(r.max_score for r in graded_rows)
    full = sum(1 for r in graded_rows if r.max_score and r.score >= r.max_score)
    return (f"mean {statistics.fmean(scores):.2f} / {top:g}, median {statistics.median(scores):g}, "
            f"{full} with full marks")


def _figure_lines(summary: BatchSummary) -> list[str]:
    """How many figure pages this run drew, and why any could not be (the grades stand either way)."""
    if summary.figure_pages is None:
        return []
    if summary.figures_note:
        return [f"figures: none ({summary.figures_note})"]
    failed = len(summary.figure_failures)
    lines = [f"figures: {summary.figure_pages} page{'s' * (summary.figure_pages != 1)}"
             + (f" ({failed} could not be drawn)" if failed else "")]
    lines += [f"  {student}: {note}" for student, note in summary.figure_failures[:20]]
    if failed > 20:
        lines.append(f"  ... and {failed - 20} more")
    return lines


def _late_counts(summary: BatchSummary) -> list[tuple[str, str]]:
    """The deadline and the counts of on-time, late and untimed submissions, when a deadline applies."""
    if not summary.late:
        return []
    late = [s for s, x in summary.late.items() if x.penalty > 0]
    untimed = [s for s, x in summary.late.items() if x.submitted_at is None]
    on_time = len(summary.late) - len(late) - len(untimed)
    counts = f"{on_time} on time or within grace, {len(late)} late (penalised)"
    return ([("deadline", str(summary.deadline))] if summary.deadline else []) + [
        ("lateness", counts + (f", {len(untimed)} {NO_TIME} (no penalty)" if untimed else ""))]


def _unknown_students(summary: BatchSummary) -> list[str]:
    """The students of the extensions or timestamps file that are not in this class, when a deadline applies."""
    if not summary.late or not summary.unknown:
        return []
    shown = ", ".join(summary.unknown[:10]) + (" ..." if len(summary.unknown) > 10 else "")
    return [f"  not in this class: {len(summary.unknown)} students of the extensions or timestamps file ({shown})"]


def _task_table(rows: list[SubmissionRow]) -> list[str]:
    """Per task: the mean score, the points, and how many passed it."""
    stats: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        for task in row.tasks:
            stats.setdefault(task["task"], []).append(task)
    if not stats:
        return []
    cells = [(task, f"{statistics.fmean(r['score'] for r in results):.2f}", f"{results[0]['max_score']:g}",
              f"{sum(1 for r in results if r['status'] == 'passed')}/{len(results)}")
             for task, results in stats.items()]
    return [""] + table(["task", "mean", "max", "passed"], cells, [LEFT, RIGHT, RIGHT, RIGHT], indent="  ")
