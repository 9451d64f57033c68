"""A function that never returns, as ``grader check`` meets it: a test running for a while is said to be still
running (once; on a terminal on a status line taken back afterwards), and the tasks whose code runs a task that
hung are not waited for but said to be not checked, the same way on every run."""

from __future__ import annotations

import io
import queue
import re
from pathlib import Path
from typing import Any

import pytest
from test_check_robustness import inject, work_from_reference  # beside these tests

from autograder.public import runner
from autograder.public.hints import hung_upstream, upstream_tasks
from autograder.public.lanes import Lanes
from autograder.public.outcome import NOT_RUN, CheckOutcome, PublicTaskResult, StillRunning
from autograder.public.outcome import TestResult as PublicTest  # not a test class for pytest to collect
from autograder.public.render import Printer, task_lines
from autograder.public.runner import check_runtime, run_public_tests
from autograder.sandbox.clock import Watch
from autograder.sandbox.results import JobResult
from autograder.sandbox.runtime import Runtime
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


# -- the lanes: a hang stops the tasks that use the task that hung (no process) ------------------------------------


class FakeSession:
    """Runs a job as a session zygote would, in this process: a test named ``*hangs`` of ``base`` overruns its wall
    clock at once; one of another task runs until its job is stopped (a bound only a hang of the lanes breaks)."""

    def __init__(self, started: queue.SimpleQueue) -> None:
        self.started = started

    def run(self, job: dict, limits: Any, job_dir: Path, output_limit: int, watch: Watch) -> JobResult:
        result = JobResult(job_dir=job_dir)
        for nodeid in job["session"]["nodeids"]:
            result.started.append(nodeid)
            if nodeid.endswith("hangs"):
                if nodeid.startswith("base"):
                    watch.on_overrun()
                    result.timed_out = True
                    return result
                self.started.put(nodeid)
                result.stopped = watch.stop.wait(60)
                return result
            result.records.append({"nodeid": nodeid, "status": "passed", "summary": []})
        result.done = True
        return result

    def close(self) -> None:
        pass

    def kill(self) -> None:
        pass


def run_lanes(tasks: list[tuple[str, list[str]]], count: int, gate: bool) -> dict[str, list[str]]:
    """Run these tasks' tests on ``count`` fake lanes (``user`` uses ``base``): each task's statuses. With ``gate``,
    ``base`` waits until ``user``'s first test is running, so that the hang is seen while it runs."""
    events: queue.SimpleQueue = queue.SimpleQueue()
    started: queue.SimpleQueue = queue.SimpleQueue()
    lanes = Lanes(lambda index: FakeSession(started), [], 0, Path("."), {"user": ["base"], "other": []}, (),
                  lambda stack: {}, lambda *event: events.put(event))
    lanes.pending.extend((task, [{"test": name, "nodeid": f"{task}::{name}", "limit": 1.0} for name in names])
                         for task, names in tasks)
    if gate:
        original = FakeSession.run

        def gated(session: FakeSession, job: dict, *args: Any, **kwargs: Any) -> JobResult:
            if job["session"]["nodeids"][0] == "base::b_hangs":
                started.get(timeout=60)
            return original(session, job, *args, **kwargs)

        lanes.open_session = lambda index: type("Gated", (FakeSession,), {"run": gated})(started)
    threads = lanes.start(lanes.open_session(0), count)
    for thread in threads:
        thread.join(60)
    statuses: dict[str, list[str]] = {}
    while not events.empty():
        event = events.get()
        if event[0] == "results":
            for record in event[1]:
                statuses.setdefault(record["nodeid"].split("::")[0], []).append(record["status"])
    return statuses


@pytest.mark.parametrize("count, gate", [(1, False), (2, True)])
def test_the_tests_of_a_task_that_uses_a_task_that_hung_are_not_run_or_stopped(count: int, gate: bool) -> None:
    """One lane: user starts after base hung and is never run. Two: user's first test runs beside base's and is
    stopped when base's overruns. Either way its tests are not run, the other task's are."""
    tasks = [("base", ["b_hangs", "b2"]), ("user", ["u_hangs", "u2", "u3"]), ("other", ["o1"])]
    statuses = run_lanes(tasks, count, gate)
    assert statuses == {"base": ["timeout", "passed"], "user": [NOT_RUN] * 3, "other": ["passed"]}


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


def check_text(assignment: Assignment, package: Path, runtime: Runtime | None = None) -> tuple[str, CheckOutcome]:
    out = io.StringIO()
    printer = Printer(assignment, out.write)
    printer.header(CheckOutcome(package=package))
    outcome = run_public_tests(assignment, package, selected=TASKS, listener=printer, runtime=runtime)
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
    kept = check_runtime()
    try:
        warm, _ = check_text(quick, package, kept)
    finally:
        kept.close()
    # the same task lines and next step, whenever the hang was seen
    said = [re.findall(r"^(?:\w+ +(?: ?\d+/\d+| -/-) .*|Next: .*)$", text, re.M) for text in (cold, warm)]
    assert said[0] == said[1] and len(said[0]) == len(TASKS) + 1, said
    # and the same place: the loop, whichever of its lines (`while True:` or `pass`) each test was stopped on
    source = (package / "attention.py").read_text()
    loop = source[:source.index("while True:", source.index("def scaled_dot_product_attention("))].count("\n") + 1
    places = [re.findall(r"^ +(stopped in .*)\n +(.*)$", text, re.M) for text in (cold, warm)]
    expected = (f"stopped in the loop at attention.py, line {loop}, in scaled_dot_product_attention", "while True:")
    assert places[0] == places[1] and set(places[0]) == {expected}, places
