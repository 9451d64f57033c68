"""`grader verify`'s lint of what a new assignment gets wrong about its points and files (issue 43), on a copy of
the topk fixture course: points that do not add up to `total_points`, a reference file importing one that is not a
student file, a public test importing a module only the instructor's copy has (refused by the release's leak scan
too); each one line naming the file, the line and the fix."""

from __future__ import annotations

import shutil
from pathlib import Path


from autograder.authoring.verify import check_authoring
from autograder.spec.assignment import Assignment, load_assignment


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def _reloaded(assignment: Assignment) -> Assignment:
    return load_assignment(assignment.name, root=assignment.root.parent)


def _line(path: Path, text: str) -> int:
    return path.read_text().splitlines().index(text) + 1


def _lint(assignment: Assignment):
    """verify's authoring finding, the mutations read as text (importing each is not what these tests are about)."""
    return check_authoring(_reloaded(assignment), imports=False)


def test_the_topk_course_lints_clean_and_says_its_points_add_up(topk_course):
    finding = _lint(topk_course)
    assert finding.ok, finding.details
    assert finding.details[-1] == "the points add up to 10, as [assignment] total_points says"


# -- points ----------------------------------------------------------------------------------------------------


def test_points_that_do_not_add_up_to_total_points_are_named_with_each_points_line(topk_course):
    manifest = topk_course.root / "assignment.toml"
    _edit(manifest, "points = 6", "points = 7")
    finding = _lint(topk_course)
    assert finding.details == [
        f"{manifest}:{_line(manifest, 'total_points = 10')}: [assignment] total_points is 10, but the points add up "
        f"to 11: top_k 7 (line {_line(manifest, 'points = 7')}), softmax 4 (line {_line(manifest, 'points = 4')}) — "
        f"change a task's points, or total_points"]


def test_without_total_points_verify_says_the_sum_and_how_to_hold_it(topk_course):
    manifest = topk_course.root / "assignment.toml"
    _edit(manifest, "total_points = 10\n", "")
    _edit(manifest, "points = 6", "points = 100")
    finding = _lint(topk_course)
    assert finding.ok and finding.details[-1] == (
        "the points add up to 104 (reports show scores out of 104); declare [assignment] total_points = 104 in "
        "assignment.toml to have verify hold them to it")


# -- files: the reference's, the public tests' -------------------------------------------------------------------


def test_a_reference_file_importing_a_file_not_in_student_files_is_named_with_the_fix(topk_course):
    """Grading takes only student_files from a submission: the reference itself scored 84/100 with 'No module
    named …' and 'ignored: _logmath.py', and no line said to list the file."""
    ops = topk_course.reference / "ops.py"
    (topk_course.reference / "_logmath.py").write_text("def row_max(x):\n    return x.amax(dim=-1, keepdim=True)\n")
    _edit(ops, "import torch\n", "import torch\n\nfrom ._logmath import row_max\n")
    manifest = topk_course.root / "assignment.toml"
    listed = _line(manifest, 'student_files = ["__init__.py", "ops.py"]')
    assert _lint(topk_course).details == [
        f"{ops}:5: imports _logmath.py, which is not in [assignment] student_files: grading takes only those files "
        f"of a submission, so this import fails for every student — add \"_logmath.py\" to student_files "
        f"({manifest}:{listed})"]
    _edit(manifest, '"ops.py"]', '"ops.py", "_logmath.py"]')
    assert _lint(topk_course).ok


HIDDEN_IMPORT = '''

@pytest.mark.task("top_k")
def test_against_the_shared_logits():
    from _logits import with_ties
    assert with_ties is not None
'''


def test_a_public_test_importing_a_hidden_helper_is_named_by_verify_and_refused_by_the_release(topk_course, tmp_path):
    from autograder.authoring.release import scan_for_leaks

    tests = topk_course.public_tests / "test_ops.py"
    tests.write_text(tests.read_text() + HIDDEN_IMPORT)
    line = _line(tests, "    from _logits import with_ties")
    said = ("imports _logits (" + str(topk_course.root / "hidden" / "checks" / "_logits.py") + "), which students "
            "do not have: the release ships no hidden file and no reference, so this fails for every student — copy "
            "what it needs into the file (or a helper beside it that students get)")
    assert _lint(topk_course).details == [f"{tests}:{line}: {said}"]
    student = tmp_path / "student"  # the public tests as the student release holds them
    shutil.copytree(topk_course.public_tests, student / "assignments" / "topk" / "public_tests")
    assert scan_for_leaks(topk_course, student) == [f"assignments/topk/public_tests/test_ops.py:{line}: {said}"]
