"""Similar submissions for review, the class report's sections and its figure, on a small class."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from click.testing import CliRunner

from autograder.gradebook.store import Gradebook, Outcome
from autograder.reports.classreport import class_stats, render_markdown, write_class_report
from autograder.reports.similarity import normalise, similar_groups, similarity
from autograder.spec.assignment import load_assignment

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = ROOT / "tests" / "fixtures" / "assignments"

TEMPLATE = '''"""Two small tensor functions."""

import torch


def scale(x, factor):
    """Multiply every entry of x by factor."""
    raise NotImplementedError("scale")


def row_sums(x):
    """Sum each row of a 2-D tensor."""
    raise NotImplementedError("row_sums")
'''

ORIGINAL = '''import torch


def scale(x, factor):
    raise NotImplementedError("scale")


def row_sums(x):
    """Sum each row."""
    n, m = x.shape
    out = torch.zeros(n, dtype=x.dtype)
    for i in range(n):
        total = 0.0
        for j in range(m):
            total = total + x[i, j]
        out[i] = total
    return out
'''

# The same code renamed, re-commented, re-formatted, with other literals: identical once normalised.
RENAMED = '''import torch
def scale(x, factor):
    raise NotImplementedError("scale")
def row_sums(t):
    # my own work
    rows, cols = t.shape
    result = torch.zeros(rows, dtype=t.dtype)
    for r in range(rows):
        acc = 0
        for c in range(cols):
            acc = acc + t[r, c]
        result[r] = acc
    return result
'''

# One statement more: nearly identical.
NEAR = ORIGINAL.replace("        out[i] = total\n", "        out[i] = total\n        assert out[i] == total\n")

# A different approach.
OWN = '''import torch


def scale(x, factor):
    raise NotImplementedError("scale")


def row_sums(x):
    if x.dim() != 2:
        raise ValueError("expected a matrix, got shape " + str(tuple(x.shape)))
    ones = torch.ones(x.shape[1], 1, dtype=x.dtype)
    return (x @ ones).reshape(-1)
'''

CLASS = {"orig": ORIGINAL, "renamed": RENAMED, "near": NEAR, "own": OWN, "template": TEMPLATE}
TASKS = {"scale": ("ops.scale",), "row_sums": ("ops.row_sums",)}


def test_normalisation_drops_names_literals_comments_and_docstrings() -> None:
    assert normalise({"ops.py": ORIGINAL}, ("ops.row_sums",)) == normalise({"ops.py": RENAMED}, ("ops.row_sums",))
    assert normalise({"ops.py": OWN}, ("ops.row_sums",)) != normalise({"ops.py": ORIGINAL}, ("ops.row_sums",))
    assert normalise({"ops.py": "def row_sums(:\n"}, ("ops.row_sums",)) is None
    near = similarity(normalise({"ops.py": NEAR}, ("ops.row_sums",)), normalise({"ops.py": ORIGINAL},
                                                                                   ("ops.row_sums",)))
    assert 0.9 <= near < 1.0


def test_groups_identical_and_near_copies_but_not_the_template_or_own_work() -> None:
    sources = {student: {"ops.py": text} for student, text in CLASS.items()}
    groups = similar_groups(sources, TASKS, {"ops.py": TEMPLATE})
    assert [(g.task, g.students) for g in groups] == [("row_sums", ["near", "orig", "renamed"])]
    assert 0.9 <= groups[0].similarity < 1.0
    # "scale" is the template's stub in every submission: never grouped, though identical everywhere.
    exact = similar_groups({k: sources[k] for k in ("orig", "renamed")}, TASKS, {"ops.py": TEMPLATE})
    assert [(g.students, g.similarity) for g in exact] == [(["orig", "renamed"], 1.0)]


def _class_book(tmp_path: Path) -> Path:
    db = tmp_path / "g.db"
    with Gradebook(db) as book:
        for student, text in CLASS.items():
            implemented = student != "template"
            tasks = [{"id": "scale", "title": "Scale", "score": 0.0, "max_score": 2.0, "status": "not_implemented",
                      "feedback": "", "checks": [{"name": "scale.values", "description": "scale values",
                                                  "status": "not_implemented", "message": "not implemented"}]},
                     {"id": "row_sums", "title": "Row sums", "score": 3.0 if implemented else 0.0, "max_score": 3.0,
                      "status": "passed" if implemented else "not_implemented", "feedback": "",
                      "checks": [{"name": "row_sums.values", "description": "row sums",
                                  "status": "passed" if implemented else "not_implemented"}]}]
            book.record("mini", "fp", student, student, student,
                        Outcome("graded", 3.0 if implemented else 0.0, 5.0, report={"tasks": tasks}),
                        files={"ops.py": text})
    return db


def test_class_report_sections(tmp_path: Path) -> None:
    db = _class_book(tmp_path)
    spec = load_assignment("mini", root=ASSIGNMENTS)
    template = tmp_path / "template" / "mini"
    template.mkdir(parents=True)
    (template / "ops.py").write_text(TEMPLATE)
    spec = dataclasses.replace(spec, template=template)
    with Gradebook(db, readonly=True) as book:
        stats = class_stats(book, "mini", spec)
    text = render_markdown(stats, None)
    assert "| row_sums | near, orig, renamed |" in text and "similar — review |" in text
    assert "copied" not in text.lower() and "plagiar" not in text.lower()
    # Unimplemented tasks have their own column; they are not "failed checks".
    assert "Every check passed for every student." in text
    export = tmp_path / "export"
    written = write_class_report(db, tmp_path / "report", "mini", figure=True, spec=spec, similarity_export=export)
    assert sorted(p.name for p in (export / "submissions").iterdir()) == sorted(CLASS)
    assert (export / "submissions" / "renamed" / "ops.py").read_text() == RENAMED
    assert (export / "template" / "ops.py").read_text() == TEMPLATE
    assert "jplag" in (export / "README.txt").read_text().lower()
    assert tmp_path / "report" / "class_report.png" in written
    assert {oct((tmp_path / "report" / n).stat().st_mode & 0o777) for n in ("class_report.png", "class_report.md")} \
        == {"0o644"}


def test_report_command_without_the_manifest_says_what_it_needs(tmp_path: Path) -> None:
    from autograder.cli import main

    db = _class_book(tmp_path)
    result = CliRunner().invoke(main, ["report", str(db), "--out", str(tmp_path / "r"), "--no-figure"])
    assert result.exit_code == 0, result.output
    assert "needs the assignment's manifest" in (tmp_path / "r" / "class_report.md").read_text()


def test_figure_counts_are_integers_and_the_legend_is_off_the_bars() -> None:
    matplotlib = __import__("pytest").importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from autograder.reports.classreport import ClassStats, TaskStats, _plot_bars, _plot_histogram, _plot_tasks

    stats = ClassStats("mini", students=3, max_score=5.0, scores=[1.0, 3.0, 3.0],
                       tasks=[TaskStats("scale", "Scale", 2.0, 3, 2, 0, 4.0)])
    figure, axes = plt.subplots(1, 3, layout="constrained")
    _plot_histogram(axes[0], stats)
    _plot_tasks(axes[1], stats)
    _plot_bars(axes[2], [("scale: hint", 2), ("rows: hint", 1)], "mistakes", "students", "none")
    figure.canvas.draw()
    assert all(float(t).is_integer() for t in axes[0].get_yticks())
    assert all(float(t).is_integer() for t in axes[2].get_xticks())
    legend = axes[1].get_legend().get_window_extent()
    assert legend.y1 <= axes[1].get_window_extent().y0  # below the panel, not over the bars
    plt.close(figure)
