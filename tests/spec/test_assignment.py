"""The manifest loader: points, tasks, validation errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autograder.errors import AssignmentError
from autograder.spec.assignment import available_assignments, load_assignment, missing_paths


def test_assignment3_points_add_up_to_100(assignment3):
    assert assignment3.max_score == 100
    assert assignment3.task_ids == [
        "causal_mask", "attention", "head_split", "multi_head_attention", "transformer_block",
        "sinusoidal_positions", "kv_cache_decode", "kv_cache_bytes", "tiny_gpt", "tiny_gpt_training", "quiz",
    ]


def test_every_task_has_a_checks_file_and_known_functions(assignment3):
    for task in assignment3.tasks:
        assert task.checks is not None and task.checks.is_file(), task.id
        for qualified in task.functions + task.uses:
            module, name = qualified.split(".")
            assert f"def {name}" in (assignment3.reference / f"{module}.py").read_text() or \
                f"class {name}" in (assignment3.reference / f"{module}.py").read_text(), qualified


def test_unknown_assignment_lists_the_available_ones():
    with pytest.raises(AssignmentError, match="no assignment named 'nope'.*assignment3"):
        load_assignment("nope")


def test_unknown_assignment_names_the_folder_it_looked_in(tmp_path):
    (tmp_path / "a1").mkdir()
    (tmp_path / "a1" / "assignment.toml").write_text("")
    with pytest.raises(AssignmentError) as caught:
        load_assignment("nope", root=tmp_path)
    assert str(caught.value) == f"no assignment named 'nope' in {tmp_path} (available: a1)"


def test_an_assignment_of_the_working_folder_hidden_by_the_variable_names_it(tmp_path, monkeypatch):
    """$GRADER_ASSIGNMENTS beats the course of the working folder; a name found only there says how to reach it."""
    (tmp_path / "assignments" / "mine").mkdir(parents=True)
    (tmp_path / "assignments" / "mine" / "assignment.toml").write_text("")
    (tmp_path / "other" / "theirs").mkdir(parents=True)
    (tmp_path / "other" / "theirs" / "assignment.toml").write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRADER_ASSIGNMENTS", str(tmp_path / "other"))
    with pytest.raises(AssignmentError) as caught:
        load_assignment("mine")
    assert str(caught.value) == ("no assignment named 'mine' in other (available: theirs); assignments/mine is one, "
                                 "in the course of this folder: unset GRADER_ASSIGNMENTS to use that course")


def test_path_like_names_are_refused():
    with pytest.raises(AssignmentError):
        load_assignment("../assignments/assignment3")


def test_the_shells_completion_of_the_package_folder_names_the_assignment():
    """``grader check assignment3/``: tab completion in a student release adds the slash of the package folder."""
    assert load_assignment("assignment3/").name == "assignment3"
    with pytest.raises(AssignmentError):
        load_assignment("assignment3/../assignment2")


def test_a_function_name_given_as_a_task_names_its_task(assignment3):
    with pytest.raises(AssignmentError, match="^assignment 'assignment3' has no task 'scaled_dot_product_attention'; "
                                              "scaled_dot_product_attention is a function of task 'attention'; tasks: "):
        assignment3.task("scaled_dot_product_attention")
    with pytest.raises(AssignmentError, match="has no task 'nope'; tasks: causal_mask, "):
        assignment3.task("nope")


def _write_manifest(root: Path, body: str) -> None:
    folder = root / "demo"
    folder.mkdir(parents=True)
    (folder / "assignment.toml").write_text(body)


BASE = """
[assignment]
modules = ["m"]
student_files = ["m.py"]
seed = 1
"""


def test_a_task_cannot_use_the_reference_for_its_own_code(tmp_path):
    _write_manifest(tmp_path, BASE + """
[[tasks]]
id = "t"
points = 1
functions = ["m.f"]
uses = ["m.f"]
checks = "c.py"
""")
    with pytest.raises(AssignmentError, match="cannot use the reference for its own code"):
        load_assignment("demo", root=tmp_path)


def test_unknown_module_in_functions_is_refused(tmp_path):
    _write_manifest(tmp_path, BASE + """
[[tasks]]
id = "t"
points = 1
functions = ["other.f"]
checks = "c.py"
""")
    with pytest.raises(AssignmentError, match="not 'module.name' of a student module"):
        load_assignment("demo", root=tmp_path)


def test_broken_toml_is_one_clear_error(tmp_path):
    _write_manifest(tmp_path, "[assignment\n")
    with pytest.raises(AssignmentError, match="cannot read"):
        load_assignment("demo", root=tmp_path)


def test_available_assignments_lists_assignment3():
    assert "assignment3" in available_assignments()


def test_a_manifest_without_its_optional_tables_names_no_missing_path():
    """The mini fixture has no [quiz], [late], [figures] or [audit]: an absent table names no file (it made
    ``grader verify`` of any such assignment end in a traceback); only its default public_tests folder is missing."""
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "assignments"
    [problem] = missing_paths(load_assignment("mini", root=fixtures)).values()
    assert "[assignment] public_tests names the folder 'public_tests', which does not exist" in problem


@pytest.mark.parametrize("left_out, said", [
    ("ops.py", "student_files has no ops.py, a module of [assignment] modules: the intake would drop every "
               "student's ops.py"),
    ("answers.toml", "student_files has no answers.toml, the quiz's answers_file: the intake would drop every "
                     "student's answers"),
])
def test_a_student_file_the_grader_reads_must_be_taken_from_the_submission(mini_course, left_out, said):
    """A module or the quiz's answers left out of student_files would be dropped by the intake, silently: every
    student would get "not implemented" or "answers.toml not found". The manifest is refused instead."""
    manifest = mini_course / "assignment.toml"
    text = manifest.read_text().replace('student_files = ["__init__.py", "ops.py"]',
                                        'student_files = ["__init__.py", "ops.py", "answers.toml"]')
    text += '\n[quiz]\nquestions = "quiz.toml"\nkey = "hidden/quiz_key.toml"\npoints = 1\n'
    manifest.write_text(text.replace(f'"{left_out}", ', "").replace(f', "{left_out}"', ""))
    with pytest.raises(AssignmentError, match=re.escape(said)):
        load_assignment("mini", root=mini_course.parent)
