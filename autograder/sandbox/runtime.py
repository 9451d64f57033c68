"""A runtime kept for a session of the user's: one warm, pre-imported template whose zygotes run every job of it.

A ``grader check --watch``, a notebook's kernel or a one-off ``grader check`` keeps one; each check forks the
zygotes it needs from it (milliseconds) and closes them when it ends, while the template, which never runs
student code, stays warm for the next check. See :mod:`autograder.sandbox.template` for the template.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from autograder.sandbox.host import Zygote
from autograder.sandbox.spawned import start_method
from autograder.sandbox.spawner import ZygoteTemplate


class Runtime:
    """A template kept open between the jobs of a session, with a private scratch folder.

    Args:
        preload: ``module:function`` the template calls once before it forks (see
            :func:`autograder.sandbox.template.serve`).
        prefix: The scratch folder's name prefix.
    """

    def __init__(self, preload: str = "", prefix: str = "grader-runtime-") -> None:
        self.scratch = Path(tempfile.mkdtemp(prefix=prefix))
        self.template_log = self.scratch / "template.log"
        self.template = ZygoteTemplate(self.scratch / "template", preload, self.template_log)
        self.template.hold(self)
        self._made = 0

    @property
    def starts(self) -> int:
        """How many template processes this runtime started (one while it stays up)."""
        return self.template.starts

    @property
    def pid(self) -> int | None:
        """The template process's id (None when none is running)."""
        process = self.template.process
        return process.pid if process is not None and process.poll() is None else None

    def start(self) -> None:
        """Start the template now if it is not running: its imports (seconds) then overlap the caller's work
        (without fork there is no template: each zygote starts on its own)."""
        if start_method() == "fork" and not self.template.alive():
            self.template.start(None)

    def zygote(self, **options: Any) -> Zygote:
        """A zygote forked from this runtime's template, in a folder of its own, started now (``options``: see
        :class:`Zygote`); the caller closes it."""
        self._made += 1
        zygote = Zygote(self.scratch / f"zygote-{self._made}", template=self.template, **options)
        zygote.start()
        return zygote

    def close(self) -> None:
        """Stop the template and everything it forked, and remove the scratch folder."""
        self.template.release(self)
        self.template.close()
        shutil.rmtree(self.scratch, ignore_errors=True)
