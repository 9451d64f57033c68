"""The trusted side of the worker: start the zygote, send jobs, enforce wall-clock limits, read results."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_RESULTS_BYTES = 64 * 1024 * 1024
PACKAGE_ROOT = Path(__file__).resolve().parent.parent
# -I ignores PYTHONPATH, the user site and the current folder; the grader's own folder is added explicitly.
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from autograder.worker import main; main()"
STARTUP_TIMEOUT = 120.0


class WorkerDied(Exception):
    """The zygote itself stopped answering (killed from inside a job, or crashed)."""


@dataclass(frozen=True)
class Limits:
    """Resource limits applied to each job's child process.

    Attributes:
        wall_seconds: Wall-clock time for the whole job, enforced from outside.
        cpu_seconds: CPU time (RLIMIT_CPU).
        memory_bytes: Address space the child may add beyond the pre-imported zygote's (RLIMIT_AS).
        file_bytes: Largest file the child may write (RLIMIT_FSIZE); also bounds captured output.
        processes: Process bound (RLIMIT_NPROC, effective when the worker does not run as root).
    """

    wall_seconds: float
    cpu_seconds: int
    memory_bytes: int = 2 * 1024**3
    file_bytes: int = 64 * 1024 * 1024
    processes: int = 64

    def as_job(self) -> dict[str, int]:
        return {
            "cpu_seconds": int(self.cpu_seconds),
            "address_space_bytes": int(self.memory_bytes),
            "file_bytes": int(self.file_bytes),
            "processes": int(self.processes),
        }


@dataclass
class JobResult:
    """What came back from one job: the parsed result records and how the child ended."""

    records: list[dict[str, Any]] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    done: bool = False
    timed_out: bool = False
    exit: dict[str, Any] | None = None
    output: str = ""
    output_truncated: bool = False
    job_dir: Path | None = None
    seconds: float = 0.0
    leftovers: int = 0


def scrubbed_environment(home: str) -> dict[str, str]:
    """The few environment variables a worker gets: nothing from the grader's own environment leaks through."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
    }


class Zygote:
    """A pre-imported worker process that forks one sandboxed child per job.

    Args:
        scratch: A private folder for the zygote's home and temporary files.
    """

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        """Start (or restart) the zygote process."""
        self.close()
        home = self.scratch / "home"
        home.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT, str(PACKAGE_ROOT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=str(home),
            env=scrubbed_environment(str(home)) | {"PYTHONPATH": ""},
            text=True,
            bufsize=1,
            start_new_session=True,
        )

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def close(self) -> None:
        """Stop the zygote and anything it still runs."""
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream:
                stream.close()
        self.process = None

    def run(self, job: dict[str, Any], limits: Limits, job_dir: Path, output_limit: int) -> JobResult:
        """Run one job in a fresh child and wait for it, killing it when the wall-clock limit passes.

        Args:
            job: The job description (see autograder.worker).
            limits: Limits for the child.
            job_dir: An empty folder the child writes its results and output into.
            output_limit: How many bytes of the child's printed output to keep.

        Returns:
            The parsed results.

        Raises:
            WorkerDied: If the zygote stops answering; the caller restarts it.
        """
        if not self.alive():
            self.start()
        assert self.process is not None and self.process.stdin is not None
        job = dict(job, job_dir=str(job_dir), limits=limits.as_job())
        started = time.monotonic()
        try:
            self.process.stdin.write(json.dumps(job) + "\n")
            self.process.stdin.flush()
            pid = self._read_message(started + STARTUP_TIMEOUT)["pid"]
        except (BrokenPipeError, OSError, KeyError, TypeError) as exc:
            raise WorkerDied(str(exc)) from None
        result = JobResult(job_dir=job_dir)
        deadline = started + limits.wall_seconds
        message = self._read_message(deadline, allow_timeout=True)
        if message is None:
            result.timed_out = True
            _kill_group(pid)
            message = self._read_message(time.monotonic() + 30)
        if message is None or "exit" not in message:
            raise WorkerDied("no exit status from the zygote")
        result.exit = message["exit"]
        result.leftovers = int(message.get("leftovers", 0))
        result.seconds = time.monotonic() - started
        _read_results(result, job_dir, output_limit)
        return result

    def _read_message(self, deadline: float, allow_timeout: bool = False) -> dict[str, Any] | None:
        assert self.process is not None and self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    if allow_timeout:
                        return None
                    raise WorkerDied("the zygote did not answer in time")
                if selector.select(timeout=min(remaining, 1.0)):
                    line = self.process.stdout.readline()
                    if not line:
                        raise WorkerDied("the zygote exited")
                    try:
                        message = json.loads(line)
                    except json.JSONDecodeError:
                        raise WorkerDied("the zygote sent garbage") from None
                    if isinstance(message, dict):
                        return message


def _kill_group(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            pass


def _read_results(result: JobResult, job_dir: Path, output_limit: int) -> None:
    results_path = job_dir / "results.jsonl"
    if results_path.is_file() and results_path.stat().st_size <= MAX_RESULTS_BYTES:
        for line in results_path.read_text(errors="replace").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(record, dict):
                continue
            if record.get("done") is True:
                result.done = True
            elif isinstance(record.get("start"), str):
                result.started.append(record["start"])
            else:
                result.records.append(record)
    output_path = job_dir / "output.txt"
    if output_path.is_file():
        size = output_path.stat().st_size
        with open(output_path, "rb") as handle:
            result.output = handle.read(output_limit).decode("utf-8", errors="replace")
        result.output_truncated = size > output_limit


def new_scratch(prefix: str = "grader-") -> Path:
    """A private temporary folder (mode 0700)."""
    return Path(tempfile.mkdtemp(prefix=prefix))
