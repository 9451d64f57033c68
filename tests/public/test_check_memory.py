"""No process that runs a student's code during ``grader check`` can write into the memory of a process that outlives
it: the ``grader check`` process itself, the runtime's template, and the session its job was forked from."""

from __future__ import annotations

import re

import pytest
from test_check_robustness import copy_assignment, run_check, work_from_reference  # beside these tests

pytestmark = pytest.mark.slow

ANCESTORS_TEST = '''
import os

import pytest


@pytest.mark.task("causal_mask")
def test_no_process_that_outlives_this_one_has_memory_it_may_write():
    """Walks up from the test's process to the `grader check` process, opening each one's memory for writing."""
    opened = []
    pid = os.getppid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                command = handle.read()
        except OSError:
            command = b""
        try:
            fd = os.open(f"/proc/{pid}/mem", os.O_WRONLY)
        except OSError:
            pass
        else:
            os.close(fd)
            opened.append(f"{pid}: {command[:70]!r}")
        if b"autograder.cli" in command:
            break
        with open(f"/proc/{pid}/stat") as handle:
            pid = int(handle.read().rsplit(")", 1)[1].split()[1])
    assert not opened, "writable: " + "; ".join(opened)
'''


def test_a_public_test_cannot_open_a_longer_lived_process_memory_for_writing(tmp_path) -> None:
    env = copy_assignment("assignment3", tmp_path)
    (tmp_path / "assignments" / "assignment3" / "public_tests" / "test_ancestors.py").write_text(ANCESTORS_TEST)
    package = work_from_reference("assignment3", tmp_path)
    result = run_check("assignment3", str(package), "--task", "causal_mask", "--verbose", env=env)
    assert re.search(r"^causal_mask +3/3  passed$", result.stdout, re.M), result.stdout + result.stderr
