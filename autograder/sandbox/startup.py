"""What a zygote starts with: the folders its jobs may not see, the CPU kernels they use, a sandbox uid of its own,
and this process's own protection from them."""

from __future__ import annotations

import os
import secrets
import sys
import tempfile
from pathlib import Path
from typing import Any

from autograder.sandbox import linux
from autograder.sandbox.layout import protected_samples
from autograder.util.paths import CHECKOUT

SANDBOX_UID_BASE = 60000


SANDBOX_UID_RANGE = 5000


_UIDS: set[int] = set()  # the sandbox uids of this process's running zygotes: no two share one


def free_uid() -> int:
    """A sandbox uid no other zygote of this process uses (random: other graders on the machine pick theirs)."""
    while True:
        uid = SANDBOX_UID_BASE + secrets.randbelow(SANDBOX_UID_RANGE)
        if uid not in _UIDS:
            _UIDS.add(uid)
            return uid


def release_uid(uid: int) -> None:
    """The zygote that used ``uid`` stopped: another may take it."""
    _UIDS.discard(uid)


MAX_ISOLATION_VARIABLE = "GRADER_MAX_ISOLATION"


def kernel_capability() -> str:
    """The CPU kernels (``avx512``, ``avx2``, ``default``) torch uses in this process, for the workers to use too.

    torch picks them once per process from what its CPU probe sees; a job that probes inside the sandbox can see
    less and fall back to other kernels, whose random numbers differ by about 1e-6 (``torch.randn`` inputs made
    in the job then differ from the parent's, and an exact check of a pure reshape fails).
    """
    import torch

    return torch.backends.cpu.get_cpu_capability().lower()


def known_capability() -> str | None:
    """The kernels to fix in a zygote as it starts, when they are known without importing torch here: the
    ``ATEN_CPU_CAPABILITY`` this process runs with, or its torch's choice if it has imported torch already.

    Otherwise None: the zygote imports torch while this process does (the two imports overlap instead of
    following each other, about a second of a one-submission grade) and reports its choice when it is ready,
    where :meth:`Zygote._accept` compares it with this process's.
    """
    if os.environ.get("ATEN_CPU_CAPABILITY"):
        return os.environ["ATEN_CPU_CAPABILITY"].lower()
    return kernel_capability() if "torch" in sys.modules else None


def default_protected() -> list[Path]:
    """Folders no job may see: the grader's own source tree (instructor material included; an installed wheel's
    site-packages holds none), the course's assignments and the references beside them, and the store of reference
    outputs (autograder.judge.refcache; created here so it exists before any job runs)."""
    from autograder.judge.refcache import cache_root
    from autograder.spec.course import find_assignments_root

    store, course = cache_root(), find_assignments_root()
    return ([CHECKOUT] if CHECKOUT else []) + ([course, course.parent / "reference_solutions"] if course else []) + (
        [store] if store else [])


def within(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or lies below it (both resolved)."""
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def protect_this_process() -> None:
    """Make the grader's own memory and /proc entries unreadable to same-user processes: a job that keeps the
    grader's user (every tier below ``uid``; root's jobs drop their capabilities) cannot write into its memory."""
    try:
        linux.prctl(linux.PR_SET_DUMPABLE, 0)
    except OSError:
        pass


def hiding(scratch: Path, protect: list[Path], trial_root: Path) -> dict[str, Any]:
    """A zygote's configuration for the trial jobs and the tiers above ``rlimits`` (which runs no trial and hides
    nothing): the folders to hide (the grader's, the assignments, ``protect``, the folder holding the zygote's
    scratch unless it is the temporary folder), a file in each (the trials check it is hidden), the trials' folders.
    """
    protected = [*default_protected(), *protect]
    if scratch.parent != Path(tempfile.gettempdir()):
        protected.append(scratch.parent)
    return {"protected": sorted({str(p.resolve()) for p in protected if p.exists()}),
            "protected_samples": protected_samples(protected),
            "trial_workdir": str(trial_root / "work"), "trial_job_dir": str(trial_root / "out")}
