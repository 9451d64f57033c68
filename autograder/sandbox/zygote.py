"""The zygote: detect the isolation features by trial jobs, then fork one job per request and reap what it leaves."""

from __future__ import annotations

import gc
import importlib
import json
import os
import selectors
import signal
import sys
import time
from pathlib import Path
from typing import Any

# Imported here once rather than by every job: numpy.random (probe.pin_torch_state seeds it before every check;
# 18 CPU ms a job when the zygote is not warmed up) and numpy.ctypeslib (safetensors imports it to save a job's
# tensors; 3 ms). A job still seeds NumPy's generator before each check, as before.
import numpy.ctypeslib  # noqa: F401
import numpy.random  # noqa: F401
import torch

from autograder.sandbox import job as job_side
from autograder.sandbox import linux
from autograder.sandbox.job import forget_trusted_side, start_job
from autograder.sandbox.lines import PipeLines, ThreadedLines
from autograder.sandbox.linux import prctl_quietly
from autograder.sandbox.memory import JOB_OOM_SCORE_ADJ, set_oom_score_adj
from autograder.sandbox.plan import Plan
from autograder.sandbox.procfs import children_of, exit_status, kill_group
from autograder.sandbox.spawned import Spares
from autograder.sandbox.spawned import run_one as run_spare
from autograder.sandbox.tiers import TIERS


def _detect(plan: Plan) -> None:
    """Try each feature on top of the ones that already work, keeping those whose trial job passes."""
    allowed = TIERS[: TIERS.index(plan.config.get("max_tier", "uid")) + 1]
    candidates = [t for t in ("namespaces", "uid", "landlock") if t in allowed]
    for feature in candidates:
        if feature == "uid" and not plan.root:
            plan.notes["uid"] = "the grader does not run as root"
            continue
        if feature == "namespaces" and not plan.pidns:
            plan.notes.setdefault("namespaces", "the worker could not enter a PID namespace")
            continue
        if feature == "landlock" and plan.abi < 1:
            plan.notes["landlock"] = "Landlock is not available in this kernel"
            continue
        plan.features.add(feature)
        problem = _trial(plan)
        if problem:
            plan.features.discard(feature)
            plan.notes[feature] = problem
    if "landlock" in plan.features:
        if plan.abi >= 4:
            plan.features.add("landlock-net")
        if plan.abi >= 6:
            plan.features.add("landlock-scope")
    if "uid" in plan.features or not plan.root:
        plan.features.add("nproc")  # RLIMIT_NPROC is ignored for root


def _trial(plan: Plan) -> str:
    """Run one throw-away job with the plan's features; return '' if everything worked, else why not."""
    config = plan.config
    job = {"trial": True, "workdir": config["trial_workdir"], "job_dir": config["trial_job_dir"],
           "limits": {"cpu_seconds": 20, "address_space_bytes": 1 << 30, "file_bytes": 1 << 22,
                      "processes": 64, "output_bytes": 1 << 16}}
    for name in os.listdir(job["job_dir"]):
        os.unlink(os.path.join(job["job_dir"], name))
    try:
        outcome = _run_one(job, plan, report=None, deadline=60.0)
    except Exception as exc:  # noqa: BLE001 - a trial that cannot even start means the feature is unusable
        return f"{type(exc).__name__}: {exc}"
    try:
        lines = Path(job["job_dir"], "results.jsonl").read_text().splitlines()
        record = json.loads(lines[-1]) if lines else {}
    except (OSError, ValueError):
        record = {}
    if record.get("trial") == "ok":
        return ""
    return str(record.get("why") or outcome.get("setup_error") or f"trial job ended with {outcome['exit']}")[:300]


_STDIN = PipeLines(0)  # the grader's requests (moved off fd 0 by main); waiting for a job also watches it


def main(config: dict[str, Any] | None = None, pidns: bool = False, note: str = "") -> int:
    """Detect the isolation features, open the session if the configuration has one, then serve jobs until the
    grader's requests end (see autograder.sandbox.boot)."""
    global _STDIN
    torch.set_num_threads(1)
    capability = torch.backends.cpu.get_cpu_capability().lower()  # fixed now, before any sandbox: jobs inherit it
    sys.dont_write_bytecode = True
    prctl_quietly(linux.PR_SET_DUMPABLE, 0)  # the grader's side: no ptrace, no /proc/<pid>/mem by students
    if not pidns:
        prctl_quietly(linux.PR_SET_CHILD_SUBREAPER, 1)
    requests, replies = _take_channel()
    if config is None:
        config = json.loads(PipeLines(requests).readline() or b"{}")
    spawn = config.get("start_method") == "spawn"  # the host's choice (its environment is not the zygote's)
    _STDIN = ThreadedLines(requests) if spawn else PipeLines(requests)
    channel = os.fdopen(replies, "w", buffering=1)

    def say(message: dict[str, Any]) -> None:
        channel.write(json.dumps(message) + "\n")

    if spawn:
        config = dict(config, max_tier="rlimits")  # a trial job is a fork: without one, the weakest tier
    plan = Plan(config, pidns)
    if note:
        plan.notes["namespaces"] = note
    _detect(plan)

    spares = Spares(config, plan.summary()) if spawn else None  # the first prepares while the session opens

    def serve(summary: dict[str, Any] | None = None) -> int:
        share_with_jobs()
        say({"ready": True, "isolation": plan.summary(), "capability": capability,
             **({"session": summary} if summary is not None else {})})
        return _serve(plan, say, spares)

    if config.get("session"):
        _open_session(config["session"], say, serve)
    return serve()


def _take_channel() -> tuple[int, int]:
    """Move the grader's two pipes off fds 0 and 1, which then read and write /dev/null: nothing a session's
    student code or pytest's capture does with the standard streams reaches the grader. Returns the request and
    reply descriptors (a job closes both)."""
    requests, replies = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    return requests, replies


