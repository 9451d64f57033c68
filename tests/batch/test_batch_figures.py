"""``grade-all --feedback DIR --figures``: figures beside each student's feedback, resumable, never costing a grade."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.batch.figures import FigureResult, draw_figures, needs_drawing
from autograder.batch.pool import WorkerPool, WorkItem
from autograder.batch.run import BatchOptions, grade_all
from autograder.batch.summary import BatchSummary, render_summary
from autograder.cli import main
from autograder.errors import GraderError
from autograder.gradebook.export import FIGURE_STAMP, figures_folder
from autograder.gradebook.store import Outcome
from autograder.reports.results import GradeReport, TaskResult
from autograder.show.render import declares_figures
from autograder.spec.assignment import Assignment, load_assignment
from autograder.spec.mutation import apply_mutation, diagnosable_mistakes, load_mutations

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
MINI = FIXTURES / "reference_solutions" / "mini"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class FullMarks:
    """A grader without torch: full marks for everything (the figures code is what is under test)."""

    def __init__(self, assignment: Assignment) -> None:
        self.assignment = assignment

    def grade(self, path: Path, prepared: object = None) -> GradeReport:
        task = TaskResult("scale", "Scale", 1.0, 1.0, "passed", "", [])
        return GradeReport(self.assignment.name, str(path), 1.0, 1.0, [task], seconds=0.01)

    def close(self) -> None:
        pass


def full_marks(assignment: Assignment) -> FullMarks:
    return FullMarks(assignment)


class GoneAfterGrading(FullMarks):
    """Full marks, then the student's folder vanishes (a re-upload, a sync): what is drawn must be what was graded."""

    def grade(self, path: Path, prepared: object = None) -> GradeReport:
        shutil.rmtree(path)
        return super().grade(path, prepared)


def gone_after_grading(assignment: Assignment) -> GoneAfterGrading:
    return GoneAfterGrading(assignment)


def _mini_class(root: Path, students: list[str]) -> Path:
    for student in students:
        shutil.copytree(MINI, root / student / "mini")
    return root


# -- fast: options, the no-figures assignment, failures ---------------------------------------------------------

def test_figures_flag_needs_feedback(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["grade-all", "assignment2", str(tmp_path), "--figures"])
    assert result.exit_code == 2
    assert "Error: --figures goes with --feedback DIR" in result.output and "Traceback" not in result.output
    with pytest.raises(GraderError, match="--figures goes with --feedback"):
        grade_all(load_assignment("mini", root=FIXTURES / "assignments"), tmp_path, BatchOptions(figures=True))


def test_assignment_without_figures_says_so_once_and_grades(tmp_path: Path) -> None:
    spec = load_assignment("mini", root=FIXTURES / "assignments")
    assert not declares_figures(spec) and declares_figures(load_assignment("assignment2"))
    subs = _mini_class(tmp_path / "subs", ["alice", "bob"])
    options = BatchOptions(jobs=1, gradebook=tmp_path / "g.db", feedback=tmp_path / "fb", figures=True,
                           grader_factory=full_marks)
    text = render_summary(grade_all(spec, subs, options))
    assert [line for line in text.splitlines() if "figures" in line] == \
        ["figures: none (mini declares no figures (no [figures] table in its manifest))"]
    assert "graded now       2" in text
    assert sorted(p.name for p in (tmp_path / "fb").iterdir()) == ["alice.html", "alice.md", "bob.html", "bob.md"]


def test_a_failure_to_draw_is_a_note_never_a_raise(tmp_path: Path) -> None:
    folder = figures_folder(tmp_path / "fb", "alice")
    folder.mkdir(parents=True)
    (folder / "index.html").write_text("an older page")
    result = draw_figures(None, load_assignment("assignment2"), tmp_path / "gone", folder, "d1")
    assert result == FigureResult(False, "gone does not exist")  # one line, no path of the grading machine
    assert not folder.exists()  # the older page is not left to pass for this submission's


