"""Known mistakes and variants: each authoring slip is one line naming the file, the line, the mutation and the fix."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autograder.errors import AssignmentError
from autograder.spec.assignment import Assignment, load_assignment
from autograder.spec import mutation as mutation_module
from autograder.spec.mutation import apply_mutation, combined_problems, load_mutation, load_mutations

MISTAKE = '''[[mutation]]
id = "row_sums_over_columns"
task = "row_sums"
hint = "You summed each column."
file = "ops.py"
old = "x.sum(dim=-1)"
new = "x.sum(dim=0)"
'''
VARIANT = '''[[mutation]]
id = "scale_by_mul"
description = "torch.mul"
file = "ops.py"
old = "return x * factor"
new = "return torch.mul(x, factor)"
'''


@pytest.fixture
def mini(mini_course: Path) -> Assignment:
    """The mini fixture assignment in a temporary tree, one mistake (row_sums.toml) and one variant (scale.toml)."""
    (mini_course / "hidden" / "mistakes" / "row_sums.toml").write_text(MISTAKE)
    (mini_course / "hidden" / "variants").mkdir()
    (mini_course / "hidden" / "variants" / "scale.toml").write_text(VARIANT)
    return load_assignment("mini", root=mini_course.parent)


def _write(assignment: Assignment, which: str, text: str) -> Path:
    path = assignment.root / "hidden" / which / ("row_sums.toml" if which == "mistakes" else "scale.toml")
    path.write_text(text)
    return path


def _refused(assignment: Assignment, which: str) -> str:
    with pytest.raises(AssignmentError) as caught:
        load_mutations(assignment, which)
    assert "\n" not in str(caught.value)
    return str(caught.value)


def _all(assignment: Assignment) -> list[str]:
    return combined_problems(assignment.reference,
                             load_mutations(assignment, "mistakes") + load_mutations(assignment, "variants"))[0]


def test_the_fixture_loads_and_applies_cleanly(mini: Assignment) -> None:
    assert [m.id for m in load_mutations(mini, "mistakes")] == ["row_sums_over_columns"]
    assert _all(mini) == []


def test_a_stale_old_text_is_named_at_its_line_without_grading(mini: Assignment, tmp_path: Path) -> None:
    path = _write(mini, "mistakes", MISTAKE.replace('old = "x.sum(dim=-1)"', 'old = "x.sum(-1)"'))
    expected = (f"{path}:6: mutation 'row_sums_over_columns' is stale: its old text occurs 0 times in ops.py of "
                f"the reference (expected exactly once); copy it again from the reference")
    assert _all(mini) == [expected]
    with pytest.raises(AssignmentError, match=re.escape(expected)):  # the audit's row says the same, in full
        apply_mutation(mini.reference, load_mutations(mini, "mistakes")[0], tmp_path / "out")


def test_an_old_text_found_twice_asks_for_a_longer_one(mini: Assignment) -> None:
    _write(mini, "mistakes", MISTAKE.replace('old = "x.sum(dim=-1)"', 'old = "return x"'))
    [problem] = _all(mini)
    assert "occurs 2 times in ops.py" in problem and problem.endswith("lengthen it until it occurs once")


def test_a_misspelt_file_is_named_with_the_nearest_reference_file(mini: Assignment) -> None:
    path = _write(mini, "mistakes", MISTAKE.replace('file = "ops.py"', 'file = "osp.py"'))
    [problem] = _all(mini)
    assert problem.startswith(f"{path}:5: mutation 'row_sums_over_columns': file 'osp.py' is not in the reference ")
    assert problem.endswith("(did you mean 'ops.py'?)")


def test_a_misspelt_table_is_refused_with_the_known_one(mini: Assignment) -> None:
    path = _write(mini, "mistakes", MISTAKE.replace("[[mutation]]", "[[mutations]]"))
    assert _refused(mini, "mistakes") == f"{path}:1: unknown table [[mutations]] (did you mean 'mutation'?)"


def test_a_key_above_every_table_is_refused_at_its_line(mini: Assignment) -> None:
    path = _write(mini, "mistakes", 'task = "row_sums"\n' + MISTAKE)
    assert _refused(mini, "mistakes").startswith(f"{path}:1: unknown key 'task' above every table")


def test_an_unknown_key_of_an_edit_is_named_at_its_line(mini: Assignment) -> None:
    path = _write(mini, "mistakes", '[[mutation]]\nid = "m"\ntask = "row_sums"\n[[mutation.edits]]\n'
                                    'file = "ops.py"\nold = "x.sum(dim=-1)"\nnwe = "x.sum(dim=0)"\n')
    assert _refused(mini, "mistakes").startswith(
        f"{path}:7: unknown key 'nwe' in [[mutation.edits]] (did you mean 'new'?)")


def test_the_same_id_in_the_mistakes_and_the_variants_is_named_in_both(mini: Assignment) -> None:
    variants = _write(mini, "variants", VARIANT.replace('id = "scale_by_mul"', 'id = "row_sums_over_columns"'))
    mistakes = mini.root / "hidden" / "mistakes" / "row_sums.toml"
    assert _all(mini) == [f"{variants}:2: mutation id 'row_sums_over_columns' is already used at {mistakes}:2; give "
                          f"each mistake and variant its own id"]


def test_the_same_id_twice_in_one_folder_is_refused_at_both_lines(mini: Assignment) -> None:
    path = _write(mini, "mistakes", MISTAKE + "\n" + MISTAKE)
    assert _refused(mini, "mistakes") == (f"{path}:10: mutation id 'row_sums_over_columns' is already used at "
                                          f"{path}:2; give each mistake and variant its own id")


def test_a_variant_with_a_task_is_refused(mini: Assignment) -> None:
    path = _write(mini, "variants", VARIANT.replace('id = "scale_by_mul"\n', 'id = "scale_by_mul"\ntask = "scale"\n'))
    assert _refused(mini, "variants").startswith(
        f"{path}:3: variant 'scale_by_mul' has task = 'scale', but a variant must keep full marks in every task: "
        f"remove task, or move it to hidden/mistakes/")


def test_a_misspelt_task_is_named_at_its_line_with_the_nearest_task(mini: Assignment) -> None:
    path = _write(mini, "mistakes", MISTAKE.replace('task = "row_sums"', 'task = "row_sum"'))
    assert _refused(mini, "mistakes") == (f"{path}:3: mistake 'row_sums_over_columns' names unknown task "
                                          f"'row_sum' (did you mean 'row_sums'?)")
    assert load_mutations(mini, "mistakes", present_tasks_only=True) == []  # a grader of some tasks drops it


def test_a_mistake_without_a_task_is_refused(mini: Assignment) -> None:
    path = _write(mini, "mistakes", MISTAKE.replace('task = "row_sums"\n', ""))
    assert _refused(mini, "mistakes") == (f"{path}:1: mistake 'row_sums_over_columns' needs task = the task that "
                                          f"must lose points (one of: row_sums, scale)")


def test_a_wrong_type_or_a_missing_id_is_one_line(mini: Assignment) -> None:
    path = _write(mini, "mistakes", MISTAKE.replace('old = "x.sum(dim=-1)"', "old = 3"))
    assert _refused(mini, "mistakes") == f"{path}:6: old must be a string, not int 3"
    _write(mini, "mistakes", MISTAKE.replace('id = "row_sums_over_columns"\n', ""))
    assert _refused(mini, "mistakes").startswith(f"{path}:1: [[mutation]] needs the key 'id'")


def test_a_grader_meeting_several_slips_names_the_first_and_counts_the_others(mini: Assignment) -> None:
    path = _write(mini, "mistakes", MISTAKE.replace('old = "x.sum(dim=-1)"', "old = 3") + "\n"
                  + MISTAKE.replace('"row_sums_over_columns"', '"second"').replace('task = "row_sums"', 'task = "x"'))
    assert _refused(mini, "mistakes") == (f"{path}:6: old must be a string, not int 3 (and 1 more: "
                                          f"`grader verify mini` lists each)")


def test_an_edit_that_leaves_a_syntax_error_is_named_without_grading(mini: Assignment) -> None:
    """A "mistake" whose new text is not Python is caught by the import, never by a check (its hint is never
    shown), and a variant with one cannot keep its marks: verify says so, by text only."""
    path = _write(mini, "mistakes", MISTAKE.replace('new = "x.sum(dim=0)"', 'new = "x.sum(dim=0"'))
    [problem] = _all(mini)
    assert problem.startswith(f"{path}:2: mutation 'row_sums_over_columns' leaves ops.py with a syntax error at line ")
    assert problem.endswith("a mistake or variant is code a student could run: fix its new text")



# Valid Python that fails when imported: each a module-level line put in front of row_sums, and what it raises.
IMPORT_FAILURES = {
    "an undefined name": ("AXIS = first_axis()", "NameError: name 'first_axis' is not defined"),
    "a module that does not exist": ("import tourch", "ModuleNotFoundError: No module named 'tourch'"),
    "an exception": ("raise ValueError('no axis')", "ValueError: no axis"),
}


@pytest.mark.parametrize("failure", sorted(IMPORT_FAILURES))
def test_a_mutation_that_does_not_import_is_one_line_with_its_file_line_and_exception(mini: Assignment,
                                                                                       tmp_path: Path,
                                                                                       failure: str) -> None:
    """What the judge and `grader verify` both run (load_mutation): the mutation's own line, the mutated file's
    line that raised, the exception's type and message."""
    line, says = IMPORT_FAILURES[failure]
    path = _write(mini, "mistakes", MISTAKE.replace('old = "x.sum(dim=-1)"', 'old = "def row_sums"').replace(
        'new = "x.sum(dim=0)"', f'new = "{line}\\n\\ndef row_sums"'))
    mistake = load_mutations(mini, "mistakes")[0]
    problems, edited = combined_problems(mini.reference, [mistake])
    assert problems == [] and [m.id for m, _ in edited] == ["row_sums_over_columns"]  # text alone cannot tell
    folder = apply_mutation(mini.reference, mistake, tmp_path / "out")
    raised_at = (folder / "ops.py").read_text().splitlines().index(line) + 1
    with pytest.raises(AssignmentError) as caught:
        load_mutation(folder, mistake, f"_test_mutation_{failure.replace(' ', '_')}", mini.modules)
    assert str(caught.value) == (f"{path}:2: mutation 'row_sums_over_columns' does not import: ops.py, line "
                                 f"{raised_at}: {says}; a mistake or variant is code a student could run: fix its "
                                 f"new text")


def test_each_edit_is_made_once_and_the_edited_texts_come_back(mini: Assignment,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """combined_problems applies each mutation once (it applied each twice: once to see it applies, again to
    parse it) and returns what it made, so that importing the mutations needs no third pass."""
    made: list[str] = []
    original = mutation_module.edited_texts

    def counting(reference: Path, mutation: mutation_module.Mutation) -> dict[str, str]:
        made.append(mutation.id)
        return original(reference, mutation)

    monkeypatch.setattr(mutation_module, "edited_texts", counting)
    mutations = load_mutations(mini, "mistakes") + load_mutations(mini, "variants")
    problems, edited = combined_problems(mini.reference, mutations)
    assert problems == [] and made == ["row_sums_over_columns", "scale_by_mul"]
    assert [(m.id, texts["ops.py"].count("x.sum(dim=0)")) for m, texts in edited] == \
        [("row_sums_over_columns", 1), ("scale_by_mul", 0)]
