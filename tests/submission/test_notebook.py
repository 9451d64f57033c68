"""Notebooks: extraction (read, never run), the generated student notebook, bad input, and grading for real."""

from __future__ import annotations

import base64
import json
import os
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from autograder.authoring.notebook_template import notebook_drift, notebook_path
from autograder.authoring.template import render_template
from autograder.batch.discover import discover
from autograder.cli import main
from autograder.errors import NotebookError
from autograder.spec.assignment import Assignment, available_assignments, load_assignment
from autograder.submission.intake import prepare_submission, submission_digest
from autograder.submission.notebook.extract import extract, extract_notebook
from autograder.submission.notebook.read import Cell, neutralise, notebook_cells, read_notebook

sys.path.insert(0, str(Path(__file__).resolve().parent))
from notebook_helpers import (  # a helper module beside the tests
    code_cell,
    defined_name,
    fill_with_reference,
    load_student_notebook,
    source,
    write,
)


def notebook(*cells: str | dict, version: int = 4) -> dict:
    """A notebook of code cells (a dict is taken as a ready cell)."""
    made = [c if isinstance(c, dict) else code_cell(c) for c in cells]
    return {"nbformat": version, "nbformat_minor": 5, "metadata": {}, "cells": made}


def cells(*sources: str) -> list[Cell]:
    return [Cell(f"cell {n}", text) for n, text in enumerate(sources, start=1)]


@pytest.fixture(scope="module")
def filled3(assignment3: Assignment) -> dict:
    return fill_with_reference(load_student_notebook(assignment3), assignment3)


# -- extraction ----------------------------------------------------------------------------------------------


def test_definitions_are_kept_and_every_other_statement_is_left_out(assignment3: Assignment) -> None:
    extraction = extract(assignment3, cells(
        "import torch\nimport time\nimport matplotlib.pyplot as plt\nVOCAB = 10\nSCALE = float('2.5')\nseed = 3",
        "def causal_mask(n):\n    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)\n"
        "print(causal_mask(3))\nplt.plot([1, 2])\ntime.sleep(3600)\nmodel = train(steps=10**6)",
    ))
    attention = extraction.files["attention.py"]
    assert "def causal_mask(n):" in attention and "print(" not in attention and "sleep" not in attention
    assert "plt" not in attention, "an import nothing graded uses is left out (it may not exist at grading)"
    assert "train(" not in extraction.files["tiny_gpt.py"].split("def train", 1)[0]
    assert "VOCAB = 10" in extraction.files["tiny_gpt.py"]
    assert extraction.dropped == 4
    assert "seed" in extraction.defined and "SCALE" in extraction.defined


def test_a_later_definition_replaces_an_earlier_one_as_in_the_kernel(assignment3: Assignment) -> None:
    drafts = [f"def causal_mask(n):\n    return {k}" for k in ("'first'", "'second'", "'third'")]
    attention = extract(assignment3, cells(*drafts)).files["attention.py"]
    assert "'third'" in attention and "'first'" not in attention and "'second'" not in attention
    assert attention.count("def causal_mask") == 1


def test_a_function_the_notebook_lacks_is_a_not_implemented_stub(assignment3: Assignment) -> None:
    files = extract(assignment3, cells("x = 1")).files
    namespace: dict = {}
    exec(compile(files["positions.py"], "positions.py", "exec"), namespace)  # noqa: S102 - a stub from the template
    with pytest.raises(NotImplementedError):
        namespace["sinusoidal_positions"](4, 8)
    assert "return" not in files["positions.py"], "a stub never holds the template's (or reference's) code"


def test_ipython_syntax_is_neutralised_and_line_numbers_kept() -> None:
    text = ("%matplotlib inline\n!pip install foo\nfiles = !ls\ntorch.randn?\n?torch\n"
            "def f(x):\n    \"\"\"Is this a question?\n    !not a shell line\n    \"\"\"\n    %time g(x)\n    return x")
    cleaned = neutralise(text)
    assert cleaned.count("\n") == text.count("\n")
    assert cleaned.split("\n")[:5] == ["pass"] * 5
    assert "Is this a question?" in cleaned and "!not a shell line" in cleaned
    assert "    pass\n    return x" in cleaned
    assert neutralise("%%bash\necho hi") == ""
    assert neutralise("%%time\ndef f():\n    return 1").strip() == "def f():\n    return 1"


