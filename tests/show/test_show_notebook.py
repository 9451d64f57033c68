"""`show()` from a notebook: the kernel's own cells or a saved .ipynb, the figures displayed inline, bad input."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import sys
import traceback
from pathlib import Path

import pytest
from markupsafe import escape as html_escape

import autograder.public.notebook as public_notebook
from autograder.authoring.notebook_template import notebook_path
from autograder.errors import AssignmentError, NotebookError, SubmissionError
from autograder.show import show
from autograder.show.catalog import load_catalog
from autograder.show.draw import draw_panel
from autograder.show.inline import Shown
from autograder.show.notebook import drop_kernel_workers
from autograder.show.panel import DRAWN, PLACEHOLDER
from autograder.show.render import Rendered
from autograder.show.run import ProbeResult, RunOutcome
from autograder.spec.assignment import available_assignments, load_assignment
from autograder.submission.notebook.read import Cell

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "submission"))
from notebook_helpers import (  # the notebook tests' helpers: the student notebook filled with the reference
    code_cell,
    defined_name,
    fill_with_reference,
    load_student_notebook,
    source,
    write,
)

A2_FIGURES = ["soft_attention_weights", "self_attention_weights", "dropout_weights", "stacked_and_split"]
INLINE_IMAGE = re.compile(r'<img src="data:image/png;base64,[A-Za-z0-9+/=]{100,}"')
BROKEN_SOFT_ATTENTION = "def soft_attention(query, encoder_states):\n    return (query,\n"


@pytest.fixture(autouse=True)
def no_kept_workers():
    """A pretended kernel keeps show()'s workers as a real one does: stopped after each test, not at exit."""
    yield
    drop_kernel_workers()


@pytest.fixture(scope="module")
def a2():
    return load_assignment("assignment2")


@pytest.fixture()
def filled2(a2) -> dict:
    return fill_with_reference(load_student_notebook(a2), a2)


@pytest.fixture()
def displayed(monkeypatch) -> list:
    """What show() displays under the cell (IPython's display, recorded)."""
    import IPython.display

    shown: list = []
    monkeypatch.setattr(IPython.display, "display", lambda *objects, **_: shown.extend(objects))
    return shown


def _kernel_history(notebook: dict) -> list[Cell]:
    """The code cells as a kernel that ran them top to bottom holds them in ``In``."""
    code = [source(cell) for cell in notebook["cells"] if cell["cell_type"] == "code"]
    return [Cell(f"In [{number}]", text) for number, text in enumerate(code, start=1)]


def _pretend_kernel(monkeypatch, cells: list[Cell]) -> None:
    monkeypatch.setattr(public_notebook, "in_kernel", lambda: True)
    monkeypatch.setattr(public_notebook, "kernel_cells", lambda: cells)


# -- inside a kernel: the cells it ran ------------------------------------------------------------------------


@pytest.mark.slow
def test_in_a_kernel_show_draws_the_cells_it_ran_and_displays_them_inline(a2, filled2, displayed, monkeypatch,
                                                                         tmp_path):
    _pretend_kernel(monkeypatch, _kernel_history(filled2))
    monkeypatch.chdir(tmp_path)
    shown = show("assignment2")
    assert displayed == [shown], "displayed once by show() itself: the generated cell ends with ';'"
    assert isinstance(shown, Path) and shown == shown.page == tmp_path / "assignment2-figures" / "index.html"
    assert shown.folder == tmp_path / "assignment2-figures" and shown.page.is_file()
    assert [p.figure.name for p in shown.panels] == A2_FIGURES and shown.rendered.drawn == 4
    html = shown._repr_html_()
    assert len(INLINE_IMAGE.findall(html)) == 4 == html.count("<img ")
    assert shown.summary().split(" in ")[0] == "4 of 4 figures drawn" and shown.summary() in html
    for panel in shown.panels:
        assert html_escape(panel.figure.title) in html
    assert "this notebook" in shown.page.read_text(encoding="utf-8"), "the page names the notebook, not a temp dir"
    assert not list(tmp_path.glob("assignment2/")), "the extracted package is temporary"


