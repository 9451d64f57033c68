"""Gradescope that fits: per-task and per-check visibility, late penalty from the metadata, a zip in the folder."""

from __future__ import annotations

import dataclasses
import json
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from autograder.errors import AssignmentError, SubmissionError
from autograder.judge.scoring import score_task
from autograder.reports.gradescope import render_gradescope
from autograder.reports.results import CheckResult, GradeReport, TaskResult
from autograder.spec.assignment import load_assignment
from autograder.spec.late import LatePolicy, lateness
from autograder.submission.intake import prepare_submission

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = ROOT / "tests" / "fixtures" / "assignments"
REFERENCE = ROOT / "tests" / "fixtures" / "reference_solutions" / "mini"


def _report() -> GradeReport:
    scale = TaskResult("scale", "Scale", 2.0, 2.0, "passed", "ok", [
        CheckResult("scale.values", "values", 1.0, "passed"),
        CheckResult("scale.dtype", "keeps the dtype", 1.0, "passed")])
    rows = TaskResult("row_sums", "Row sums", 1.5, 3.0, "failed", "half", [
        CheckResult("row_sums.values", "values", 1.0, "passed"),
        CheckResult("row_sums.large", "large inputs", 1.0, "failed", "wrong for n=1000")])
    return GradeReport("mini", "sub", 3.5, 5.0, [scale, rows], seconds=0.5)


def _spec(tmp_path: Path, extra: str):
    source = ASSIGNMENTS / "mini" / "assignment.toml"
    folder = tmp_path / "assignments" / "mini"
    folder.mkdir(parents=True)
    (folder / "assignment.toml").write_text(source.read_text() + extra)
    return load_assignment("mini", root=tmp_path / "assignments")


def test_visibility_per_task_and_check(tmp_path: Path) -> None:
    spec = _spec(tmp_path, '\n[gradescope]\nvisibility = "after_published"\nstdout_visibility = "visible"\n')
    rows = dataclasses.replace(spec.tasks[1], visibility="after_due_date",
                               check_visibility=(("row_sums.large", "hidden"),))
    spec = dataclasses.replace(spec, tasks=(spec.tasks[0], rows))
    results = json.loads(render_gradescope(_report(), spec))
    assert (results["visibility"], results["stdout_visibility"]) == ("after_published", "visible")
    assert [(t["name"], t["visibility"], t.get("max_score")) for t in results["tests"]] == [
        ("scale: Scale", "visible", 2.0), ("row_sums: Row sums", "after_due_date", 3.0),
        ("row_sums: Row sums (hidden checks)", "hidden", None)]
    assert "large inputs" not in results["tests"][1]["output"]
    assert "wrong for n=1000" in results["tests"][2]["output"] and results["tests"][2]["status"] == "failed"
    assert results["score"] == 3.5  # the unscored test adds nothing
    plain = json.loads(render_gradescope(_report()))
    assert {t["visibility"] for t in plain["tests"]} == {"visible"} and plain["stdout_visibility"] == "hidden"


def test_a_hidden_check_is_not_in_its_visible_task_summary(tmp_path: Path) -> None:
    """The task's summary names its first problem and hint: computed over the shown checks only, or a hidden
    check's description, values and hint would be shown with the visible test."""
    spec = _spec(tmp_path, "")
    rows = dataclasses.replace(spec.tasks[1], check_visibility=(("row_sums.large", "hidden"),))
    spec = dataclasses.replace(spec, tasks=(spec.tasks[0], rows))
    large = CheckResult("row_sums.large", "large inputs", 1.0, "failed", "wrong for n=1000", hint="use n")
    values = CheckResult("row_sums.values", "values", 1.0, "passed")
    for checks in ([large, values], [values, large]):
        report = GradeReport("mini", "sub", 1.0, 3.0, [score_task("row_sums", "Row sums", 3.0, checks)])
        visible, hidden = json.loads(render_gradescope(report, spec))["tests"]
        assert "large inputs" not in visible["output"] and "n=1000" not in visible["output"]
        assert "use n" not in visible["output"] and visible["visibility"] == "visible"
        assert visible["output"].startswith("all 1 checks passed") and visible["score"] == 1.5
        assert "wrong for n=1000" in hidden["output"] and hidden["visibility"] == "hidden"
    every = dataclasses.replace(rows, check_visibility=(("row_sums.large", "hidden"), ("row_sums.values", "hidden")))
    report = GradeReport("mini", "sub", 1.0, 3.0, [score_task("row_sums", "Row sums", 3.0, [large, values])])
    visible, _ = json.loads(render_gradescope(report, dataclasses.replace(spec, tasks=(spec.tasks[0], every))))["tests"]
    assert visible["output"] == "2 checks of this task are not shown here"


