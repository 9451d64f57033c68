"""What a job's records say, in words for the report: errors, early ends, timings, printed output."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

from autograder.errors import TransportError
from autograder.sandbox.host import (
    JobResult,
)
from autograder.submission.notebook.places import CellMap, place
from autograder.submission.package import missing_name_message


def read_tensor_file(job_dir: Path | None, name: Any) -> bytes | None:
    if name is None or job_dir is None:
        return None
    if not isinstance(name, str) or "/" in name or name.startswith("."):
        raise TransportError("bad tensor file name")
    path = job_dir / name
    if not path.is_file() or path.is_symlink():
        raise TransportError("tensor file missing")
    return path.read_bytes()


def seconds_of(value: Any) -> float:
    """A duration reported by the worker (untrusted): a finite, non-negative number or 0."""
    if type(value) not in (int, float) or not 0 <= value < 1e7:
        return 0.0
    return float(value)


def format_error(error: Any, cells: CellMap | None = None) -> str:
    """A job's error record (untrusted) in words: the exception, and where in the student's code it was raised.

    Args:
        error: The record's ``error``.
        cells: A notebook's map of its extracted files: the place is then said as a cell and its line.
    """
    if not isinstance(error, dict):
        return "failed"
    kind = str(error.get("type", "Exception"))[:80]
    message = str(error.get("message", ""))[:300]
    where = _where(error.get("where"), cells)
    text = f"{kind}: {message}" if message else kind
    missing = error.get("missing")
    if isinstance(missing, dict) and all(isinstance(missing.get(k), str) for k in ("file", "name")):
        text = missing_name_message(missing["file"][:200], missing["name"][:120], "the grader calls")  # as check says
    if kind == "MemoryError":
        text += " (ran out of memory under the grader's limit)"
    text += f" ({where})" if isinstance(where, str) else ""
    stand_in = error.get("stand_in")
    if isinstance(stand_in, dict) and all(isinstance(stand_in.get(k), str) for k in ("name", "attribute")):
        name, attribute = stand_in["name"][:120], stand_in["attribute"][:80]
        text = (f"the reference {name} stood in for yours in this task and has no {attribute!r}, which your code "
                f"uses; your own {name.split('.', 1)[-1]} is used instead only when it passes its own task "
                f"(the reference's public interface is in the task's docstrings). {text}")
    return text


def _where(where: Any, cells: CellMap | None) -> str | None:
    """``assignment3/attention.py, line 42, in causal_mask`` (or the cell and its line), from the worker's
    ``{"file", "line", "function"}``."""
    if not isinstance(where, dict) or not isinstance(where.get("file"), str):
        return None
    line = where.get("line")
    text = place(where["file"][:200], line if type(line) is int and line > 0 else 0, cells)
    function = where.get("function")
    return text + (f", in {function[:120]}" if isinstance(function, str) else "")


def ended_early(result: JobResult, during: str) -> str:
    exit_info = result.exit or {}
    if result.timed_out:
        return f"did not finish in time while {during}"
    if exit_info.get("worker_died"):
        return f"the grader's worker was stopped during {during}"
    sig = exit_info.get("signal")
    if sig:
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        why = {"SIGSEGV": " (a crash, e.g. unbounded recursion)", "SIGXCPU": " (CPU time limit)",
               "SIGKILL": " (killed, e.g. over the memory limit)"}.get(name, "")
        return f"the process running your code was killed by {name}{why} during {during}"
    return f"the process running your code exited (code {exit_info.get('code')}) during {during}"


def collect_output(outputs: list[str], label: str, result: JobResult) -> None:
    text = result.output.strip()
    if text:
        outputs.append(f"--- output during {label}" + (" (truncated)" if result.output_truncated else "") + f"\n{text}")


def truncate(text: str, limit: int) -> str:
    data = text.encode("utf-8", errors="replace")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore") + "\n[output truncated]"
