"""The isolation tiers, each including the ones before it, and whether features reach one."""

from __future__ import annotations

from collections.abc import Iterable

from autograder.errors import IsolationError

TIERS = ("rlimits", "landlock", "namespaces", "uid")




def tier_of(features: Iterable[str]) -> str:
    """The strongest tier whose features (and those of every weaker tier) are all present, or ``"none"``."""
    present = set(features)
    achieved = "none"
    for tier in TIERS:
        if tier not in present:
            break
        achieved = tier
    return achieved


def meets(features: Iterable[str], required: str) -> bool:
    """Whether the features satisfy a required tier (every tier up to and including it)."""
    if required not in TIERS:
        raise IsolationError(f"unknown isolation level {required!r} (choose from {', '.join(TIERS)})")
    present = set(features)
    return all(tier in present for tier in TIERS[: TIERS.index(required) + 1])