def test_magics_and_shell_escapes_cost_nothing(assignment3: Assignment) -> None:
    extraction = extract(assignment3, cells(
        "%load_ext autoreload\n%autoreload 2\nimport torch\n!nvidia-smi",
        "%%capture\ndef kv_cache_bytes(layers, kv_heads, head_dim, seq_len, batch=1, bytes_per_value=2):\n"
        "    return 2 * layers * kv_heads * head_dim * seq_len * batch * bytes_per_value",
        "%%bash\npip install something",
    ))
    assert "return 2 * layers" in extraction.files["kv_cache.py"]
    assert extraction.notes == []


def test_a_syntax_error_costs_only_its_cell_and_names_the_cell_and_line(assignment3: Assignment) -> None:
    extraction = extract(assignment3, cells(
        "def causal_mask(n):\n    return 'kept'",
        "def split_heads(x, heads):\n    return (x,\ndef merge_heads(x):\n    return x",
    ))
    assert "'kept'" in extraction.files["attention.py"]
    assert len(extraction.notes) == 1
    note = extraction.notes[0]
    assert note.startswith("cell 2 ('def split_heads(x, heads):') has a syntax error at line ")
    assert note.endswith("its definitions were not graded")


def test_a_cell_with_a_syntax_error_is_recorded_with_what_it_meant_to_define(assignment3: Assignment) -> None:
    """The stub standing in for a function the student wrote in a cell that cannot be parsed is said as that cell's
    syntax error, not as "no cell defines it"; the record travels with the cell map (to the public tests' worker)."""
    from autograder.submission.notebook.places import CellMap

    extraction = extract(assignment3, cells(
        "def causal_mask(n):\n    return 'kept'",
        "import torch\n\ndef split_heads(x, heads):\n    return (x,\n\nclass Helper:\n    pass",
    ))
    [unreadable] = extraction.cell_map.unreadable
    assert (unreadable.cell, unreadable.first_line, unreadable.defines) == ("cell 2", "import torch",
                                                                            ("split_heads", "Helper"))
    assert unreadable.line in (4, 6, 7) and unreadable.message, unreadable
    assert extraction.notes == [unreadable.note()]
    lines = extraction.files["attention.py"].split("\n")
    stub = lines.index("def split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:") + 1
    said = extraction.cell_map.place("attention.py", stub)
    assert said == f"the syntax error in cell 2 (line {unreadable.line}: {unreadable.message}) kept split_heads from " \
                   "being read", said
    assert "no cell defines it" in extraction.cell_map.place("attention.py", lines.index(
        "def merge_heads(x: torch.Tensor) -> torch.Tensor:") + 1), "a stub no unreadable cell meant to define"
    assert CellMap.from_data(extraction.cell_map.to_data()) == extraction.cell_map


def test_answers_become_answers_toml(assignment3: Assignment) -> None:
    from autograder.util.tomlio import loads_toml

    files = extract(assignment3, cells('ANSWERS = {"q1": "b", "q2": "", "q 3": "c"}')).files
    assert loads_toml(files["answers.toml"]) == {"q1": "b", "q2": "", "q 3": "c"}


def test_any_answers_dict_becomes_readable_toml(assignment3: Assignment) -> None:
    """Text TOML cannot hold as JSON escapes it (an emoji as a surrogate pair), a key given twice (1 and "1") and
    values without a TOML type each left answers.toml unreadable, so the whole quiz scored 0."""
    from autograder.util.tomlio import loads_toml

    files = extract(assignment3, cells('ANSWERS = {"q1": "b \U0001F600", 1: "a", "1": "b", "q2": None, '
                                       '"q3": 1.5, "q\\"4": [1, "x"]}')).files
    assert loads_toml(files["answers.toml"]) == {"q1": "b \U0001F600", "1": "b", "q2": "None", "q3": 1.5,
                                                 'q"4': "[1, 'x']"}


def test_helpers_follow_their_users_and_modules_import_each_other(assignment3: Assignment) -> None:
    extraction = extract(assignment3, cells(
        "import torch\n\ndef _neg_inf():\n    return float('-inf')",
        "def scaled_dot_product_attention(q, k, v, causal=False):\n    return _neg_inf()",
        "def decode_with_cache(layer, tokens):\n    return split_heads(tokens, 2), _neg_inf()",
        "def _unused():\n    return 1",
    ))
    attention, kv_cache = extraction.files["attention.py"], extraction.files["kv_cache.py"]
    assert "def _neg_inf" in attention and "def _neg_inf" in kv_cache
    assert "_unused" not in attention + kv_cache
    assert "from .attention import split_heads" in kv_cache


