"""The kept runtime of the student's loop: the same lines as a cold check, its template replaced after a crash and
kept after a hang (it never runs student code), and ``grader check --watch`` re-running what a save changed."""

from __future__ import annotations

import io
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_check_robustness import REPO, copy_assignment, inject, work_from_reference  # beside these tests

from autograder.public.outcome import CheckOutcome
from autograder.public.render import Printer
from autograder.public.runner import check_runtime, run_public_tests
from autograder.sandbox.procfs import descendants
from autograder.sandbox.runtime import Runtime
from autograder.public.watch import code_digests, tasks_to_rerun
from autograder.spec.assignment import Assignment, load_assignment

BROKEN_MASK = ("diagonal=1)", "diagonal=0)")  # causal_mask then masks the diagonal too: its tests fail


@pytest.fixture(scope="module")
def short(tmp_path_factory: pytest.TempPathFactory) -> Assignment:
    """assignment3 with a 3 s public wall clock, so a hang ends soon."""
    root = tmp_path_factory.mktemp("short")
    copy_assignment("assignment3", root)
    return load_assignment("assignment3", root / "assignments")


@pytest.fixture(scope="module")
def runtime() -> Runtime:
    """One runtime the tests below share, as a kernel or a watch keeps one between checks."""
    kept = check_runtime()
    yield kept
    kept.close()


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))


