"""TODO docstring for sandbox.tiers"""

from __future__ import annotations

from collections.abc import Iterable

TIERS = ("rlimits", "landlock", "namespaces", "uid")


TIER_HELP = {
    "rlimits": "resource limits, own session, wall-clock kill and leftover kill only",
    "landlock": "plus Landlock file, network and signal rules",
    "namespaces": "plus PID, mount, network, IPC and UTS namespaces",
    "uid": "plus a separate unprivileged user (grader running as root)",
}


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
        raise ValueError(f"unknown isolation level {required!r} (choose from {', '.join(TIERS)})")
    present = set(features)
    return all(tier in present for tier in TIERS[: TIERS.index(required) + 1])