def test_base_classes_and_defaults_are_defined_before_use(assignment3: Assignment) -> None:
    extraction = extract(assignment3, cells(
        "class TransformerBlock(Base):\n    pass",
        "def generate(model, prefix, new_tokens=STEPS):\n    return prefix",
        "from torch import nn\nclass Base(nn.Module):\n    pass\nSTEPS = 3",
    ))
    attention = extraction.files["attention.py"]
    assert attention.index("class Base") < attention.index("class TransformerBlock")
    tiny_gpt = extraction.files["tiny_gpt.py"]
    assert "STEPS = 3" in tiny_gpt and tiny_gpt.index("STEPS = 3") < tiny_gpt.index("def generate")


def test_what_a_decorator_calls_at_import_is_placed_first_however_deep(assignment3: Assignment) -> None:
    """NOTEBOOKS.md rule 7, transitively: a decorator defined later calls a helper that calls another."""
    extraction = extract(assignment3, cells(
        "import torch\n\n@registered('mask')\ndef causal_mask(n):\n    return torch.ones(n, n).triu(1).bool()",
        "def split_heads(x, heads, eps=_default_eps()):\n    return x",
        "REGISTRY = {}\n\ndef registered(name):\n    _check_name(name)\n    def wrap(fn):\n"
        "        REGISTRY[name] = fn\n        return fn\n    return wrap",
        "def _check_name(name):\n    if not _valid(name):\n        raise ValueError(name)",
        "def _valid(name):\n    return name.isidentifier()\n\ndef _default_eps():\n    return _tiny() * 2\n\n"
        "def _tiny():\n    return 1e-9",
    ))
    namespace: dict[str, Any] = {}
    exec(compile(extraction.files["attention.py"], "attention.py", "exec"), namespace)  # our own test code
    assert namespace["REGISTRY"] == {"mask": namespace["causal_mask"]}
    assert namespace["split_heads"].__defaults__ == (2e-9,)


def test_bare_decorators_defined_later_reach_helpers_three_levels_down(assignment3: Assignment) -> None:
    """Rule 7 at depth 3 through decorators written without a call (issue 41, item 11): ``@registered`` on a
    function and a class, ``@logged`` on a method in a class body, each defined in a later cell and calling at
    decoration time a helper that calls another that calls a third, each in a cell of its own."""
    extraction = extract(assignment3, cells(
        "import torch\n\n@registered\ndef causal_mask(n):\n    return torch.ones(n, n).triu(1).bool()",
        "from torch import nn\n\n@registered\nclass MultiHeadAttention(nn.Module):\n    @logged\n"
        "    def forward(self, x, context=None, causal=False):\n        return x",
        "REGISTRY = {}\n\ndef registered(definition):\n    REGISTRY[_key(definition)] = definition\n"
        "    return definition",
        "def _key(definition):\n    return _prefix() + definition.__name__",
        "def _prefix():\n    return _separator().join(['graded', ''])",
        "def _separator():\n    return ':'",
        "LOG = []\n\ndef logged(method):\n    _note(method)\n    return method",
        "def _note(method):\n    _store(method.__name__)",
        "def _store(name):\n    LOG.append(_shout(name))",
        "def _shout(name):\n    return name.upper()",
    ))
    namespace: dict[str, Any] = {}
    exec(compile(extraction.files["attention.py"], "attention.py", "exec"), namespace)  # our own test code
    assert namespace["REGISTRY"] == {"graded:causal_mask": namespace["causal_mask"],
                                     "graded:MultiHeadAttention": namespace["MultiHeadAttention"]}
    assert namespace["LOG"] == ["FORWARD"]


def test_a_bare_decorator_that_needs_what_it_decorates_is_reported_by_cell(assignment3: Assignment) -> None:
    extraction = extract(assignment3, cells(
        "import torch\n\n@registered\ndef causal_mask(n):\n    return torch.ones(n, n).triu(1).bool()",
        "def registered(definition):\n    return _check(definition)",
        "def _check(definition):\n    return _same(definition)",
        "def _same(definition):\n    assert definition is causal_mask\n    return definition",
    ))
    with pytest.raises(ImportError) as raised:
        exec(compile(extraction.files["attention.py"], "attention.py", "exec"), {})
    assert str(raised.value).startswith("the definitions in cell 1, cell 2, cell 3 and cell 4 need each other when "
                                        "attention.py is imported (causal_mask -> registered -> _check -> _same -> "
                                        "causal_mask"), raised.value


