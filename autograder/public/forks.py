"""Run each task's public tests in a process forked from the pre-imported worker, with a wall clock per test.

The worker has imported pytest, torch and the student's modules once; a fork per task starts in milliseconds,
keeps one task's global changes away from the others, and can be killed from outside when a test overruns
(a signal-based alarm cannot interrupt a long call into native code; SIGKILL can). A killed or crashed fork
costs only the test it was running: the task's remaining tests run again in a fresh fork. Before an overrun
fork is killed, its faulthandler writes its stack to a pipe of its own, so the report can say which loop (or line)
of the student's code it was stopped in. Once a task's test has overrun, the tasks whose code runs that task's code (the
manifest's ``uses``) are not run, or stopped where they run: their tests would wait out the same loop, one wall
clock each, and ``grader check`` reports them as held back by that task whatever they did
(``hints.hung_upstream``).
"""

from __future__ import annotations

import faulthandler
import json
import os
import select
import signal
import sys
import time
from collections import deque
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Callable

from autograder.util.lifetime import die_with_parent

HEARTBEAT_SECONDS = 1.0
# asks a fork that overran to write its stack (faulthandler's, safe in any loop); forks only, so never on Windows
STACK_SIGNAL = getattr(signal, "SIGUSR2", signal.SIGTERM)
STACK_WAIT_SECONDS = 0.5  # how long an overrun fork may take to start writing its stack before it is killed
NOT_RUN = "not_run"  # the status of a test not run (or stopped) because a task its task uses hung


@dataclass
class _Run:
    """One fork running (the rest of) one task's tests."""

    task: str
    items: list[Any]
    pid: int
    fd: int
    buffer: bytes = b""
    current: int | None = None
    deadline: float | None = None
    limit: float = 0.0
    reported: int = 0
    timed_out: bool = False
    stack_fd: int = -1  # the read end of the pipe the fork's faulthandler writes its stack to
    stack: str = ""  # that stack, read when the fork overran


