"""``grader release``: the student release leaks nothing and runs ``grader check``; Gradescope and CI outputs work."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from autograder.authoring.release import FORBIDDEN_NAME_PARTS, build_release, fill
from autograder.authoring.template import BEGIN, END
from autograder.cli import main
from autograder.errors import ReleaseError
from autograder.spec.assignment import Assignment, load_assignment
from autograder.spec.quiz import load_key
from autograder.util.paths import PACKAGE_DIR
from autograder.util.pins import CONSTRAINTS
from autograder.util.tomlio import loads_toml

NBGRADER_MISSING = "nbgrader is not installed (pip install -e '.[instructor]'); CI installs it, so this runs there"


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real ``grader release assignment3 --no-verify`` output (built once for this module)."""
    pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)
    out = tmp_path_factory.mktemp("release")
    result = CliRunner().invoke(main, ["release", "assignment3", "--out", str(out), "--no-verify"])
    assert result.exit_code == 0, result.output
    return out


def released_files(release: Path) -> dict[str, bytes]:
    """Every file students get: the student folder, the student zip's members, the classroom repository."""
    files = {}
    for folder in (release / "assignment3-student", release / "github-classroom"):
        for path in folder.rglob("*"):
            if path.is_file():
                files[path.relative_to(release).as_posix()] = path.read_bytes()
    with zipfile.ZipFile(release / "assignment3-student.zip") as bundle:
        for name in bundle.namelist():
            files[f"zip:{name}"] = bundle.read(name)
    return files


def secret_solution_lines(assignment: Assignment) -> set[str]:
    """Non-trivial lines of the reference's solution regions that occur nowhere outside them.

    Lines of the public tests and of the grader count as outside: they are published on purpose
    (``with torch.no_grad():``, ``optimizer.step()``).
    """
    inside, outside = set(), set()
    for path in assignment.reference.glob("*.py"):
        in_region = False
        for line in path.read_text().splitlines():
            if line.strip() == BEGIN:
                in_region = True
            elif line.strip() == END:
                in_region = False
            else:
                (inside if in_region else outside).add(line.strip())
    # The public tests and the grader's own (open-source) modules are published on purpose.
    for path in [*assignment.public_tests.rglob("*.py"), *PACKAGE_DIR.rglob("*.py")]:
        outside.update(line.strip() for line in path.read_text().splitlines())
    return {line for line in inside - outside if len(line) > 15}


# -- the student release leaks nothing -----------------------------------------------------------------


def test_no_released_file_name_hints_at_hidden_material(release: Path) -> None:
    names = [name.lower() for name in released_files(release)]
    assert names
    for name in names:
        assert not any(part in name for part in FORBIDDEN_NAME_PARTS), name


def test_no_released_file_holds_a_solution_line(release: Path, assignment3: Assignment) -> None:
    secrets = secret_solution_lines(assignment3)
    assert len(secrets) > 50  # the scan is only as good as this list
    for name, data in released_files(release).items():
        lines = {line.strip() for line in data.decode("utf-8", errors="replace").splitlines()}
        assert not secrets & lines, f"{name} holds solution lines: {sorted(secrets & lines)[:3]}"


def test_no_released_file_holds_the_quiz_key(release: Path, assignment3: Assignment) -> None:
    assert assignment3.quiz is not None
    explanations = [" ".join(e["explanation"].split()) for e in load_key(assignment3.quiz).values()]
    for name, data in released_files(release).items():
        text = " ".join(data.decode("utf-8", errors="replace").split())
        for explanation in explanations:
            assert explanation[:80] not in text, name
        if name.endswith("answers.toml"):
            assert re.findall(r'^q\d+ = "(.*)"$', data.decode(), flags=re.M) == [""] * 16, name


