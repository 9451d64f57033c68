"""A function that never returns, as ``grader check`` meets it: a test running for a while is said to be still
running (once; on a terminal on a status line taken back afterwards), and the tasks whose code runs a task that
hung are not waited for but said to be not checked, the same way on every run."""

from __future__ import annotations

import io
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from test_check_robustness import inject, work_from_reference  # beside these tests

from autograder.public import runner
from autograder.public.forks import NOT_RUN, run_tasks
from autograder.public.hints import hung_upstream, upstream_tasks
from autograder.public.outcome import CheckOutcome, PublicTaskResult, StillRunning
from autograder.public.outcome import TestResult as PublicTest  # not a test class for pytest to collect
from autograder.public.render import Printer, task_lines
from autograder.public.runner import run_public_tests
from autograder.public.warm import WarmWorker
from autograder.spec.assignment import Assignment, load_assignment

A2 = load_assignment("assignment2")
A3 = load_assignment("assignment3")


def outcome_of(*results: tuple[str, str]) -> CheckOutcome:
    """A finished check whose tasks each have one test of the given status."""
    return CheckOutcome(Path("."), [PublicTaskResult(task, [PublicTest("t", status)], done=True)
                                    for task, status in results])


# -- which tasks a hang holds back (no process) ------------------------------------------------------------------


def test_the_tasks_upstream_are_the_closure_of_uses_without_a_cycle_back() -> None:
    assert upstream_tasks(A3, "tiny_gpt") == ["causal_mask", "attention", "head_split", "multi_head_attention",
                                              "transformer_block", "sinusoidal_positions"]
    assert upstream_tasks(A3, "causal_mask") == []
    assert upstream_tasks(A3, "untagged") == []
    # assignment2's multi_head_split and weight_copy use each other's code: neither is upstream of the other
    assert upstream_tasks(A2, "weight_copy") == ["causal_self_attention", "multi_head_stacked"]
    assert upstream_tasks(A2, "multi_head_split") == ["causal_self_attention", "multi_head_stacked"]


def test_a_task_is_held_back_by_the_first_tasks_that_hung_whatever_its_own_tests_did() -> None:
    outcome = outcome_of(("causal_mask", "passed"), ("attention", "timeout"), ("head_split", "timeout"),
                         ("multi_head_attention", "timeout"), ("transformer_block", "passed"),
                         ("sinusoidal_positions", "timeout"), ("tiny_gpt", "failed"))
    held = {result.task: hung_upstream(A3, outcome, result.task) for result in outcome.tasks}
    assert held == {"causal_mask": [], "attention": [], "head_split": [],
                    # its own test timed out too (it waited for attention): the tasks that hung first are named
                    "multi_head_attention": ["attention", "head_split"],
                    "transformer_block": ["attention", "head_split"],
                    "sinusoidal_positions": [],
                    "tiny_gpt": ["attention", "head_split", "sinusoidal_positions"]}
    cycle = outcome_of(("multi_head_split", "timeout"), ("weight_copy", "timeout"))
    assert [hung_upstream(A2, cycle, task) for task in ("multi_head_split", "weight_copy")] == [[], []]


def test_a_held_back_task_is_one_line_without_its_tests_and_next_goes_to_the_task_that_hung() -> None:
    outcome = outcome_of(("attention", "timeout"), ("multi_head_attention", "failed"))
    mha = outcome.task("multi_head_attention")
    mha.tests.append(PublicTest("t2", NOT_RUN))
    out = io.StringIO()
    printer = Printer(A3, out.write)
    printer("task", outcome, None)
    printer("end", outcome, None)
    assert mha.status == "not checked" and not mha.hints
    assert task_lines(mha, 20) == ["multi_head_attention   -/-  not checked: it uses attention, which hung: fix that "
                                   "first"]
    assert "\nNext: fix attention (scaled_dot_product_attention), the first failing task" in out.getvalue()
    assert not outcome.ok


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
    assert said == ["… importing positions.py is still running (up to 5 s)",
                    "… test_attention_worked_example in attention is still running (up to 5 s)"]
    assert text.index(said[1]) < text.index("attention  ")


def test_on_a_terminal_what_still_runs_is_a_status_line_that_leaves_the_lines_of_a_quiet_check() -> None:
    text = printed(live=True)
    assert "… test_attention_worked_example in attention is still running (up to 5 s)" in text
    quiet = "\n".join(line for line in printed(live=False).split("\n") if not line.startswith("…"))
    assert screen(text) == quiet


# -- the worker's forks: a hang stops the tasks that use the task that hung ------------------------------------


@dataclass
class Item:
    """What run_tasks needs of a pytest item, and how long it may run."""

    task: str
    name: str
    limit: float
    hangs: bool = False

    @property
    def nodeid(self) -> str:
        return f"test_{self.task}.py::{self.name}"