def test_pool_sends_the_grade_before_the_figures_and_draw_only_jobs_are_not_graded(tmp_path: Path) -> None:
    spec = load_assignment("mini", root=FIXTURES / "assignments")
    subs = _mini_class(tmp_path / "subs", ["alice", "bob"])
    events: list[tuple[str, str, object]] = []
    jobs = [WorkItem(0, "alice", subs / "alice", "d1", figures=tmp_path / "fb" / "alice-figures"),
            WorkItem(1, "bob", subs / "bob", "d2", grade=False, figures=tmp_path / "fb" / "bob-figures")]

    def graded(job: WorkItem, outcome: Outcome) -> None:
        events.append(("grade", job.student, outcome.status))

    def drawn(job: WorkItem, result: FigureResult) -> None:
        events.append(("figures", job.student, result.drawn))  # mini declares no figures: a failure, as a note

    WorkerPool(spec, 1, 60.0, full_marks).run(jobs, graded, lambda: None, drawn)
    assert events == [("grade", "alice", "graded"), ("figures", "alice", False), ("figures", "bob", False)]


def test_needs_drawing_follows_the_stamp(tmp_path: Path) -> None:
    assert needs_drawing(tmp_path, "alice", "d1")
    folder = figures_folder(tmp_path, "alice")
    folder.mkdir()
    (folder / FIGURE_STAMP).write_text(json.dumps({"digest": "d1"}))
    assert not needs_drawing(tmp_path, "alice", "d1") and needs_drawing(tmp_path, "alice", "d2")
    (folder / FIGURE_STAMP).write_text("{not json")
    assert needs_drawing(tmp_path, "alice", "d1")


def test_summary_counts_pages_and_failures() -> None:
    summary = BatchSummary("assignment2", Path("subs"), Path("g.db"), 2, figure_pages=3,
                           figure_failures=[("bob", "the grading worker stopped unexpectedly")])
    lines = render_summary(summary).splitlines()
    assert "figures: 3 pages (1 could not be drawn)" in lines
    assert "  bob: the grading worker stopped unexpectedly" in lines
    assert "figures" not in render_summary(BatchSummary("a", Path("s"), Path("g.db"), 1))


# -- slow: a real class of assignment2 -----------------------------------------------------------------------------

BOB_MISTAKE = "soft_attention_scaled"  # a known mistake the soft-attention figure can show


def _assignment2_class(root: Path) -> Path:
    """alice: the reference; bob: the reference with a known mistake and a syntax error in another module;
    carol: the template."""
    for student, source in [("alice", ROOT / "reference_solutions" / "assignment2"),
                            ("carol", ROOT / "student_template" / "assignment2")]:
        shutil.copytree(source, root / student / "assignment2")
    a2 = load_assignment("assignment2")
    apply_mutation(a2.reference, next(m for m in load_mutations(a2, "mistakes") if m.id == BOB_MISTAKE),
                   root / "bob" / "assignment2")
    with open(root / "bob" / "assignment2" / "modules.py", "a") as handle:
        handle.write("\ndef broken(:\n")
    return root