def test_student_release_holds_exactly_what_a_student_needs(release: Path, assignment3: Assignment) -> None:
    student = release / "assignment3-student"
    assert sorted(p.name for p in student.iterdir()) == ["README.md", "assignment3", "assignment3.ipynb",
                                                         "assignments", "autograder", "pyproject.toml"]
    assert sorted(p.name for p in (student / "assignments").iterdir()) == ["assignment3"]
    assignment_dir = student / "assignments" / "assignment3"
    assert sorted(p.name for p in assignment_dir.iterdir()) == ["STUDENT_README.md", "assignment.toml", "figures",
                                                                "public_tests", "quiz.toml", "student_template.json"]
    public = sorted(p.relative_to(assignment3.public_tests).as_posix() for p in assignment3.public_tests.rglob("*.py"))
    assert sorted(p.relative_to(assignment_dir / "public_tests").as_posix()
                  for p in (assignment_dir / "public_tests").rglob("*.py")) == public
    for path in assignment3.template.iterdir():
        if path.is_file():
            assert (student / "assignment3" / path.name).read_bytes() == path.read_bytes(), path.name
    readme = (student / "README.md").read_text()
    assert "pip install -e ." in readme and "grader show assignment3" in readme and "@@" not in readme


def test_student_zip_holds_the_student_folder(release: Path) -> None:
    folder = release / "assignment3-student"
    with zipfile.ZipFile(release / "assignment3-student.zip") as bundle:
        members = {name: bundle.read(name) for name in bundle.namelist()}
    expected = {f"assignment3-student/{p.relative_to(folder).as_posix()}": p.read_bytes()
                for p in folder.rglob("*") if p.is_file()}
    assert members == expected


def _run_cli(release: Path, *args: str, student: Path | None = None) -> subprocess.CompletedProcess[str]:
    student = student or release / "assignment3-student"
    env = {k: v for k, v in os.environ.items() if k != "GRADER_ASSIGNMENTS"}
    env.update(PYTHONPATH=str(student), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], cwd=student, env=env,
                          capture_output=True, text=True, timeout=600)


def test_grader_check_runs_in_the_student_release(release: Path, assignment3: Assignment) -> None:
    result = _run_cli(release, "check", "assignment3")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output and "error:" not in output, output
    assert str(release / "assignment3-student" / "assignment3") in output
    for task in assignment3.tasks:
        assert re.search(rf"^{task.id}\s+0/\d+\s+not implemented$", result.stdout, flags=re.M), output
    assert "quiz: 0 of 16 answers well-formed" in result.stdout