def run_fake(groups: list[tuple[str, list[Item]]], jobs: int) -> tuple[list[dict], float]:
    """Run these items as the worker runs a session's tests (``user`` uses ``base``): the events and the seconds."""
    events: list[dict[str, Any]] = []

    def run_item(item: Item, _next: Any) -> dict[str, Any]:
        while item.hangs:
            pass
        return {"task": item.task, "test": item.name, "nodeid": item.nodeid, "status": "passed", "summary": [],
                "detail": ""}

    started = time.monotonic()
    run_tasks(groups, jobs, lambda item: item.limit, run_item, events.append,
              upstream={"user": ["base"], "other": []})
    return events, time.monotonic() - started


def statuses(events: list[dict], task: str) -> list[str]:
    return [e["status"] for e in events if e.get("event") == "result" and e["task"] == task]


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_tests_of_a_task_that_uses_a_task_that_hung_are_not_waited_for(jobs: int) -> None:
    base = ("base", [Item("base", "b1", 0.4, hangs=True), Item("base", "b2", 0.4)])
    user = ("user", [Item("user", f"u{i}", 2.0, hangs=True) for i in range(3)])
    other = ("other", [Item("other", "o1", 0.4)])
    events, seconds = run_fake([base, user, other], jobs)
    assert statuses(events, "base") == ["timeout", "passed"]
    # with two forks at once, user's first test ran beside base's and was stopped; with one, user never started
    assert statuses(events, "user") == [NOT_RUN] * 3
    assert statuses(events, "other") == ["passed"]
    assert [e["task"] for e in events if e.get("event") == "task_done"].count("user") == 1
    assert seconds < 1.5, seconds  # base's wall clock and its stack: not one of user's (2 s each)


# -- grader check, for real --------------------------------------------------------------------------------------

LIMIT = 1  # seconds per public test in the copied manifest
TASKS = ["causal_mask", "attention", "head_split", "multi_head_attention", "transformer_block"]


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Assignment:
    """assignment3 with a 1 s public wall clock, so that each hang ends soon."""
    from test_check_robustness import copy_assignment

    root = tmp_path_factory.mktemp("quick")
    copy_assignment("assignment3", root)
    manifest = root / "assignments" / "assignment3" / "assignment.toml"
    manifest.write_text(re.sub(r"public_timeout = \d+\n", f"public_timeout = {LIMIT}\n", manifest.read_text(), 1))
    return load_assignment("assignment3", root / "assignments")


def check_text(assignment: Assignment, package: Path, worker: WarmWorker | None = None) -> tuple[str, CheckOutcome]:
    out = io.StringIO()
    printer = Printer(assignment, out.write)
    printer.header(CheckOutcome(package=package))
    outcome = run_public_tests(assignment, package, selected=TASKS, listener=printer, worker=worker)
    return out.getvalue(), outcome


@pytest.mark.slow
def test_a_hang_is_said_while_it_runs_and_the_tasks_using_it_are_not_waited_for(
        quick: Assignment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "PROGRESS_SECONDS", 0.3)
    package = work_from_reference("assignment3", tmp_path)
    inject(package / "attention.py", "def scaled_dot_product_attention(", "while True:\n    pass")
    cold, outcome = check_text(quick, package)
    attention = outcome.task("attention")
    assert len(attention.tests) == 5 and {test.status for test in attention.tests} == {"timeout"}, cold
    for test in attention.tests:  # each test that hung was said to run, once, before its task's line
        line = f"… {test.test} in attention is still running (up to {LIMIT} s)"
        assert cold.count(line) == 1 and cold.index(line) < cold.index("\nattention  "), cold
    assert re.search(r"^attention +0/5  failed$", cold, re.M), cold
    for task in ("multi_head_attention", "transformer_block"):
        assert re.search(rf"^{task} +-/-  not checked: it uses attention, which hung: fix that first$", cold,
                         re.M), cold
        # not one wall clock more: their tests were stopped or never started once attention's test overran
        assert "timeout" not in {test.status for test in outcome.task(task).tests}, outcome.task(task)
    assert re.search(r"^head_split +3/3  passed$", cold, re.M), cold
    worker = WarmWorker()
    try:
        warm, _ = check_text(quick, package, worker)
    finally:
        worker.close()
    # the same task lines and next step, whenever the hang was seen
    said = [re.findall(r"^(?:\w+ +(?: ?\d+/\d+| -/-) .*|Next: .*)$", text, re.M) for text in (cold, warm)]
    assert said[0] == said[1] and len(said[0]) == len(TASKS) + 1, said
    # and the same place: the loop, whichever of its lines (`while True:` or `pass`) each test was stopped on
    source = (package / "attention.py").read_text()
    loop = source[:source.index("while True:", source.index("def scaled_dot_product_attention("))].count("\n") + 1
    places = [re.findall(r"^ +(stopped in .*)\n +(.*)$", text, re.M) for text in (cold, warm)]
    expected = (f"stopped in the loop at attention.py, line {loop}, in scaled_dot_product_attention", "while True:")
    assert places[0] == places[1] and set(places[0]) == {expected}, places
