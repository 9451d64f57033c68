"""Every dependency the project declares is named in docs/ARCHITECTURE.md's Dependencies table (what it does here,
what it replaced), and the table names none it does not declare."""

from __future__ import annotations

import re
from pathlib import Path

from autograder.util.tomlio import load_toml

REPO = Path(__file__).resolve().parents[1]


def declared() -> set[str]:
    """The distribution names of ``[project] dependencies`` and of every extra, lowercase."""
    project = load_toml(REPO / "pyproject.toml")["project"]
    lines = project["dependencies"] + [line for extra in project["optional-dependencies"].values() for line in extra]
    return {re.match(r"[A-Za-z0-9_.-]+", line).group(0).lower() for line in lines}


def documented() -> set[str]:
    """The code spans in the first column of the Dependencies table."""
    section = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8").split("## Dependencies\n", 1)[1]
    rows = [line for line in section.split("\n## ", 1)[0].splitlines() if line.startswith("| `")]
    return {name.lower() for row in rows for name in re.findall(r"`([^`]+)`", row.split(" | ")[0])}


def test_every_dependency_is_documented_and_every_documented_one_declared() -> None:
    assert declared() == documented()
