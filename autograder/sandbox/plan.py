"""The isolation plan every sandboxed job applies: the features in force, the user, and the folders to hide or keep."""

from __future__ import annotations

import os
import sys
from typing import Any

from autograder.sandbox import linux
from autograder.sandbox.tiers import tier_of
from autograder.util.paths import CHECKOUT


class Plan:
    """The isolation features applied to every job, and the paths they need.

    Attributes:
        features: Tier names in force (see autograder.sandbox.tiers.TIERS) plus details (``landlock-net``,
            ``landlock-scope``, ``nproc``).
        uid, gid: The unprivileged user jobs run as (root only).
        protected: Folders the job must not see (the grader, instructor material, scratch folders).
        keep: Folders of the Python installation a job needs to read (kept visible inside hidden places).
    """

    def __init__(self, config: dict[str, Any], pidns: bool = False) -> None:
        self.config = config
        self.pidns = pidns
        self.root = _euid() == 0
        self.uid = int(config.get("uid", 60000))
        self.gid = int(config.get("gid", self.uid))
        self.protected = sorted({os.path.realpath(p) for p in config.get("protected", [])})
        self.keep = _python_paths(self.protected)
        self.abi = linux.landlock_abi()
        self.features: set[str] = {"rlimits"}
        self.notes: dict[str, str] = {}

    @property
    def namespaces(self) -> bool:
        return "namespaces" in self.features

    def summary(self) -> dict[str, Any]:
        return {"features": sorted(self.features), "tier": tier_of(self.features), "notes": self.notes,
                "uid": self.uid if "uid" in self.features else _euid(), "landlock_abi": self.abi}


def _euid() -> int:
    """The effective user id (-1 where there is none: Windows)."""
    return os.geteuid() if hasattr(os, "geteuid") else -1


_OWN = [str(CHECKOUT)] if CHECKOUT else []  # the grader's source tree; an installed wheel's site-packages is kept


def _python_paths(protected: list[str]) -> list[str]:
    """The folders of the Python installation and its packages (never the grader's own folder)."""
    import sysconfig

    candidates = [p for p in sys.path if p and os.path.isdir(p)]
    candidates += [sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    libdir = sysconfig.get_config_var("LIBDIR")
    if libdir:
        candidates.append(libdir)
    keep = set()
    for path in candidates:
        real = os.path.realpath(path)
        if real in _OWN or not os.path.isdir(real):
            continue
        if any(linux.inside(p, real) for p in protected + _OWN):
            continue  # a folder that contains the grader or instructor material is never exposed whole
        keep.add(real)
    return sorted(keep)