def test_definitions_that_need_each_other_at_import_are_reported_by_cell(assignment3: Assignment) -> None:
    extraction = extract(assignment3, cells(
        "import torch\n\n@registered('mask')\ndef causal_mask(n):\n    return torch.ones(n, n).triu(1).bool()",
        "def registered(name):\n    _check(name)\n    return lambda fn: fn",
        "def _check(name):\n    return causal_mask(1) is not None",
    ))
    with pytest.raises(ImportError) as raised:
        exec(compile(extraction.files["attention.py"], "attention.py", "exec"), {})
    assert str(raised.value).startswith("the definitions in cell 1, cell 2 and cell 3 need each other when "
                                        "attention.py is imported (causal_mask -> registered -> _check -> "
                                        "causal_mask"), raised.value


def test_the_reference_filled_notebook_extracts_to_modules_that_compile(assignment3: Assignment,
                                                                       filled3: dict) -> None:
    extraction = extract(assignment3, notebook_cells(filled3))
    assert extraction.notes == []
    for name, text in extraction.files.items():
        if name.endswith(".py"):
            compile(text, name, "exec")
    defined = set(extraction.defined)
    assert {q.split(".")[1] for t in assignment3.tasks for q in t.functions} <= defined


# -- bad input -----------------------------------------------------------------------------------------------


def _grade_error(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    result = CliRunner().invoke(main, ["grade", "assignment3", str(path)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def test_a_file_that_is_not_json_is_one_line_exit_2(tmp_path: Path) -> None:
    line = _grade_error(tmp_path, "work.ipynb", b"\x89PNG not a notebook")
    assert "work.ipynb is not a Jupyter notebook: it is not valid JSON" in line


def test_json_that_is_not_a_notebook_and_unknown_formats_are_one_line(tmp_path: Path) -> None:
    assert "not a Jupyter notebook" in _grade_error(tmp_path, "a.ipynb", b'{"cells": []}')
    assert "format 2" in _grade_error(tmp_path, "b.ipynb", json.dumps({"nbformat": 2}).encode())
    assert "no code cells" in _grade_error(tmp_path, "c.ipynb", json.dumps(notebook()).encode())


def test_a_version_3_notebook_is_read(assignment3: Assignment, tmp_path: Path) -> None:
    old = {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": [
        {"cell_type": "code", "input": ["def causal_mask(n):\n", "    return 'v3'"], "outputs": []}]}]}
    cells_read = read_notebook(write(old, tmp_path / "old.ipynb"))
    assert "'v3'" in extract(assignment3, cells_read).files["attention.py"]


def test_a_notebook_that_is_too_large_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import autograder.submission.notebook.read as module

    monkeypatch.setattr(module, "MAX_NOTEBOOK_BYTES", 100)
    path = write(notebook("x = 1" * 50), tmp_path / "big.ipynb")
    with pytest.raises(NotebookError, match="clear its outputs"):
        read_notebook(path)


def test_tens_of_megabytes_of_images_add_well_under_a_second(assignment3: Assignment, filled3: dict,
                                                             tmp_path: Path) -> None:
    heavy = json.loads(json.dumps(filled3))
    image = base64.b64encode(os.urandom(3 * 1024 * 1024)).decode()  # 4 MB of base64 per output
    for cell in [c for c in heavy["cells"] if c["cell_type"] == "code"][:8]:
        cell["outputs"] = [{"output_type": "display_data", "metadata": {}, "data": {"image/png": image}}]
    path = write(heavy, tmp_path / "heavy.ipynb")
    assert path.stat().st_size > 30 * 1024 * 1024
    started = time.perf_counter()
    extract_notebook(path, assignment3)
    seconds = time.perf_counter() - started
    print(f"extraction of a {path.stat().st_size >> 20} MB notebook: {seconds:.3f} s")
    assert seconds < 1.0


def test_ipython_only_syntax_everywhere_still_grades_as_a_normal_report(assignment3: Assignment,
                                                                         tmp_path: Path) -> None:
    path = write(notebook("%pip install torch", "!ls", "?len", "x = %env", "%%html\n<b>hi</b>"), tmp_path / "w.ipynb")
    prepared = prepare_submission(path, assignment3, tmp_path / "scratch")
    assert "attention.py" in prepared.copied


# -- where notebooks are accepted ----------------------------------------------------------------------------


def test_a_notebook_in_a_folder_or_a_zip_is_found(assignment3: Assignment, filled3: dict, tmp_path: Path) -> None:
    folder = tmp_path / "alice"
    (folder / ".ipynb_checkpoints").mkdir(parents=True)
    write(filled3, folder / "my work.ipynb")
    write(notebook("def causal_mask(n):\n    return 'stale'"), folder / ".ipynb_checkpoints" / "x.ipynb")
    with zipfile.ZipFile(tmp_path / "bob.zip", "w") as bundle:
        bundle.write(folder / "my work.ipynb", "submission/assignment3.ipynb")
    digests = {submission_digest(p, assignment3) for p in (folder, tmp_path / "bob.zip", folder / "my work.ipynb")}
    assert len(digests) == 1, "the same notebook gives the same digest wherever it is"
    prepared = prepare_submission(folder, assignment3, tmp_path / "scratch")
    assert "'stale'" not in (prepared.package_dir / "attention.py").read_text()


