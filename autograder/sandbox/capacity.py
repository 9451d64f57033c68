"""What the machine (or container) gives the grader: usable CPUs and the memory limit of its cgroup."""

from __future__ import annotations

import os
from pathlib import Path

# A second zygote shares torch's pages with the first (both are forks of one template), but its jobs run beside
# the first one's: below this container limit one submission is graded by one zygote, so that a 768 MB container
# (Gradescope's default) keeps its headroom for the student's code (autograder.sandbox.memory).
SECOND_ZYGOTE_MIN_MEMORY = 1 << 30

_CGROUP_LIMIT_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def usable_cpus() -> int:
    """CPUs this process may run on (a ``taskset`` or a container's cpuset), not the machine's count."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def memory_limit_bytes(files: tuple[str, ...] = _CGROUP_LIMIT_FILES) -> int | None:
    """The memory limit of this process's cgroup (v2 ``memory.max`` or v1 ``memory.limit_in_bytes``), None if
    there is none or it cannot be read.

    The cgroup this process is in is looked up in /proc/self/cgroup first; the files at the root of the cgroup
    mount are what a container sees as its own.
    """
    candidates = list(_own_cgroup_files()) + list(files)
    for name in candidates:
        try:
            text = Path(name).read_text().strip()
        except OSError:
            continue
        if text == "max":
            return None
        try:
            value = int(text)
        except ValueError:
            continue
        return value if value < (1 << 60) else None  # v1 reports "no limit" as a huge number
    return None


def _own_cgroup_files() -> list[str]:
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    files = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3 or parts[2] in ("", "/"):
            continue
        if parts[0] == "0" and parts[1] == "":
            files.append(f"/sys/fs/cgroup{parts[2]}/memory.max")
        elif "memory" in parts[1].split(","):
            files.append(f"/sys/fs/cgroup/memory{parts[2]}/memory.limit_in_bytes")
    return files


def zygotes_for_one_submission() -> int:
    """Zygotes worth starting to grade one submission: two on two or more CPUs with room for both, else one.

    On one CPU a second zygote's start-up (a torch import) only competes with the first one's jobs; under a small
    memory limit it would take the headroom the student's code needs.
    """
    if usable_cpus() < 2:
        return 1
    limit = memory_limit_bytes()
    return 1 if limit is not None and limit < SECOND_ZYGOTE_MIN_MEMORY else 2