def describe_exit(status: int) -> str:
    """How a process ended, in words (``signal 9, SIGKILL``, ``exit code 3``)."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = "unknown"
        return f"signal {number}, {name}"
    return f"exit code {os.WEXITSTATUS(status)}"


def run_tasks(groups: list[tuple[str, list[Any]]], jobs: int, limit_of: Callable[[Any], float],
              run_item: Callable[[Any, Any], dict[str, Any]], send: Callable[[dict[str, Any]], None],
              close_in_child: tuple[int, ...] = (),
              stopped_at: Callable[[str], dict[str, list[str]]] = lambda stack: {},
              upstream: Mapping[str, list[str]] | None = None, hung: Collection[str] = ()) -> None:
    """Run every group of tests, ``jobs`` forks at a time, sending events as tests start and end.

    Args:
        groups: (task id, pytest items) in the order to start them.
        jobs: How many forks may run at once.
        limit_of: The wall-clock seconds an item may take.
        run_item: Runs one item (with the next one, or None) in the fork and returns its result record.
        send: Passes an event on to ``grader check``.
        close_in_child: File descriptors a fork must not keep open (the channel to ``grader check``).
        stopped_at: What the stack faulthandler wrote (most recent call first) adds to the result of a test that
            overran: ``summary`` lines saying where it was (after its "did not finish" line), and the student's
            ``frames`` it was in.
        upstream: Each task's upstream tasks (``hints.upstream_tasks``): once one of them has a test that overran,
            the task's tests are not run, or stopped (see :func:`held_back`).
        hung: Tasks whose test overran before this run (in an earlier session of the same check).
    """
    pending = deque(groups)
    running: dict[int, _Run] = {}
    dying: list[int] = []  # forks that reported every test, or were stopped, killed and not yet reaped
    hung = set(hung)
    upstream = upstream or {}
    last_sent = time.monotonic()
    while pending or running:
        while pending and len(running) < max(1, jobs):
            task, items = pending.popleft()
            held = held_back(task, upstream, hung)
            if held:
                send_not_run(task, items, held, send)
                continue
            run = _start(task, items, run_item, close_in_child)
            running[run.fd] = run
            send({"event": "fork", "task": task, "pid": run.pid})
        now = time.monotonic()
        deadlines = [r.deadline for r in running.values() if r.deadline is not None]
        wait = max(0.0, min(deadlines + [now + HEARTBEAT_SECONDS]) - now)
        ready, _, _ = select.select(list(running), [], [], wait)
        for fd in ready:
            run = running[fd]
            chunk = os.read(fd, 1 << 16)
            if chunk:
                _receive(run, chunk, limit_of, send)
                if run.reported < len(run.items):
                    continue
            del running[fd]
            _finish(run, pending, send, dying, stopped_at)
        now = time.monotonic()
        for fd, run in list(running.items()):
            if fd in running and run.deadline is not None and now >= run.deadline:
                run.timed_out = True
                run.stack = _stack_of(run)
                _kill(run.pid)
                del running[fd]
                _finish(run, pending, send, dying, stopped_at)
                hung.add(run.task)
                _stop_held_back(running, upstream, hung, send, dying)
        dying[:] = _reap(dying, block=False)
        if time.monotonic() - last_sent >= HEARTBEAT_SECONDS:
            send({"event": "alive"})
            last_sent = time.monotonic()
    _reap(dying, block=True)


def held_back(task: str, upstream: Mapping[str, list[str]], hung: Collection[str]) -> list[str]:
    """The tasks upstream of ``task`` that have a test that overran: while there are any, its tests are not run."""
    return [other for other in upstream.get(task, []) if other in hung]


def send_not_run(task: str, items: list[Any], held: list[str], send: Callable[[dict[str, Any]], None]) -> None:
    """Report these tests of ``task`` as not run (``held``: the hung tasks it uses, the reason), and the task done."""
    for item in items:
        send({"event": "result", "task": task, "test": item.name, "nodeid": item.nodeid, "status": NOT_RUN,
              "summary": [f"not run: it uses {', '.join(held)}, whose test did not finish"], "detail": ""})
    send({"event": "task_done", "task": task})


def _stop_held_back(running: dict[int, _Run], upstream: Mapping[str, list[str]], hung: Collection[str],
                    send: Callable[[dict[str, Any]], None], dying: list[int]) -> None:
    """Stop the forks of the tasks a hang holds back now: the test each runs may be waiting out the same loop."""
    for fd, run in list(running.items()):
        held = held_back(run.task, upstream, hung)
        if not held:
            continue
        del running[fd]
        _let_go(run, dying)
        send_not_run(run.task, run.items[run.reported:], held, send)


def _start(task: str, items: list[Any], run_item: Callable[[Any, Any], dict[str, Any]],
           close_in_child: tuple[int, ...]) -> _Run:
    read_end, write_end = os.pipe()
    stack_read, stack_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the fork: run the tests, report each one, never return
        os.close(read_end)
        os.close(stack_read)
        _child(items, write_end, run_item, close_in_child, stack_write)
    os.close(write_end)
    os.close(stack_write)
    os.set_blocking(stack_read, False)
    try:
        os.setpgid(pid, pid)  # also done in the child: whichever runs first, the group exists before a kill
    except OSError:
        pass
    return _Run(task=task, items=items, pid=pid, fd=read_end, stack_fd=stack_read)


def _child(items: list[Any], fd: int, run_item: Callable[[Any, Any], dict[str, Any]],
           close_in_child: tuple[int, ...], stack_fd: int) -> None:
    status = 0
    try:
        os.setpgid(0, 0)
        die_with_parent()
        for other in close_in_child:
            os.close(other)
        # written from the signal handler in C: it reaches a `while True: pass` and a long call into native code alike
        faulthandler.register(STACK_SIGNAL, file=stack_fd, all_threads=False)
        for index, item in enumerate(items):
            _write(fd, {"start": index})
            record = run_item(item, items[index + 1] if index + 1 < len(items) else None)
            _write(fd, {"result": record})
    except BaseException as exc:  # noqa: BLE001 - a test that raised KeyboardInterrupt or ended the session
        try:
            _write(fd, {"stopped": f"{type(exc).__name__}: {exc}"[:300]})
        except BaseException:  # noqa: BLE001
            pass
        status = 3
    finally:
        sys.stdout.flush() if sys.stdout else None
        os._exit(status)


def _write(fd: int, message: dict[str, Any]) -> None:
    view = memoryview((json.dumps(message) + "\n").encode())
    while view:
        view = view[os.write(fd, view):]


def split_events(buffer: bytes) -> tuple[list[dict[str, Any]], bytes]:
    """The complete JSON lines at the start of ``buffer`` (a line that is not a JSON object is skipped), and the rest.
    """
    events = []
    while b"\n" in buffer:
        line, buffer = buffer.split(b"\n", 1)
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events, buffer


def _receive(run: _Run, chunk: bytes, limit_of: Callable[[Any], float], send: Callable[[dict[str, Any]], None]) -> None:
    messages, run.buffer = split_events(run.buffer + chunk)
    for message in messages:
        if "start" in message:
            run.current = int(message["start"])
            item = run.items[run.current]
            run.limit = limit_of(item)
            run.deadline = time.monotonic() + run.limit
            send({"event": "start", "task": run.task, "test": item.name, "nodeid": item.nodeid, "limit": run.limit})
        elif "result" in message:
            send(dict(message["result"], event="result"))
            run.current, run.deadline = None, None
            run.reported += 1
        elif "stopped" in message and run.current is not None:
            item = run.items[run.current]
            send({"event": "result", "task": run.task, "test": item.name, "nodeid": item.nodeid, "status": "failed",
                  "summary": [f"the test raised {message['stopped']}, which stops the test run"], "detail": ""})
            run.current, run.deadline = None, None
            run.reported += 1


def _stack_of(run: _Run) -> str:
    """The stack of an overrun fork: signal it, wait until faulthandler has written, read what it wrote."""
    try:
        os.kill(run.pid, STACK_SIGNAL)
    except OSError:
        return ""
    chunks: list[bytes] = []
    deadline = time.monotonic() + STACK_WAIT_SECONDS
    while time.monotonic() < deadline:  # a quiet tenth of a second after the first bytes: the dump is complete
        wait = deadline - time.monotonic() if not chunks else 0.1
        if not select.select([run.stack_fd], [], [], max(0.0, wait))[0]:
            if chunks:
                break
            continue
        try:
            chunk = os.read(run.stack_fd, 1 << 16)
        except BlockingIOError:
            continue
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


def _kill(pid: int) -> None:
    for action in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            action()
        except OSError:
            pass


def _reap(pids: list[int], block: bool) -> list[int]:
    """Reap these ended forks; the ones still exiting (none when ``block``)."""
    left = []
    for pid in pids:
        try:
            if os.waitpid(pid, 0 if block else os.WNOHANG)[0] == 0:
                left.append(pid)
        except ChildProcessError:
            pass
    return left


def _let_go(run: _Run, dying: list[int]) -> None:
    """Close a fork's pipes and kill it (with anything its test started in its process group) without waiting for
    its exit: it is reaped later from ``dying``."""
    os.close(run.fd)
    os.close(run.stack_fd)
    _kill(run.pid)
    dying.append(run.pid)


def _finish(run: _Run, pending: deque[tuple[str, list[Any]]], send: Callable[[dict[str, Any]], None],
            dying: list[int], stopped_at: Callable[[str], dict[str, list[str]]] = lambda stack: {}) -> None:
    """A fork ended, or reported every test: report the test it was running (timed out or crashed) and queue the
    task's other tests."""
    if run.reported == len(run.items):  # done: the next task need not wait for its exit (tens of milliseconds)
        _let_go(run, dying)
        send({"event": "task_done", "task": run.task})
        return
    os.close(run.fd)
    os.close(run.stack_fd)
    try:
        _, status = os.waitpid(run.pid, 0)
    except ChildProcessError:
        status = 0
    _kill(run.pid)  # anything the test started in the fork's process group
    rest_from = run.reported
    if run.current is not None:
        item = run.items[run.current]
        found = stopped_at(run.stack) if run.timed_out else {}
        if run.timed_out:
            summary = [f"did not finish within {run.limit:g} s — an endless loop?", *found.get("summary", [])]
            status_name = "timeout"
        else:
            summary = [f"the test's process ended abruptly ({describe_exit(status)}) — os._exit, a crash in "
                       "native code or too much memory?"]
            status_name = "crashed"
        send({"event": "result", "task": run.task, "test": item.name, "nodeid": item.nodeid, "status": status_name,
              "summary": summary, "detail": "", "frames": found.get("frames", [])})
        rest_from = run.current + 1
    rest = run.items[rest_from:]
    if rest and (run.current is not None or run.reported):
        pending.appendleft((run.task, rest))  # progress was made: the rest gets a fresh fork
        return
    for item in rest:  # the fork died before it started a test: no fresh fork would do better
        send({"event": "result", "task": run.task, "test": item.name, "nodeid": item.nodeid, "status": "crashed",
              "summary": [f"the test process ended before the test started ({describe_exit(status)})"],
              "detail": ""})
    send({"event": "task_done", "task": run.task})
