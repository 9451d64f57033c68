"""Shared fixtures for the grader's own tests: the repository's paths, the assignment3 declaration, a copy of the
mini fixture course to edit, a known mistake of it that does not import (and the course given such a mistake and
variant), and what a running command's processes listen on."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from autograder.sandbox.procfs import descendants
from autograder.spec.assignment import Assignment, load_assignment

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def assignment3() -> Assignment:
    return load_assignment("assignment3")


@pytest.fixture
def mini_course(tmp_path: Path) -> Path:
    """A copy of the two-task mini fixture under ``tmp_path`` (``assignments/mini`` and
    ``reference_solutions/mini``), to edit; returns the assignment's folder. ``GRADER_ASSIGNMENTS`` (or
    ``load_assignment(root=)``) is its parent."""
    shutil.copytree(FIXTURES / "assignments" / "mini", tmp_path / "assignments" / "mini")
    shutil.copytree(FIXTURES / "reference_solutions" / "mini", tmp_path / "reference_solutions" / "mini")
    return tmp_path / "assignments" / "mini"


@pytest.fixture(scope="session")
def import_failing_mistake() -> Path:
    """A known mistake of the mini course (a mutation file's text) that is Python but fails when imported:
    ``first_axis`` is defined nowhere."""
    return FIXTURES / "mutations" / "row_sums_import_fails.toml"


@pytest.fixture
def unimportable_mutations(mini_course: Path, import_failing_mistake: Path) -> dict[str, str]:
    """The mini course copy given a mistake (``import_failing_mistake``) and a variant (``import nunpy``) whose
    packages do not import; returns each one's id and the line ``grader verify`` says it in (file and line of the
    mutation, the module, line and exception)."""
    mistakes = mini_course / "hidden" / "mistakes" / "row_sums.toml"
    mistakes.write_text(mistakes.read_text() + "\n" + import_failing_mistake.read_text())
    variants = mini_course / "hidden" / "variants" / "scale.toml"
    variants.parent.mkdir()
    variants.write_text('[[mutation]]\nid = "scale_with_numpy"\nfile = "ops.py"\nold = "import torch\\n"\n'
                        'new = "import torch\\nimport nunpy\\n"\n')
    line = mistakes.read_text().splitlines().index('id = "row_sums_first_axis_helper"') + 1
    fix = "a mistake or variant is code a student could run: fix its new text"
    return {"row_sums_first_axis_helper": f"{mistakes}:{line}: mutation 'row_sums_first_axis_helper' does not "
                                          f"import: ops.py, line 5: NameError: name 'first_axis' is not defined; {fix}",
            "scale_with_numpy": f"{variants}:2: mutation 'scale_with_numpy' does not import: ops.py, line 4: "
                                f"ModuleNotFoundError: No module named 'nunpy'; {fix}"}


@pytest.fixture(scope="session", autouse=True)
def private_reference_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every test (and every grader process it starts) keeps persisted reference outputs in one temporary folder,
    never in the user's ~/.cache (autograder.judge.refcache)."""
    folder = tmp_path_factory.mktemp("reference-store")
    previous = os.environ.get("GRADER_CACHE_DIR")
    os.environ["GRADER_CACHE_DIR"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("GRADER_CACHE_DIR", None)
    else:
        os.environ["GRADER_CACHE_DIR"] = previous


@pytest.fixture
def path_sockets() -> Callable[[int], list[str]]:
    """``path_sockets(pid)``: the Unix sockets with a filesystem path on which ``pid`` or a process below it
    listens, as ``"pid: path"``. None may exist: in the ``rlimits`` and ``landlock`` tiers a job runs as the
    grader's user, Landlock does not mediate ``connect()`` to such a socket, and ``/proc/self/net/unix`` names it
    (docs/SECURITY.md)."""
    return lambda pid: _listening_path_sockets({pid, *descendants(pid)})  # zygotes in their PID namespaces too


def _listening_path_sockets(pids: set[int]) -> list[str]:
    """The listening Unix sockets with a filesystem path that any of ``pids`` holds, as ``pid: path``."""
    listening = {}
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:  # Num RefCount Protocol Flags Type St Inode Path
        fields = line.split()
        if len(fields) >= 8 and int(fields[3], 16) & 0x10000 and not fields[7].startswith("@"):  # __SO_ACCEPTCON
            listening[f"socket:[{fields[6]}]"] = fields[7]
    found = []
    for pid in sorted(pids):
        try:
            links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            continue
        found += [f"{pid}: {listening[link]}" for link in links if link in listening]
    return found
