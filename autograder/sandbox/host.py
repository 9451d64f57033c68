"""The trusted side of the worker: start the zygote, send jobs, enforce wall-clock limits, read results.

Everything that comes back from a job is untrusted: result lines are parsed as JSON with size bounds, files in the
job folder are read without following links and only if they are plain files, and the job's printed output is only
ever shown as the student's own output. See docs/SECURITY.md for the threat model and the isolation tiers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from autograder.errors import IsolationError, WorkerDied
from autograder.protocol import ENDED_FILE
from autograder.sandbox.clock import JobClock, Watch, await_stack
from autograder.sandbox.layout import job_payload, make_trial_dirs, prepare_dirs
from autograder.sandbox.limits import Limits
from autograder.sandbox.results import JobResult, read_results, sanitize_job_dir
from autograder.sandbox.spawned import READY_SECONDS, SpawnedZygote, start_method
from autograder.sandbox.spawner import ForkedZygote, ZygoteTemplate, scrubbed_environment
from autograder.sandbox.startup import (  # noqa: F401 - kernel_capability and known_capability: imported from here
    MAX_ISOLATION_VARIABLE,
    default_protected,
    free_uid,
    hiding,
    kernel_capability,
    known_capability,
    protect_this_process,
    release_uid,
    within,
)
from autograder.sandbox.tiers import TIERS, meets, tier_of

STARTUP_TIMEOUT = 120.0


KILL_TIMEOUT = 10.0


class Zygote:
    """A pre-imported worker process that forks one sandboxed process tree per job; itself a fork of a template
    process (:mod:`autograder.sandbox.template`) that imported torch once for every zygote made from it.

    Args:
        scratch: A private folder for the zygote's home and temporary files.
        protect: Extra folders no job may see (the grader's folder and the assignments are always protected).
        max_isolation: Try no tier above this one (default: ``$GRADER_MAX_ISOLATION`` or the strongest).
        required: Refuse to run any job unless at least this tier is in force (see autograder.sandbox.tiers).
        warm_up: Pay torch's lazy imports (seconds) once, in the template, rather than in the first job that needs
            them, and back the template's memory with huge pages (cheaper forks); worth it when the zygote serves
            many submissions, not for a single one.
        template: The template process to fork this zygote from, shared with other zygotes (default: its own);
            see :mod:`autograder.sandbox.template`.
        session: A session the zygote opens before it serves jobs, ``{"module": ..., "settings": {...}}``: the
            module's ``open_session(settings, say, serve)`` (``grader check``'s imports the student's modules and
            collects the public tests once); what it says arrives in :attr:`heard`, its summary in
            :attr:`session_summary`.
        same_kernels: Make its jobs use this process's CPU kernels (their random inputs then match the reference's
            drawn here); off where nothing is compared here (``grader check``), so this process needs no torch.
    """

    def __init__(self, scratch: Path, protect: Iterable[Path] = (), max_isolation: str | None = None,
                 required: str | None = None, warm_up: bool = True, template: ZygoteTemplate | None = None,
                 session: dict[str, Any] | None = None, same_kernels: bool = True) -> None:
        self.scratch = scratch
        self.session = session
        self.same_kernels = same_kernels
        self.session_summary: dict[str, Any] | None = None
        self.heard: list[dict[str, Any]] = []  # what the session said while it opened (its imports)
        self.importing = ""  # the module the session was importing when the zygote stopped, if it did
        self.ended: dict[str, Any] | None = None  # how its process ended (its boot said), or {"overran": True}
        self._importing_until = 0.0
        self.template = template or ZygoteTemplate(scratch / "template")
        self.protect = [Path(p) for p in protect]
        self.max_isolation = max_isolation or os.environ.get(MAX_ISOLATION_VARIABLE) or TIERS[-1]
        if self.max_isolation not in TIERS:
            raise IsolationError(f"unknown isolation level {self.max_isolation!r}")
        self.required = required
        self.warm_up = warm_up
        self.process: ForkedZygote | SpawnedZygote | None = None
        self.uid = 0
        self._isolation: dict[str, Any] | None = None
        self._trial_root: Path | None = None
        self.capability: str | None = None  # the CPU kernels its jobs must use, once a zygote chose others
        self._started_at = 0.0
        self.retired = False  # stopped for good (Ctrl-C): it neither starts again nor runs a job

    # -- life cycle ------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start (or restart) the zygote: forked from the template (or a fresh interpreter without fork,
        :mod:`autograder.sandbox.spawned`), it detects the isolation features while this process goes on (the
        template imports torch meanwhile if it was not running)."""
        self._stop()
        if self.retired:
            raise WorkerDied("the zygote was stopped for good")
        protect_this_process()
        home = self.scratch / "home"
        home.mkdir(parents=True, exist_ok=True)
        (home / ENDED_FILE).unlink(missing_ok=True)  # what the template said of this object's last zygote
        self._started_at = time.monotonic()
        spawn = start_method() == "spawn"
        max_tier = "rlimits" if spawn else self.max_isolation  # no trial job without fork: the weakest tier
        capability = self.capability or known_capability()
        self.process = (SpawnedZygote(home, scrubbed_environment(str(home), "", capability)) if spawn
                        else self.template.fork_zygote(self, home, capability, self.warm_up))
        self.uid = free_uid()
        config = {
            "max_tier": max_tier,
            "start_method": "spawn" if spawn else "fork",
            "preload": self.template.preload,
            "uid": self.uid,
            "gid": self.uid,
            **(self._hiding() if max_tier != "rlimits" else {}),
            **({"session": self.session} if self.session else {}),
        }
        self.heard, self.importing, self.ended, self.session_summary = [], "", None, None
        try:
            self._stdin().write(json.dumps(config) + "\n")
            self._stdin().flush()
        except OSError as exc:
            raise WorkerDied(f"the zygote did not start: {exc}") from None

    def _hiding(self) -> dict[str, Any]:
        """What the trial jobs and the tiers above ``rlimits`` need (see :func:`hiding`)."""
        self._trial_root = make_trial_dirs()
        return hiding(self.scratch, self.protect, self._trial_root)

    @property
    def marker(self) -> str:
        """The marker in the initial environment of the zygote and of every process it starts (its template's)."""
        return self.template.marker

    def _stdin(self) -> Any:
        """The zygote's command stream (WorkerDied when there is no zygote to talk to)."""
        if self.process is None or self.process.stdin is None:
            raise WorkerDied("the zygote is not running")
        return self.process.stdin

    def ensure_protected(self, folders: Iterable[Path]) -> None:
        """Hide these folders from every job as well.

        Raises:
            IsolationError: If the zygote already started without hiding one of them (it cannot change now).
        """
        covered = [*default_protected(), *self.protect]
        missing = [Path(f) for f in folders if not any(within(Path(f), p) for p in covered)]
        if missing and self.started:
            raise IsolationError(f"a worker started without hiding {missing[0]} from jobs; start it with "
                                 "protect=assignment.private_folders")
        self.protect += missing

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def started(self) -> bool:
        """Whether the zygote was started (and not closed since); it may have died meanwhile."""
        return self.process is not None

    @property
    def isolation(self) -> dict[str, Any]:
        """The isolation in force: ``tier``, ``features`` and ``notes`` on what was refused (starts the zygote)."""
        if self._isolation is None:
            if not self.alive():
                self.start()
            self._handshake()
        if self._isolation is None:  # _handshake raises instead; never graded without a known tier
            raise WorkerDied("the zygote did not report its isolation")
        return self._isolation

    def wait_ready(self, seconds: float) -> bool:
        """Wait at most ``seconds`` for the zygote's start-up (starting it if needed); True once it is ready.

        Raises:
            WorkerDied: If it exits or sends garbage, or takes longer than STARTUP_TIMEOUT in all.
        """
        if self._isolation is not None:
            return True
        if not self.alive():
            self.start()
        deadline = min(time.monotonic() + seconds, self._started_at + STARTUP_TIMEOUT)
        message = self._start_up_message(deadline)
        if message is None:
            if time.monotonic() >= self._started_at + STARTUP_TIMEOUT:
                raise WorkerDied("the zygote did not start")
            return False
        self._accept(message)
        return self._isolation is not None

    @property
    def ready(self) -> bool:
        """Whether the zygote finished its start-up (its isolation is known)."""
        return self._isolation is not None

    def _handshake(self) -> None:
        while self._isolation is None:  # twice when the zygote's kernels were not this process's
            message = self._start_up_message(self._started_at + STARTUP_TIMEOUT)
            if message is None:
                raise WorkerDied("the zygote did not answer in time")
            self._accept(message)

    def _start_up_message(self, deadline: float) -> dict[str, Any] | None:
        """The zygote's next start-up message other than its session's (kept in :attr:`heard`), None at
        ``deadline``; a session import that overruns its seconds stops the zygote (:attr:`importing` says which).
        """
        while True:
            limit = min(deadline, self._importing_until) if self.importing else deadline
            message = self._read_message(limit, allow_timeout=True)
            if message is None:
                if self.importing and time.monotonic() >= self._importing_until:
                    self._stop()
                    self.ended = {"overran": True}
                    raise WorkerDied(f"importing {self.importing} did not finish in time")
                return None
            if "importing" not in message and "imported" not in message:
                return message
            self.heard.append(message)
            self.importing = str(message.get("importing") or "")
            self._importing_until = time.monotonic() + float(message.get("seconds") or STARTUP_TIMEOUT)

    def _accept(self, message: dict[str, Any] | None) -> None:
        if not message or not message.get("ready") or not isinstance(message.get("isolation"), dict):
            raise WorkerDied("the zygote did not start")
        self.session_summary = message.get("session") if isinstance(message.get("session"), dict) else None
        mine = kernel_capability() if self.same_kernels else message.get("capability")
        self.template.chosen = message.get("capability")
        if message.get("capability") != mine:  # its jobs would draw other random inputs: start it on ours
            if self.capability == mine:
                raise WorkerDied(f"the zygote runs torch's {message.get('capability')} CPU kernels although told "
                                 f"to run the grader's ({mine})")
            self.capability = mine
            self.start()  # the template too starts again, on this process's kernels
            return
        self._isolation = message["isolation"]
        if self._trial_root is not None:  # the trials are over: nothing needs their folders any more
            shutil.rmtree(self._trial_root, ignore_errors=True)
            self._trial_root = None
        self._check_required()

    def _check_required(self) -> None:
        if self.required and self._isolation is not None:
            features = self._isolation.get("features", [])
            if not meets(features, self.required):
                notes = "; ".join(f"{k}: {v}" for k, v in sorted(self._isolation.get("notes", {}).items()))
                raise IsolationError(
                    f"isolation level {self.required!r} is required but only {tier_of(features)!r} is "
                    f"available here" + (f" ({notes})" if notes else "")
                    + "; run official grading as root (or in a container that allows namespaces)")

    def kill(self) -> None:
        """Kill the zygote's process now, from any thread: whoever waits on it sees it end (and closes it)."""
        process = self.process
        if process is not None:
            process.kill()

    def retire(self) -> None:
        """Stop for good, from any thread (Ctrl-C): the job running ends at once, and whoever would start the zygote
        again or send it a job gets WorkerDied, so a run that hands its work to other zygotes ends quickly."""
        self.retired = True
        self.kill()

    def close(self) -> None:
        """Stop the zygote and everything it started; the template too when no other zygote uses it."""
        self._stop()
        self.template.release(self)

    def _stop(self) -> None:
        """Stop the zygote and everything it started (its PID namespace, or its process group and the orphans its
        template reaps)."""
        if self.process is not None:
            self.process.kill()
            try:
                self.process.wait(timeout=KILL_TIMEOUT)
            except subprocess.TimeoutExpired:
                pass
            self.process.release()
            self.process = None
        release_uid(self.uid)
        self._isolation = None
        if self._trial_root is not None:
            shutil.rmtree(self._trial_root, ignore_errors=True)
            self._trial_root = None

    # -- jobs ------------------------------------------------------------------------------------------

    def run(self, job: dict[str, Any], limits: Limits, job_dir: Path, output_limit: int,
            watch: Watch | None = None) -> JobResult:
        """Run one job in a fresh sandboxed process tree and wait for it, killing it when the wall-clock passes.

        Args:
            job: The job description (see autograder.sandbox.job): ``package``, ``workdir`` and either
                ``import_modules`` or ``checks`` with ``checks_source``, ``reference_sources``, ``uses``, ...,
                or ``session`` (a request to the zygote's session).
            limits: Limits for the job.
            job_dir: An empty folder the job writes its results and output into.
            output_limit: How many bytes of the job's printed output to keep.
            watch: The caller's hooks on the job's clock, and its way to stop the job (see :class:`Watch`).

        Returns:
            The parsed results (``stack``: where a step that overran was).

        Raises:
            WorkerDied: If the zygote stops answering; the caller restarts it.
            IsolationError: If the isolation in force is weaker than ``required``.
        """
        if not self.alive():
            self.start()
        features = self.isolation["features"]  # waits for a fresh zygote's handshake, off the job's clock
        self._check_required()
        started = time.monotonic()
        workdir = Path(job["workdir"])
        payload = job_payload(job)
        hidden_workdir = prepare_dirs(workdir, job_dir, features)
        payload_file = job_dir / "job.json"
        fd = os.open(payload_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(payload, handle)
        message = dict(job_dir=str(job_dir), workdir=str(hidden_workdir), payload=str(payload_file),
                       limits=limits.as_job() | {"output_bytes": max(64 * 1024, 4 * output_limit)},
                       step_seconds=limits.wall_seconds)
        result = JobResult(job_dir=job_dir)
        try:
            try:
                self._stdin().write(json.dumps(message) + "\n")
                self._stdin().flush()
                # without fork, a job starts once its spare is ready: an interpreter and torch's import
                answer = READY_SECONDS if isinstance(self.process, SpawnedZygote) else 30.0
                int(self._read_message(time.monotonic() + answer)["pid"])
            except (BrokenPipeError, OSError, KeyError, TypeError, ValueError) as exc:
                raise WorkerDied(str(exc)) from None
            clock = JobClock(limits, job_dir / "results.jsonl", watch)
            reply = self._await_exit(clock)
            if reply is None:
                result.stopped = clock.stopped
                result.timed_out = not clock.stopped
                if result.timed_out:
                    await_stack(job_dir)
                try:
                    self.process.stdin.write("kill\n")
                    self.process.stdin.flush()
                except OSError as exc:
                    raise WorkerDied(str(exc)) from None
                reply = self._read_message(time.monotonic() + KILL_TIMEOUT)
            if reply is None or "exit" not in reply:
                raise WorkerDied("no exit status from the zygote")
        finally:
            if hidden_workdir != workdir:
                os.rename(hidden_workdir, workdir)
        result.exit = reply["exit"] if isinstance(reply["exit"], dict) else {"code": None, "signal": None}
        if reply.get("setup_error"):
            result.exit = dict(result.exit, worker_died=f"the sandbox could not be set up: {reply['setup_error']}")
        result.leftovers = int(reply.get("leftovers", 0) or 0)
        result.seconds = time.monotonic() - started
        sanitize_job_dir(job_dir)
        read_results(result, job_dir, output_limit)
        return result

    def _await_exit(self, clock: JobClock) -> dict[str, Any] | None:
        """Wait for the job's exit message; None when a step overruns its wall clock, the job its cap, or the
        caller asked to stop it (:class:`JobClock`: the ``start`` lines come from an untrusted process, so forging
        them buys at most the hard cap)."""
        while True:
            reply = self._read_message(clock.wake(), allow_timeout=True)
            if reply is not None:
                return reply
            if clock.expired():
                return None

    def _read_message(self, deadline: float, allow_timeout: bool = False) -> dict[str, Any] | None:
        if self.process is None or self.process.stdout is None:
            raise WorkerDied("the zygote is not running")
        while True:
            try:
                line = self.process.lines.wait_line(deadline)
            except EOFError:
                self.ended = self.ended or self.process.exit_status()
                raise WorkerDied("the zygote exited") from None
            if line is None:
                if allow_timeout:
                    return None
                raise WorkerDied("the zygote did not answer in time")
            message = self._parse(line)
            if message is not None:
                return message

    def _parse(self, line: bytes) -> dict[str, Any] | None:
        """A message of the zygote's (None for a line that is no JSON object).

        Raises:
            WorkerDied: On garbage, or on its boot's last word (how the zygote's process ended, kept in ``ended``).
        """
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            raise WorkerDied("the zygote sent garbage") from None
        if not isinstance(message, dict):
            return None
        if isinstance(message.get("zygote_exit"), dict):
            self.ended = message["zygote_exit"]
            raise WorkerDied("the zygote exited")
        return message


def describe_isolation(zygotes: Iterable[Zygote]) -> dict[str, Any]:
    """The weakest isolation among these workers (those that finished starting; the first if none did):
    ``tier``, ``features`` and ``notes``."""
    zygotes = list(zygotes)
    summaries = [z.isolation for z in [z for z in zygotes if z.ready] or zygotes[:1]]
    features = set.intersection(*(set(s.get("features", [])) for s in summaries)) if summaries else set()
    notes: dict[str, str] = {}
    for summary in summaries:
        notes.update(summary.get("notes", {}))
    return {"tier": tier_of(features), "features": sorted(features), "notes": notes}


def new_scratch(prefix: str = "grader-") -> Path:
    """A private temporary folder (mode 0700)."""
    return Path(tempfile.mkdtemp(prefix=prefix))


def start_zygotes(count: int, scratch: Path, eager: int | None = None, template: ZygoteTemplate | None = None,
                  **options: Any) -> list[Zygote]:
    """Make ``count`` zygotes forked from one template and start ``eager`` of them (default: all) now, so the
    template's torch import overlaps with the caller's own start-up; the others start on their first job (a fork
    of the template, milliseconds once it is up). ``template``: one to share with other processes' zygotes
    (:meth:`ZygoteTemplate.attached`) instead of a template of their own."""
    template = template or ZygoteTemplate(scratch / "template")  # one torch import for all of them
    zygotes = [Zygote(scratch / f"zygote-{index}", template=template, **options) for index in range(max(1, count))]
    for zygote in zygotes[: len(zygotes) if eager is None else max(1, eager)]:
        zygote.start()
    return zygotes
