"""`grader verify` lints authoring: each mistake an instructor can make is one line naming the file and the fix."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.authoring.verify import check_authoring
from autograder.cli import main
from autograder.errors import AssignmentError
from autograder.probe.checks import task_checks
from autograder.spec.assignment import Assignment, load_assignment


def _edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, count))


def _problems(assignment: Assignment) -> list[str]:
    reloaded = load_assignment(assignment.name, root=assignment.root.parent)
    finding = check_authoring(reloaded)
    assert not finding.ok
    assert all("\n" not in line for line in finding.details)
    return finding.details


def test_the_real_assignments_lint_clean():
    from autograder.spec.assignment import available_assignments

    for name in available_assignments():
        assert check_authoring(load_assignment(name)).ok, name


def test_a_check_bound_to_a_misspelt_task_is_named_with_the_near_miss(assignment_copy):
    checks = assignment_copy.root / "hidden" / "checks" / "causal_mask.py"
    _edit(checks, '@check("causal_mask", weight=2', '@check("causal_masks", weight=2')
    [problem] = _problems(assignment_copy)
    assert re.fullmatch(rf"{re.escape(str(checks))}:\d+: @check\('causal_masks'\) names no task of the assignment "
                        r"\(the check would never run\): causal_masks — did you mean causal_mask\?", problem), problem
    # the grader loads checks through the same function: it refuses the file instead of dropping the check
    with pytest.raises(AssignmentError, match="did you mean causal_mask"):
        task_checks(checks, "causal_mask", assignment_copy.task_ids)


def test_a_checks_file_that_fails_to_import_is_one_line_with_its_line(assignment_copy):
    checks = assignment_copy.root / "hidden" / "checks" / "head_split.py"
    _edit(checks, "import torch\n", "import torch\nimport tourch\n")
    [problem] = _problems(assignment_copy)
    line = checks.read_text().splitlines().index("import tourch") + 1
    assert problem == f"{checks}:{line}: ModuleNotFoundError: No module named 'tourch'"


def test_a_checks_file_with_a_syntax_error_is_one_line(assignment_copy):
    checks = assignment_copy.root / "hidden" / "checks" / "head_split.py"
    _edit(checks, "import torch\n", "import torch\ndef broken(:\n")
    [problem] = _problems(assignment_copy)
    assert problem.startswith(f"{checks}:") and "SyntaxError" in problem


def test_a_misspelt_check_visibility_name_is_named_with_the_near_miss(assignment_copy):
    """A check_visibility name that is no check of its task would leave that check shown with its task (a
    "hidden" check visible on Gradescope)."""
    manifest = assignment_copy.root / "assignment.toml"
    _edit(manifest, 'checks = "hidden/checks/kv_cache_bytes.py"\n',
          'checks = "hidden/checks/kv_cache_bytes.py"\ncheck_visibility = { "kv_cache_bytes.all_factor" = "hidden" }\n')
    [problem] = _problems(assignment_copy)
    line = manifest.read_text().splitlines().index('check_visibility = { "kv_cache_bytes.all_factor" = "hidden" }') + 1
    assert problem == (f"{manifest}:{line}: task 'kv_cache_bytes' check_visibility names 'kv_cache_bytes.all_factor', "
                       f"which is not a check of the task (it would be shown with its task) — did you mean "
                       f"kv_cache_bytes.all_factors?")
    _edit(manifest, '"kv_cache_bytes.all_factor"', '"kv_cache_bytes.all_factors"')
    assert check_authoring(load_assignment("assignment3", root=manifest.parents[1])).ok


KNOWN = "(known: float32, deep, exact, angles)"


def test_an_unknown_tolerance_of_a_check_is_named(assignment_copy):
    checks = assignment_copy.root / "hidden" / "checks" / "causal_mask.py"
    _edit(checks, 'tolerance="exact"', 'tolerance="exactly"')
    [problem] = _problems(assignment_copy)
    line = checks.read_text().splitlines().index('@check("causal_mask", weight=2, tolerance="exactly",') + 1
    assert problem == (f"{checks}:{line}: check(tolerance='exactly'): unknown tolerance 'exactly' — did you mean "
                       f"exact? {KNOWN}")
    with pytest.raises(AssignmentError, match="did you mean exact"):  # the grader refuses the file the same way
        task_checks(checks, "causal_mask", assignment_copy.task_ids)


# Each form in which a checks file can give a tolerance name to the probe API other than @check(tolerance=...);
# the line holding the name is marked ``# <-``.
TOLERANCE_FORMS = {
    "gated keyword": ('from autograder.probe import gated\n'
                      'late = gated(what="causal_mask",\n'
                      '             tolerance="flaot32")  # <-\n', "gated"),
    "gated aliased": ('from autograder.probe import gated as gate_on\n'
                      'late = gate_on(what="causal_mask", tolerance="flaot32")  # <-\n', "gated"),
    "through the module": ('import autograder.probe as probe\n'
                           'late = probe.gated(what="causal_mask", tolerance="flaot32")  # <-\n', "gated"),
    "a module constant": ('from autograder.probe import gated\nLOOSE = "flaot32"\n'
                          'late = gated(what="causal_mask", tolerance=LOOSE)  # <-\n', "gated"),
    "same_as_fresh positional": ('from autograder.probe import same_as_fresh\n'
                                 'again = same_as_fresh("causal_mask", "flaot32")  # <-\n', "same_as_fresh"),
    "gate_failures in a verifier": ('from autograder.probe import gate_failures\n'
                                    'def _property(student, reference, ctx):\n'
                                    '    yield from gate_failures(student, reference, "causal_mask", "flaot32")  # <-\n',
                                    "gate_failures"),
}


@pytest.mark.parametrize("form", list(TOLERANCE_FORMS))
def test_an_unknown_tolerance_is_named_in_every_form_the_probe_api_takes(assignment_copy, form):
    source, function = TOLERANCE_FORMS[form]
    checks = assignment_copy.root / "hidden" / "checks" / "causal_mask.py"
    checks.write_text(checks.read_text() + "\n" + source)
    [problem] = _problems(assignment_copy)
    line = next(n for n, text in enumerate(checks.read_text().splitlines(), 1) if text.endswith("# <-"))
    assert problem == (f"{checks}:{line}: {function}(tolerance='flaot32'): unknown tolerance 'flaot32' — did you "
                       f"mean float32? {KNOWN}")


def test_a_function_of_the_same_name_outside_the_probe_api_is_not_read(tmp_path):
    from autograder.probe.tolerances import given_tolerances

    source = tmp_path / "checks.py"
    source.write_text('from autograder import probe as p\n'
                      'def gated(*, tolerance):\n    return tolerance\n'
                      'gated(tolerance="mine")\n'
                      'p.gated(what="x", tolerance="theirs")\n')
    assert [(given.line, given.function, given.name) for given in given_tolerances(source)] == [(5, "gated", "theirs")]


def test_an_unknown_tolerance_in_a_shared_helper_is_named_once_at_the_helper(assignment_copy):
    folder = assignment_copy.root / "hidden" / "checks"
    helper = folder / "_loose.py"
    helper.write_text('from autograder.probe import gated\n\nLOOSE = gated(what="x", tolerance="deeep")\n')
    for name in ("causal_mask", "head_split"):
        _edit(folder / f"{name}.py", "import torch\n", "import torch\nfrom _loose import LOOSE\n")
    assert _problems(assignment_copy) == [f"{helper}:3: gated(tolerance='deeep'): unknown tolerance 'deeep' — "
                                          f"did you mean deep? {KNOWN}"]


def test_a_tolerance_name_computed_at_run_time_is_refused_with_the_same_sentence():
    from autograder.judge.compare import TOLERANCES
    from autograder.probe import gate_failures
    from autograder.probe.tolerances import tolerance_parameters

    computed = "".join(["flo", "at"])  # noqa: FLY002 - no source spells it out: grading looks it up
    with pytest.raises(AssignmentError) as refused:
        gate_failures({}, {}, "causal_mask", computed)
    assert str(refused.value) == f"unknown tolerance 'float' — did you mean float32? {KNOWN}"
    assert list(TOLERANCES) == ["float32", "deep", "exact", "angles"]
    # every function of the probe API that takes a tolerance name is one the lint reads
    assert set(tolerance_parameters()) == {"check", "gated", "same_as_fresh", "gate_failures"}


@pytest.mark.parametrize("key, old, new, fix", [
    ("functions", '"attention.split_heads", "attention.merge_heads"]',
     '"attention.split_head", "attention.merge_heads"]', "did you mean attention.split_heads?"),
    ("uses", 'uses = ["attention.MultiHeadAttention"]', 'uses = ["attention.MultiHeadAttn"]',
     "did you mean attention.MultiHeadAttention?"),
])
def test_a_manifest_name_missing_from_the_reference_is_named(assignment_copy, key, old, new, fix):
    manifest = assignment_copy.root / "assignment.toml"
    _edit(manifest, old, new)
    problems = [p for p in _problems(assignment_copy) if "is not defined in the reference" in p]
    assert len(problems) == 1 and problems[0].startswith(f"{manifest}:") and f" {key}: " in problems[0]
    assert problems[0].endswith(fix)


def test_a_mutation_with_both_forms_is_refused(assignment_copy):
    mistakes = assignment_copy.root / "hidden" / "mistakes" / "attention_family.toml"
    _edit(mistakes, 'new = "return torch.triu(torch.ones(n, n), diagonal=1)"\n',
          'new = "return torch.triu(torch.ones(n, n), diagonal=1)"\n[[mutation.edits]]\nfile = "attention.py"\n'
          'old = "x"\nnew = "y"\n')
    [problem] = _problems(assignment_copy)
    assert re.fullmatch(rf"{re.escape(str(mistakes))}:\d+: mutation 'causal_mask_float' has both file/old/new and "
                        r"\[\[mutation.edits\]\]; keep one form .*", problem), problem


def test_too_few_mutations_for_the_audit_minimums(assignment_copy):
    manifest = assignment_copy.root / "assignment.toml"
    manifest.write_text(manifest.read_text() + "\n[audit]\nmin_mistakes = 500\nmin_variants = 500\n"
                        "min_right_hints = 500\n")  # only the audit can count right hints: verify leaves it
    problems = _problems(assignment_copy)
    # counted by hand from the files (every [[mutation]] entry), not by the loader under test
    mistakes, variants = (sum(path.read_text().count("[[mutation]]") for path in
                              (assignment_copy.root / "hidden" / which).glob("*.toml"))
                          for which in ("mistakes", "variants"))
    assert [p.split(": ", 1)[1] for p in problems] == [
        f"{mistakes} mistakes, [audit] min_mistakes asks for at least 500; add more, or lower [audit] min_mistakes in "
        f"assignment.toml",
        f"{variants} variants, [audit] min_variants asks for at least 500; add more, or lower [audit] min_variants in "
        f"assignment.toml"]
    assert mistakes >= 15 and variants >= 5


def test_an_unbalanced_quiz_key_is_refused_unless_the_manifest_allows_it(assignment_copy):
    key = assignment_copy.root / "hidden" / "quiz_key.toml"
    text = key.read_text()
    key.write_text(re.sub(r'answer = "[abd]"', 'answer = "c"', text, count=3))
    [problem] = _problems(assignment_copy)
    assert problem.startswith(f"{key}: the key is unbalanced (") and "balanced_key = false" in problem
    manifest = assignment_copy.root / "assignment.toml"
    manifest.write_text(manifest.read_text() + "\n[audit]\nbalanced_key = false\n")
    assert check_authoring(load_assignment("assignment3", root=assignment_copy.root.parent)).ok


def test_verify_prints_the_problem_and_grades_nothing(assignment_copy):
    checks = assignment_copy.root / "hidden" / "checks" / "causal_mask.py"
    _edit(checks, '@check("causal_mask", weight=2', '@check("causal_masks", weight=2')
    result = CliRunner().invoke(main, ["verify", "assignment3"],
                                env={"GRADER_ASSIGNMENTS": str(assignment_copy.root.parent)})
    assert result.exit_code == 1, result.output
    assert "FAIL  authoring" in result.output and "did you mean causal_mask?" in result.output
    assert "not graded: fix the authoring problems first" in result.output
    assert "Traceback" not in result.output


def test_a_figure_file_that_show_and_release_refuse_is_an_authoring_problem(assignment_copy):
    figures = assignment_copy.root / "figures" / "attention.py"
    _edit(figures, 'tasks=("attention", "causal_mask")', 'tasks=("atention", "causal_mask")')
    [problem] = _problems(assignment_copy)  # verify said "ready to release", then release stopped on this line
    assert re.fullmatch(r"figures/attention\.py:\d+: probe six_tokens names unknown tasks \['atention'\] \(the tasks "
                        r"of assignment3: causal_mask, .*, tiny_gpt_training\) — did you mean attention\?", problem), problem
    assert "quiz" not in problem  # a probe calls code: the quiz is no task it could name


def test_a_figure_file_that_does_not_load_is_an_authoring_problem(assignment_copy):
    figures = assignment_copy.root / "figures" / "positions.py"
    _edit(figures, "import torch\n", "import torch\nimport tourch\n")
    [problem] = _problems(assignment_copy)
    assert problem == ("figure file figures/positions.py cannot be loaded (ModuleNotFoundError: No module named "
                       "'tourch')")


# -- files and folders the manifest names ----------------------------------------------------------------


def _line_of(path: Path, text: str) -> int:
    return path.read_text().splitlines().index(text) + 1


def test_a_misnamed_public_tests_folder_names_the_key_and_the_path(assignment_copy):
    manifest = assignment_copy.root / "assignment.toml"
    _edit(manifest, "[assignment]\n", '[assignment]\npublic_tests = "public_test"\n')
    line = _line_of(manifest, 'public_tests = "public_test"')
    assert _problems(assignment_copy) == [
        f"{manifest}:{line}: [assignment] public_tests names the folder 'public_test', which does not exist"]


def test_a_removed_public_tests_folder_names_the_default(assignment_copy):
    shutil.rmtree(assignment_copy.public_tests)
    assert _problems(assignment_copy) == [
        f"{assignment_copy.root / 'assignment.toml'}: [assignment] public_tests names the folder 'public_tests', "
        f"which does not exist (the default: public_tests is not set)"]


def test_a_misspelt_checks_path_names_the_key_not_the_installation(assignment_copy):
    manifest = assignment_copy.root / "assignment.toml"
    _edit(manifest, 'checks = "hidden/checks/causal_mask.py"', 'checks = "hidden/checks/causal_masks.py"')
    line = _line_of(manifest, 'checks = "hidden/checks/causal_masks.py"')
    # one line, not also "hidden checks ... are not part of this installation"
    assert _problems(assignment_copy) == [
        f"{manifest}:{line}: [[tasks]] checks names 'hidden/checks/causal_masks.py', which does not exist"]


def test_misspelt_quiz_paths_name_their_keys(assignment_copy):
    manifest = assignment_copy.root / "assignment.toml"
    _edit(manifest, 'questions = "quiz.toml"', 'questions = "quizz.toml"')
    _edit(manifest, 'key = "hidden/quiz_key.toml"', 'key = "hidden/quizkey.toml"')
    questions, key = _line_of(manifest, 'questions = "quizz.toml"'), _line_of(manifest, 'key = "hidden/quizkey.toml"')
    assert _problems(assignment_copy) == [
        f"{manifest}:{questions}: [quiz] questions names 'quizz.toml', which does not exist",
        f"{manifest}:{key}: [quiz] key names 'hidden/quizkey.toml', which does not exist"]


# -- public tests ----------------------------------------------------------------------------------------


def test_a_public_test_tagged_with_a_misspelt_task_is_named_with_the_known_ids(assignment_copy):
    test_file = assignment_copy.public_tests / "test_attention.py"
    _edit(test_file, '@pytest.mark.task("attention")', '@pytest.mark.task("atention")')
    known = ", ".join(task.id for task in assignment_copy.tasks)
    line = _line_of(test_file, '@pytest.mark.task("atention")')
    assert _problems(assignment_copy) == [
        f"{test_file}:{line}: @pytest.mark.task('atention') "
        f"names no task of the assignment (grader check does not run the test and reports it failed): atention — "
        f"did you mean attention? (tasks: {known})"]


def test_every_form_of_a_task_marker_is_read(assignment_copy):
    test_file = assignment_copy.public_tests / "test_extra.py"
    test_file.write_text("import pytest\nfrom pytest import mark\n\npytestmark = pytest.mark.task('nope')\n\n\n"
                         "class TestX:\n    pytestmark = [mark.task('zzz')]\n\n    def test_a(self):\n        pass\n")
    problems = _problems(assignment_copy)
    assert [problem.split(": @")[0] for problem in problems] == [f"{test_file}:4", f"{test_file}:8"]
    assert "tasks: causal_mask, attention" in problems[1] and "did you mean" not in problems[1]


def test_a_public_test_file_that_does_not_parse_is_one_line(assignment_copy):
    test_file = assignment_copy.public_tests / "test_attention.py"
    _edit(test_file, "import pytest\n", "import pytest\ndef broken(:\n")
    [problem] = _problems(assignment_copy)
    assert problem.startswith(f"{test_file}:") and "SyntaxError" in problem


def test_every_slip_of_a_mutation_file_is_one_line_at_its_line_in_file_order(assignment_copy):
    """Not only the first: a file with three slipped entries gets three lines, each at its own line, and the other
    files' mutations are still read (a stale one among them is named too)."""
    mistakes = assignment_copy.root / "hidden" / "mistakes" / "attention_family.toml"
    text = mistakes.read_text().replace('task = "causal_mask"', 'task = "causal_msk"', 1)  # the first entry
    text = text.replace('id = "causal_mask_int"\n', 'id = "causal_mask_int"\nhnt = "typo"\n')  # the second
    third = text.index('id = "causal_mask_lower"')
    text = text[:third] + text[third:].replace(
        'old = "return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)"', "old = 3", 1)
    mistakes.write_text(text)
    other = assignment_copy.root / "hidden" / "mistakes" / "positions_kv_gpt.toml"
    text = other.read_text()
    first_old = re.search(r'^old = "(.+)"$', text, re.M).group(1)
    _edit(other, f'old = "{first_old}"', f'old = "{first_old} # gone stale"')
    problems = _problems(assignment_copy)
    lines = [p for p in problems if p.startswith(f"{mistakes}:")]
    says = ["mistake 'causal_mask_float' names unknown task 'causal_msk'", "unknown key 'hnt' in [[mutation]]",
            "old must be a string, not int 3"]
    assert [next(s for s in says if s in line) for line in lines] == says
    numbers = [int(line.split(":")[1]) for line in lines]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(lines)
    assert any(p.startswith(f"{other}:") and "is stale" in p for p in problems), problems
    assert not any("min_mistakes" in p for p in problems)  # an entry that does not load is not one too few
