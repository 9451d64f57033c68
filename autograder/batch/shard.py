"""Split a class into N slices: ``K/N`` by hand, or ``auto`` from the scheduler that started this process."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from autograder.batch.discover import Entry
from autograder.errors import GraderError


def parse_shard(text: str) -> tuple[int, int]:
    """Parse ``K/N`` (1 <= K <= N).

    Raises:
        GraderError: If the text is not a valid shard.
    """
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise GraderError(f"--shard must look like K/N (e.g. 2/4), not {text!r}") from None
    if not 1 <= k <= n:
        raise GraderError(f"--shard {text}: K must be between 1 and N")
    return k, n


SHARD_VARIABLE = "GRADER_SHARD"  # K/N, e.g. from a GitHub Actions matrix: GRADER_SHARD: ${{ matrix.shard }}/4
SHARD_COUNT_VARIABLE = "GRADER_SHARD_COUNT"  # N, declared once for a Kubernetes Job or a Slurm array


def resolve_shard(text: str, count: int | None = None, environ: Mapping[str, str] | None = None) -> tuple[int, int]:
    """Parse ``--shard``: ``K/N``, or ``auto`` to take K from the scheduler that started this process.

    ``auto`` looks, in this order, at ``$GRADER_SHARD`` (``K/N``; set it from a GitHub Actions matrix), a
    Kubernetes Indexed Job's ``JOB_COMPLETION_INDEX`` (0-based) and a Slurm array's ``SLURM_ARRAY_TASK_ID``
    (the task id is the shard: ``--array=1-N``). N is declared once, by ``count`` or ``$GRADER_SHARD_COUNT``,
    never taken from the scheduler: a pod is not told its Job's completions, and a re-submitted Slurm task
    (``sbatch --array=2``) is an array of one, whose ``SLURM_ARRAY_TASK_COUNT`` and ``SLURM_ARRAY_TASK_MIN``
    describe the re-submission, not the class's split.

    Args:
        text: The option's value.
        count: ``--shard-count``: N, overriding ``$GRADER_SHARD_COUNT``.
        environ: The environment to read (``os.environ`` by default).

    Returns:
        ``(K, N)`` with 1 <= K <= N.

    Raises:
        GraderError: If the value is malformed, or ``auto`` finds no scheduler, no declared N or a K outside 1..N.
    """
    if text != "auto":
        if count is not None:
            raise GraderError("--shard-count goes with --shard auto only (K/N already says N)")
        return parse_shard(text)
    import os

    env = os.environ if environ is None else environ
    if env.get(SHARD_VARIABLE):
        return parse_shard(env[SHARD_VARIABLE])
    total = count if count is not None else _integer(env, SHARD_COUNT_VARIABLE, required=False)
    if env.get("JOB_COMPLETION_INDEX") not in (None, ""):
        index = _integer(env, "JOB_COMPLETION_INDEX")
        if total is None:
            raise GraderError("--shard auto found a Kubernetes Indexed Job (JOB_COMPLETION_INDEX) but not its "
                              "number of completions; pass --shard-count N or set GRADER_SHARD_COUNT=N")
        return _checked(index + 1, total, f"JOB_COMPLETION_INDEX={index} with {total} completions")
    if env.get("SLURM_ARRAY_TASK_ID") not in (None, ""):
        task = _integer(env, "SLURM_ARRAY_TASK_ID")
        if total is None:
            raise GraderError("--shard auto found a Slurm array task (SLURM_ARRAY_TASK_ID) but no declared number "
                              "of shards; set GRADER_SHARD_COUNT=N (deploy/slurm/submit.sh does) or pass "
                              "--shard-count N (the array's own task count changes when one task is re-submitted)")
        return _checked(task, total, f"Slurm array task {task} (the task id is the shard: --array=1-{total})")
    raise GraderError("--shard auto found no scheduler: expected JOB_COMPLETION_INDEX (Kubernetes Indexed Job, with "
                      "GRADER_SHARD_COUNT=N), SLURM_ARRAY_TASK_ID (Slurm array, with GRADER_SHARD_COUNT=N) or "
                      "GRADER_SHARD=K/N (e.g. a GitHub Actions matrix); or pass --shard K/N")


def _integer(env: Mapping[str, str], name: str, required: bool = True) -> int | None:
    value = env.get(name, "").strip()
    if not value:
        if required:
            raise GraderError(f"--shard auto: {name} is empty")
        return None
    try:
        return int(value)
    except ValueError:
        raise GraderError(f"--shard auto: {name} must be a whole number, not {value!r}") from None


def _checked(k: int, n: int, origin: str) -> tuple[int, int]:
    if n < 1 or not 1 <= k <= n:
        raise GraderError(f"--shard auto: {origin} gives shard {k} of {n}; K must be between 1 and N")
    return k, n


def select_shard(entries: list[Entry], k: int, n: int) -> list[Entry]:
    """The K-th of N slices: students sorted by a hash of their id, every N-th from position K-1.

    Every student lands in exactly one shard, shard sizes differ by at most one, and the split depends only
    on the set of student ids (not on file order or machine).
    """
    ordered = sorted(entries, key=lambda e: (hashlib.sha256(e.student.encode()).hexdigest(), e.student))
    return sorted(ordered[k - 1::n], key=lambda e: e.student)
