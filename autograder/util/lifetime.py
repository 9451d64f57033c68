"""A process that ends with its parent: Linux's parent-death signal, nothing elsewhere."""

from __future__ import annotations

import ctypes
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent(signal_number: int = signal.SIGKILL) -> None:
    """Ask Linux to send this process ``signal_number`` when its parent dies (``kill -9`` included), so that no
    worker or test outlives what started it. Elsewhere, and if the call fails, nothing happens.

    Pure standard library, no sandbox module: a student's ``grader check`` release ships this without the sandbox.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        # The process's own symbols hold libc's: finding libc's file instead (ctypes.util.find_library) runs
        # ldconfig, a process of its own, in every fork that calls this.
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal_number, 0, 0, 0)
    except (OSError, AttributeError):
        pass
