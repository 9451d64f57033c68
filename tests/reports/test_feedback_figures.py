"""Feedback of a student whose figures were drawn (``grade-all --figures``): a relative link, the PNGs inline."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path

from autograder.gradebook.export import FIGURE_STAMP, export_feedback, figure_page, figures_folder
from autograder.gradebook.store import Gradebook, Outcome
from autograder.reports.feedback import FigurePage, render_feedback, render_feedback_html

REPORT = {"assignment": "mini", "seconds": 1.5, "environment": {"seed": 1, "torch": "2"}, "notes": [],
          "tasks": [{"id": "scale", "title": "Scale", "score": 1.0, "max_score": 2.0, "status": "failed",
                     "feedback": "", "checks": []}]}
PNG = b"\x89PNG\r\n\x1a\n" + b"not really a picture"


def _book(tmp_path: Path) -> Path:
    db = tmp_path / "g.db"
    with Gradebook(db) as book:
        book.record("mini", "fp", "alice", "d1", "/srv/class/alice", Outcome("graded", 1.0, 2.0, report=REPORT))
        book.record("mini", "fp", "frank", "d2", "/srv/class/frank", Outcome("error", 0.0, 2.0, message="broken"))
    return db


def _draw(feedback: Path, student: str, digest: str) -> Path:
    """A figures folder as grade-all --figures leaves it: a page, one drawn PNG, one placeholder, the stamp."""
    folder = figures_folder(feedback, student)
    folder.mkdir(parents=True)
    (folder / "index.html").write_text("<!doctype html><p>figures</p>")
    (folder / "weights.png").write_bytes(PNG)
    (folder / "broken.png").write_bytes(PNG)
    panels = [{"name": "weights", "title": "Attention <weights>", "image": "weights.png", "status": "drawn"},
              {"name": "broken", "title": "Broken", "image": "broken.png", "status": "placeholder"}]
    (folder / FIGURE_STAMP).write_text(json.dumps({"digest": digest, "summary": "1 of 2 figures drawn",
                                                   "panels": panels}))
    return folder


def test_figures_folder_is_beside_the_feedback_file(tmp_path: Path) -> None:
    assert figures_folder(tmp_path, "=HYPERLINK(1)") == tmp_path / "_HYPERLINK_1_-figures"
    assert figures_folder(tmp_path, "../../etc").parent == tmp_path


def test_page_links_relatively_and_embeds_only_drawn_figures(tmp_path: Path) -> None:
    feedback = tmp_path / "fb"
    _draw(feedback, "alice", "d1")
    _draw(feedback, "frank", "d2")
    with Gradebook(_book(tmp_path), readonly=True) as book:
        assert export_feedback(book, "mini", feedback) == 2
    page = (feedback / "alice.html").read_text()
    assert '<a href="alice-figures/index.html">' in page and "1 of 2 figures drawn" in page
    assert page.count("data:image/png;base64,") == 1 and base64.b64encode(PNG).decode() in page
    assert 'alt="Attention &lt;weights&gt;"' in page and "<script>" not in page
    assert str(tmp_path) not in page and "/srv/" not in page
    markdown = (feedback / "alice.md").read_text()
    assert "## Your figures" in markdown and "(alice-figures/index.html)" in markdown
    assert str(tmp_path) not in markdown
    # a submission that could not be graded still links the figures that were drawn
    assert 'href="frank-figures/index.html"' in (feedback / "frank.html").read_text()
    assert "(frank-figures/index.html)" in (feedback / "frank.md").read_text()
    files = [p for p in feedback.iterdir() if p.is_file()]
    assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o644}


def test_figures_of_another_submission_are_not_linked(tmp_path: Path) -> None:
    feedback = tmp_path / "fb"
    _draw(feedback, "alice", "an-older-digest")
    with Gradebook(_book(tmp_path), readonly=True) as book:
        alice, _ = book.current("mini")
        assert figure_page(feedback, alice) is None
        export_feedback(book, "mini", feedback)
    assert "figures" not in (feedback / "alice.html").read_text().lower()
    assert "Your figures" not in (feedback / "alice.md").read_text()


def test_no_figures_no_section(tmp_path: Path) -> None:
    with Gradebook(_book(tmp_path), readonly=True) as book:
        alice, frank = book.current("mini")
    assert render_feedback_html(alice) == render_feedback_html(alice, None)
    assert "Your figures" not in render_feedback(alice) + render_feedback_html(frank)
    shown = render_feedback_html(alice, FigurePage("alice-figures/index.html", "", []))
    assert "alice-figures/index.html" in shown and "data:image" not in shown
