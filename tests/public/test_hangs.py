"""A function that never returns, as ``grader check`` meets it: a test running for a while is said to be still
running (once; on a terminal on a status line taken back afterwards)."""

from __future__ import annotations

import io
from pathlib import Path

from autograder.public.outcome import CheckOutcome, PublicTaskResult, StillRunning
from autograder.public.outcome import TestResult as PublicTest  # not a test class for pytest to collect
from autograder.public.render import Printer
from autograder.spec.assignment import load_assignment

A3 = load_assignment("assignment3")


# -- saying what still runs (no process) -------------------------------------------------------------------------


def screen(text: str) -> str:
    """What a terminal shows after ``text``: a carriage return goes back to the start of the line."""
    lines = []
    for line in text.split("\n"):
        cells: list[str] = []
        column = 0
        for char in line:
            if char == "\r":
                column = 0
                continue
            cells[column:column + 1] = [char]
            column += 1
        lines.append("".join(cells).rstrip())
    return "\n".join(lines)


def printed(live: bool) -> str:
    """A check of causal_mask and attention with a test of attention running long, as the Printer writes it."""
    out = io.StringIO()
    printer = Printer(A3, out.write, live=live)
    outcome = CheckOutcome(Path("work"), [PublicTaskResult("causal_mask"), PublicTaskResult("attention")])
    printer.header(outcome)
    slow = StillRunning("attention", "test_attention_worked_example", 5.0)
    importing = StillRunning("", "positions", 5.0)
    printer("running", outcome, [importing])
    printer("running", outcome, [])
    printer("running", outcome, [slow])
    outcome.tasks[0].tests.append(PublicTest("test_causal_mask_literal_values_for_four_tokens", "passed"))
    outcome.tasks[0].done = True
    printer("task", outcome, outcome.tasks[0])
    printer("running", outcome, [slow])  # the same test, still running: said once only
    printer("running", outcome, [])
    outcome.tasks[1].tests.append(PublicTest("test_attention_worked_example", "timeout",
                                             ["did not finish within 5 s — an endless loop?"]))
    outcome.tasks[1].done = True
    printer("task", outcome, outcome.tasks[1])
    printer("end", outcome, None)
    return out.getvalue()


def test_a_long_test_is_said_once_on_its_own_line_where_lines_cannot_be_taken_back() -> None:
    text = printed(live=False)
    assert "\r" not in text  # a notebook cell or a log keeps every character
    said = [line for line in text.splitlines() if line.startswith("…")]
    assert said == ["… importing positions.py is still running (stopped at 5 s)",
                    "… test_attention_worked_example in attention is still running (stopped at 5 s)"]
    assert text.index(said[1]) < text.index("attention  ")


def test_on_a_terminal_what_still_runs_is_a_status_line_that_leaves_the_lines_of_a_quiet_check() -> None:
    text = printed(live=True)
    assert "… test_attention_worked_example in attention is still running (stopped at 5 s)" in text
    quiet = "\n".join(line for line in printed(live=False).split("\n") if not line.startswith("…"))
    assert screen(text) == quiet
