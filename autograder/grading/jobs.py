"""Sandboxed jobs on one submission: run checks in order on a zygote, probe which modules import (grading and show)."""

from __future__ import annotations

import queue
import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from autograder.errors import TransportError, WorkerDied
from autograder.grading.records import collect_output, ended_early, format_error, read_tensor_file, seconds_of
from autograder.judge.transport import decode_outputs
from autograder.probe.checks import Check
from autograder.reports.results import ERROR, NOT_IMPLEMENTED, TIMEOUT, CheckResult
from autograder.sandbox.host import JobResult, Limits, Zygote
from autograder.sandbox.memory import MemoryPlan
from autograder.spec.assignment import Assignment
from autograder.submission.notebook.places import CellMap
from autograder.submission.package import PreparedSubmission

IMPORT_TIMEOUT = 30.0


OUTPUT_PER_CHECK = 4096


Item = TypeVar("Item")

# Reads one check's record of a finished job into its result (``base``, status ERROR until read); the last
# argument is the submission's map of a notebook's cells (None for a package), for where an error was raised.
ReadCheck = Callable[[Check, int, dict[str, Any], JobResult, CheckResult, CellMap | None], CheckResult]


@dataclass(frozen=True)
class CheckBatch:
    """What a job needs to run some checks of one task, besides the submission: the code sent to the worker.

    Attributes:
        label: Names the job's output for the student (a task id, or a check name when it runs alone).
        timeout: Wall-clock seconds per check.
        checks_source: The checks file's text (exec'd in the worker).
        helper_sources: Helper modules beside it (``_name.py``), by name.
        reference_sources: The pruned reference modules standing in for the task's dependencies (may be empty).
        uses: The dependencies the reference stands in for.
        assets: Asset files by name (hex-encoded into the job).
    """

    label: str
    timeout: float
    checks_source: str
    helper_sources: dict[str, str] = field(default_factory=dict)
    reference_sources: dict[str, str] = field(default_factory=dict)
    uses: tuple[str, ...] = ()
    assets: dict[str, bytes] = field(default_factory=dict)


