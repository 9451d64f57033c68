"""Whole lines from a pipe, cut from what ``os.read`` returned: both ends of a zygote's pipes read them so (by
``select``, or by a thread where a pipe cannot be selected on)."""

from __future__ import annotations

import os
import queue
import select
import threading
import time

CHUNK = 1 << 16


class PipeLines:
    """The lines that arrive on ``fd``, buffered here.

    A buffered file object's ``readline`` keeps the lines after the first one of a read in a buffer that ``select``
    on the descriptor cannot see: a process waiting with select for the next line would wait for one that has
    arrived (a job's start and end, sent back to back, waited for until the job's deadline). Whoever waits with
    select asks :meth:`has_line` first.

    Args:
        fd: The pipe's reading end.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""

    def has_line(self) -> bool:
        """Whether a whole line has already been read from the pipe (select would not say it is there)."""
        return b"\n" in self.buffer

    def take(self) -> bytes | None:
        """The next whole line already read, without its newline; None if there is none yet."""
        line, newline, rest = self.buffer.partition(b"\n")
        if not newline:
            return None
        self.buffer = rest
        return line

    def read(self) -> bool:
        """Read what the pipe holds into the buffer (blocks until something comes); False at its end."""
        chunk = os.read(self.fd, CHUNK)
        self.buffer += chunk
        return bool(chunk)

    def wait_line(self, deadline: float) -> bytes | None:
        """The next whole line, without its newline, waiting for it until ``deadline`` (``time.monotonic()``); None
        if none came by then.

        Raises:
            EOFError: If the pipe ended first.
        """
        while not self.has_line():  # first what an earlier read brought along: select cannot see it
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.fd], [], [], remaining)[0]:
                return None
            if not self.read():
                raise EOFError("the pipe ended")
        return self.take()

    def readline(self) -> bytes:
        """The next line with its newline, reading as needed; at the pipe's end what is left (``b""`` if nothing)."""
        while not self.has_line():
            if not self.read():
                rest, self.buffer = self.buffer, b""
                return rest
        return self.take() + b"\n"


class ThreadedLines:
    """The lines that arrive on ``fd``, read by a thread of their own: where ``select`` cannot wait on a pipe
    (Windows), and so, for one code path, everywhere in the runtime without fork (:mod:`autograder.sandbox.spawned`).
    The same ``wait_line`` and ``readline`` as :class:`PipeLines`.

    Args:
        fd: The pipe's reading end.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lines: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.ended = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self.fd, CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                self.lines.put(None)
                return
            *whole, buffer = (buffer + chunk).split(b"\n")
            for line in whole:
                self.lines.put(line)

    def wait_line(self, deadline: float | None) -> bytes | None:
        """The next whole line, without its newline, waiting for it until ``deadline`` (None: as long as it takes);
        None if none came by then.

        Raises:
            EOFError: If the pipe ended first.
        """
        if self.ended:
            raise EOFError("the pipe ended")
        try:
            line = self.lines.get(timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        if line is None:
            self.ended = True
            raise EOFError("the pipe ended")
        return line

    def readline(self) -> bytes:
        """The next line with its newline, waiting as long as it takes; ``b""`` at the pipe's end."""
        try:
            line = self.wait_line(None)
        except EOFError:
            return b""
        return b"" if line is None else line + b"\n"
