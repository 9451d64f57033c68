"""Split a class into N slices (--shard K/N) so several machines can grade it."""

from __future__ import annotations

import hashlib

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


def select_shard(entries: list[Entry], k: int, n: int) -> list[Entry]:
    """The K-th of N slices: students sorted by a hash of their id, every N-th from position K-1.

    Every student lands in exactly one shard, shard sizes differ by at most one, and the split depends only
    on the set of student ids (not on file order or machine).
    """
    ordered = sorted(entries, key=lambda e: (hashlib.sha256(e.student.encode()).hexdigest(), e.student))
    return sorted(ordered[k - 1::n], key=lambda e: e.student)
