"""The isolation tiers, each including the ones before it, and whether features reach one."""

from __future__ import annotations

from collections.abc import Iterable

from autograder.errors import IsolationError

TIERS = ("rlimits", "landlock", "namespaces", "uid")
# What each tier kept the code from, in a student's words (each includes the ones before it: docs/SECURITY.md)
_PLAIN = {
    "rlimits": "in a separate process, with limits on its time and memory",
    "landlock": "in a separate process that could read nothing of yours but its own copy of your code, with limits "
                "on its time and memory",
    "namespaces": "in a separate process that could see nothing of yours but its own copy of your code and had no "
                  "network, with limits on its time and memory",
    "uid": "in a separate process, as a user of its own, that could see nothing of yours but its own copy of your "
           "code and had no network, with limits on its time and memory",
}


def in_plain_words(tier: str) -> str:
    """How the code of a job ran at ``tier`` (:func:`tier_of`), for a student who knows no tier's name: ``in a
    separate process, ...``; an unknown tier (``"none"``) claims nothing beyond the separate process."""
    return _PLAIN.get(tier, "in a separate process")


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