def test_what_the_code_printed_is_shown_only_when_every_test_is_shown_with_the_result(tmp_path: Path) -> None:
    """A student can print a check's inputs: printed during a hidden check (or task), they would be shown at once."""
    spec = _spec(tmp_path, "")
    report = dataclasses.replace(_report(), student_output="--- output during row_sums.large\nx = [1000.0, 3.0]")
    assert "x = [1000.0, 3.0]" in json.loads(render_gradescope(report, spec))["output"]
    for hidden in (dataclasses.replace(spec.tasks[1], visibility="after_due_date"),
                   dataclasses.replace(spec.tasks[1], check_visibility=(("row_sums.large", "hidden"),))):
        results = json.loads(render_gradescope(report, dataclasses.replace(spec, tasks=(spec.tasks[0], hidden))))
        assert "1000.0" not in json.dumps(results) and "it is not shown here" in results["output"]
    later = _spec(tmp_path / "later", '\n[gradescope]\nvisibility = "after_published"\n')
    assert "x = [1000.0, 3.0]" in json.loads(render_gradescope(report, later))["output"]  # no test comes later


def test_a_hint_is_said_once_per_test() -> None:
    """One mistake failing every check of a task reads as one mistake (as in the feedback files), not as one copy
    of its hint per check; a second, different hint is said too."""
    checks = [CheckResult(f"row_sums.c{i}", f"check {i}", 1.0, "failed", f"wrong {i}", hint="Sum over the last axis.")
              for i in range(4)] + [CheckResult("row_sums.c4", "check 4", 1.0, "failed", "wrong 4", hint="Keep dims.")]
    report = GradeReport("mini", "sub", 0.0, 3.0, [score_task("row_sums", "Row sums", 3.0, checks)])
    output = json.loads(render_gradescope(report))["tests"][0]["output"]
    assert output.count("Sum over the last axis.") == 1 and output.count("Keep dims.") == 1
    assert [line.split(":")[0] for line in output.splitlines()[1:]] == [f"[failed] check {i}" for i in range(5)]


def test_visibility_is_validated(tmp_path: Path) -> None:
    with pytest.raises(AssignmentError, match="visibility must be one of visible, hidden, after_due_date"):
        _spec(tmp_path, '\n[gradescope]\nvisibility = "later"\n')


def test_late_penalty_in_results_json() -> None:
    due = datetime(2026, 12, 1, 23, 0, tzinfo=timezone.utc)
    late = lateness(due + timedelta(hours=30), due, LatePolicy(rate=0.1))
    results = json.loads(render_gradescope(_report(), None, late))
    assert results["score"] == pytest.approx(2.8)
    assert results["output"].startswith("Lateness: 1 d 6 h late (2 days counted): -20%. Score before the penalty "
                                        "3.5, after it 2.8.")