@pytest.mark.slow
def test_in_a_kernel_show_takes_the_cells_through_the_intake_with_their_notes_and_places(a2, filled2, capsys,
                                                                                         monkeypatch, tmp_path):
    """The cells a kernel ran go through the intake's own prepare_extraction, as check_notebook's do: the cell map
    comes from there (a placeholder says In [n]), and the notes it keeps are those the cell printed: a syntax error
    the kernel rejected (and that was fixed and run again) is no news, a constant left out is."""
    history = _kernel_history(filled2)
    raising = next(n for n, cell in enumerate(history) if defined_name(cell.source) == "soft_attention")
    history[raising] = Cell(history[raising].label, "def soft_attention(query, encoder_states):\n"
                                                    "    raise RuntimeError('not yet')\n")
    rejected = Cell(f"In [{len(history) + 1}]", BROKEN_SOFT_ATTENTION)
    constant = Cell(f"In [{len(history) + 2}]", "import numpy as np\nLIMIT = np.ones(3).sum()\n")
    _pretend_kernel(monkeypatch, [*history, rejected, constant])
    taken = []
    intake_call = public_notebook.prepare_extraction
    monkeypatch.setattr(public_notebook, "prepare_extraction", lambda *given: taken.append(intake_call(*given))
                        or taken[-1])
    monkeypatch.chdir(tmp_path)
    shown = show("assignment2")
    printed = capsys.readouterr().out
    notes = [line.removeprefix("note: ") for line in printed.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and notes[0].startswith(f"{constant.label}: LIMIT was not kept"), printed
    reasons = {panel.figure.name: panel.reason for panel in shown.panels}
    assert f"({history[raising].label}, line 2, in soft_attention)" in reasons["soft_attention_weights"], reasons
    assert not any(".py, line" in reason for reason in reasons.values()), reasons
    assert "this notebook (the cells this kernel ran)" in shown.page.read_text(encoding="utf-8")
    assert len(taken) == 1, "the intake's own call, as check_notebook makes it"
    assert shown.rendered.reading == notes == taken[0].reading, "what the intake kept is what the cell printed"


@pytest.mark.slow
def test_a_saved_notebook_with_a_syntax_error_costs_that_figure_only(a2, filled2, displayed, capsys, tmp_path):
    for cell in filled2["cells"]:
        if cell["cell_type"] == "code" and defined_name(source(cell)) == "soft_attention":
            cell["source"] = BROKEN_SOFT_ATTENTION
    (tmp_path / "work").mkdir()
    notebook = write(filled2, tmp_path / "work" / "mine.ipynb")
    shown = show("assignment2", notebook)
    assert displayed == [], "outside a kernel nothing is displayed"
    printed = capsys.readouterr().out
    assert re.search(r"^note: cell \d+ \('def soft_attention\(query, encoder_states\):'\) has a syntax error",
                     printed, re.MULTILINE), printed
    assert shown == tmp_path / "work" / "assignment2-figures" / "index.html", "beside the notebook"
    status = {panel.figure.name: panel for panel in shown.panels}
    assert status["soft_attention_weights"].status == PLACEHOLDER
    reason = status["soft_attention_weights"].reason
    assert reason.startswith("not implemented yet: soft_attention (the syntax error in cell "), reason
    assert reason.endswith(") kept soft_attention from being read)"), "the cell that defines it, not a stub's line"
    assert all(status[name].status == DRAWN for name in A2_FIGURES[1:])
    html = shown._repr_html_()
    assert len(INLINE_IMAGE.findall(html)) == 3 and "Not drawn: not implemented yet" in html
    assert "3 of 4 figures drawn (1 not implemented)" in html


# -- the inline view, without the sandbox ----------------------------------------------------------------------


def _rendered(folder: Path) -> Rendered:
    """One drawn figure and one placeholder whose reason carries markup (drawn here, no sandbox)."""
    catalog = load_catalog(load_assignment("assignment3"))
    weights = {"weights": _uniform(), "causal weights": _uniform()}
    drawn = draw_panel(catalog.figures[0], ProbeResult("ok", outputs=weights), folder)
    broken = draw_panel(catalog.figures[1], ProbeResult("error", "ValueError: <script>x</script>"), folder)
    outcome = RunOutcome(probes={}, notes=["missing file: <b>kv_cache.py</b>"], printed="<img src=x>")
    return Rendered(folder=folder, page=folder / "index.html", panels=[drawn, broken], outcome=outcome, seconds=1.5)


def _uniform():
    import torch

    return torch.full((1, 3, 6, 6), 1 / 6)


def test_the_inline_view_embeds_drawn_figures_and_escapes_the_rest(tmp_path):
    html = Shown.of(_rendered(tmp_path))._repr_html_()
    assert len(INLINE_IMAGE.findall(html)) == 1 == html.count("<img ")
    assert "1 of 2 figures drawn, 1 with a ✗ (1 with an error) in 1.5 s" in html  # uniform causal weights: ✗
    assert "&lt;script&gt;x&lt;/script&gt;" in html and "<script>" not in html
    assert "&lt;b&gt;kv_cache.py&lt;/b&gt;" in html and "&lt;img src=x&gt;" in html


def test_the_summary_names_the_figures_that_timed_out(tmp_path):
    """"1 timed out" did not say which figure's code to look at for an endless loop."""
    catalog = load_catalog(load_assignment("assignment3"))
    panels = [draw_panel(figure, ProbeResult(status), tmp_path)
              for figure, status in zip(catalog.figures[:3], ("timeout", "not implemented", "timeout"))]
    rendered = Rendered(folder=tmp_path, page=tmp_path / "index.html", panels=panels,
                        outcome=RunOutcome(probes={}), seconds=2.0)
    names = [figure.name for figure in catalog.figures[:3]]
    assert rendered.summary() == (f"0 of 3 figures drawn (2 timed out: {names[0]} and {names[2]}, 1 not implemented) "
                                  f"in 2.0 s")


def test_the_inline_view_places_the_expected_figure_beside_the_students(tmp_path):
    rendered = _rendered(tmp_path)
    (tmp_path / "expected").mkdir()
    shutil.copyfile(tmp_path / rendered.panels[0].image, tmp_path / "expected" / rendered.panels[0].image)
    rendered = dataclasses.replace(rendered, expected={rendered.panels[0].figure.name: f"expected/"
                                                                                       f"{rendered.panels[0].image}"})
    html = Shown.of(rendered)._repr_html_()
    assert len(INLINE_IMAGE.findall(html)) == 2 and "expected (the reference solution's figure)" in html


def test_the_page_path_displays_once_per_cell(tmp_path, displayed, monkeypatch):
    import IPython

    shell = type("Shell", (), {"execution_count": 7})()
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    shown = Shown.of(_rendered(tmp_path))
    shown._ipython_display_()
    shown._ipython_display_()  # the same cell's value, after show() displayed it
    assert len(displayed) == 1 and "text/html" in displayed[0]
    shell.execution_count = 8
    shown._ipython_display_()  # the value shown again in a later cell
    assert len(displayed) == 2
    derived = shown.parent
    assert derived == tmp_path and derived._repr_html_() is None


# -- bad input: one line ------------------------------------------------------------------------------------------


def _one_line_error(error: type, match: str, *arguments) -> None:
    with pytest.raises(error, match=match) as caught:
        show(*arguments)
    assert "\n" not in str(caught.value)
    frames = traceback.extract_tb(caught.value.__traceback__)
    assert len(frames) <= 2 and caught.value.__cause__ is None, "the grader's own frames are not shown"


def test_bad_input_is_a_one_line_grader_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _one_line_error(AssignmentError, "no assignment named 'nosuch'", "nosuch")
    _one_line_error(SubmissionError, "does not exist", "assignment2", tmp_path / "absent.ipynb")
    (tmp_path / "broken.ipynb").write_text("{not json")
    _one_line_error(NotebookError, "broken.ipynb", "assignment2", tmp_path / "broken.ipynb")
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path / "empty")  # a script, nothing here (no package, no notebook): no kernel to read
    _one_line_error(SubmissionError, "no assignment2/ package nor notebook here: looked in .*empty", "assignment2")


