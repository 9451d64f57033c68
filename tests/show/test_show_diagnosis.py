"""One diagnosis: ``grader show`` names a cause only by the judge's known mistakes, and never one grading does not."""

from __future__ import annotations

import ast
import dataclasses
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from autograder.authoring.release import student_grader_modules
from autograder.cli import main
from autograder.errors import AssignmentError
from autograder.judge.verdict import Judge, unambiguous_mistake
from autograder.probe import derive_seed
from autograder.reports.results import ERROR, FAILED, CheckResult
from autograder.show.catalog import load_catalog
from autograder.show.diagnose import Diagnoser
from autograder.show.render import DIAGNOSIS_MODULE, grading_diagnoser
from autograder.spec.assignment import load_assignment
from autograder.spec.mutation import diagnosable_mistakes, load_mutations
from autograder.util.paths import PACKAGE_DIR
from tests.assignments.in_process import InProcess

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENTS = sorted(p.name for p in (REPO / "assignments").iterdir() if (p / "figures").is_dir())


# -- the shape: one writer of a cause, none in the student release (no circle: tests/test_import_graph.py) ------


def _writes_of_a_cause(path: Path) -> list[int]:
    """Lines of ``path`` that set a panel's diagnosis (an attribute store or a ``diagnosis=`` keyword)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr == "diagnosis" and isinstance(node.ctx, ast.Store)
            or isinstance(node, ast.keyword) and node.arg == "diagnosis"]


def test_only_the_judges_diagnosis_sets_a_cause():
    files = sorted(PACKAGE_DIR.rglob("*.py")) + sorted((REPO / "assignments").glob("*/figures/*.py"))
    about_panels = [path for path in files if "panel" in path.read_text(encoding="utf-8").lower()]
    writers = {path.relative_to(REPO).as_posix() for path in about_panels if _writes_of_a_cause(path)}
    assert writers == {"autograder/show/diagnose.py"}
    # ... which takes the text from the mistake the judge names, and from nowhere else
    source = (PACKAGE_DIR / "show" / "diagnose.py").read_text(encoding="utf-8")
    assert re.findall(r"panel\.diagnosis = (.+)", source) == ["found.hint"]
    assert "found = unambiguous_mistake(" in source


def test_the_student_release_cannot_name_a_cause(tmp_path, monkeypatch):
    shipped = {p.relative_to(PACKAGE_DIR).as_posix() for p in student_grader_modules(figures=True)}
    assert "show/render.py" in shipped
    assert not {"show/diagnose.py", "judge/verdict.py", "spec/mutation.py", "spec/reference.py"} & shipped
    a3 = load_assignment("assignment3")
    catalog = load_catalog(a3)
    assert isinstance(grading_diagnoser(a3, catalog), Diagnoser)  # the instructor's copy
    monkeypatch.setitem(sys.modules, DIAGNOSIS_MODULE, None)  # as in the release: the module is not there
    assert grading_diagnoser(a3, catalog) is None
    monkeypatch.delitem(sys.modules, DIAGNOSIS_MODULE)
    public = tmp_path / "assignments" / "assignment3"  # the module is there but the known mistakes are not
    public.mkdir(parents=True)
    for item in a3.root.iterdir():
        if item.name != "hidden":
            (public / item.name).symlink_to(item)
    assert grading_diagnoser(load_assignment("assignment3", tmp_path / "assignments"), catalog) is None


@pytest.mark.parametrize("keyword", ["tasks", "reaches"])
def test_a_probe_naming_an_unknown_task_is_refused_in_one_line(tmp_path, keyword):
    a3 = load_assignment("assignment3")
    root = tmp_path / "assignments" / "typo"
    (root / "figures").mkdir(parents=True)
    (root / "assignment.toml").write_text((a3.root / "assignment.toml").read_text().split("[figures]")[0]
                                          + '[figures]\nfiles = ["figures/one.py"]\n')
    (root / "figures" / "one.py").write_text(
        "from autograder.show.figures import figure, probe\n\n"
        "@probe(" + keyword + "=('atention',))\ndef weights(impl, ctx):\n    return {}\n\n"
        "@figure(weights, 'Weights', caption='c')\ndef drawing(data, fig, notes):\n    pass\n")
    with pytest.raises(AssignmentError, match=r"probe weights names unknown tasks \['atention'\]"):
        load_catalog(load_assignment("typo", tmp_path / "assignments"))


# -- every known mistake: what show would name never contradicts grading's hint ---------------------------------


def _outputs(judge: Judge, check, seed: int, package) -> dict | None:
    """A probe's outputs on trusted code run here (None if it raises: a mistake that cannot run there)."""
    try:
        with np.errstate(all="ignore"):
            return judge.run_reference_probe(check, seed, package)
    except Exception:  # noqa: BLE001 - the probe failing on this code gives no outputs to compare
        return None