def test_grader_check_in_the_student_release_checks_the_notebook_beside_untouched_stubs(
        release: Path, tmp_path: Path, assignment3: Assignment) -> None:
    """A notebook student runs ``grader check assignment3`` in the release: the stubs are as released, the work is
    in the notebook, and the notebook is what is checked (as grading picks it), not the stubs."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "submission"))
    from notebook_helpers import fill_with_reference, load_student_notebook, write

    student = tmp_path / "assignment3-student"
    shutil.copytree(release / "assignment3-student", student)
    write(fill_with_reference(load_student_notebook(assignment3), assignment3), student / "assignment3.ipynb")
    result = _run_cli(release, "check", "assignment3", student=student)
    output = result.stdout + result.stderr
    assert "used the notebook assignment3.ipynb, which holds work; assignment3/ is the untouched template" in output
    for task in assignment3.tasks:
        assert re.search(rf"^{task.id}\s+(\d+)/\1\s+passed$", result.stdout, flags=re.M), output


def test_the_student_release_lists_and_runs_only_check_and_show(release: Path) -> None:
    result = _run_cli(release, "--help")
    assert result.returncode == 0, result.stderr
    commands = re.findall(r"^  ([a-z][a-z-]*)\s", result.stdout.split("Commands:", 1)[1], flags=re.M)
    assert commands == ["check", "show"]
    graded = _run_cli(release, "grade", "assignment3", "assignment3")
    assert graded.returncode == 2 and "Traceback" not in graded.stderr
    assert "instructor's command" in graded.stderr and "grader check" in graded.stderr
    shipped = {p.relative_to(release / "assignment3-student" / "autograder").as_posix()
               for p in (release / "assignment3-student" / "autograder").rglob("*.py")}
    assert {p for p in shipped if p.startswith("cli/")} == {"cli/__init__.py", "cli/__main__.py", "cli/base.py",
                                                             "cli/check.py", "cli/show.py"}
    assert not [p for p in shipped if p.startswith(("authoring/", "batch/", "gradebook/"))]
    # show runs jobs through the grader's sandbox, never through the Grader (hidden checks, reference, judge)
    assert {"grading/jobs.py", "sandbox/template.py", "sandbox/boot.py", "sandbox/zygote.py"} <= shipped
    assert not {"grading/grader.py", "judge/verdict.py", "spec/mutation.py", "spec/reference.py"} & shipped


def test_the_student_release_hides_and_refuses_the_instructors_reference_option(release: Path) -> None:
    """`grader show --reference` renders the reference solution, which the release does not hold: its --help leaves
    the option out, and giving it is one line, not a traceback or a missing-folder error."""
    assert "--reference" in CliRunner().invoke(main, ["show", "--help"]).output  # the instructor's copy lists it
    helped = _run_cli(release, "show", "--help")
    assert helped.returncode == 0, helped.stderr
    assert "--reference" not in helped.stdout and "Instructors" not in helped.stdout
    assert "--watch" in helped.stdout and "--expected" in helped.stdout
    refused = _run_cli(release, "show", "assignment3", "--reference")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.strip().count("\n") == 0 and refused.stdout == "", refused.stderr
    assert "not part of this release" in refused.stderr and "grader show assignment3" in refused.stderr


def test_the_student_release_carries_the_figures_and_the_expected_pngs(release: Path) -> None:
    figures = release / "assignment3-student" / "assignments" / "assignment3" / "figures"
    assert sorted(p.name for p in figures.glob("*.py")) == ["_drawing.py", "attention.py", "kv_cache.py",
                                                            "positions.py", "tiny_gpt.py"]
    expected = sorted((figures / "expected").iterdir())
    assert len(expected) == 9
    for png in expected:
        data = png.read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 5000, png.name


@pytest.mark.slow
def test_grader_show_runs_in_the_student_release(release: Path, tmp_path: Path) -> None:
    """The student's own copy draws the page: placeholders for the untouched template, expected figures beside."""
    out = tmp_path / "figures"
    result = _run_cli(release, "show", "assignment3", "--out", str(out))
    output = result.stdout + result.stderr
    assert result.returncode == 0 and "Traceback" not in output, output
    assert "0 of 9 figures drawn (9 not implemented)" in result.stdout, output
    page = (out / "index.html").read_text()
    assert page.count('src="expected/') == 9, "every expected figure stands beside the student's"
    assert len(list((out / "expected").glob("*.png"))) == 9


def test_the_student_pyproject_declares_no_instructor_or_dev_extras(release: Path) -> None:
    text = (release / "assignment3-student" / "pyproject.toml").read_text()
    assert "optional-dependencies" not in text and "nbgrader" not in text and "hypothesis" not in text
    assert "tqdm" not in text  # only the instructor commands draw progress bars
    assert "pyyaml" not in text and "tabulate" not in text  # grade-all's export reader, the instructors' tables
    assert not re.search(r"sqlalchemy|alembic|psycopg", text, flags=re.I)  # nor open a gradebook
    dependencies = loads_toml(text)["project"]["dependencies"]
    assert any(re.fullmatch(r"torch>=[\d.]+,<3", line) for line in dependencies), dependencies  # a student's torch stays
    assert "pytest" in text and "jinja2" in text  # grader show writes its page with Jinja2
    shipped = release / "assignment3-student" / "autograder" / "templates" / "constraints.txt"
    assert shipped.read_bytes() == CONSTRAINTS.read_bytes()  # the course's build, which check's note compares with


