"""The one /proc walker: children, descendants, threads of a user, memory; killing a group, a tree or by marker; and
how a process ended."""

from __future__ import annotations

import os
import signal
import time

from autograder.protocol import MARKER_VARIABLE


def children_of(pid: int) -> list[int]:
    found = []
    for entry in _pids_listed():
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def threads_of_user(uid: int) -> int:
    count = 0
    for entry in _pids_listed():
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/status") as handle:
                    fields = dict(line.split(":", 1) for line in handle if ":" in line)
            except OSError:
                continue
            if int(fields.get("Uid", "-1").split()[0]) == uid:
                count += int(fields.get("Threads", "1").strip())
    return count


def kill_marked(marker: str) -> int:
    """Kill every process whose initial environment carries this zygote's marker; return how many."""
    needle = f"{MARKER_VARIABLE}={marker}".encode()
    killed = 0
    for _ in range(5):
        found = 0
        for entry in _pids_listed():
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry}/environ", "rb") as handle:
                    environ = handle.read()
            except OSError:
                continue
            if needle in environ.split(b"\0"):
                try:
                    os.kill(int(entry), signal.SIGKILL)
                    found += 1
                except (ProcessLookupError, PermissionError):
                    pass
        killed += found
        if not found:
            break
        time.sleep(0.05)
    return killed


def private_memory() -> list[tuple[int, int]]:
    """This process's private writable memory not backed by a file (the heap and anonymous mappings): the start
    and end address of each region, from /proc/self/maps."""
    regions = []
    with open("/proc/self/maps") as handle:
        for line in handle:
            fields = line.split()
            if fields[1] == "rw-p" and (len(fields) == 5 or fields[5] == "[heap]"):
                start, end = fields[0].split("-")
                regions.append((int(start, 16), int(end, 16)))
    return regions


def peak_rss_mb(pid: int) -> float | None:
    """A process's peak resident set size (VmHWM) in MB, or None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, grandchildren, ...), read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in _pids_listed():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, frontier = [], [pid]
    while frontier:
        nxt = [c for p in frontier for c in children.get(p, [])]
        found += nxt
        frontier = nxt
    return found


def kill_group(pid: int) -> None:
    """SIGKILL the process group ``pid`` leads (a zygote or a job: each has its own session), or the process alone
    when it leads none (any more); a process already gone is not an error."""
    kill = getattr(signal, "SIGKILL", signal.SIGTERM)
    for action in (lambda: os.killpg(pid, kill), lambda: os.kill(pid, kill)):
        try:
            action()
        except (OSError, AttributeError):  # AttributeError: no process groups (Windows)
            pass


def kill_tree(pid: int) -> None:
    """SIGKILL a process and everything below it (its zygote and the job it runs)."""
    for victim in [pid, *descendants(pid)]:
        try:
            os.kill(victim, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def exit_status(status: int) -> dict[str, int | None]:
    """How a process ended, from its wait status: ``{"code": 3, "signal": None}`` or ``{"code": None, "signal": 9}``."""
    if os.WIFSIGNALED(status):
        return {"code": None, "signal": os.WTERMSIG(status)}
    return {"code": os.WEXITSTATUS(status), "signal": None}


def _pids_listed() -> list[str]:
    """The entries of /proc (none where there is no /proc: macOS, Windows)."""
    try:
        return os.listdir("/proc")
    except OSError:
        return []