def test_the_log_line_says_the_penalised_score_too() -> None:
    """run_autograder's log says the raw score; with a penalty, also the one results.json holds."""
    from autograder.cli.grade import score_line

    due = datetime(2026, 12, 1, 23, 0, tzinfo=timezone.utc)
    assert score_line(_report()) == "mini: 3.5 / 5"
    assert score_line(_report(), lateness(due, due, LatePolicy(rate=0.1))) == "mini: 3.5 / 5"
    late = lateness(due + timedelta(hours=30), due, LatePolicy(rate=0.1))
    assert score_line(_report(), late) == ("mini: 3.5 / 5 (2.8 after the late penalty: 1 d 6 h late (2 days "
                                           "counted): -20%)")


def test_grade_reads_gradescope_metadata_only_with_a_late_policy(tmp_path: Path) -> None:
    from autograder.cli.grade import _gradescope_lateness

    metadata = tmp_path / "submission_metadata.json"
    metadata.write_text(json.dumps({"created_at": "2026-12-03T01:00:00+00:00",
                                    "assignment": {"due_date": "2026-12-01T23:00:00+00:00"},
                                    "users": [{"name": "A", "assignment": {"due_date": "2026-12-04T00:00:00Z"}}]}))
    spec = load_assignment("mini", root=ASSIGNMENTS)
    assert _gradescope_lateness(spec, metadata) is None  # Gradescope's own late settings apply
    late = _gradescope_lateness(dataclasses.replace(spec, late=LatePolicy(rate=0.1)), metadata)
    assert late is not None and late.note == "on time"  # the student's extension applies


def test_run_autograder_passes_the_metadata() -> None:
    script = (ROOT / "autograder" / "templates" / "run_autograder").read_text()
    assert '--submission-metadata "$ROOT/submission_metadata.json"' in script
    assert "-m autograder.cli grade" in script and (ROOT / "autograder" / "cli" / "__main__.py").is_file()


def test_a_zip_inside_the_submission_folder_is_graded(tmp_path: Path) -> None:
    spec = load_assignment("mini", root=ASSIGNMENTS)
    folder = tmp_path / "submission"
    folder.mkdir()
    with zipfile.ZipFile(folder / "my work.zip", "w") as bundle:
        for file in REFERENCE.glob("*.py"):
            bundle.write(file, f"mini/{file.name}")
    prepared = prepare_submission(folder, spec, tmp_path / "scratch")
    assert "ops.py" in prepared.copied
    (folder / "second.zip").write_bytes((folder / "my work.zip").read_bytes())
    with pytest.raises(SubmissionError, match="no mini/ package found in submission "):
        prepare_submission(folder, spec, tmp_path / "scratch2")  # two zips: which one is meant is unclear


def test_messages_name_the_submission_not_the_machine(tmp_path: Path) -> None:
    spec = load_assignment("mini", root=ASSIGNMENTS)
    broken = tmp_path / "class" / "frank.zip"
    broken.parent.mkdir()
    broken.write_text("not a zip")
    with pytest.raises(SubmissionError) as caught:
        prepare_submission(broken, spec, tmp_path / "s")
    assert str(caught.value) == ("frank.zip is a damaged zip archive (File is not a zip file): make it again (e.g. "
                                 "`zip -r`) or download it again")  # it was "neither a folder nor a zip archive"
    notes = tmp_path / "class" / "notes.txt"
    notes.write_text("not a submission")
    with pytest.raises(SubmissionError) as caught:
        prepare_submission(notes, spec, tmp_path / "s2")
    assert str(caught.value) == "notes.txt is neither a folder nor a zip archive (nor a .ipynb notebook)"
    for damaged in (b"PK\x03\x04garbage", b"PK\x03\x04" + bytes(200)):  # a zip cut short, named otherwise
        (tmp_path / "class" / "upload").write_bytes(damaged)
        with pytest.raises(SubmissionError, match=r"^upload is a damaged zip archive \("):
            prepare_submission(tmp_path / "class" / "upload", spec, tmp_path / "s3")
    empty = tmp_path / "class" / "ada"
    empty.mkdir()
    with pytest.raises(SubmissionError) as caught:
        prepare_submission(empty, spec, tmp_path / "s2")
    assert str(tmp_path) not in str(caught.value) and "found in ada" in str(caught.value)