def test_a_release_without_grader_show_installs_nothing_only_show_uses() -> None:
    """No template library (Jinja2) nor matplotlib where no student command imports them."""
    from autograder.authoring.release import _student_pyproject

    names = {re.split(r"[<>=~;! ]", line)[0].lower() for line in
             loads_toml(_student_pyproject(figures=False))["project"]["dependencies"]}
    assert "torch" in names and "pytest" in names and not names & {"jinja2", "matplotlib", "tqdm", "pyyaml"}
    assert {"jinja2", "matplotlib"} <= {re.split(r"[<>=~;! ]", line)[0].lower() for line in
                                        loads_toml(_student_pyproject(figures=True))["project"]["dependencies"]}


def test_the_version_is_one_fact_that_the_grader_and_its_releases_read(release: Path) -> None:
    """``autograder.__version__`` (part of every grade's fingerprint and figure cache key) is what pip installs:
    both project files read it from there, so a bump cannot leave the installed version behind."""
    import importlib.metadata

    import autograder

    for project in (Path(autograder.__file__).parents[1], release / "assignment3-student"):
        declared = loads_toml((project / "pyproject.toml").read_text())
        assert declared["project"]["dynamic"] == ["version"], project
        assert declared["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "autograder.__version__"}, project
        assert "version" not in declared["project"], project  # no literal version besides
    assert importlib.metadata.version("transformer-autograder") == autograder.__version__


# -- the Gradescope autograder -------------------------------------------------------------------------


def _gradescope_layout(release: Path, root: Path, submission: Path | None) -> Path:
    """Unpack the autograder like Gradescope does: /autograder/{source,submission,results}."""
    with zipfile.ZipFile(release / "assignment3-gradescope.zip") as bundle:
        bundle.extractall(root / "source")
    for script in ("setup.sh", "run_autograder"):
        os.chmod(root / "source" / script, 0o755)
    (root / "results").mkdir()
    if submission is None:
        (root / "submission").mkdir()
    else:
        shutil.copytree(submission, root / "submission", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _run_autograder(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("GRADER_ASSIGNMENTS", "PYTHONPATH")}
    env.update(GRADESCOPE_ROOT=str(root), GRADER_PYTHON=sys.executable)
    result = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True,
                            text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads((root / "results" / "results.json").read_text())


def test_gradescope_zip_has_the_scripts_at_its_root_and_the_hidden_material(release: Path) -> None:
    with zipfile.ZipFile(release / "assignment3-gradescope.zip") as bundle:
        infos = {info.filename: info for info in bundle.infolist()}
        setup = bundle.read("setup.sh").decode()
        run = bundle.read("run_autograder").decode()
    for script in ("setup.sh", "run_autograder"):
        assert (infos[script].external_attr >> 16) & 0o111, f"{script} is not executable"
    for name in ("assignments/assignment3/hidden/quiz_key.toml", "reference_solutions/assignment3/attention.py",
                 "autograder/grading/grader.py", "pyproject.toml", "README.md"):
        assert name in infos, name
    assert any(name.startswith("assignments/assignment3/hidden/checks/") for name in infos)
    assert not any("__pycache__" in name for name in infos)
    assert "student_template/assignment3/attention.py" in infos  # the intake tells the untouched stubs by it
    assert 'CONSTRAINTS="$SOURCE/autograder/templates/constraints.txt"' in setup  # the one file naming the build
    assert '-c "$CONSTRAINTS" torch --index-url https://download.pytorch.org/whl/cpu' in setup
    assert '-c "$CONSTRAINTS" -e "$SOURCE"' in setup and "torch==" not in setup
    assert "autograder/templates/constraints.txt" in infos
    assert "grade \"assignment3\"" in run and "--format gradescope" in run
    assert "@@" not in setup + run


@pytest.mark.parametrize("script", ["setup.sh", "run_autograder"])
def test_gradescope_scripts_are_valid_bash(release: Path, tmp_path: Path, script: str) -> None:
    with zipfile.ZipFile(release / "assignment3-gradescope.zip") as bundle:
        (tmp_path / script).write_bytes(bundle.read(script))
    subprocess.run(["bash", "-n", str(tmp_path / script)], check=True)


def test_run_autograder_reports_an_ungradable_submission_as_a_zero_with_the_reason(release: Path,
                                                                                   tmp_path: Path) -> None:
    root = _gradescope_layout(release, tmp_path / "autograder", None)
    (root / "submission" / "notes.txt").write_text("I forgot my code")
    results = _run_autograder(root)
    assert results["score"] == 0
    assert "could not be graded" in results["output"] and "assignment3" in results["output"]


def test_an_ungradable_submission_keeps_the_manifests_visibility(assignment3: Assignment, tmp_path: Path) -> None:
    """The result run_autograder writes when grading did not complete is shown when the manifest says (an exam
    graded "after_published" does not show a 0 at once), as a graded one would be."""
    import dataclasses

    from autograder.authoring.release import template_values

    spec = dataclasses.replace(assignment3, visibility="after_published", stdout_visibility="visible")
    (tmp_path / "source").mkdir()
    (tmp_path / "source" / "run_autograder").write_text(fill("run_autograder", template_values(spec)))
    results = _run_autograder(tmp_path)  # no grader in source/: grading fails, the fallback writes the result
    assert (results["visibility"], results["stdout_visibility"]) == ("after_published", "visible")
    assert results["score"] == 0 and results["tests"] == []


@pytest.mark.slow
def test_run_autograder_gives_the_reference_full_marks_and_the_template_zero(release: Path, tmp_path: Path,
                                                                             assignment3: Assignment) -> None:
    reference = _run_autograder(_gradescope_layout(release, tmp_path / "ref", assignment3.reference))
    problems = [f"{t['name']}: {t['score']}/{t['max_score']}: {t['output'][:200]}" for t in reference["tests"]
                if t["score"] < t["max_score"]]
    assert reference["score"] == assignment3.max_score == 100, problems
    template = _run_autograder(_gradescope_layout(release, tmp_path / "template", assignment3.template))
    assert template["score"] == 0
    assert len(template["tests"]) == len(assignment3.task_ids)


# -- the GitHub Classroom workflow ---------------------------------------------------------------------


def _workflow(release: Path) -> dict:
    return yaml.safe_load((release / "github-classroom" / ".github" / "workflows" / "grade.yml").read_text())


def test_classroom_repository_is_the_student_release_plus_the_workflow(release: Path) -> None:
    classroom = release / "github-classroom"
    student = release / "assignment3-student"
    extra = {p.relative_to(classroom).as_posix() for p in classroom.rglob("*") if p.is_file()} - {
        p.relative_to(student).as_posix() for p in student.rglob("*") if p.is_file()}
    assert extra == {".github/workflows/grade.yml"}


def test_workflow_grades_with_a_json_report_and_writes_a_summary(release: Path) -> None:
    workflow = _workflow(release)
    steps = workflow["jobs"]["grade"]["steps"]
    scripts = "\n".join(step.get("run", "") for step in steps)
    assert "grader grade assignment3" in scripts and "--format json --output grade.json" in scripts
    assert "$GITHUB_STEP_SUMMARY" in scripts
    assert 'constraints="$source/autograder/templates/constraints.txt"' in scripts and "torch==" not in scripts
    assert '-c "$constraints" torch --index-url https://download.pytorch.org/whl/cpu' in scripts
    assert 'pip install -c "$constraints" -e "$source"' in scripts
    assert "@@" not in (release / "github-classroom" / ".github" / "workflows" / "grade.yml").read_text()


def test_workflow_summary_script_renders_a_markdown_table(release: Path, tmp_path: Path) -> None:
    scripts = "\n".join(step.get("run", "") for step in _workflow(release)["jobs"]["grade"]["steps"])
    embedded = re.search(r"<<'PYTHON'\n(.*?)\nPYTHON\n", scripts, flags=re.S)
    assert embedded, "the summary script is not embedded in the workflow"
    script = tmp_path / "summary.py"
    script.write_text(embedded.group(1))
    report = {"assignment": "assignment3", "score": 14.5, "max_score": 100, "notes": ["missing file: x.py"],
              "tasks": [{"title": "Causal mask", "score": 4, "max_score": 4, "status": "passed",
                         "feedback": "all 3 checks passed"},
                        {"title": "Attention", "score": 10.5, "max_score": 10, "status": "failed",
                         "feedback": "a | b\nsecond line"}]}
    (tmp_path / "grade.json").write_text(json.dumps(report))
    result = subprocess.run([sys.executable, str(script), str(tmp_path / "grade.json")], capture_output=True,
                            text=True, check=True)
    assert result.stdout.startswith("## assignment3: 14.5 / 100\n")
    assert "| Causal mask | 4 / 4 | passed | all 3 checks passed |" in result.stdout
    assert "| Attention | 10.5 / 10 | failed | a \\| b second line |" in result.stdout
    assert "- missing file: x.py" in result.stdout


@pytest.mark.slow
def test_workflow_grades_the_notebook_a_student_filled_beside_the_stubs(release: Path, tmp_path: Path,
                                                                       assignment3: Assignment) -> None:
    """The Grade step, run as the workflow runs it, on a real repository: the released stubs untouched, the work
    in the notebook (the README says "submit the .ipynb"). The repository is graded, not its assignment3/."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "submission"))
    from notebook_helpers import fill_with_reference, load_student_notebook, write

    repo = tmp_path / "alice-assignment3"
    shutil.copytree(release / "github-classroom", repo)
    git = ["git", "-C", str(repo), "-c", "user.name=Alice", "-c", "user.email=alice@example.org"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "starter"], check=True)
    write(fill_with_reference(load_student_notebook(assignment3), assignment3), repo / "assignment3.ipynb")
    subprocess.run([*git, "commit", "-qam", "my work"], check=True)
    assert (repo / "assignment3" / "attention.py").read_bytes() == (assignment3.template / "attention.py").read_bytes()

    runner = tmp_path / "runner"
    with zipfile.ZipFile(release / "assignment3-gradescope.zip") as bundle:
        bundle.extractall(runner / "grader")  # what the Install step unpacks from GRADER_BUNDLE_URL
    (runner / "bin").mkdir()
    shim = runner / "bin" / "grader"  # the console script `pip install -e "$GRADER_SOURCE"` puts on PATH
    shim.write_text(f"#!{sys.executable}\nimport sys\nfrom autograder.cli import run\nsys.exit(run())\n")
    shim.chmod(0o755)
    summary, output = runner / "summary.md", runner / "output"
    env = {k: v for k, v in os.environ.items() if k not in ("GRADER_ASSIGNMENTS", "PYTHONPATH")}
    env.update(PATH=f"{runner / 'bin'}{os.pathsep}{env['PATH']}", PYTHONPATH=str(runner / "grader"),
               GITHUB_WORKSPACE=str(repo), RUNNER_TEMP=str(runner), GITHUB_STEP_SUMMARY=str(summary),
               GITHUB_OUTPUT=str(output), GRADER_SOURCE=str(runner / "grader"), GRADER_MODE="grade")
    step = next(s for s in _workflow(release)["jobs"]["grade"]["steps"] if s.get("id") == "grader")
    result = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=repo,
                            env=env, capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads((repo / "grade.json").read_text())
    assert report["score"] == report["max_score"] == assignment3.max_score, report["notes"]
    choice = "used the notebook assignment3.ipynb, which holds work; assignment3/ is the untouched template"
    assert report["notes"][0] == choice
    assert f"- {choice}" in summary.read_text() and output.read_text().startswith("result=")


def test_release_readme_documents_the_classroom_limit(release: Path) -> None:
    readme = " ".join((release / "README.md").read_text().split())
    assert "Tests in a student's repository are visible to that student" in readme
    assert "Gradescope or in a central grading job" in readme
    workflow = (release / "github-classroom" / ".github" / "workflows" / "grade.yml").read_text()
    assert "LIMIT" in workflow


# -- refusals ------------------------------------------------------------------------------------------


def test_release_refuses_a_drifted_template(assignment_copy: Assignment, tmp_path: Path) -> None:
    pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)
    target = assignment_copy.template / "positions.py"
    target.write_text(target.read_text().replace("raise NotImplementedError()", "pass"))
    with pytest.raises(ReleaseError, match=r"positions\.py differs.*grader template assignment3"):
        build_release(assignment_copy, tmp_path / "out")
    assert not (tmp_path / "out" / "assignment3-student").exists()


def test_release_refuses_a_template_that_leaks_a_solution(assignment_copy: Assignment, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)
    import autograder.authoring.release as release_module

    real = release_module.check_releasable

    def leaky(assignment: Assignment) -> dict[str, bytes]:
        files = real(assignment)
        files["positions.py"] += b"\n    table[:, 0::2] = torch.sin(angles)\n"
        return files

    monkeypatch.setattr(release_module, "check_releasable", leaky)
    with pytest.raises(ReleaseError, match=r"would leak: assignment3/positions\.py: holds the solution line"):
        build_release(assignment_copy, tmp_path / "out")
    assert not (tmp_path / "out" / "assignment3-student").exists()  # no leaky folder left to hand out by mistake


def test_release_refuses_a_misnamed_public_tests_folder_before_writing_anything(assignment_copy: Assignment,
                                                                               tmp_path: Path) -> None:
    manifest = assignment_copy.root / "assignment.toml"
    manifest.write_text(manifest.read_text().replace("[assignment]\n", '[assignment]\npublic_tests = "public_test"\n'))
    assignment = load_assignment("assignment3", root=assignment_copy.root.parent)
    with pytest.raises(ReleaseError, match=r"^\S+assignment\.toml:\d+: \[assignment\] public_tests names the folder "
                                           r"'public_test', which does not exist$"):
        build_release(assignment, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_release_refuses_a_broken_figure_file_before_writing_anything(assignment_copy: Assignment,
                                                                       tmp_path: Path) -> None:
    pytest.importorskip("nbgrader", reason=NBGRADER_MISSING)
    figures = assignment_copy.root / "figures" / "attention.py"
    figures.write_text(figures.read_text().replace('tasks=("attention", "causal_mask")', 'tasks=("atention",)'))
    with pytest.raises(ReleaseError, match=r"^figures/attention\.py:\d+: probe six_tokens names unknown tasks "
                                           r"\['atention'\]"):
        build_release(assignment_copy, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # it stopped half-way, after writing the student folder


def test_grader_release_without_verify_refuses_a_missing_public_tests_folder_in_one_line(
        assignment_copy: Assignment, tmp_path: Path) -> None:
    shutil.rmtree(assignment_copy.public_tests)
    (assignment_copy.root / "hidden" / "checks" / "attention.py").unlink()
    result = CliRunner().invoke(main, ["release", "assignment3", "--no-verify", "--out", str(tmp_path / "out")],
                                env={"GRADER_ASSIGNMENTS": str(assignment_copy.root.parent)})
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    manifest = assignment_copy.root / "assignment.toml"
    assert result.output.splitlines() == [
        f"error: {manifest}: [assignment] public_tests names the folder 'public_tests', which does not exist (the "
        f"default: public_tests is not set) (and 1 more: `grader verify assignment3` lists them)"]
    assert not (tmp_path / "out").exists()


def test_fill_refuses_an_unknown_placeholder() -> None:
    with pytest.raises(ReleaseError, match="no value for @@"):
        fill("run_autograder", {"ASSIGNMENT": "assignment3"})
