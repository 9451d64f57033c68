"""What a job of ``grader check`` says of the public tests it ran: a result record per test, and the tests left.

A job runs some tests of one task in order, a ``start`` line and a result record each. When it ends early, the
test it was running gets the reason (its wall clock ran out, with where the code was; its process ended; its
session stopped) and the tests after it are left for a fresh job; a job that ended before it started a test
says so for all of them. Plain functions of the job's (untrusted) result: no process here.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Collection, Mapping
from typing import Any

from autograder.public.outcome import NOT_RUN
from autograder.sandbox.results import JobResult

StackLines = Callable[[str], dict[str, list[str]]]  # faulthandler's stack -> ``summary`` lines and ``frames``


def held_back(task: str, upstream: Mapping[str, list[str]], hung: Collection[str]) -> list[str]:
    """The tasks upstream of ``task`` that have a test that overran: while there are any, its tests are not run."""
    return [other for other in upstream.get(task, []) if other in hung]


def not_run_records(task: str, tests: list[dict[str, Any]], held: list[str]) -> list[dict[str, Any]]:
    """These tests of ``task`` as not run: ``held`` are the tasks it uses whose test did not finish."""
    return [{"task": task, "test": test["test"], "nodeid": test["nodeid"], "status": NOT_RUN,
             "summary": [f"not run: it uses {', '.join(held)}, whose test did not finish"], "detail": ""}
            for test in tests]


def job_records(task: str, tests: list[dict[str, Any]], result: JobResult,
                stack_lines: StackLines) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The result records of a job of ``tests`` (``test``, ``nodeid``, ``limit`` each), and the tests left.

    Args:
        task: The tests' task.
        tests: The tests the job was to run, in order.
        result: What came back from the job.
        stack_lines: Where a test that overran was, from the job's stack.

    Returns:
        A record for each test the job reported, for the one it was running when it ended early, and for every
        test when it ended before it started one (it would do no better in a fresh job); then the tests after
        those, for a fresh job (none when the job was stopped: the caller says them not run).
    """
    records = _reported(task, tests, result)
    done = len(records)
    if done == len(tests) or result.stopped:
        return records, tests[done:]
    if done < len(result.started):  # a test started and never reported: the job ended in it
        records.append(_ended_in(task, tests[done], result, stack_lines))
        return records, tests[done + 1:]
    if done:  # progress was made (a test may have ended the run: its record says so): a fresh job for the rest
        return records, tests[done:]
    how = (result.exit or {}).get("worker_died") or describe_exit(result.exit)
    return records + [_record(task, test, "crashed", [f"the test process ended before the test started ({how})"])
                      for test in tests], []


def _reported(task: str, tests: list[dict[str, Any]], result: JobResult) -> list[dict[str, Any]]:
    """The job's records of its first tests, in order, up to the first it did not report (its records are
    untrusted: each is taken for the test it names, with that test's task and name)."""
    reported = {r["nodeid"]: r for r in result.records if isinstance(r.get("nodeid"), str)}
    records = []
    for test in tests:
        if test["nodeid"] not in reported:
            break
        records.append(dict(reported[test["nodeid"]], task=task, test=test["test"], nodeid=test["nodeid"]))
    return records


def _ended_in(task: str, test: dict[str, Any], result: JobResult, stack_lines: StackLines) -> dict[str, Any]:
    """The record of the test a job was running when it ended early."""
    if result.timed_out:
        found = stack_lines(result.stack)
        summary = [f"did not finish within {test['limit']:g} s — an endless loop?", *found.get("summary", [])]
        return _record(task, test, "timeout", summary, found.get("frames", []))
    why = (result.exit or {}).get("worker_died")
    if why:
        return _record(task, test, "crashed", [f"the test run stopped while this test ran ({why})"])
    return _record(task, test, "crashed", [f"the test's process ended abruptly ({describe_exit(result.exit)}) — "
                                           "os._exit, a crash in native code or too much memory?"])


def _record(task: str, test: dict[str, Any], status: str, summary: list[str],
            frames: list[str] | None = None) -> dict[str, Any]:
    return {"task": task, "test": test["test"], "nodeid": test["nodeid"], "status": status, "summary": summary,
            "detail": "", "frames": frames or []}


def describe_exit(ended: Mapping[str, Any] | None, verb: bool = False) -> str:
    """How a process ended, from a zygote's exit message: ``signal 9, SIGKILL`` or ``exit code 3``; with ``verb``,
    as a clause (``was killed by signal 9 (SIGKILL)``, ``ended with exit code 3``, ``did not answer``)."""
    ended = ended or {}
    number, code = ended.get("signal"), ended.get("code")
    if isinstance(number, int):
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = "unknown"
        return f"was killed by signal {number} ({name})" if verb else f"signal {number}, {name}"
    if isinstance(code, int):
        return f"ended with exit code {code}" if verb else f"exit code {code}"
    return "did not answer" if verb else "no exit status"
