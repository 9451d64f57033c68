"""Read what a job wrote back (results lines, tensors, printed output) as untrusted bytes."""

from __future__ import annotations

import json
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_RESULTS_BYTES = 8 * 1024 * 1024  # plain values only (tensors travel as safetensors): real results are KBs
MAX_STACK_BYTES = 64 * 1024  # faulthandler's dump of a step that overran: a few KB

@dataclass
class JobResult:
    """What came back from one job: the parsed result records and how the job ended."""

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
    setup_seconds: float = 0.0
    stack: str = ""  # where the step that overran was: faulthandler's dump, untrusted text
    stopped: bool = False  # stopped at the caller's request (Zygote.stop_job), not by a wall clock


@dataclass(frozen=True)
class Step:
    """A step a running job said it starts: its name and the wall-clock seconds it asks for (0: the job's own)."""

    name: str
    seconds: float = 0.0


class StepCounter:
    """Reads the ``start`` lines a running job writes to its results file (as untrusted bytes) while it runs."""

    MARK = b'{"start":'

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.partial = b""

    def started(self) -> list[Step]:
        """The steps the job started since the last call, in order."""
        read = read_plain(self.path, 1 << 20, offset=self.offset)
        if read is None or not read[0]:
            return []
        data, _ = read
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        if len(self.partial) > MAX_RESULTS_BYTES:  # no line that long is a start line
            self.partial = b""
        return [step for step in map(_step, lines) if step is not None]


def _step(line: bytes) -> Step | None:
    """The step a results line starts, or None (any other line, or one that is not a JSON object)."""
    if not line.startswith(StepCounter.MARK):
        return None
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return Step("")
    seconds = record.get("seconds") if isinstance(record, dict) else None
    name = record.get("start") if isinstance(record, dict) else None
    valid = isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and 0 < seconds < float("inf")
    return Step(name if isinstance(name, str) else "", float(seconds) if valid else 0.0)


def sanitize_job_dir(job_dir: Path) -> None:
    """Remove anything in the job folder that is not a plain, singly linked file (links, fifos, folders)."""
    for entry in os.scandir(job_dir):
        try:
            info = os.lstat(entry.path)
        except OSError:
            continue
        if entry.name == "job.json":
            os.unlink(entry.path)
        elif stat.S_ISDIR(info.st_mode):
            shutil.rmtree(entry.path, ignore_errors=True)
        elif not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            os.unlink(entry.path)


def read_plain(path: Path, limit: int, offset: int = 0) -> tuple[bytes, int] | None:
    """Read at most ``limit`` bytes of a plain file from ``offset`` without following links; return the bytes
    and the file's size."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None
        if offset:
            handle.seek(offset)
        return handle.read(limit), info.st_size


def read_results(result: JobResult, job_dir: Path, output_limit: int) -> None:
    read = read_plain(job_dir / "results.jsonl", MAX_RESULTS_BYTES + 1)
    if read is not None and read[1] <= MAX_RESULTS_BYTES:
        for line in read[0].decode("utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                continue
            if not isinstance(record, dict):
                continue
            if record.get("done") is True:
                result.done = True
            elif isinstance(record.get("setup_seconds"), float) and not result.records:
                result.setup_seconds = record["setup_seconds"]
            elif isinstance(record.get("start"), str):
                result.started.append(record["start"])
            else:
                result.records.append(record)
    output = read_plain(job_dir / "output.txt", output_limit)
    if output is not None:
        result.output = output[0].decode("utf-8", errors="replace")
        result.output_truncated = output[1] > output_limit
    if result.timed_out:
        stack = read_plain(job_dir / "stack.txt", MAX_STACK_BYTES)
        result.stack = stack[0].decode("utf-8", errors="replace") if stack is not None else ""


def stack_written(job_dir: Path) -> bool:
    """Whether a job's faulthandler has written to its stack file (it does when a step's wall clock runs out)."""
    read = read_plain(job_dir / "stack.txt", 1)
    return bool(read and read[0])
