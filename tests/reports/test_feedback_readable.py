"""Feedback students can read: markdown without HTML escapes, self-contained HTML, 0644 files, no machine paths."""

from __future__ import annotations

import stat
from pathlib import Path

from autograder.gradebook.export import export_feedback
from autograder.gradebook.store import Gradebook, Outcome
from autograder.reports.feedback import markdown_text, render_feedback, render_feedback_html, without_paths
from autograder.spec.late import Lateness

REPORT = {"assignment": "mini", "seconds": 1.5, "environment": {"seed": 1, "torch": "2"}, "notes": [],
          "tasks": [{"id": "shift", "title": "Shift", "score": 1.0, "max_score": 1.0, "status": "passed",
                     "feedback": "# not a heading", "checks": []},
                    {"id": "scale", "title": "Scale | shift", "score": 0.0, "max_score": 1.0, "status": "failed",
                     "feedback": "0 of 1 checks passed; first problem: masks", "checks": [
                         {"name": "scale.mask", "description": "masks future positions (j > i)", "status": "failed",
                          "message": "wrong <script>alert(1)</script> at `x` & [link](http://e.org) *bold*",
                          "hint": "use torch.triu(..., diagonal=1)"}]}]}


def _book(tmp_path: Path) -> Path:
    db = tmp_path / "g.db"
    with Gradebook(db) as book:
        book.record("mini", "fp", "alice", "d1", "/srv/class/alice", Outcome("graded", 1.0, 2.0, report=REPORT))
        book.record("mini", "fp", "frank", "d2", "/srv/class/frank.zip",
                    Outcome("error", 0.0, 2.0, message="/home/teacher/class/frank.zip is neither a folder nor a zip "
                                                       "archive"))
    return db


def test_markdown_keeps_text_readable_and_inert(tmp_path: Path) -> None:
    with Gradebook(_book(tmp_path), readonly=True) as book:
        alice, frank = book.current("mini")
    text = render_feedback(alice)
    assert "(j > i)" in text and "&gt;" not in text and "&lt;" not in text and "&amp;" not in text
    assert r"wrong \<script>alert(1)\</script> at \`x\` \& \[link\](http://e.org) \*bold\*" in text
    assert "| Scale \\| shift | 0 / 1 | failed |" in text
    assert "\\# not a heading" in text
    assert "Hint: use torch.triu(..., diagonal=1)" in text
    assert "Reason: frank.zip is neither a folder nor a zip archive" in render_feedback(frank)
    assert "/home/teacher" not in render_feedback(frank) and "/home/teacher" not in render_feedback_html(frank)


def test_markdown_text_escapes_only_what_markdown_would_act_on() -> None:
    assert markdown_text("causal_mask(n) -> (n, n); 1.5 + 2") == "causal_mask(n) -> (n, n); 1.5 + 2"
    assert markdown_text("_emph_ 1. item") == r"\_emph\_ 1. item"
    assert markdown_text("- item") == r"\- item" and markdown_text("> quote") == r"\> quote"
    assert without_paths("see /tmp/x/y/report.json and https://e.org/a/b, a/b, 3 / 4") == \
        "see report.json and https://e.org/a/b, a/b, 3 / 4"


def test_html_is_self_contained_and_escaped(tmp_path: Path) -> None:
    with Gradebook(_book(tmp_path), readonly=True) as book:
        alice, _ = book.current("mini")
    page = render_feedback_html(alice)
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert "<script>" not in page and "&lt;script&gt;" in page and "(j &gt; i)" in page
    assert "http" not in page.replace("http://e.org", "")  # no external resource, only the student's text


def test_feedback_files_are_0644_markdown_and_html(tmp_path: Path) -> None:
    out = tmp_path / "fb"
    with Gradebook(_book(tmp_path), readonly=True) as book:
        assert export_feedback(book, "mini", out) == 2
    names = sorted(p.name for p in out.iterdir())
    assert names == ["alice.html", "alice.md", "frank.html", "frank.md"]
    assert {stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()} == {0o644}


def test_feedback_shows_lateness(tmp_path: Path) -> None:
    from datetime import datetime, timezone

    db = _book(tmp_path)
    due = datetime(2026, 12, 1, 23, 0, tzinfo=timezone.utc)
    with Gradebook(db) as book:
        book.set_lateness(book.current_id("mini", "alice"),
                          Lateness(datetime(2026, 12, 3, 1, 0, tzinfo=timezone.utc), due, 93600.0, 0.2,
                                   "1 d 2 h late (2 days counted): -20%"))
    with Gradebook(db, readonly=True) as book:
        alice, _ = book.current("mini")
    assert (alice.raw, alice.score) == (1.0, 0.8)
    text = render_feedback(alice)
    assert "**Score: 0.8 / 2**" in text
    assert "Submitted 2026-12-03T01:00:00+00:00, deadline 2026-12-01T23:00:00+00:00: 1 d 2 h late (2 days " \
           "counted): -20%. Score before the penalty 1, after it 0.8." in text