def _grading_hint(judge: Judge, checks, seed_of, package) -> str:
    """The hint `grader grade` shows for this code's task: the first failing check's that has one (the audit's)."""
    for check in checks:
        seed = seed_of(check)
        actual = _outputs(judge, check, seed, package)
        if actual is None:
            continue  # an exception in the code under test: failed, no hint
        result = judge.judge(check, seed, actual, CheckResult(check.name, check.description, check.weight, ERROR))
        if result.status == FAILED and result.hint:
            return result.hint
    return ""


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_show_names_no_mistake_that_grading_does_not(name, tmp_path):
    """For every known mistake, the figures' probes run here on its code; what the judge's diagnosis would name
    under a figure (any figure, ✗ or not: a superset of what show asks) is grading's own hint for that code."""
    assignment = load_assignment(name)
    catalog = load_catalog(assignment)
    diagnoser = Diagnoser(assignment, catalog)
    here = InProcess(assignment, f"diagnosis_{name}")
    assets = {p.name: p.read_bytes() for p in sorted((assignment.root / "hidden" / "assets").glob("*"))}
    judge = Judge(assignment, here.reference, assets, diagnosable_mistakes(assignment)[0], tmp_path / "judge")
    probes = [probe for file in catalog.files for probe in file.probes if diagnoser.candidates(probe)]
    assert probes, f"{name}: no figure names a cause"

    def seed_of(check):
        return derive_seed(assignment.seed, check.name)

    mistakes = load_mutations(assignment, "mistakes")
    packages = {m.id: here.package(m, tmp_path) for m in mistakes}
    outputs = {(m.id, p.name): _outputs(judge, p.__check__, seed_of(p.__check__), packages[m.id])
               for m in mistakes for p in probes}
    expected = {p.name: _outputs(judge, p.__check__, seed_of(p.__check__), here.reference) for p in probes}
    named, contradictions = 0, []
    for mistake in mistakes:
        for probe in probes:
            actual = outputs[(mistake.id, probe.name)]
            if actual is None:
                continue
            found = unambiguous_mistake(actual, expected[probe.name],
                                        [(m, outputs[(m.id, probe.name)]) for m in diagnoser.candidates(probe)],
                                        probe.__check__.tolerance)
            if found is None:
                continue
            named += 1
            hint = _grading_hint(judge, here.checks(mistake.task), seed_of, packages[mistake.id])
            if hint != found.hint:
                contradictions.append(f"{mistake.id} on {probe.name}: show names {found.id!r}, grading says "
                                      f"{hint[:60]!r}")
    assert not contradictions, "\n".join(contradictions)
    assert named, f"{name}: no known mistake is named by any figure: the comparison would prove nothing"


# -- the real surfaces: `grader show` and `grader grade` on the bundled partial submission ------------------------


@pytest.mark.slow
def test_partial_submission_gets_no_false_check_mark_and_grading_s_own_diagnosis(tmp_path):
    """examples/partial_submission divides the scores by sqrt(heads · d_k): its figure must not tick the
    docstring's formula, and the cause it names is the one `grader grade` gives for the attention task."""
    work = REPO / "examples" / "partial_submission"
    shown = CliRunner().invoke(main, ["show", "assignment3", str(work), "--out", str(tmp_path / "figures")])
    assert shown.exit_code == 0, shown.output
    page = (tmp_path / "figures" / "index.html").read_text(encoding="utf-8")
    section = html.unescape(re.search(r'<section id="attention_weights">(.*?)</section>', page, re.S).group(1))
    scale = [line for line in re.findall(r'<li class="(\w+)">(.*?)</li>', section) if "√d_k" in line[1]]
    assert [kind for kind, _ in scale] == ["bad"] and not scale[0][1].startswith("✓"), scale
    diagnosis = re.findall(r'<li class="diagnosis">→ Diagnosis: (.*?)</li>', section)
    graded = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", "assignment3", str(work),
                             "--task", "attention", "--format", "json"], capture_output=True, text=True,
                            timeout=600, check=False, cwd=tempfile.gettempdir())
    assert graded.returncode == 0, graded.stderr
    task = next(t for t in json.loads(graded.stdout)["tasks"] if t["id"] == "attention")
    hints = [c["hint"] for c in task["checks"] if c.get("hint")]
    assert hints and diagnosis == [hints[0]], (diagnosis, hints)


