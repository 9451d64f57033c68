"""The student template: generated from the reference by nbgrader, committed, importable, every function a stub."""

from __future__ import annotations

import ast
import inspect
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autograder.authoring.template import (
    BEGIN,
    END,
    TemplateError,
    blank_answers,
    clear_solutions,
    find_regions,
    render_template,
    template_drift,
    write_files,
)
from autograder.errors import GraderError
from autograder.spec.assignment import Assignment, load_assignment
from autograder.spec.quiz import load_key, load_questions
from autograder.spec.reference import load_package
from autograder.util.tomlio import loads_toml

NBGRADER_MISSING = "nbgrader is not installed (pip install -e '.[instructor]'); CI installs it, so this runs there"


def needs_nbgrader() -> None:
    pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)


# -- the committed template ----------------------------------------------------------------------------


def test_committed_template_is_byte_identical_to_a_fresh_generation(assignment3: Assignment) -> None:
    needs_nbgrader()
    assert template_drift(assignment3) == [], "run `grader template assignment3` and commit student_template/"


def test_template_holds_exactly_the_student_files_and_the_readme(assignment3: Assignment) -> None:
    names = {p.relative_to(assignment3.template).as_posix() for p in assignment3.template.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts}
    assert names == set(assignment3.student_files) | {"README.md"}
    readme = assignment3.root / "STUDENT_README.md"
    assert (assignment3.template / "README.md").read_bytes() == readme.read_bytes()


def test_template_imports_and_every_graded_function_raises_not_implemented(assignment3: Assignment) -> None:
    package = load_package(assignment3.template, "_template_under_test", assignment3.modules)
    graded = [name for task in assignment3.tasks for name in task.functions]
    assert graded
    for qualified in graded:
        module, name = qualified.split(".")
        target = getattr(getattr(package, module), name)
        with pytest.raises(NotImplementedError):
            target(*_placeholder_arguments(target))