def gone(pids: Callable[[], list[int]], seconds: float = 30.0) -> bool:
    """Whether no process of ``pids()`` runs any more within ``seconds`` (a killed process takes a moment to free its
    memory; a process that ended and is not yet reaped does not run): a bound only a process left behind breaks."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not [pid for pid in pids() if _state(pid) not in ("", "Z")]:
            return True
        time.sleep(0.1)
    return False


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def check_lines(assignment: Assignment, package: Path, selected: list[str], runtime: Runtime | None = None) -> str:
    """What ``grader check`` prints for these tasks (its own Printer), run on ``runtime`` or a fresh one."""
    out = io.StringIO()
    printer = Printer(assignment, out.write)
    printer.header(CheckOutcome(package=package))
    run_public_tests(assignment, package, selected=selected, listener=printer, runtime=runtime)
    return out.getvalue()


# -- which tasks a save re-runs (no process) --------------------------------------------------------------------


def test_a_save_reruns_the_changed_functions_tasks_and_their_users_only(assignment3: Assignment,
                                                                         tmp_path: Path) -> None:
    package = tmp_path / "assignment3"
    shutil.copytree(REPO / "reference_solutions" / "assignment3", package, ignore=shutil.ignore_patterns("__pycache__"))
    before = code_digests(assignment3, package)
    with open(package / "attention.py", "a") as handle:
        handle.write("\n# a comment and a blank line change no function\n\n")
    assert tasks_to_rerun(assignment3, before, code_digests(assignment3, package)) == []
    edit(package / "attention.py", *BROKEN_MASK)
    rerun = tasks_to_rerun(assignment3, before, code_digests(assignment3, package))
    # attention uses causal_mask; multi_head_attention too; transformer_block uses MultiHeadAttention, and so on
    assert rerun == ["causal_mask", "attention", "multi_head_attention", "transformer_block", "kv_cache_decode",
                     "tiny_gpt", "tiny_gpt_training"]
    after = code_digests(assignment3, package)
    with open(package / "positions.py", "a") as handle:
        handle.write("\nSCALE = 2  # outside every task's functions: any task may read it\n")
    assert tasks_to_rerun(assignment3, after, code_digests(assignment3, package)) == [t.id for t in assignment3.tasks]


# -- the worker, for real ------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_warm_recheck_prints_exactly_the_cold_checks_lines(short: Assignment, runtime: Runtime,
                                                             tmp_path: Path) -> None:
    package = work_from_reference("assignment3", tmp_path)
    edit(package / "attention.py", *BROKEN_MASK)
    selected = ["causal_mask", "attention", "sinusoidal_positions"]
    cold = check_lines(short, package, selected)
    assert re.search(r"^causal_mask +0/2  failed$", cold, re.M) and "may be caused by causal_mask" in cold
    first = check_lines(short, package, selected, runtime)
    starts = runtime.starts
    assert [first, check_lines(short, package, selected, runtime)] == [cold, cold]
    assert runtime.starts == starts  # the second check reused the first one's template


@pytest.mark.slow
def test_a_crashed_template_is_replaced_and_a_hung_session_leaves_it_warm(short: Assignment, runtime: Runtime,
                                                                         tmp_path: Path) -> None:
    package = work_from_reference("assignment3", tmp_path)
    selected = ["causal_mask", "sinusoidal_positions"]
    good = check_lines(short, package, selected, runtime)
    assert good.count("passed") == 2, good
    starts = runtime.starts
    os.kill(runtime.pid, signal.SIGKILL)  # the template crashes between two checks
    assert check_lines(short, package, selected, runtime) == good
    assert runtime.starts == starts + 1
    template = runtime.pid
    positions = (package / "positions.py").read_text()
    (package / "positions.py").write_text(positions + "\nwhile True:\n    pass\n")  # the session hangs importing
    hung = check_lines(short, package, selected, runtime)
    assert "importing it did not finish within 3 s" in hung, hung
    assert re.search(r"^causal_mask +2/2  passed$", hung, re.M), hung
    # the template never ran the student's code: it stays, and nothing of the session that hung is left
    assert runtime.pid == template and runtime.starts == starts + 1
    assert gone(lambda: descendants(template))
    (package / "positions.py").write_text(positions)
    assert check_lines(short, package, selected, runtime) == good
    assert runtime.starts == starts + 1


# -- grader check --watch, driven as a student drives it -------------------------------------------------------


class Lines:
    """The lines a process prints, read by a thread, waited for with a deadline."""

    def __init__(self, stream: io.TextIOBase) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=lambda: [self.lines.put(line) for line in stream], daemon=True).start()

    def until(self, pattern: str, seconds: float = 120.0) -> list[str]:
        """The lines up to and including the first that matches ``pattern``."""
        block = []
        while True:
            try:
                line = self.lines.get(timeout=seconds)
            except queue.Empty:
                raise AssertionError(f"no line matching {pattern!r} after:\n{''.join(self.seen)}") from None
            self.seen.append(line)
            block.append(line)
            if re.search(pattern, line):
                return block


@pytest.mark.slow
def test_watch_reruns_on_a_save_what_changed_and_stops_on_ctrl_c(tmp_path: Path, path_sockets: Callable) -> None:
    package = work_from_reference("assignment3", tmp_path)
    process = subprocess.Popen([sys.executable, "-m", "autograder.cli", "check", "assignment3", str(package),
                                "--watch", "--task", "causal_mask", "--task", "attention", "--task", "head_split"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = Lines(process.stdout)
        first = "".join(lines.until(r"^watching the 6 files of .* for saves \(Ctrl-C to stop\)$"))
        assert first.count("passed") == 3, first
        assert not path_sockets(process.pid)  # the runtime's template is reached through an inherited socket only
        edit(package / "attention.py", *BROKEN_MASK)
        assert lines.until(r"saved") == ["\n", "attention.py saved: re-running causal_mask, attention\n"]
        rerun = "".join(lines.until(r"^Next: "))
        assert re.search(r"^causal_mask +0/2  failed$", rerun, re.M), rerun
        assert re.search(r"^attention +\d/5  failed$", rerun, re.M), rerun
        assert "head_split" not in rerun  # split and merge did not change, nor anything they use
        stop_watching(process, lines)
    finally:
        process.kill()
    assert "Traceback" not in process.stderr.read()


def stop_watching(process: subprocess.Popen[str], lines: Lines) -> None:
    """Ctrl-C, as a student stops ``--watch``: one last line, exit 0, and no process of its tree left (its runtime's
    template, sessions and jobs run in sessions of their own, which a terminal's Ctrl-C does not reach)."""
    tree = descendants(process.pid)
    assert tree, "a watch keeps its runtime's template running"
    process.send_signal(signal.SIGINT)
    assert lines.until(r"stopped watching", 30)[-1] == "stopped watching\n"
    assert process.wait(timeout=30) == 0
    assert gone(lambda: tree)


@pytest.mark.slow
def test_ctrl_c_during_a_recheck_stops_the_watch_and_every_process_it_started(tmp_path: Path) -> None:
    """The harder moment: the jobs of a re-check still run (an endless loop) when Ctrl-C comes."""
    env = copy_assignment("assignment3", tmp_path)
    package = work_from_reference("assignment3", tmp_path)
    process = subprocess.Popen([sys.executable, "-m", "autograder.cli", "check", "assignment3", str(package),
                                "--watch", "--task", "causal_mask", "--task", "attention"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        lines = Lines(process.stdout)
        lines.until(r"^watching the 6 files of .* for saves")
        inject(package / "attention.py", "def scaled_dot_product_attention(", "while True:\n    pass")
        lines.until(r"saved: re-running attention")
        tree = descendants(process.pid)
        lines.until(r"still running")  # a job of the re-check runs the loop
        tree += descendants(process.pid)
        process.send_signal(signal.SIGINT)
        assert lines.until(r"stopped watching", 30)[-1] == "stopped watching\n"
        assert process.wait(timeout=30) == 0
        assert gone(lambda: tree)
    finally:
        process.kill()
    assert "Traceback" not in process.stderr.read()


REMINDER = "These are the public tests only."


@pytest.mark.slow
def test_watch_says_the_choice_of_work_and_the_hidden_tests_once_and_the_choice_again_when_it_changes(
        tmp_path: Path) -> None:
    """A package and a notebook beside it that both hold work: the first check says which one is checked, and that
    hidden tests grade too; a re-run after a save says neither again while nothing changed, and the choice again
    once the notebook holds work anew after it was put back as released. Every intake note is said so: a file the
    intake leaves out is said once too."""
    from autograder.authoring.notebook_template import notebook_path

    package = work_from_reference("assignment3", tmp_path)
    released = notebook_path(load_assignment("assignment3")).read_text()
    worked = json.loads(released)
    worked["cells"].append({"cell_type": "code", "id": "c999-mine", "metadata": {}, "outputs": [],
                            "execution_count": None, "source": "def causal_mask(n):\n    return None"})
    notebook = package.parent / "assignment3.ipynb"
    notebook.write_text(json.dumps(worked))
    both = "note: both assignment3/ and assignment3.ipynb hold work: used assignment3/"
    (package / "scratch.py").write_text("x = 1\n")
    stray = "note: ignored: scratch.py (not a file of this assignment; not used)"
    process = subprocess.Popen([sys.executable, "-m", "autograder.cli", "check", "assignment3", str(package.parent),
                                "--watch", "--task", "causal_mask"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = Lines(process.stdout)
        first = "".join(lines.until(r"^watching the 6 files of .* for saves"))
        assert first.count(both) == 1 and first.count(REMINDER) == 1 and first.count(stray) == 1, first

        def rerun() -> str:
            lines.until(r"saved: re-running causal_mask")
            return "".join(lines.until(r"^Next: "))

        edit(package / "attention.py", *BROKEN_MASK)
        same = rerun()
        assert re.search(r"^causal_mask +0/2  failed$", same, re.M), same
        assert both not in same and REMINDER not in same and stray not in same, same
        notebook.write_text(released)  # no work in it any more: no choice to explain
        edit(package / "attention.py", *reversed(BROKEN_MASK))
        alone = rerun()
        assert "note:" not in alone and REMINDER not in alone, alone
        notebook.write_text(json.dumps(worked))  # the situation changes back: said again, once
        edit(package / "attention.py", *BROKEN_MASK)
        again = rerun()
        assert again.count(both) == 1 and REMINDER not in again and stray not in again, again
        stop_watching(process, lines)
    finally:
        process.kill()
    assert "Traceback" not in process.stderr.read()


HELD = "multi_head_attention   -/-  not checked: it uses attention, which hung: fix that first\n"


@pytest.mark.slow
def test_a_save_of_a_task_that_uses_a_task_that_hung_does_not_wait_out_the_loop_again(tmp_path: Path) -> None:
    """scaled_dot_product_attention loops: the first check says that multi_head_attention is not checked because
    attention hung. A save that changes only MultiHeadAttention re-runs multi_head_attention alone; knowing from the
    watch's last results that attention hung, it is held back at once, with the cold check's line (it waited out
    the loop again, one wall clock per test, and said each test did not finish). A save that changes attention
    re-runs it, and waits for it again."""
    env = copy_assignment("assignment3", tmp_path)
    manifest = tmp_path / "assignments" / "assignment3" / "assignment.toml"
    manifest.write_text(re.sub(r"public_timeout = \d+\n", "public_timeout = 1\n", manifest.read_text(), 1))
    package = work_from_reference("assignment3", tmp_path)
    inject(package / "attention.py", "def scaled_dot_product_attention(", "while True:\n    pass")
    process = subprocess.Popen([sys.executable, "-m", "autograder.cli", "check", "assignment3", str(package),
                                "--watch", "--task", "attention", "--task", "multi_head_attention"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        lines = Lines(process.stdout)
        first = "".join(lines.until(r"^watching the 6 files of .* for saves"))
        assert HELD in first and re.search(r"^attention +0/5  failed$", first, re.M), first
        cold_next = re.findall(r"^Next: .*$", first, re.M)
        edit(package / "attention.py", "return self.out_proj(merge_heads(out))",
             "return self.out_proj(merge_heads(out) + 0)")
        assert lines.until(r"saved")[-1] == "attention.py saved: re-running multi_head_attention\n"
        rerun = "".join(lines.until(r"^Next: "))
        assert HELD in rerun and "did not finish" not in rerun and "still running" not in rerun, rerun
        assert re.findall(r"^Next: .*$", rerun, re.M) == cold_next, rerun
        edit(package / "attention.py", "while True:", "while False:")  # attention is re-run: it is waited for
        assert lines.until(r"saved")[-1] == "attention.py saved: re-running attention, multi_head_attention\n"
        fixed = "".join(lines.until(r"^Next: "))
        assert re.search(r"^attention +5/5  passed$", fixed, re.M), fixed
        assert re.search(r"^multi_head_attention +5/5  passed$", fixed, re.M), fixed
        stop_watching(process, lines)
    finally:
        process.kill()
    assert "Traceback" not in process.stderr.read()