def _open_session(session: dict[str, Any], say: Any, serve: Any) -> None:
    """Open the zygote's session: its module's ``open_session(settings, say, serve)`` calls ``serve(summary)`` once
    it is ready, which serves jobs in it (each job then runs one of its requests:
    :data:`autograder.sandbox.job.SESSION`); never returns."""
    module = importlib.import_module(str(session["module"]))
    job_side.SESSION = module
    set_oom_score_adj(JOB_OOM_SCORE_ADJ)  # it runs student code: the OOM killer's first choice, as a job is
    module.open_session(session.get("settings") or {}, say, serve)
    os._exit(0)  # a session that returned: its jobs are served, nothing of pytest's ending is worth waiting for


def _serve(plan: Plan, say: Any, spares: Spares | None = None) -> int:
    """Run one job per request line until the requests end: forked, or in a spare without fork."""
    try:
        while True:
            line = _STDIN.readline()
            if not line.strip():
                return 0
            request = json.loads(line)
            if isinstance(request, dict) and "job_dir" in request:
                say(run_spare(request, spares.take(), _STDIN, say) if spares is not None
                    else _run_one(request, plan, report=say, deadline=None))
    finally:
        if spares is not None:
            spares.close()


def share_with_jobs() -> None:
    """Make every later fork cheaper; called once, when the zygote is ready to serve jobs.

    * the trusted side's modules leave ``sys.modules`` once here instead of in each job (see
      :func:`autograder.sandbox.job.forget_trusted_side`);
    * ``gc.freeze()``: the zygote's objects move to the collector's permanent generation, so a job's full
      collections never walk them (walking writes to every object's header: copied pages, private memory). No
      ``gc.collect()`` first: it costs about 150 CPU ms and finds a few objects after torch's import. A job still
      collects its own objects (and student code sees the ordinary ``gc`` module): only the zygote's objects,
      alive for the whole job anyway, are exempt, which changes no result. A full collection in a job costs
      0.5 CPU ms instead of 235 (the training job without warm-up runs two: 270 CPU ms and 20 MB less).

    The warm-up and the huge pages, which make each fork cheaper still, are the template's, done once before it
    forks a zygote of a batch (:func:`autograder.sandbox.template.warm_up`), never here: a zygote shares those
    pages with its template, and writing to them (an optimizer step, a collapse) would copy them.
    """
    forget_trusted_side()
    gc.freeze()


def _run_one(job: dict[str, Any], plan: Plan, report: Any, deadline: float | None) -> dict[str, Any]:
    """Fork the job, report its pid, wait for it to end (or a kill command); return the exit message."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        start_job(job, plan, write_end)  # never returns
    os.close(write_end)
    if report is not None:
        report({"pid": pid})
    status, killed = _wait(pid, plan, deadline)
    with os.fdopen(read_end, "rb") as pipe:
        lines = [raw.decode(errors="replace").strip() for raw in pipe.read(1 << 16).splitlines()]
    message: dict[str, Any] = {"exit": exit_status(status), "killed": killed}
    for text in lines:
        if text.startswith("error "):
            message["setup_error"] = text[6:][:500]
    message["leftovers"] = _kill_everything(plan)
    return message


def _wait(pid: int, plan: Plan, deadline: float | None) -> tuple[int, bool]:
    """Wait for the job; obey a ``kill`` line from the grader; exit if the grader goes away (stdin closes)."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return os.waitpid(pid, 0)[1], False
    killed = False
    end = None if deadline is None else time.monotonic() + deadline
    with selectors.DefaultSelector() as selector:
        selector.register(handle, selectors.EVENT_READ)
        selector.register(_STDIN.fd, selectors.EVENT_READ)
        while True:
            timeout = None if end is None else max(0.0, end - time.monotonic())
            # a line read along with an earlier one waits in _STDIN's buffer, where select cannot see it
            ready = {_STDIN.fd} if _STDIN.has_line() else {key.fd for key, _ in selector.select(timeout)}
            if handle in ready:
                break
            if _STDIN.fd in ready:
                line = _STDIN.readline()
                if not line:  # the grader is gone: leave nothing behind
                    _kill_job(pid, plan)
                    _kill_everything(plan)
                    os._exit(0)
                if line.strip() == b"kill":
                    _kill_job(pid, plan)
                    killed = True
            if end is not None and time.monotonic() >= end:
                _kill_job(pid, plan)
                killed = True
                end = None
    os.close(handle)
    return os.waitpid(pid, 0)[1], killed


def _kill_job(pid: int, plan: Plan) -> None:
    if plan.pidns:
        try:
            os.kill(-1, signal.SIGKILL)  # as PID 1 of our namespace: every other process in it
        except OSError:
            pass
    kill_group(pid)


def _kill_everything(plan: Plan) -> int:
    """Kill and reap whatever a job left behind; return how many processes that was."""
    if not plan.pidns:
        return _kill_descendants()
    reaped = 0
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        try:
            child, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if child == 0:
            time.sleep(0.005)
        else:
            reaped += 1
    return reaped


def _kill_descendants() -> int:
    """Kill and reap every process still parented to the zygote (orphans of a job); return how many."""
    if not _has_children():
        return 0  # the usual case, known without reading every process's /proc entry
    killed = 0
    for _ in range(50):
        children = children_of(os.getpid())
        if not children:
            break
        for child in children:
            try:
                os.kill(child, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            try:
                reaped, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if reaped == 0:
                time.sleep(0.01)
    return killed


def _has_children() -> bool:
    """Whether this process has a child (running, or ended and not reaped): the job it waited for is reaped."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True