def _placeholder_arguments(target: object) -> list[None]:
    """None for every required parameter: a stub raises before it looks at its arguments."""
    signature = inspect.signature(target)  # for a class: its __init__ without self
    return [None for p in signature.parameters.values()
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def test_every_solution_region_became_exactly_one_stub(assignment3: Assignment) -> None:
    for module in assignment3.modules:
        reference = (assignment3.reference / f"{module}.py").read_text()
        template = (assignment3.template / f"{module}.py").read_text()
        regions = find_regions(reference, module)
        stubs = [node for node in ast.walk(ast.parse(template)) if isinstance(node, ast.Raise)
                 and isinstance(node.exc, ast.Call) and getattr(node.exc.func, "id", "") == "NotImplementedError"]
        assert len(stubs) == len(regions), module
        assert "SOLUTION" not in template


def test_template_keeps_every_signature_and_docstring(assignment3: Assignment) -> None:
    for module in assignment3.modules:
        reference = ast.parse((assignment3.reference / f"{module}.py").read_text())
        template = ast.parse((assignment3.template / f"{module}.py").read_text())
        assert _signatures(reference) == _signatures(template), module


def _signatures(tree: ast.Module) -> list[tuple[str, str, str | None]]:
    return [(node.name, ast.dump(node.args), ast.get_docstring(node)) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


# -- the blank answers ---------------------------------------------------------------------------------


def test_blank_answers_name_every_question_and_answer_none(assignment3: Assignment) -> None:
    assert assignment3.quiz is not None
    text = (assignment3.template / assignment3.quiz.answers_file).read_text()
    answers = loads_toml(text)
    questions = load_questions(assignment3.quiz)
    assert answers == {q.id: "" for q in questions}
    for question in questions:
        assert " ".join(question.text.split()[:6]) in " ".join(text.split())


def test_blank_answers_keep_any_question_id_as_one_key(assignment3: Assignment, tmp_path: Path) -> None:
    """A question id TOML cannot take bare (``1.a`` is a dotted key: a table ``1`` holding ``a``) is quoted."""
    import dataclasses

    assert assignment3.quiz is not None
    questions = tmp_path / "quiz.toml"
    questions.write_text('[[questions]]\nid = "1.a"\ntext = "Which?"\noptions = { a = "x", b = "y" }\n\n'
                         '[[questions]]\nid = "q 2"\ntext = "And?"\noptions = { a = "x", b = "y" }\n')
    spec = dataclasses.replace(assignment3, quiz=dataclasses.replace(assignment3.quiz, questions_file=questions))
    assert loads_toml(blank_answers(spec)) == {"1.a": "", "q 2": ""}


def test_blank_answers_never_reveal_the_key(assignment3: Assignment) -> None:
    assert assignment3.quiz is not None
    text = " ".join(blank_answers(assignment3).split())
    for entry in load_key(assignment3.quiz).values():
        explanation = " ".join(entry["explanation"].split())
        assert explanation[:60] not in text


# -- marker validation on small synthetic sources ------------------------------------------------------


GOOD = textwrap.dedent(f'''\
    def f(x):
        """Docstring."""
        {BEGIN}
        return x + 1
        {END}


    class C:
        def g(self):
            if True:
                {BEGIN}
                return 2
                {END}
            return 3
    ''')


def test_clearing_replaces_each_region_with_an_indented_stub() -> None:
    needs_nbgrader()
    cleared = clear_solutions(GOOD, "good.py")
    assert "return x + 1" not in cleared and "return 2" not in cleared
    assert "    # YOUR CODE HERE\n    raise NotImplementedError()\n" in cleared
    assert "            # YOUR CODE HERE\n            raise NotImplementedError()\n" in cleared
    assert cleared.endswith("return 3\n")
    ast.parse(cleared)


def test_a_file_without_regions_is_unchanged() -> None:
    source = "X = 1\n\n\ndef f():\n    return X\n"
    assert clear_solutions(source, "plain.py") == source


def _body(text: str) -> str:
    return textwrap.dedent(text).replace("BEGIN", BEGIN).replace("END", END)


@pytest.mark.parametrize(("source", "line", "words"), [
    ("def f():\n    BEGIN\n    return 1\n", 2, "never closed"),
    ("def f():\n    BEGIN\n    BEGIN\n    return 1\n    END\n", 3, "nested"),
    ("def f():\n    return 1\n    END\n", 3, "without a matching"),
    ("def f():\n    BEGIN\n    return 1\n  END\n", 4, "indented differently"),
    ('def f():\n    """Write it between BEGIN SOLUTION markers."""\n', 2, "marker text outside a marker line"),
    ("def f():\n    ## BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n", 2, "marker text outside"),
    ("def f():\n    BEGIN\n    return 1\n\ndef g():\n    return 2\n    END\n", 5, "leaves its block"),
    ("def f(:\n    BEGIN\n    return 1\n    END\n", 1, "does not parse"),
], ids=["unterminated", "nested", "unmatched-end", "end-indent", "docstring", "malformed", "escapes", "syntax"])
def test_marker_errors_name_the_file_and_line(source: str, line: int, words: str) -> None:
    source = source.replace("BEGIN\n", BEGIN + "\n").replace("END\n", END + "\n")
    with pytest.raises(TemplateError, match=words) as caught:
        clear_solutions(source, "broken.py")
    message = str(caught.value)
    assert message.startswith(f"broken.py:{line}: ") and "\n" not in message
    assert isinstance(caught.value, GraderError)


@pytest.mark.parametrize(("source", "line", "words"), [
    ("BEGIN\nX = 1\nEND\n", 1, "outside a function body"),
    ("class C:\n    BEGIN\n    x = 1\n    END\n", 2, "outside a function body"),
    ("if True:\n    BEGIN\n    x = 1\n    END\n", 2, "outside a function body"),
    ("def f(x):\n    if x:\n    BEGIN\n        return 1\n    END\n    return 0\n", 3, "stub does not parse"),
], ids=["module-level", "class-body", "module-if", "stub-syntax"])
def test_misplaced_regions_are_reported_after_clearing(source: str, line: int, words: str) -> None:
    needs_nbgrader()
    source = source.replace("BEGIN\n", BEGIN + "\n").replace("END\n", END + "\n")
    with pytest.raises(TemplateError, match=words) as caught:
        clear_solutions(source, "broken.py")
    assert str(caught.value).startswith(f"broken.py:{line}: ")


def test_a_marker_error_in_the_reference_fails_generation_with_its_path(assignment_copy: Assignment) -> None:
    path = assignment_copy.reference / "positions.py"
    path.write_text(path.read_text().replace(END, "# end of solution", 1))
    with pytest.raises(TemplateError, match=r"positions\.py:\d+: "):
        render_template(assignment_copy)


def test_writing_never_wipes_a_folder_with_other_files(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mine.txt").write_text("keep me")
    with pytest.raises(TemplateError) as caught:
        write_files({"a.py": b"x = 1\n"}, tmp_path / "pkg")
    # what to do, not "choose another destination", which `grader template` has no option for
    assert str(caught.value) == (f"{tmp_path / 'pkg'} holds a file a fresh generation would not write, and it never "
                                 f"deletes one: mine.txt (a module the reference no longer has?); delete it "
                                 f"(rm {tmp_path / 'pkg' / 'mine.txt'}), then generate again")
    assert (tmp_path / "pkg" / "mine.txt").read_text() == "keep me"
    write_files({"a.py": b"x = 1\n"}, tmp_path / "fresh")
    write_files({"b.py": b"y = 2\n", "a.py": b"x = 1\n"}, tmp_path / "fresh")
    assert sorted(p.name for p in (tmp_path / "fresh").iterdir()) == ["a.py", "b.py"]


def test_a_missing_student_readme_names_the_file_to_write_in_template_and_verify_alike(
        assignment_copy: Assignment) -> None:
    """Not a loop (verify saying `run grader template`, template saying `remove README.md`): both name the file
    to write, where, what goes in it, and only then `grader template`."""
    from click.testing import CliRunner

    from autograder.authoring.verify import check_template_current
    from autograder.cli import main

    readme = assignment_copy.root / "STUDENT_README.md"
    readme.unlink()
    says = (f"{readme} does not exist: write the students' instructions there (the template's README.md and the "
            f"notebook's text come from it; `grader new` starts one with a title, the functions to write and their "
            f"files, where to answer the quiz and `grader check assignment3`), then run `grader template assignment3`")
    finding = check_template_current(assignment_copy)
    assert not finding.ok and finding.details == [says]
    result = CliRunner().invoke(main, ["template", "assignment3"],
                                env={"GRADER_ASSIGNMENTS": str(assignment_copy.root.parent)})
    assert result.exit_code == 2 and result.output == f"error: {says}\n", result.output
    assert (assignment_copy.template / "README.md").is_file()  # nothing written: the old template stays whole


def test_grader_template_regenerates_the_folder(assignment_copy: Assignment) -> None:
    needs_nbgrader()
    target = assignment_copy.template / "attention.py"
    target.write_text(target.read_text() + "\n# drift\n")
    assert template_drift(assignment_copy)
    from autograder.authoring.template import generate_template

    generate_template(assignment_copy)
    assert template_drift(assignment_copy) == []


def test_nbgrader_is_not_imported_with_the_grader() -> None:
    code = ("import sys, autograder.cli, autograder.authoring.template, autograder.authoring.release, autograder.authoring.verify; "
            "print('nbgrader' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


# -- a module renamed after `grader new` -----------------------------------------------------------------------


def test_a_module_left_behind_after_a_rename_is_named_in_the_reference_too(topk_course):
    """The scaffold's ops.py, renamed in the manifest but left in the reference and the template: `grader template`
    refused with the template's file only, and the reference's copy stayed to confuse the next run."""
    pytest.importorskip("nbgrader")
    from autograder.authoring.template import generate_template, template_drift
    from autograder.errors import TemplateError

    generate_template(topk_course)
    shutil.copyfile(topk_course.reference / "ops.py", topk_course.reference / "sampling.py")
    manifest = topk_course.root / "assignment.toml"
    manifest.write_text(manifest.read_text().replace('"ops"', '"sampling"').replace('"ops.py"', '"sampling.py"')
                        .replace('"ops.top_k"', '"sampling.top_k"').replace('"ops.softmax"', '"sampling.softmax"'))
    renamed = load_assignment("topk", root=topk_course.root.parent)
    left = ("; the reference still has ops.py, which [assignment] student_files no longer lists (left from `grader "
            f"new` or a rename?): delete it there too (rm {topk_course.reference / 'ops.py'})")
    with pytest.raises(TemplateError) as refused:
        generate_template(renamed)
    assert str(refused.value).endswith(f"delete it (rm {renamed.template / 'ops.py'}), then generate again{left}")
    assert f"{renamed.template / 'ops.py'} is not part of the template: delete it (grader template never deletes a " \
           f"file){left}" in template_drift(renamed)
