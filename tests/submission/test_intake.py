"""The one intake as users meet it: `check` and `grade` say the same thing about the same submission, name what
the user gave, and apply one size rule to a graded file whatever holds it (folder, zip or notebook)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.cli import main
from autograder.spec.assignment import Assignment
from autograder.submission.notebook.extract import extract
from autograder.submission.notebook.read import notebook_cells
from autograder.submission.package import MAX_STUDENT_FILE_BYTES

sys.path.insert(0, str(Path(__file__).resolve().parent))
from notebook_helpers import defined_name, fill_with_reference, load_student_notebook, source, write

REPO = Path(__file__).resolve().parents[2]
SOURCES = "attention.py, kv_cache.py, positions.py, tiny_gpt.py"


def non_utf8_zip(path: Path) -> Path:
    """A zip whose entry says its name is UTF-8 and is not (as archivers that write Latin-1 names do)."""
    with zipfile.ZipFile(path, "w") as bundle:
        bundle.writestr("assignment3/XXention.py", "x = 1\n")
    data = bytearray(path.read_bytes())
    local, central = data.find(b"PK\x03\x04"), data.find(b"PK\x01\x02")
    data[local + 7] |= 0x08  # bit 11 of the general purpose flags: the name is UTF-8
    data[central + 9] |= 0x08
    path.write_bytes(bytes(data).replace(b"XXention", b"\xff\xfeention"))
    return path


def zip_of_the_wrong_thing(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as bundle:
        bundle.writestr("homework/notes.txt", "my notes\n")
    return path


def empty_folder(path: Path) -> Path:
    path.mkdir()
    (path / "notes.txt").write_text("my notes\n")
    return path


def _one_error(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


@pytest.mark.parametrize("make, name, expected", [
    (non_utf8_zip, "nonutf8.zip", ("nonutf8.zip: a file name in it is not valid UTF-8 although the archive says "
                                   "it is; make the zip again (e.g. `zip -r`) or rename that file")),
    (zip_of_the_wrong_thing, "wrong.zip", (f"no assignment3/ package found in wrong.zip (looked for {SOURCES}), "
                                           f"nor a notebook (.ipynb)")),
    (empty_folder, "my work", (f"no assignment3/ package found in my work (looked for {SOURCES}), "
                               f"nor a notebook (.ipynb)")),
    (lambda path: path, "absent", "{given} does not exist"),
])
def test_check_and_grade_say_the_same_naming_what_the_user_gave(tmp_path: Path, make: Callable[[Path], Path],
                                                                name: str, expected: str) -> None:
    given = make(tmp_path / name)
    check = _one_error("check", "assignment3", str(given))
    grade = _one_error("grade", "assignment3", str(given))
    assert check == grade == "error: " + expected.replace("{given}", str(given))


# -- one size rule ----------------------------------------------------------------------------------------------

PADDING = MAX_STUDENT_FILE_BYTES + 100_000  # just over the limit: the rule, not the memory, is under test
MESSAGE = "positions.py is 2.2 MB; the limit for a graded file is 2 MiB"


@pytest.fixture(scope="module")
def oversized(assignment3: Assignment, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The reference as a notebook whose positions code is just over the limit, and the same files as a folder and
    a zip (the notebook's own extraction, so all three hold the same bytes), with an ungraded file beside."""
    notebook = fill_with_reference(load_student_notebook(assignment3), assignment3)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code" and defined_name(source(cell)) == "sinusoidal_positions":
            head, body = source(cell).split("\n", 1)
            cell["source"] = f"{head}\n    # {'x' * PADDING}\n{body}"
    base = tmp_path_factory.mktemp("oversized")
    files = extract(assignment3, notebook_cells(notebook)).files
    package = base / "folder" / "assignment3"
    package.mkdir(parents=True)
    for name, text in files.items():
        (package / name).write_text(text, encoding="utf-8")
    (package / "weights.bin").write_bytes(bytes(PADDING))  # not graded: listed, never counted
    archive = shutil.make_archive(str(base / "work"), "zip", package.parent)
    return {"folder": package.parent, "zip": Path(archive), "notebook": write(notebook, base / "work.ipynb")}


def _grade(path: Path, *tasks: str) -> dict:
    options = [arg for task in tasks for arg in ("--task", task)]
    result = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", "assignment3", str(path), *options,
                             "--format", "json"], capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, PYTHONPATH=str(REPO)), check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.slow
def test_a_graded_file_over_the_limit_is_one_message_and_its_task_only(oversized: dict[str, Path]) -> None:
    assert MAX_STUDENT_FILE_BYTES < (oversized["folder"] / "assignment3" / "positions.py").stat().st_size
    seen = {}
    for container, path in oversized.items():
        report = _grade(path, "sinusoidal_positions", "kv_cache_bytes")
        tasks = {t["id"]: t for t in report["tasks"]}
        about = [note for note in report["notes"] if "positions.py" in note]
        seen[container] = (report["score"], tasks["sinusoidal_positions"]["score"], about)
        assert about == [MESSAGE], (container, report["notes"])
        assert MESSAGE in tasks["sinusoidal_positions"]["feedback"], container
        assert tasks["kv_cache_bytes"]["score"] == tasks["kv_cache_bytes"]["max_score"] == 4, container
        if container != "notebook":
            assert "ignored: weights.bin (not graded; not read)" in report["notes"], container
    assert seen["folder"] == seen["zip"] == seen["notebook"] == (4, 0, [MESSAGE])


def test_check_refuses_the_oversized_file_before_importing_it(oversized: dict[str, Path]) -> None:
    result = CliRunner().invoke(main, ["check", "assignment3", str(oversized["zip"]), "--task", "sinusoidal_positions"])
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"note: {MESSAGE}\n"), result.output
    assert "work.zip" in result.output and "endless loop" not in result.output
    assert result.output.count(MESSAGE) <= 2, result.output  # the note, and the module's own line at most


def test_a_kernels_cells_meet_the_same_size_rule(oversized: dict[str, Path], assignment3: Assignment,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """check_notebook() with no path tests the cells the kernel ran: the oversized definition is refused with the
    same sentence, before anything imports it."""
    from autograder.public import notebook as kernel_check
    from autograder.submission.notebook.extract import extract_notebook

    monkeypatch.setattr(kernel_check, "notebook_extraction",
                        lambda spec, path=None: extract_notebook(oversized["notebook"], assignment3))
    outcome = kernel_check.check_notebook("assignment3", task="sinusoidal_positions")
    printed = capsys.readouterr().out
    assert MESSAGE in printed and "endless loop" not in printed, printed
    assert not outcome.ok