def test_the_digest_ignores_outputs_and_execution_counts(assignment3: Assignment, filled3: dict,
                                                         tmp_path: Path) -> None:
    rerun = json.loads(json.dumps(filled3))
    for number, cell in enumerate(c for c in rerun["cells"] if c["cell_type"] == "code"):
        cell["execution_count"] = number + 7
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "hello"}]
    first = submission_digest(write(filled3, tmp_path / "a.ipynb"), assignment3)
    assert submission_digest(write(rerun, tmp_path / "b.ipynb"), assignment3) == first


def _same_files(first: Any, second: Any) -> bool:
    """Whether two prepared submissions hold byte-identical extracted files."""
    return first.copied == second.copied and all(
        (first.package_dir / name).read_bytes() == (second.package_dir / name).read_bytes() for name in first.copied)


def test_a_notebook_whose_lines_moved_in_their_cell_has_another_digest(assignment3: Assignment, filled3: dict,
                                                                       tmp_path: Path) -> None:
    """The feedback names a cell and its line: lines added above a definition in its cell (a comment, a print)
    leave the extracted files byte-identical but move every location below them, so the digest grade-all compares
    to skip an unchanged submission must differ; the same notebook saved again keeps its digest."""
    moved = json.loads(json.dumps(filled3))
    cell = next(c for c in moved["cells"] if c["cell_type"] == "code" and defined_name(source(c)) == "causal_mask")
    cell["source"] = "# my first try\nprint('checking')\n" + source(cell)
    before = prepare_submission(write(filled3, tmp_path / "a.ipynb"), assignment3, tmp_path / "s1")
    after = prepare_submission(write(moved, tmp_path / "b.ipynb"), assignment3, tmp_path / "s2")
    assert _same_files(before, after), "the premise: the extracted files are the same"
    line = next(n for n, text in enumerate((before.package_dir / "attention.py").read_text().split("\n"), 1)
                if text.startswith("def causal_mask"))
    assert before.cell_map.place("attention.py", line) != after.cell_map.place("attention.py", line)
    assert after.digest != before.digest
    assert submission_digest(tmp_path / "a.ipynb", assignment3) == before.digest


def test_a_cell_whose_syntax_error_moved_has_another_digest(assignment3: Assignment, filled3: dict,
                                                            tmp_path: Path) -> None:
    """A cell that cannot be parsed gives no code, only a note naming it and its line: an edit that moves the
    error changes the feedback, not the files, and so the digest."""
    first, second = json.loads(json.dumps(filled3)), json.loads(json.dumps(filled3))
    first["cells"].append(code_cell("x = 1\ndef helper(:\n    pass"))
    second["cells"].append(code_cell("x = 1\n\n\ndef helper(:\n    pass"))
    before = prepare_submission(write(first, tmp_path / "a.ipynb"), assignment3, tmp_path / "s1")
    after = prepare_submission(write(second, tmp_path / "b.ipynb"), assignment3, tmp_path / "s2")
    assert _same_files(before, after) and before.reading != after.reading
    assert after.digest != before.digest


