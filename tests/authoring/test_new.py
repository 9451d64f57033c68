"""`grader new NAME` scaffolds an assignment that verify, audit and release accept as it is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.authoring.blind import BLIND_KINDS
from autograder.authoring.scaffold import SOURCE
from autograder.cli import main
from autograder.spec.manifest import SCHEMA


def _grader(root: Path, *args: str):
    return CliRunner().invoke(main, list(args), env={"GRADER_ASSIGNMENTS": str(root / "assignments")})


def test_the_scaffold_manifest_shows_every_key_of_the_schema():
    text = (SOURCE / "assignment.toml.tmpl").read_text()
    for spec in SCHEMA:
        assert re.search(rf"^#? ?\[{re.escape(spec.header[1:-1])}\]", text, re.M), spec.header
        for key in spec.keys:
            assert re.search(rf"^#? ?{key.name} = ", text, re.M), f"{spec.header} {key.name}"


def test_new_refuses_a_bad_or_taken_name_in_one_line(tmp_path):
    (tmp_path / "assignments" / "taken").mkdir(parents=True)
    for name, message in (("2fast", "cannot name an assignment: use a Python identifier"),
                          ("taken", "taken already exists; choose another name or remove it")):
        result = _grader(tmp_path, "new", name)
        assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_the_scaffolds_student_files_speak_to_students(tmp_path):
    """Everything outside the reference's solution regions is what students get: no note to the instructor there."""
    pytest.importorskip("nbgrader")
    (tmp_path / "assignments").mkdir()
    assert _grader(tmp_path, "new", "demo101").exit_code == 0
    for path in (tmp_path / "student_template" / "demo101").glob("*.py"):
        text = path.read_text()
        assert "solution region" not in text and "students get" not in text, (path.name, text)


def test_new_ignores_the_rendered_figures_and_holds_the_points_to_100(tmp_path):
    """The expected PNGs are rendered (`grader show --expected`, the release): never committed; the scaffold's
    points add up to the total its manifest declares, which verify holds them to."""
    pytest.importorskip("nbgrader")
    (tmp_path / "assignments").mkdir()
    assert _grader(tmp_path, "new", "demo101").exit_code == 0
    folder = tmp_path / "assignments" / "demo101"
    assert (folder / "figures" / ".gitignore").read_text() == "expected/\n"
    assert re.search(r"^total_points = 100 ", (folder / "assignment.toml").read_text(), re.M)


@pytest.mark.slow
def test_a_new_assignment_verifies_audits_and_releases_as_it_is(tmp_path):
    (tmp_path / "assignments").mkdir()
    created = _grader(tmp_path, "new", "demo101")
    assert created.exit_code == 0, created.output
    assert (tmp_path / "student_template" / "demo101.ipynb").is_file()
    verified = _grader(tmp_path, "verify", "demo101")
    assert verified.exit_code == 0 and "verified: ready to release" in verified.output, verified.output
    audited = _grader(tmp_path, "audit", "demo101", "--jobs", "1")
    assert audited.exit_code == 0, audited.output
    # the scaffold's one variant, and the reference as a notebook whose definitions need helpers three levels down
    # (authoring/notebook_variant.py, a variant every assignment gets); one task, so one cell per blind kind
    kinds = len(BLIND_KINDS)
    assert "mistakes caught only in their task: 1 / 1" in audited.output and "variants with full marks: 2 / 2" in \
        audited.output and f"blind submissions scoring 0 on their task: {kinds} / {kinds}" in audited.output
    # the audit holds its own counts to the manifest's [audit] minimums, as verify holds the declared ones
    manifest = tmp_path / "assignments" / "demo101" / "assignment.toml"
    manifest.write_text(manifest.read_text().replace("min_mistakes = 1 ", "min_mistakes = 2 ")
                        .replace("# min_right_hints = 0 ", "min_right_hints = 1 "))
    below = _grader(tmp_path, "audit", "demo101", "--jobs", "1", "--families", "mutations")
    assert below.exit_code == 1, below.output
    assert below.stderr.splitlines() == [
        "below the minimum: audit: 1 mistakes caught only in their task, [audit] min_mistakes asks for at least 2; "
        "add mistakes the checks catch, or lower [audit] min_mistakes in assignment.toml",
        "audit failed: 1 [audit] minimum not met"]
    manifest.write_text(manifest.read_text().replace("min_mistakes = 2 ", "min_mistakes = 1 "))
    released = _grader(tmp_path, "release", "demo101", "--no-verify", "--out", str(tmp_path / "release"))
    assert released.exit_code == 0, released.output
    shipped = tmp_path / "release" / "demo101-student" / "assignments" / "demo101"
    assert sorted(p.name for p in shipped.iterdir()) == ["STUDENT_README.md", "assignment.toml", "figures",
                                                         "public_tests", "quiz.toml", "student_template.json"]
    # the instructor's next step: a function the reference does not define is named by `grader template` at once
    manifest.write_text(manifest.read_text().replace('functions = ["ops.softmax"]', 'functions = ["ops.sofmax"]'))
    templated = _grader(tmp_path, "template", "demo101")
    assert templated.exit_code == 1 and "student template written" in templated.stdout, templated.output
    assert templated.stderr.startswith(f"warning: {manifest}:") and "did you mean ops.softmax?" in templated.stderr
