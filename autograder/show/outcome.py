"""What came back from running figure probes: each probe's result and the run's notes (plain data, no torch)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from autograder.reports.results import ERROR, FAILED, NOT_IMPLEMENTED, PASSED, TIMEOUT

OK, NOT_RUN = "ok", "not run"
# A probe's status from the status of the check it ran as (a probe is never judged: failed means it gave outputs).
STATUS = {PASSED: OK, FAILED: OK, NOT_IMPLEMENTED: "not implemented", ERROR: "error", TIMEOUT: "timeout"}
FAULTS = (STATUS[ERROR], STATUS[TIMEOUT])  # a probe whose code raised or hung: a fault in the student's code


@dataclass
class ProbeResult:
    """How one probe went.

    Attributes:
        status: ``ok``, ``not implemented``, ``error``, ``timeout`` or ``not run``.
        message: Why it did not give outputs (the student's exception, the time limit), else ``""``.
        outputs: The decoded plain outputs (empty unless ``ok``).
        seconds: Time the probe took in the worker.
        transport: The worker's JSON description of the outputs and their safetensors bytes, as received (what
            ``show/cache.py`` keeps); None when there are no outputs.
    """

    status: str
    message: str = ""
    outputs: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    transport: tuple[Any, bytes | None] | None = field(default=None, repr=False, compare=False)


@dataclass
class RunOutcome:
    """Every probe's result for one submission, and what the page should say about the run.

    Attributes:
        probes: Probe name to its result.
        notes: What the intake chose (a package beside a notebook), missing files, modules that could not be
            imported.
        printed: What the student's code printed (truncated).
        isolation: The sandbox tier the code ran under.
        seconds: Wall time of the whole run.
    """

    probes: dict[str, ProbeResult]
    notes: list[str] = field(default_factory=list)
    printed: str = ""
    isolation: str = ""
    seconds: float = 0.0