@pytest.fixture(scope="module")
def figures_class(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    base = tmp_path_factory.mktemp("figures-class")
    subs = _assignment2_class(base / "subs")
    result = CliRunner().invoke(main, ["grade-all", "assignment2", str(subs), "--jobs", "2", "--gradebook",
                                       str(base / "g.db"), "--feedback", str(base / "fb"), "--figures"])
    assert result.exit_code == 0, result.output
    return base, result.output


def _current(db: Path) -> dict[str, tuple[str, float, str]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        return {s: (status, score, digest) for s, status, score, digest in connection.execute(
            "SELECT s.student, s.status, s.score, s.digest FROM current c JOIN submissions s ON s.id = c.submission")}


@pytest.mark.slow
def test_every_student_gets_figures_beside_their_feedback(figures_class: tuple[Path, str]) -> None:
    base, output = figures_class
    assert "figures: 3 pages" in output and "could not be drawn" not in output
    current = _current(base / "g.db")
    assert {s: v[0] for s, v in current.items()} == {"alice": "graded", "bob": "graded", "carol": "graded"}
    assert current["alice"][1] == 100 and current["bob"][1] < 100  # the broken module costs bob points, not more
    feedback = base / "fb"
    for student in current:
        folder = feedback / f"{student}-figures"
        stamp = json.loads((folder / FIGURE_STAMP).read_text())
        assert stamp["digest"] == current[student][2]
        drawn = [p["image"] for p in stamp["panels"] if p["status"] == "drawn"]
        for image in drawn:
            assert (folder / image).read_bytes().startswith(PNG_MAGIC) and (folder / image).stat().st_size > 1000
        page = (feedback / f"{student}.html").read_text()
        assert f'<a href="{student}-figures/index.html">' in page
        assert page.count("data:image/png;base64,") == len(drawn)
        assert f"({student}-figures/index.html)" in (feedback / f"{student}.md").read_text()
    alice = json.loads((feedback / "alice-figures" / FIGURE_STAMP).read_text())
    assert alice["panels"] and all(p["status"] == "drawn" for p in alice["panels"])
    bob_page = (feedback / "bob-figures" / "index.html").read_text()
    assert "could not be imported" in bob_page
    # the cause under bob's figure is the judge's, the hint his feedback gives for the same code
    hint = next(m.hint for m in load_mutations(load_assignment("assignment2"), "mistakes") if m.id == BOB_MISTAKE)
    assert re.findall(r'<li class="diagnosis">→ Diagnosis: (.*?)</li>', bob_page) == [html.escape(hint)]
    assert hint in (feedback / "bob.md").read_text()
    assert not [p for p in ("alice", "carol") if "Diagnosis:" in (feedback / f"{p}-figures" / "index.html").read_text()]
    assert "**Score:" in (feedback / "bob.md").read_text()
    files = [p for p in feedback.rglob("*") if p.is_file()]
    assert not [p for p in files if ".cache" in p.parts]  # handed out: show's figure cache stays out
    assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o644}
    assert not [p for p in files if str(base) in p.read_text(errors="replace")]  # no path of this machine


@pytest.mark.slow
def test_figures_are_drawn_from_the_copy_that_was_graded(tmp_path: Path) -> None:
    """The batch's one intake feeds the grade, the digest and the figures: the student's folder is not read again."""
    subs = tmp_path / "subs"
    shutil.copytree(ROOT / "reference_solutions" / "assignment2", subs / "alice" / "assignment2")
    summary = grade_all(load_assignment("assignment2"), subs,
                        BatchOptions(jobs=1, gradebook=tmp_path / "g.db", feedback=tmp_path / "fb", figures=True,
                                     grader_factory=gone_after_grading))
    assert not (subs / "alice").exists()  # the grader removed it before the figures were drawn
    assert summary.figure_pages == 1 and summary.figure_failures == []
    stamp = json.loads((tmp_path / "fb" / "alice-figures" / FIGURE_STAMP).read_text())
    assert stamp["panels"] and {p["status"] for p in stamp["panels"]} == {"drawn"}
    assert stamp["digest"] == _current(tmp_path / "g.db")["alice"][2]


@pytest.mark.slow
def test_resume_draws_missing_or_stale_figures_without_regrading(figures_class: tuple[Path, str]) -> None:
    base, _ = figures_class
    feedback = base / "fb"
    before = _current(base / "g.db")
    untouched = (feedback / "bob-figures" / "index.html").stat().st_mtime_ns
    shutil.rmtree(feedback / "alice-figures")
    stamp = feedback / "carol-figures" / FIGURE_STAMP
    stamp.write_text(json.dumps({**json.loads(stamp.read_text()), "digest": "drawn-for-another-submission"}))
    result = CliRunner().invoke(main, ["grade-all", "assignment2", str(base / "subs"), "--jobs", "2",
                                       "--gradebook", str(base / "g.db"), "--feedback", str(feedback), "--figures"])
    assert result.exit_code == 0, result.output
    assert "graded now       0" in result.output and "figures: 2 pages" in result.output
    assert _current(base / "g.db") == before
    with sqlite3.connect(base / "g.db") as connection:
        assert connection.execute("SELECT COUNT(*) FROM submissions").fetchone() == (3,)
    assert (feedback / "alice-figures" / "index.html").is_file()
    assert json.loads(stamp.read_text())["digest"] == before["carol"][2]
    assert (feedback / "bob-figures" / "index.html").stat().st_mtime_ns == untouched
    assert 'href="alice-figures/index.html"' in (feedback / "alice.html").read_text()


LEFT_OUT = '''
[[mutation]]
id = "copy_rows_from_a_helper"
task = "weight_copy"
hint = "Your copy takes its rows from a helper."

[[mutation.edits]]
file = "modules.py"
old = "import math\\n"
new = "import math\\n\\nROWS = first_rows()\\n"

[[mutation.edits]]
file = "modules.py"
old = "pairs = [(stacked.out_proj.weight, split.out_proj.weight), (stacked.out_proj.bias, split.out_proj.bias)]"
new = "pairs = [(stacked.out_proj.weight, split.out_proj.weight)] * ROWS"

[[mutation]]
id = "copy_from_an_older_reference"
task = "weight_copy"
hint = "Your copy is of an older layout."
file = "modules.py"
old = "this text is no longer in the reference"
new = "pass"
'''


@pytest.mark.slow
def test_the_figures_diagnosis_says_the_mistakes_it_left_out_once_per_run_on_stderr(tmp_path: Path) -> None:
    """Two students whose stacked-and-split figure shows a ✗: its diagnosis tries the known mistakes of weight_copy
    too, which grading's judge never tries (their weight_copy passes). One of them does not import and one is
    stale: the run says each once, on stderr, with the line ``grader grade`` and ``grader show`` say
    (``warn_left_out_mistakes``), however many students' figures met it."""
    a2 = load_assignment("assignment2")
    root = tmp_path / "assignments" / "assignment2"
    shutil.copytree(a2.root, root, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "reference_solutions").symlink_to(a2.reference.parent)
    mistakes = root / "hidden" / "mistakes" / "modules.toml"
    mistakes.write_text(mistakes.read_text(encoding="utf-8") + LEFT_OUT, encoding="utf-8")
    line = mistakes.read_text().splitlines().index('id = "copy_rows_from_a_helper"') + 1
    reversed_heads = next(m for m in load_mutations(a2, "mistakes") if m.id == "stacked_reversed_heads")
    for student in ("alice", "bob"):
        apply_mutation(a2.reference, reversed_heads, tmp_path / "subs" / student / "assignment2")
    env = {**os.environ, "GRADER_ASSIGNMENTS": str(tmp_path / "assignments")}
    run = subprocess.run([sys.executable, "-m", "autograder.cli", "grade-all", "assignment2", str(tmp_path / "subs"),
                          "--jobs", "1", "--gradebook", str(tmp_path / "g.db"), "--feedback", str(tmp_path / "fb"),
                          "--figures"], capture_output=True, text=True, timeout=900, env=env)
    assert run.returncode == 0, run.stderr
    assert "figures: 2 pages" in run.stdout, run.stdout
    stale = diagnosable_mistakes(load_assignment("assignment2", tmp_path / "assignments"))[1]
    assert len(stale) == 1 and "copy_from_an_older_reference" in stale[0]
    does_not_import = (f"{mistakes}:{line}: mutation 'copy_rows_from_a_helper' does not import: modules.py, line 9: "
                       f"NameError: name 'first_rows' is not defined; a mistake or variant is code a student could "
                       f"run: fix its new text")
    warnings = [text for text in run.stderr.splitlines() if text.startswith("warning: ")]
    assert warnings == [f"warning: {text}; until then no student is told this mistake's hint (`grader verify "
                        f"assignment2` refuses it)" for text in [*stale, does_not_import]], run.stderr
    assert "Traceback" not in run.stderr