def test_a_package_beside_a_notebook_wins_unless_it_is_the_untouched_template(assignment3: Assignment,
                                                                              filled3: dict, tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "release"
    shutil.copytree(assignment3.template, folder / "assignment3")
    write(filled3, folder / "assignment3.ipynb")
    prepared = prepare_submission(folder, assignment3, tmp_path / "s1")
    assert "# from cell" in (prepared.package_dir / "attention.py").read_text()
    assert prepared.choice == ("used the notebook assignment3.ipynb, which holds work; assignment3/ is the "
                               "untouched template")
    (folder / "assignment3" / "positions.py").write_text("# started\n")
    prepared = prepare_submission(folder, assignment3, tmp_path / "s2")
    assert (prepared.package_dir / "positions.py").read_text() == "# started\n"
    assert prepared.choice.startswith("both assignment3/ and assignment3.ipynb hold work: used assignment3/ ")
    shutil.copyfile(notebook_path(assignment3), folder / "assignment3.ipynb")  # as released: no work in it
    prepared = prepare_submission(folder, assignment3, tmp_path / "s3")
    assert prepared.choice == "", "a worked package beside the untouched notebook is no choice to explain"
    shutil.copyfile(assignment3.template / "positions.py", folder / "assignment3" / "positions.py")
    prepared = prepare_submission(folder, assignment3, tmp_path / "s4")
    assert prepared.choice == ("neither assignment3/ nor assignment3.ipynb holds work yet (both are as released): "
                               "used assignment3/")


def test_a_worked_package_ignores_any_notebooks_beside_it(assignment3: Assignment, tmp_path: Path) -> None:
    import shutil

    shutil.copytree(assignment3.reference, tmp_path / "repo" / "assignment3")
    for name in ("scratch.ipynb", "experiments.ipynb"):
        (tmp_path / "repo" / name).write_text("not even JSON")
    prepared = prepare_submission(tmp_path / "repo", assignment3, tmp_path / "scratch")
    assert (prepared.package_dir / "attention.py").read_bytes() == (assignment3.reference / "attention.py").read_bytes()


def test_no_package_and_no_notebook_says_both(assignment3: Assignment, tmp_path: Path) -> None:
    from autograder.errors import SubmissionError

    (tmp_path / "notes.txt").write_text("nothing")
    with pytest.raises(SubmissionError, match=r"^no assignment3/ package found .*, nor a notebook \(\.ipynb\)$"):
        prepare_submission(tmp_path, assignment3, tmp_path / "scratch")


def test_grade_all_takes_a_notebook_per_student(tmp_path: Path, filled3: dict) -> None:
    write(filled3, tmp_path / "carol.ipynb")
    (tmp_path / "dave").mkdir()
    write(filled3, tmp_path / "dave" / "work.ipynb")
    entries, ignored = discover(tmp_path, "plain", "assignment3")
    assert [(e.student, e.path.name) for e in entries] == [("carol", "carol.ipynb"), ("dave", "dave")]
    assert ignored == []


def test_grader_check_shows_what_it_extracted(filled3: dict, tmp_path: Path) -> None:
    path = write(filled3, tmp_path / "work.ipynb")
    result = CliRunner().invoke(main, ["check", "assignment3", str(path), "--task", "kv_cache_bytes",
                                       "--show-extracted", str(tmp_path / "seen")])
    assert result.exit_code == 0, result.output
    assert "kv_cache_bytes" in result.output and "passed" in result.output and "causal_mask" not in result.output
    assert sorted(p.name for p in (tmp_path / "seen").iterdir()) == ["__init__.py", "answers.toml", "attention.py",
                                                                     "kv_cache.py", "positions.py", "tiny_gpt.py"]


# -- the generated student notebook --------------------------------------------------------------------------


@pytest.mark.parametrize("name", available_assignments())
def test_the_committed_notebook_is_a_fresh_generation(name: str) -> None:
    pytest.importorskip("nbgrader")
    spec = load_assignment(name)
    assert notebook_drift(spec, render_template(spec)) == [], f"run `grader template {name}` and commit the notebook"


@pytest.mark.parametrize("name", available_assignments())
def test_the_notebook_has_a_stub_per_function_a_check_per_task_and_the_quiz(name: str) -> None:
    spec = load_assignment(name)
    nb = json.loads(notebook_path(spec).read_text())
    code = [source(c) for c in nb["cells"] if c["cell_type"] == "code"]
    assert code[0].startswith("# Setup") and "pip" in code[0]
    stubs = [defined_name(text) for text in code]
    for task in spec.tasks:
        for qualified in task.functions:
            assert qualified.split(".")[1] in stubs, qualified
        assert any(f'task="{task.id}"' in text for text in code), task.id
    assert any(text.startswith("ANSWERS = {") for text in code)
    assert "### BEGIN SOLUTION" not in notebook_path(spec).read_text()
    assert len({c["id"] for c in nb["cells"]}) == len(nb["cells"])


def test_the_untouched_notebook_extracts_to_stubs_only(assignment3: Assignment) -> None:
    extraction = extract(assignment3, read_notebook(notebook_path(assignment3)))
    assert extraction.notes == []
    for module in assignment3.modules:
        text = extraction.files[f"{module}.py"]
        assert "raise NotImplementedError()" in text


# -- for real: a Jupyter kernel, and the grader ---------------------------------------------------------------


@pytest.mark.slow
def test_the_filled_notebook_passes_every_check_cell_in_a_real_kernel(assignment3: Assignment, filled3: dict,
                                                                      repo: Path, tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    nb = nbformat.reads(json.dumps(filled3), as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("from autograder.public.notebook import kernel_runtime\n"
                                              "print('runtime starts:', kernel_runtime().starts)"))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(repo)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    NotebookClient(nb, kernel_name="python3", timeout=900, resources={"metadata": {"path": str(tmp_path)}}).execute()
    checks = [c for c in nb.cells if c.cell_type == "code" and "check_notebook(" in c.source]
    assert len(checks) == len(assignment3.task_ids) + 1
    for cell in checks:
        text = "".join(o.get("text", "") for o in cell.outputs)
        assert "failed" not in text and "not implemented" not in text and "error" not in text, text
        assert "passed" in text or "16 of 16 answers well-formed" in text, text
    # every check cell after the first answered from the kernel's runtime, its template started once
    assert nb.cells[-1].outputs[0]["text"] == "runtime starts: 1\n"


@pytest.mark.slow
def test_notebooks_grade_like_packages(assignment3: Assignment, filled3: dict, tmp_path: Path) -> None:
    from autograder.grading.grader import Grader

    messy = json.loads(json.dumps(filled3))
    code = [c for c in messy["cells"] if c["cell_type"] == "code"]
    mask = next(c for c in code if defined_name(source(c)) == "causal_mask")
    helper = "def _future(n):\n    return torch.ones(n, n, dtype=torch.bool).triu(1)\n"
    mask["source"] = ("%time\nprint('drafting')\n" + helper + "\n@registered('mask')\ndef causal_mask(n):\n"
                      "    return _future(n)\n")
    # the decorator, defined in the last cell, calls a helper at import that calls another (NOTEBOOKS.md rule 7)
    messy["cells"].append(code_cell("MASKS = {}\n\ndef registered(name):\n    _check_name(name)\n    def wrap(fn):\n"
                                    "        MASKS[name] = fn\n        return fn\n    return wrap\n\n"
                                    "def _check_name(name):\n    assert _is_name(name)\n\n"
                                    "def _is_name(name):\n    return name.isidentifier()"))
    extra = [code_cell("def scaled_dot_product_attention(q, k, v, causal=False):\n    return q, k  # a wrong draft"),
             code_cell("!pip install nothing\n%matplotlib inline\nmodel, losses = train(steps=100000)\n"
                       "print(losses[-1])"),
             code_cell("import time\ntime.sleep(3600)")]
    first_code = messy["cells"].index(code[1])
    messy["cells"][first_code:first_code] = extra  # the draft comes before the real attention cell
    tasks = [c for c in messy["cells"] if c["cell_type"] == "code" and defined_name(source(c)) == "TinyGPT"]
    tasks[0]["source"] = "import torch\n\n" + source(tasks[0])  # imports scattered too
    untouched = load_student_notebook(assignment3)
    with Grader(assignment3) as grader:
        started = time.monotonic()
        package = grader.grade(assignment3.reference)
        package_seconds = time.monotonic() - started
        started = time.monotonic()
        report = grader.grade(write(messy, tmp_path / "messy.ipynb"))
        notebook_seconds = time.monotonic() - started
        zero = grader.grade(write(untouched, tmp_path / "untouched.ipynb"))
    print(f"package {package_seconds:.1f} s, scattered notebook {notebook_seconds:.1f} s")
    assert package.score == 100
    assert report.score == 100, [(t.id, t.score, t.feedback) for t in report.tasks if t.score < t.max_score]
    assert notebook_seconds < 2 * package_seconds + 10
    assert zero.score == 0
    assert all(t.status == "not_implemented" for t in zero.tasks if t.id != "quiz"), \
        [(t.id, t.status, t.feedback) for t in zero.tasks]


# -- nbgrader courses ----------------------------------------------------------------------------------------


class CourseFakeGrader:
    """Full marks for a notebook holding GOOD, zero otherwise: the batch and write-back without torch."""

    def __init__(self, assignment: Assignment) -> None:
        self.assignment = assignment

    def grade(self, path: Path, prepared: Any = None) -> Any:
        from autograder.reports.results import GradeReport, TaskResult

        text = "".join(p.read_text() for p in Path(path).rglob("*.ipynb"))
        full = "GOOD" in text
        units = [(t.id, t.title, t.points) for t in self.assignment.tasks]
        units.append((self.assignment.quiz.task_id, "Quiz", self.assignment.quiz.points))
        tasks = [TaskResult(i, title, points if full else 0.0, points, "passed" if full else "failed", "", [])
                 for i, title, points in units]
        return GradeReport(self.assignment.name, str(path), sum(t.score for t in tasks), 100.0, tasks, seconds=0.01)

    def close(self) -> None:
        pass


def course_fake_factory(assignment: Assignment) -> CourseFakeGrader:
    return CourseFakeGrader(assignment)


@pytest.mark.filterwarnings("error:Object of type .* not in session")  # SQLAlchemy warned on a rerun
def test_an_nbgrader_course_is_graded_into_its_own_gradebook(assignment3: Assignment, tmp_path: Path) -> None:
    api = pytest.importorskip("nbgrader.api")
    from autograder.batch.nbgrader_course import nbgrader_url, write_back
    from autograder.batch.run import BatchOptions, grade_all

    course = tmp_path / "course"
    for student, marker in (("alice", "GOOD"), ("bob", "draft")):
        folder = course / "submitted" / student / "assignment3"
        folder.mkdir(parents=True)
        write(notebook(f"def causal_mask(n):\n    return '{marker}'"), folder / "assignment3.ipynb")
        (folder / "timestamp.txt").write_text("2026-11-30 12:34:56.000000 UTC")
    (course / "submitted" / "carol").mkdir()
    options = BatchOptions(jobs=1, gradebook=tmp_path / "ours.db", layout="nbgrader",
                           grader_factory=course_fake_factory)  # type: ignore[arg-type]
    summary = grade_all(assignment3, course, options)
    assert summary.ignored == ["carol (no assignment3/ submission)"]
    for _ in range(2):  # idempotent: a second write-back updates, never duplicates
        outcome = write_back(course, assignment3, tmp_path / "ours.db")
    assert outcome.students == ["alice", "bob"] and outcome.timestamps == 2 and outcome.errors == []
    with api.Gradebook(nbgrader_url(course)) as nb:
        assert nb.find_assignment("assignment3").max_score == 100
        alice, bob = nb.find_submission("assignment3", "alice"), nb.find_submission("assignment3", "bob")
        assert (alice.score, bob.score) == (100, 0)
        assert alice.timestamp.strftime("%Y-%m-%d %H:%M:%S") == "2026-11-30 12:34:56"
        assert nb.find_grade("kv_cache_bytes", "assignment3", "assignment3", "alice").score == 4
        assert len(nb.assignment_submissions("assignment3")) == 2


def test_a_folder_that_is_not_an_nbgrader_course_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["grade-all", "assignment3", str(tmp_path), "--layout", "nbgrader",
                                       "--gradebook", str(tmp_path / "g.db")])
    assert result.exit_code == 2 and "not an nbgrader course folder" in result.output


@pytest.mark.slow
def test_gradescope_run_autograder_grades_an_uploaded_notebook(filled3: dict, tmp_path: Path) -> None:
    import subprocess

    pytest.importorskip("nbgrader")
    out = tmp_path / "release"
    result = CliRunner().invoke(main, ["release", "assignment3", "--out", str(out), "--no-verify"])
    assert result.exit_code == 0, result.output
    assert (out / "assignment3-student" / "assignment3.ipynb").is_file()
    root = tmp_path / "autograder"
    with zipfile.ZipFile(out / "assignment3-gradescope.zip") as bundle:
        bundle.extractall(root / "source")
    (root / "results").mkdir()
    (root / "submission").mkdir()
    write(filled3, root / "submission" / "assignment3.ipynb")
    env = {k: v for k, v in os.environ.items() if k not in ("GRADER_ASSIGNMENTS", "PYTHONPATH")}
    env.update(GRADESCOPE_ROOT=str(root), GRADER_PYTHON=sys.executable)
    run = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True,
                         timeout=900, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 100, [(t["name"], t["score"]) for t in results["tests"]]


@pytest.mark.slow
def test_assignment2_notebook_grades_full_marks_filled_and_zero_untouched(tmp_path: Path) -> None:
    from autograder.grading.grader import Grader

    spec = load_assignment("assignment2")
    filled = fill_with_reference(load_student_notebook(spec), spec)
    with Grader(spec) as grader:
        full = grader.grade(write(filled, tmp_path / "filled.ipynb"))
        zero = grader.grade(notebook_path(spec))
    assert full.score == 100, [(t.id, t.score, t.feedback) for t in full.tasks if t.score < t.max_score]
    assert zero.score == 0 and all(t.status == "not_implemented" for t in zero.tasks if t.id != "quiz")


def test_pathological_cells_are_notes_not_tracebacks(assignment3: Assignment) -> None:
    chain = "\n".join(["C0 = 1"] + [f"C{i} = C{i - 1} + 1" for i in range(1, 3000)])
    extraction = extract(assignment3, cells("x = " + "(" * 300 + ")" * 300, "y = " + "-" * 200000 + "1", chain,
                                            "def f():\n    return '\\x00'"))
    assert all("were not graded" in note for note in extraction.notes)