def test_every_view_lists_the_diagnosis_after_the_notes_escaped(tmp_path):
    from autograder.show.draw import draw_panel
    from autograder.show.inline import Shown
    from autograder.show.outcome import ProbeResult, RunOutcome
    from autograder.show.page import PageInfo, render_page
    from autograder.show.render import Rendered

    figure = load_catalog(load_assignment("assignment3")).figures[0]
    drawn = draw_panel(figure, ProbeResult("ok", outputs={}), tmp_path)
    panel = dataclasses.replace(drawn, diagnosis="Your <mask> is applied after the softmax.")
    assert panel.lines()[:-1] == drawn.notes == drawn.lines()
    line = "→ Diagnosis: Your &lt;mask&gt; is applied after the softmax."
    page = render_page(PageInfo(assignment="assignment3", title="t", source="s", isolation="uid"), [panel], {})
    assert f'<li class="diagnosis">{line}</li>' in page
    rendered = Rendered(folder=tmp_path, page=tmp_path / "index.html", panels=[panel], outcome=RunOutcome(probes={}))
    assert line in Shown.of(rendered)._repr_html_()


def test_a_stale_known_mistake_is_left_out_of_the_figures_diagnosis_as_grading_leaves_it_out(tmp_path):
    """A mistake whose ``old`` text is gone from the reference is not applied (which would stop the instructor's
    page with an error): the figures' diagnosis reads the same list of mistakes grading does."""
    a3 = load_assignment("assignment3")
    root = tmp_path / "assignments" / "assignment3"
    shutil.copytree(a3.root, root, ignore=shutil.ignore_patterns("__pycache__"))
    for source in (root / "hidden" / "mistakes").glob("*.toml"):
        text = source.read_text(encoding="utf-8")
        source.write_text(text.replace('old = "return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)"',
                                       'old = "return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=7)"',
                                       1), encoding="utf-8")
    (tmp_path / "reference_solutions").symlink_to(a3.reference.parent)
    copy = load_assignment("assignment3", tmp_path / "assignments")
    assert copy.reference.resolve() == a3.reference.resolve()
    sound, stale_lines = diagnosable_mistakes(copy)
    assert "causal_mask_float" not in {m.id for m in sound} and len(stale_lines) == 1
    diagnoser = Diagnoser.where_material(copy, load_catalog(copy))
    assert diagnoser is not None
    assert [m.id for m in diagnoser.mistakes] == [m.id for m in sound]


IMPORT_FAILING = '''
[[mutation]]
id = "causal_mask_diagonal_from_a_helper"
task = "causal_mask"
hint = "Your mask's diagonal comes from a helper."

[[mutation.edits]]
file = "attention.py"
old = "import math\\n"
new = "import math\\n\\nDIAGONAL = first_diagonal()\\n"

[[mutation.edits]]
file = "attention.py"
old = "return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)"
new = "return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=DIAGONAL)"
'''


@pytest.mark.slow
def test_a_known_mistake_that_does_not_import_is_left_out_of_the_figures_diagnosis_and_said_once(tmp_path):
    """Run in the sandbox, a mistake whose package raises when imported gave no outputs, and show skipped it without
    a word. It is tried as the judge tries it (spec/mutation.py:load_mutation), left out, and `grader show` says
    the line `grader grade` says of it, once, on stderr; the other mistakes still name the cause."""
    a3 = load_assignment("assignment3")
    root = tmp_path / "assignments" / "assignment3"
    shutil.copytree(a3.root, root, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "reference_solutions").symlink_to(a3.reference.parent)
    mistakes = root / "hidden" / "mistakes" / "attention_family.toml"
    mistakes.write_text(mistakes.read_text(encoding="utf-8") + IMPORT_FAILING, encoding="utf-8")
    line = mistakes.read_text().splitlines().index('id = "causal_mask_diagonal_from_a_helper"') + 1
    work = tmp_path / "work" / "assignment3"
    shutil.copytree(a3.reference, work, ignore=shutil.ignore_patterns("__pycache__"))
    attention = work / "attention.py"
    scaled = "scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])"
    assert attention.read_text().count(scaled) == 1
    attention.write_text(attention.read_text().replace(  # the known mistake attention_scale_by_d_model
        scaled, "scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[1] * q.shape[-1])"))
    env = {**os.environ, "GRADER_ASSIGNMENTS": str(tmp_path / "assignments")}
    shown = subprocess.run([sys.executable, "-m", "autograder.cli", "show", "assignment3", str(work), "--out",
                            str(tmp_path / "figures"), "--no-expected"], capture_output=True, text=True,
                           timeout=900, env=env)
    assert shown.returncode == 0, shown.stderr
    assert shown.stderr.splitlines() == [
        f"warning: {mistakes}:{line}: mutation 'causal_mask_diagonal_from_a_helper' does not import: attention.py, "
        f"line 5: NameError: name 'first_diagonal' is not defined; a mistake or variant is code a student could "
        f"run: fix its new text; until then no student is told this mistake's hint (`grader verify assignment3` "
        f"refuses it)"], shown.stderr
    page = html.unescape((tmp_path / "figures" / "index.html").read_text(encoding="utf-8"))
    hint = next(m.hint for m in load_mutations(load_assignment("assignment3", tmp_path / "assignments"), "mistakes")
                if m.id == "attention_scale_by_d_model")
    assert f"Diagnosis: {hint}" in page and "from a helper" not in page, page
