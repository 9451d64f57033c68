"""`grader show --watch`, driven as a student drives it: each save redraws only the figures whose code changed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from autograder.show.catalog import load_catalog
from autograder.spec.assignment import load_assignment

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "public"))
from test_warm import Lines, stop_watching  # noqa: E402 - as the check --watch tests drive it

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_show_cache import SOFTMAX_USERS, _edit_softmax  # noqa: E402 - which probes reach softmax


@pytest.mark.slow
def test_watch_redraws_on_a_save_only_the_figures_whose_code_changed(tmp_path: Path, path_sockets: Callable) -> None:
    a2 = load_assignment("assignment2")
    package = tmp_path / "work" / a2.package
    shutil.copytree(a2.reference, package, ignore=shutil.ignore_patterns("__pycache__"))
    softmax_figures = [f.name for f in load_catalog(a2).figures if f.probe.name in SOFTMAX_USERS]
    process = subprocess.Popen([sys.executable, "-m", "autograder.cli", "show", "assignment2", str(package),
                                "--watch", "--no-expected"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = Lines(process.stdout)
        first = "".join(lines.until(r"^watching the \d+ files of .* for saves \(Ctrl-C to stop\)$"))
        assert re.search(r"^assignment2: 4 of 4 figures drawn in [\d.]+ s$", first, re.M), first
        page = package.parent / f"{a2.package}-figures" / "index.html"
        assert f"page: {page}" in first and page.is_file()
        assert not path_sockets(process.pid)  # the kept workers are reached through pipes only

        _edit_softmax(package, "x = np.asarray(x)")  # a change of softmax's code, not of what it returns
        assert lines.until(r"saved") == ["\n", "numpy_attention.py saved: redrawing\n"]
        redrawn = lines.until(r"^redrawn: ")[-1]
        assert redrawn.startswith(f"redrawn: {', '.join(softmax_figures)}; 4 of 4 figures drawn in "), redrawn
        assert lines.until(r"^page: ") == [f"page: {page}\n"]

        _edit_softmax(package, "# a comment changes no figure")
        lines.until(r"saved: redrawing")
        assert lines.until(r"^redrawn: ")[-1].startswith("redrawn: none (no code a figure runs changed); 4 of 4 ")

        stop_watching(process, lines)
    finally:
        process.kill()
    assert "Traceback" not in process.stderr.read()


NOTE = re.compile(r"^note: ", re.M)


@pytest.mark.slow
def test_watch_says_the_choice_of_work_once_and_again_only_when_it_changes(tmp_path: Path) -> None:
    """A package and a notebook beside it that both hold work: the first page's lines say which one is drawn, a
    redraw after a save does not say it again while nothing changed, and says it again, once, when it changed (as
    ``grader check --watch`` does with each of its notes). The page itself always says it."""
    from autograder.authoring.notebook_template import notebook_path

    a2 = load_assignment("assignment2")
    package = tmp_path / "work" / a2.package
    shutil.copytree(a2.reference, package, ignore=shutil.ignore_patterns("__pycache__"))
    released = notebook_path(a2).read_text()
    worked = json.loads(released)
    worked["cells"].append({"cell_type": "code", "id": "c999-mine", "metadata": {}, "outputs": [],
                            "execution_count": None, "source": "def softmax(x):\n    return None"})
    notebook = package.parent / f"{a2.name}.ipynb"
    notebook.write_text(json.dumps(worked))
    both = f"note: both {a2.package}/ and {notebook.name} hold work: used {a2.package}/"
    page = package.parent / f"{a2.package}-figures" / "index.html"
    process = subprocess.Popen([sys.executable, "-m", "autograder.cli", "show", "assignment2", str(package.parent),
                                "--watch", "--no-expected"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = Lines(process.stdout)
        first = "".join(lines.until(r"^watching the \d+ files of .* for saves"))
        assert first.count(both) == 1 and len(NOTE.findall(first)) == 1, first

        def redraw(line: str) -> str:
            _edit_softmax(package, line)
            lines.until(r"saved: redrawing")
            return "".join(lines.until(r"^page: "))

        same = redraw("x = np.asarray(x)")
        assert not NOTE.search(same), same
        assert "hold work: used" in page.read_text()  # the page is whole on each redraw
        notebook.write_text(released)  # no work in it any more: no choice to explain
        assert not NOTE.search(redraw("y = 1")), lines.seen
        notebook.write_text(json.dumps(worked))  # the situation changes back: said again, once
        again = redraw("z = 2")
        assert again.count(both) == 1 and len(NOTE.findall(again)) == 1, again
        stop_watching(process, lines)
    finally:
        process.kill()
    assert "Traceback" not in process.stderr.read()


def test_watch_is_refused_with_reference(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from autograder.cli import main

    result = CliRunner().invoke(main, ["show", "assignment2", "--reference", "--watch"])
    assert result.exit_code == 2 and "give no PATH and no --watch" in result.output
    assert "Traceback" not in result.output
