"""The zygote's once-only work for cheaper forks: trusted modules forgotten (again if it imported since), huge pages."""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
import types

from autograder.sandbox import job, linux
from autograder.sandbox.procfs import private_memory


def _in_a_child(test) -> int:
    """Run ``test()`` in a forked child (it changes this process's import state); return its exit code."""
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(0 if test() else 1)
        except BaseException:  # noqa: BLE001 - any failure is the child's exit code
            os._exit(2)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_a_job_forgets_the_trusted_side_again_when_its_zygote_imported_it_after_forgetting(tmp_path):
    def imported_after_forgetting() -> bool:
        job.forget_trusted_side()
        sys.modules["autograder.grading.imported_later"] = types.ModuleType("autograder.grading.imported_later")
        job._isolate_imports(str(tmp_path))
        return "autograder.grading.imported_later" not in sys.modules

    def nothing_imported_since() -> bool:
        sys.modules["_reference_planted_before"] = types.ModuleType("_reference_planted_before")
        job.forget_trusted_side()
        job._isolate_imports(str(tmp_path))
        return not any(name.startswith(job.BLOCKED_TOP_LEVEL) for name in sys.modules)

    assert _in_a_child(imported_after_forgetting) == 0
    assert _in_a_child(nothing_imported_since) == 0


def test_collapsing_memory_into_huge_pages_changes_no_byte():
    size = 8 << 20
    region = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    pattern = bytes(range(256)) * (size // 256)
    region.write(pattern)
    view = ctypes.c_char.from_buffer(region)
    address = ctypes.addressof(view)
    assert any(low <= address < high for low, high in private_memory())
    linux.collapse_huge_pages([(address, address + size), (address + 1, address + 4096)])  # an unaligned bit too
    linux.collapse_huge_pages([])
    assert region[:] == pattern
    del view
    region.close()