class Jobs:
    """Runs jobs of one assignment on a set of started (or starting) zygotes, one job per zygote at a time.

    Args:
        assignment: The assignment.
        zygotes: The sandboxed workers (see :func:`autograder.sandbox.host.start_zygotes`).
        memory: The memory plan (each job's limit).
    """

    def __init__(self, assignment: Assignment, zygotes: list[Zygote], memory: MemoryPlan) -> None:
        self.assignment = assignment
        self.zygotes = zygotes
        self.memory = memory

    def started_zygote(self) -> Zygote:
        """A zygote already started (the first if none is): jobs that run alone need not wait for a cold one."""
        return next((z for z in self.zygotes if z.started), self.zygotes[0])

    def serve(self, items: list[Item], run: Callable[[Item, Zygote], None], workers: int | None = None) -> list[Item]:
        """Run ``run(item, zygote)`` for every item on several zygotes at once, one item per zygote at a time.

        The first item goes to a zygote already started; the others start meanwhile and take the next items
        (give the items longest first). An item whose worker dies is handed back for another worker.

        Args:
            items: The work, in the order it should start.
            run: Runs one item on one zygote.
            workers: How many zygotes to use (default: all).

        Returns:
            The items no worker could run (every worker died), in no particular order.
        """
        first = self.started_zygote()
        zygotes = ([first] + [z for z in self.zygotes if z is not first])[: workers or len(self.zygotes)]
        pending: queue.SimpleQueue[Item] = queue.SimpleQueue()
        for item in items[1:]:
            pending.put(item)

        def loop(zygote: Zygote, item: Item | None) -> None:
            try:
                while item is None and not zygote.wait_ready(0.2):
                    if pending.empty():
                        return  # the others did everything while this one started
            except WorkerDied:
                return  # the others run the rest
            while True:
                if item is None:
                    try:
                        item = pending.get_nowait()
                    except queue.Empty:
                        return
                try:
                    run(item, zygote)
                except WorkerDied:
                    pending.put(item)  # this worker is gone; another one runs it
                    return
                item = None

        if not items:
            return []
        if len(zygotes) == 1 or len(items) == 1:
            loop(first, items[0])
        else:
            with ThreadPoolExecutor(len(zygotes)) as pool:
                for future in [pool.submit(loop, z, items[0] if i == 0 else None) for i, z in enumerate(zygotes)]:
                    future.result()
        left: list[Item] = []
        while not pending.empty():
            left.append(pending.get_nowait())
        return left

    def job(self, prepared: PreparedSubmission, extra: dict[str, Any]) -> dict[str, Any]:
        """A job on a fresh copy of the submission's work folder (a job may write to it; the next sees none of it).

        The copy's name is unique beside the work, not only within this runner: ``grade-all --figures`` draws with
        another runner on the very copy its grade ran on.
        """
        workdir = Path(tempfile.mkdtemp(prefix="run-", dir=prepared.workdir.parent))
        shutil.copytree(prepared.workdir, workdir, dirs_exist_ok=True)  # and its mode, as a new folder would get
        return {"package": self.assignment.package, "workdir": str(workdir), **extra}

    def run(self, job: dict[str, Any], wall_seconds: float, steps: int = 1, zygote: Zygote | None = None) -> JobResult:
        """Run a job under the limits of ``steps`` steps of ``wall_seconds`` each; a dead worker is restarted and
        the job reported as ended early."""
        job_dir = Path(job["workdir"]).with_name(Path(job["workdir"]).name + "-out")
        job_dir.mkdir()
        limits = Limits(wall_seconds=wall_seconds, cpu_seconds=int(wall_seconds * 2 * steps) + 5,
                        memory_bytes=self.memory.job_bytes, steps=steps)
        zygote = zygote or self.started_zygote()
        try:
            return zygote.run(job, limits, job_dir, OUTPUT_PER_CHECK * steps)
        except WorkerDied as exc:
            zygote.start()
            return JobResult(exit={"code": None, "signal": None, "worker_died": str(exc)}, job_dir=job_dir)
        finally:
            shutil.rmtree(job["workdir"], ignore_errors=True)

    def probe_imports(self, prepared: PreparedSubmission, outputs: list[str]) -> dict[str, str]:
        """Find the student modules that cannot be imported (error, exit or hang at import time).

        A job imports the modules in order and stops trusting its records at the first failure: a module that
        imports a broken one would fail too, so the rest are tried again in a fresh job where the broken module
        is replaced by its fallback. A failure located in another module's file tries that module first.

        Returns:
            Module name to the reason it cannot be imported.
        """
        modules = self.assignment.modules
        broken = {m: prepared.refused.get(f"{m}.py", f"{m}.py is missing from the submission") for m in modules
                  if f"{m}.py" not in prepared.copied}
        remaining = [m for m in modules if m not in broken]
        moved: set[str] = set()
        for _ in range(3 * len(modules) + 1):
            if not remaining:
                break
            result = self.run(self.job(prepared, {"import_modules": remaining, "broken_modules": broken}),
                              IMPORT_TIMEOUT)
            collect_output(outputs, "import", result)
            done = {r.get("import"): r for r in result.records if isinstance(r.get("import"), str)}
            for module in list(remaining):
                record = done.get(module)
                if record is not None and record.get("status") == "ok":
                    remaining.remove(module)
                    continue
                reason = ended_early(result, "importing it") if record is None else format_error(record.get("error"))
                culprit = next((m for m in remaining if m != module and m not in moved and f"{m}.py" in reason), None)
                if culprit is not None:
                    moved.add(culprit)
                    remaining.remove(culprit)
                    remaining.insert(0, culprit)
                else:  # the reason as the student is told it (a notebook's cell); the files' names found the culprit
                    broken[module] = reason if record is None else format_error(record.get("error"), prepared.cell_map)
                    remaining.remove(module)
                break
        for module in remaining:
            broken[module] = "its import could not be checked"
        return broken

    def run_checks(self, batch: CheckBatch, checks: list[tuple[Check, int]], prepared: PreparedSubmission,
                   broken: dict[str, str], outputs: list[str], read: ReadCheck,
                   zygote: Zygote | None = None) -> list[CheckResult]:
        """Run checks in order in one job; return the results of those that ran: all of them, or those up to and
        including the one during which the job ended early (its status ``timeout`` or ``error``).

        Args:
            batch: The task's code for the worker.
            checks: The checks with their seeds, in order.
            prepared: The submission.
            broken: Modules replaced by their fallback in the worker (module to reason).
            outputs: What the student's code printed is appended here.
            read: Turns a check's record into its result (the judge, or show's capture).
            zygote: The worker to use (a started one by default).
        """
        job = self.job(prepared, {
            "checks_source": batch.checks_source,
            "helper_sources": batch.helper_sources,
            "reference_sources": batch.reference_sources,
            "uses": list(batch.uses),
            "broken_modules": broken,
            "assets": {name: data.hex() for name, data in batch.assets.items()},
            "checks": [{"name": check.name, "seed": seed} for check, seed in checks],
        })
        result = self.run(job, batch.timeout, steps=len(checks), zygote=zygote)
        collect_output(outputs, checks[0][0].name if len(checks) == 1 else batch.label, result)
        records: dict[str, dict[str, Any]] = {}
        for record in result.records:
            if isinstance(record.get("check"), str):
                records.setdefault(record["check"], record)
        done: list[CheckResult] = []
        try:
            for check, seed in checks:
                base = CheckResult(check.name, check.description, check.weight, ERROR, seed=seed)
                record = records.get(check.name)
                if record is None:
                    base.status = TIMEOUT if result.timed_out else ERROR
                    base.message = (f"did not finish within {batch.timeout:g} s (an endless loop, a long sleep, "
                                    f"or far too slow)" if result.timed_out else ended_early(result, "this check"))
                    done.append(base)
                    return done
                done.append(read(check, seed, record, result, base, prepared.cell_map))
            return done
        finally:
            if result.job_dir is not None:
                shutil.rmtree(result.job_dir, ignore_errors=True)


def read_outputs(record: dict[str, Any], result: JobResult, base: CheckResult,
                 cells: CellMap | None = None) -> dict[str, Any] | None:
    """A check's outputs, decoded here from the job's untrusted bytes; None when there are none, with ``base``
    saying why (not implemented, the student's exception, outputs that cannot be read back; where it was raised
    said as a notebook's cell when ``cells`` maps the extracted files). Sets its times.
    """
    base.seconds, base.cpu_seconds = (seconds_of(record.get(key)) for key in ("seconds", "cpu_seconds"))
    status = record.get("status")
    if status in ("not_implemented", "error"):
        base.status = NOT_IMPLEMENTED if status == "not_implemented" else ERROR
        base.message = format_error(record.get("error"), cells)
        return None
    try:
        return decode_outputs(record.get("values"), read_tensor_file(result.job_dir, record.get("tensors")))
    except TransportError as exc:
        base.message = f"the outputs could not be read back: {exc}"
        return None
