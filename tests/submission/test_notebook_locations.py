"""A notebook student is told a cell and its line, never a line of an extracted file they do not have: in
`grader check` (and --verbose), a check cell, `grader grade`'s feedback and `grader show`'s placeholders."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import autograder.public.notebook as public_notebook
from autograder.spec.assignment import Assignment
from autograder.submission.notebook.extract import extract
from autograder.submission.notebook.read import Cell

sys.path.insert(0, str(Path(__file__).resolve().parent))
from notebook_helpers import defined_name, fill_with_reference, load_student_notebook, source, write  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BUG = "    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1).view(n, n, n)"


def _where(notebook: dict, name: str, text: str) -> tuple[int, int]:
    """The position among all cells of the code cell defining ``name``, and the line of ``text`` in it."""
    for position, cell in enumerate(notebook["cells"], start=1):
        if cell["cell_type"] == "code" and defined_name(source(cell)) == name:
            return position, next(n for n, line in enumerate(source(cell).split("\n"), 1) if text in line)
    raise AssertionError(f"no cell defines {name}")


@pytest.fixture(scope="module")
def buggy(assignment3: Assignment, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, tuple[int, int]]]:
    """The reference-filled notebook with causal_mask raising, kv_cache_bytes failing at import, and the
    sinusoidal_positions stub cell left as released; with where each is (cell, line)."""
    notebook = fill_with_reference(load_student_notebook(assignment3), assignment3)
    stub = load_student_notebook(assignment3)
    for cell, released in zip(notebook["cells"], stub["cells"]):
        name = defined_name(source(cell)) if cell["cell_type"] == "code" else None
        if name == "causal_mask":
            cell["source"] = source(cell).replace("    return torch.triu(torch.ones(n, n, dtype=torch.bool), "
                                                  "diagonal=1)", BUG)
        elif name == "kv_cache_bytes":
            cell["source"] = source(cell).replace("def kv_cache_bytes(", "def kv_cache_bytes(_x=NOT_DEFINED, *, ")
        elif name == "sinusoidal_positions":
            cell["source"] = source(released)
    where = {"causal_mask": _where(notebook, "causal_mask", BUG.strip()),
             "kv_cache_bytes": _where(notebook, "kv_cache_bytes", "NOT_DEFINED"),
             "sinusoidal_positions": _where(notebook, "sinusoidal_positions", "raise NotImplementedError")}
    return write(notebook, tmp_path_factory.mktemp("work") / "work.ipynb"), where


def _grader(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True,
                          timeout=600, cwd=cwd, env=env, check=False)


def _cells(*sources: str) -> list[Cell]:
    return [Cell(f"cell {n}", text) for n, text in enumerate(sources, start=1)]


def test_the_extraction_maps_each_line_to_its_cell_or_says_the_grader_wrote_it(assignment3: Assignment) -> None:
    extraction = extract(assignment3, _cells("import torch", "x = 1\n\n@torch.no_grad()\ndef causal_mask(n):\n"
                                                             "    y = 2\n    return split_heads(y, 1)"))
    lines = extraction.files["attention.py"].split("\n")
    mapped = extraction.cell_map
    body = lines.index("    y = 2") + 1
    assert mapped.place("attention.py", body) == "cell 2, line 5"
    assert mapped.place("assignment3/attention.py", body - 2) == "cell 2, line 3", "the decorator is the cell's"
    stub = lines.index("def split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:") + 1
    assert mapped.place("attention.py", stub).startswith("the grader's stub of split_heads (no cell defines it), "
                                                         "not a line of a cell")
    template_import = lines.index("import torch") + 1
    assert "not a line of a cell" in mapped.place("attention.py", template_import)
    assert mapped.place("__init__.py", 1) is None, "not an extracted module: said as its file"


@pytest.mark.slow
def test_check_names_the_cell_and_keeps_files_when_asked_for_them(buggy, tmp_path: Path) -> None:
    notebook, where = buggy
    cell, line = where["causal_mask"]
    kv_cell, kv_line = where["kv_cache_bytes"]
    result = _grader("check", "assignment3", str(notebook), "--task", "causal_mask", "--verbose", cwd=tmp_path)
    out = result.stdout
    assert f"raised in cell {cell}, line {line}, in causal_mask" in out, out
    assert f"cell {cell}, line {line}: RuntimeError" in out, "pytest's own output says the cell too"
    assert f"error: cell {kv_cell}, line {kv_line}: NameError: name 'NOT_DEFINED' is not defined" in out, out
    next_line = next(said for said in out.splitlines() if said.startswith("Next:"))
    assert next_line.startswith(f"Next: fix cell {kv_cell}, line {kv_line} (the kv_cache code of "), next_line
    cells = next_line.split("(the kv_cache code of ")[1].split(" cannot be imported)")[0]
    assert re.fullmatch(r"cells? \d+((, \d+)* and \d+)?", cells), next_line
    assert str(kv_cell) in re.findall(r"\d+", cells), next_line  # the cell at fault is among them
    assert "kv_cache.py" not in out.replace("--show-extracted", ""), "a notebook student has no kv_cache.py"
    assert not re.search(r"(?<!test_)(attention|kv_cache)\.py(:\d|, line)", out), out

    # the files written for the student to read do not change where a mistake is said to be: still the cell
    extracted = _grader("check", "assignment3", str(notebook), "--task", "causal_mask", "--verbose",
                        "--show-extracted", str(tmp_path / "files"), cwd=tmp_path).stdout
    assert f"raised in cell {cell}, line {line}, in causal_mask" in extracted, extracted
    assert f"cell {cell}, line {line}: RuntimeError" in extracted, extracted
    assert f"error: cell {kv_cell}, line {kv_line}: NameError" in extracted, extracted
    assert not re.search(r"(?<!test_)(attention|kv_cache)\.py(:\d|, line)", extracted), extracted
    assert (tmp_path / "files" / "attention.py").is_file()


@pytest.mark.slow
def test_a_check_cell_names_the_cell_of_the_file_or_the_kernel(buggy, capsys, monkeypatch, tmp_path) -> None:
    notebook, where = buggy
    cell, line = where["causal_mask"]
    public_notebook.check_notebook("assignment3", task="causal_mask", path=notebook)
    out = capsys.readouterr().out
    assert f"raised in cell {cell}, line {line}, in causal_mask" in out, out
    assert not re.search(r"(?<!test_)(attention|kv_cache)\.py(:\d|, line)", out), out

    data = json.loads(notebook.read_text(encoding="utf-8"))
    ran = [source(c) for c in data["cells"] if c["cell_type"] == "code"]
    history = [Cell(f"In [{n}]", text) for n, text in enumerate(ran, start=1)]  # the kernel ran every code cell
    monkeypatch.setattr(public_notebook, "kernel_cells", lambda: history)
    run = next(n for n, text in enumerate(ran, start=1) if BUG in text)
    public_notebook.check_notebook("assignment3", task="causal_mask")
    out = capsys.readouterr().out
    assert f"raised in In [{run}], line {line}, in causal_mask" in out, out
    # show_extracted= writes the files for the student to read; the places are still the kernel's cells
    public_notebook.check_notebook("assignment3", task="causal_mask", show_extracted=tmp_path / "files")
    out = capsys.readouterr().out
    assert f"raised in In [{run}], line {line}, in causal_mask" in out, out
    assert (tmp_path / "files" / "attention.py").is_file()


@pytest.mark.slow
def test_grade_feedback_names_the_cell(buggy, tmp_path: Path) -> None:
    notebook, where = buggy
    cell, line = where["causal_mask"]
    kv_cell, kv_line = where["kv_cache_bytes"]
    result = _grader("grade", "assignment3", str(notebook), "--format", "json", cwd=tmp_path)
    text = result.stdout
    report = json.loads(text)
    assert report, result.stderr
    assert f"(cell {cell}, line {line}, in causal_mask)" in text, text
    assert f"(cell {kv_cell}, line {kv_line}, in <module>)" in text, text
    assert "attention.py, line" not in text and "kv_cache.py, line" not in text, text
    assert "kv_cache.py could not be imported" not in text and "the kv_cache code of " in text, text


@pytest.mark.slow
def test_show_placeholders_name_the_cell(buggy, tmp_path: Path) -> None:
    from autograder.show import show

    notebook, where = buggy
    cell, line = where["causal_mask"]
    stub_cell, stub_line = where["sinusoidal_positions"]
    shown = show("assignment3", notebook, out=tmp_path / "figures")
    reasons = {panel.figure.name: panel.reason for panel in shown.panels}
    assert f"not implemented yet: sinusoidal_positions (cell {stub_cell}, line {stub_line})" in reasons.values(), \
        reasons
    assert any(f"(cell {cell}, line {line}, in causal_mask)" in reason for reason in reasons.values()), reasons
    assert not any(".py, line" in reason for reason in reasons.values()), reasons


def test_a_module_is_named_by_its_cells_for_a_notebook_and_by_its_file_for_a_package() -> None:
    """"kv_cache.py cannot be imported" means nothing to a notebook student: the module is named by the cells its
    code came from (each once, in the file's order), as a line is by its cell (places.py:module_words)."""
    from autograder.submission.notebook.places import CellMap, Span, module_words

    cells = CellMap({"kv_cache.py": [Span(1, 3, "", 0, "the template's imports"), Span(4, 9, "cell 32", 1),
                                     Span(10, 12, "cell 33", 1), Span(13, 20, "cell 36", 1),
                                     Span(21, 22, "cell 33", 5)]})
    assert module_words("kv_cache", cells) == "the kv_cache code of cells 32, 33 and 36"
    assert module_words("kv_cache", None) == "kv_cache.py"  # a package: the student has the file
    assert module_words("attention", cells) == "attention.py"  # not an extracted module of this map
    kernel = CellMap({"kv_cache.py": [Span(4, 9, "In [3]", 1), Span(10, 12, "In [7]", 1)]})
    assert module_words("kv_cache", kernel) == "the kv_cache code of In [3] and In [7]"
