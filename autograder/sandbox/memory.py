"""The memory budget in force (cgroup v2/v1 limits, RLIMIT_AS, RAM) and how jobs share it without OOM kills.

A container's memory limit is shared by the grader, its zygotes and the jobs they fork. The jobs' own limits
(RLIMIT_AS beyond the zygote's address space) are sized so that, with the grader's and the zygotes' footprint,
they sum below the budget: a job that allocates too much gets a MemoryError in its own check instead of the
kernel's OOM killer picking a process of another task. Should the kernel still run out (other graders in the
same container, copy-on-write pages), every job asks to be the OOM killer's first choice (``oom_score_adj``
1000) and the grader and its zygotes ask to be its last, so the largest job -- the offender -- dies first.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

MIB = 1 << 20

UNLIMITED = 1 << 60


GRADER_RESERVE = 320 * MIB


ZYGOTE_RESERVE = 256 * MIB


MIN_JOB = 128 * MIB


JOB_OOM_SCORE_ADJ = 1000


GRADER_OOM_SCORE_ADJ = -900

_CGROUP_ROOT = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class MemoryPlan:
    """How the memory budget is shared.

    Attributes:
        budget: Bytes available to the grader and everything it starts (None: no limit was found).
        workers: Zygotes that may run jobs at once.
        job_bytes: Each job's memory limit (address space beyond its zygote's).
        source: Where the budget comes from (for the report and error messages).
    """

    budget: int | None
    workers: int
    job_bytes: int
    source: str


def _read_limit(path: Path) -> int | None:
    """A cgroup limit file's value in bytes (None when absent, unreadable or unlimited)."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if not text or text == "max":
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return value if 0 < value < UNLIMITED else None


def _ancestors(relative: str) -> list[str]:
    """A cgroup path and each of its parents, innermost first ("/a/b" -> ["/a/b", "/a", "/"])."""
    parts = [p for p in relative.split("/") if p]
    return ["/" + "/".join(parts[:i]) for i in range(len(parts), -1, -1)]


def cgroup_limits(proc_cgroup: str | None = None, root: Path = _CGROUP_ROOT) -> list[tuple[int, str]]:
    """The memory limits of this process's cgroups and their ancestors (cgroup v2 ``memory.max``, cgroup v1
    ``memory.limit_in_bytes``), each with the file it was read from.

    Args:
        proc_cgroup: The text of ``/proc/self/cgroup`` (read when None).
        root: Where the cgroup file systems are mounted.
    """
    if proc_cgroup is None:
        try:
            proc_cgroup = Path("/proc/self/cgroup").read_text()
        except OSError:
            return []
    found: list[tuple[int, str]] = []
    for line in proc_cgroup.splitlines():
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        hierarchy, controllers, relative = fields
        if hierarchy == "0" and controllers == "":
            candidates = [(root / a.lstrip("/") / "memory.max", root / "unified" / a.lstrip("/") / "memory.max")
                          for a in _ancestors(relative)]
        elif "memory" in controllers.split(","):
            candidates = [(root / "memory" / a.lstrip("/") / "memory.limit_in_bytes",) for a in _ancestors(relative)]
        else:
            continue
        for paths in candidates:
            for path in paths:
                value = _read_limit(path)
                if value is not None:
                    found.append((value, str(path)))
    return found


def address_space_limit() -> int | None:
    """This process's RLIMIT_AS soft limit in bytes (None when unlimited)."""
    if resource is None:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft in (resource.RLIM_INFINITY, -1) or soft >= UNLIMITED else soft


def physical_memory() -> int | None:
    """The machine's RAM (MemTotal) in bytes."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _own_address_space() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def memory_budget() -> tuple[int | None, str]:
    """The smallest memory limit in force on this process's tree, and where it comes from."""
    limits = cgroup_limits()
    ram = physical_memory()
    if ram is not None:
        limits.append((ram, "/proc/meminfo MemTotal"))
    if not limits:
        return None, "no limit found"
    return min(limits)


def plan_memory(memory_mb: int, workers: int, budget: int | None = None, source: str = "",
                address_space: int | None = None, own_address_space: int = 0) -> MemoryPlan:
    """Share the budget: at most ``memory_mb`` per job, as many workers (up to ``workers``) as fit.

    Each worker costs its zygote's footprint plus its job's limit; the grader's own footprint comes first.
    When even one worker's job would get less than MIN_JOB, one worker gets what is left (a hog then fails its
    own check; the other tasks' jobs run one at a time, never beside it).

    Args:
        memory_mb: The assignment's limit per job (an upper bound).
        workers: Workers wanted.
        budget: The budget in bytes (None: unlimited).
        source: Where the budget comes from.
        address_space: RLIMIT_AS of this process (a per-process cap a job inherits), or None.
        own_address_space: This process's current address space (what a zygote roughly starts with).

    Returns:
        The plan.
    """
    wanted = memory_mb * MIB
    if address_space is not None:
        wanted = max(MIN_JOB // 2, min(wanted, address_space - own_address_space))
    if budget is None:
        return MemoryPlan(None, max(1, workers), wanted, source or "no limit found")
    spare = budget - GRADER_RESERVE
    for count in range(max(1, workers), 0, -1):
        per_job = (spare - count * ZYGOTE_RESERVE) // count
        if per_job >= min(wanted, MIN_JOB):
            return MemoryPlan(budget, count, min(wanted, per_job), source)
    return MemoryPlan(budget, 1, max(MIN_JOB // 2, min(wanted, spare - ZYGOTE_RESERVE)), source)


def current_plan(memory_mb: int, workers: int) -> MemoryPlan:
    """The plan for this process's real budget (cgroups, RAM) and its RLIMIT_AS."""
    budget, source = memory_budget()
    return plan_memory(memory_mb, workers, budget, source, address_space_limit(), _own_address_space())


def set_oom_score_adj(value: int, pid: str = "self") -> bool:
    """Ask the kernel's OOM killer to prefer (positive) or spare (negative) a process; False if refused.

    Raising the value is always allowed; lowering it needs CAP_SYS_RESOURCE (root), so an unprivileged grader
    keeps its own value and relies on its jobs' 1000.
    """
    try:
        Path(f"/proc/{pid}/oom_score_adj").write_text(f"{value}\n")
        return True
    except OSError:
        return False
