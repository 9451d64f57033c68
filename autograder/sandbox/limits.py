"""The resource limits a job runs under: wall clock per step, CPU, memory, file size, processes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Resource limits applied to each job's process tree.

    Attributes:
        wall_seconds: Wall-clock time for each step of the job (a check, or the whole job if it has one step),
            enforced from outside: the clock restarts when the job reports that it starts its next step.
        cpu_seconds: CPU time for the whole job (RLIMIT_CPU).
        memory_bytes: Address space the job may add beyond the pre-imported zygote's (RLIMIT_AS).
        file_bytes: Largest file the job may write (RLIMIT_FSIZE); also bounds captured output and outputs.
        processes: Processes and threads the job may add (RLIMIT_NPROC; see docs/SECURITY.md for where it holds).
    """

    wall_seconds: float
    cpu_seconds: int
    memory_bytes: int = 2 * 1024**3
    file_bytes: int = 64 * 1024 * 1024
    processes: int = 64
    steps: int = 1

    @property
    def total_wall_seconds(self) -> float:
        """The hard cap on the whole job, whatever it reports about its steps."""
        return self.wall_seconds * max(1, self.steps)

    def as_job(self) -> dict[str, int]:
        return {
            "cpu_seconds": int(self.cpu_seconds),
            "address_space_bytes": int(self.memory_bytes),
            "file_bytes": int(self.file_bytes),
            "processes": int(self.processes),
        }