def test_outside_a_kernel_the_history_is_never_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(public_notebook, "kernel_cells", lambda: pytest.fail("read the kernel's history"))
    with pytest.raises(SubmissionError):
        show("assignment2")


# -- the generated notebook ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [n for n in available_assignments() if load_assignment(n).figure_files])
def test_the_generated_notebook_ends_by_showing_the_figures(name):
    cells = json.loads(notebook_path(load_assignment(name)).read_text(encoding="utf-8"))["cells"]
    heading, code = cells[-2:]
    assert heading["cell_type"] == "markdown" and source(heading).startswith("## Look at what your code does")
    assert code["cell_type"] == "code" and source(code) == f'from autograder.show import show\n\nshow("{name}");'


# The workers this kernel keeps (read, never started, here: started by show() or not at all).
WORKER_PIDS = """from autograder.show import notebook as _shown
print("{name} workers", sorted(w.process.pid for kept in _shown._kernel_workers.values() for w in kept if w.alive()))"""


def _printed(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream").strip()


@pytest.mark.slow
def test_the_show_cell_displays_the_figures_in_a_real_kernel(a2, filled2, repo, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("ipykernel")
    from nbclient import NotebookClient

    # The definitions and the show cell only: the setup and check cells are tested with the notebooks.
    kept = [c for c in filled2["cells"] if c["cell_type"] == "code" and "check_notebook" not in source(c)
            and not source(c).startswith("# Setup")]
    kept.append({**code_cell(WORKER_PIDS.format(name="first")), "id": "first-workers"})
    kept.append({**code_cell("shown = show('assignment2')\nshown"), "id": "again"})  # no ';': still displayed once
    kept.append({**code_cell(WORKER_PIDS.format(name="again")), "id": "again-workers"})
    nb = nbformat.reads(json.dumps({**filled2, "cells": kept}), as_version=4)
    monkeypatch.setenv("PYTHONPATH", str(repo))
    NotebookClient(nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(tmp_path)}}).execute()
    for cell in (nb.cells[-4], nb.cells[-2]):
        html = [o["data"]["text/html"] for o in cell.outputs if "text/html" in o.get("data", {})]
        assert len(html) == 1, cell.outputs
        assert len(INLINE_IMAGE.findall(html[0])) == 4 and "4 of 4 figures drawn" in html[0]
    first, again = (_printed(cell) for cell in (nb.cells[-3], nb.cells[-1]))
    assert first.startswith("first workers [") and first != "first workers []", first
    assert again == first.replace("first", "again"), "the second show() reuses the kernel's workers"
    assert (tmp_path / "assignment2-figures" / "index.html").is_file()
