"""Every mistake and variant imported in a sandboxed job, and each that does not import named (verify, audit)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from autograder.errors import GraderError, WorkerDied
from autograder.sandbox.host import JobResult, Limits, Zygote, new_scratch
from autograder.spec.mutation import Edited, Mutation, unimportable, write_mutated

EACH_SECONDS = 30.0  # each package's import: torch and what the reference imports are the zygote's already
OUTPUT_BYTES = 4096  # of what the mutated modules printed (never shown)


def import_problems(reference: Path, modules: tuple[str, ...], edited: list[Edited]) -> list[str]:
    """One line for each mutation whose package does not import (see :func:`import_answers`)."""
    return [answer for answer in import_answers(reference, modules, edited) if answer]


def import_answers(reference: Path, modules: tuple[str, ...], edited: list[Edited]) -> list[str]:
    """For each mutation, in order, the line saying that its package does not import
    (:func:`autograder.spec.mutation.load_mutation`, what the judge runs on a mistake), hangs while importing or
    ends the process that imports it; '' for one that imports (``grader verify`` and ``grader audit`` ask).

    Importing runs the mutation's code: the instructor's, trusted, but in a sandboxed job all the same, so that a
    mutation's module-level code changes nothing here. One job imports them all, in order, each with its own wall
    clock; one that hangs or ends it is named, and a new job imports the rest.

    Args:
        reference: The reference package folder.
        modules: The package's modules, imported as the judge imports them.
        edited: Each mutation with the text of the files it edits (``combined_problems``: edits that apply and
            leave Python).

    Raises:
        GraderError: If the sandbox's zygote cannot start.
    """
    if not edited:
        return []
    said: list[str] = []
    scratch = new_scratch(prefix="grader-verify-imports-")
    zygote = Zygote(scratch / "zygote", warm_up=False)
    try:
        _start(zygote)
        work = Path(tempfile.mkdtemp(prefix="packages-", dir=scratch))
        pending = [(write_mutated(reference, texts, work / str(index) / reference.name), mutation)
                   for index, (mutation, texts) in enumerate(edited)]
        while pending:
            answers, stopped = _import_in_job(zygote, pending, modules, work)
            said += [unimportable(mutation, detail) if detail else ""
                     for (_, mutation), detail in zip(pending, answers)]
            pending = pending[len(answers):]
            if pending:  # the job stopped at this one: it hung or ended the process
                said.append(unimportable(pending[0][1], stopped))
                pending = pending[1:]
    finally:
        zygote.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return said


def _start(zygote: Zygote) -> None:
    """Start the zygote and wait for its start-up (torch's import), off every import's clock."""
    try:
        zygote.start()
        zygote.isolation
    except WorkerDied as exc:
        raise GraderError(f"the process that imports each mistake and variant did not start: {exc}") from None


def _import_in_job(zygote: Zygote, packages: list[tuple[Path, Mutation]], modules: tuple[str, ...],
                   work: Path) -> tuple[list[str], str]:
    """What a job answers for each package in order (its detail, '' when it imports), and, when it stopped before
    the last, why, to be said of the first unanswered one."""
    job_dir = Path(tempfile.mkdtemp(prefix="job-", dir=work.parent))
    entries = [{"folder": str(folder.relative_to(work)), "name": f"_verify_mutation_{index}", "modules": list(modules)}
               for index, (folder, _) in enumerate(packages)]  # relative: the job runs in (its view of) ``work``
    job = {"package": "", "workdir": str(work), "import_packages": entries}
    limits = Limits(wall_seconds=EACH_SECONDS, cpu_seconds=int(EACH_SECONDS * 2 * len(entries)) + 5,
                    steps=len(entries))
    try:
        result = zygote.run(job, limits, job_dir, OUTPUT_BYTES)
    except WorkerDied as exc:
        zygote.start()
        result = JobResult(exit={"code": None, "signal": None, "worker_died": str(exc)})
    finally:
        shutil.rmtree(job_dir, ignore_errors=True)
    answers = _answers(result, len(entries))
    return answers, "" if len(answers) == len(entries) else _stopped(result)


def _answers(result: JobResult, count: int) -> list[str]:
    """The job's answers, in order, up to the first it did not give (its records are untrusted plain data)."""
    given = {r["package"]: r.get("detail") for r in result.records if isinstance(r.get("package"), int)}
    answers = []
    for index in range(count):
        if index not in given:
            break
        answers.append(str(given[index] or ""))
    return answers


def _stopped(result: JobResult) -> str:
    """Why a job stopped before its last package, said of the package it was importing."""
    if result.timed_out:
        return f"importing it did not finish within {EACH_SECONDS:g} s"
    ended = result.exit or {}
    if ended.get("worker_died"):
        return f"importing it stopped the sandbox ({ended['worker_died']})"
    how = f"signal {ended['signal']}" if ended.get("signal") else f"exit code {ended.get('code')}"
    return f"importing it ended the process ({how})"
