"""Name the cause of what a figure shows wrong, by the judge's known mistakes (the instructor's copy only).

The one place ``grader show`` names a cause. Where the grading material is present (``hidden/mistakes`` beside
the manifest: ``grader show`` in the instructor's copy, ``grade-all --figures``), each probe whose figure shows a
✗ (or could not be drawn from its outputs) is run, in the sandbox like any probe, on the reference and on each
known mistake of the tasks the probe declares (``@probe(tasks=...)``); the student's numbers are then compared with
the mistakes' by the judge (:func:`autograder.judge.verdict.unambiguous_mistake`), and the hint of the one they
match is set as ``Panel.diagnosis``. If none matches, or the inputs cannot tell two mistakes apart, no cause is
named. A mistake is left out as grading leaves it out: a stale one, and one whose package does not import (the one
test of that, :func:`autograder.spec.mutation.load_mutation`, which the judge runs too), each said to the instructor
(:attr:`Diagnoser.left_out`). The student release holds neither this module nor the judge, the mistakes or the
reference (``show/render.py`` loads it by name, so the release's static closure leaves it out).
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import threading
from pathlib import Path
from typing import Any

from autograder.errors import AssignmentError
from autograder.judge.verdict import unambiguous_mistake
from autograder.sandbox.host import Zygote, new_scratch
from autograder.spec.assignment import Assignment, Task
from autograder.spec.fingerprint import assignment_fingerprint
from autograder.spec.mutation import MUTATION_FOLDERS, Mutation, apply_mutation, diagnosable_mistakes, load_mutation
from autograder.submission.intake import prepare_submission
from autograder.submission.package import PreparedSubmission

from ._jobs import FigureJobs, probe_name
from .catalog import Catalog
from .figures import Probe
from .outcome import OK, RunOutcome
from .panel import Panel

# Outputs of the reference ("") and of each mistake on each probe, kept for the life of the process: a batch worker
# drawing many students' figures runs each once. Keyed by what decides them (the assignment's fingerprint covers
# the reference, the figure file's hash the probe).
_OUTPUTS: dict[tuple[str, str, str, str], dict[str, Any] | None] = {}
# Whether each known mistake's package imports ('') or the line saying it does not, by the assignment's fingerprint
# and the mistake's id, kept as long: tried once per process.
_IMPORTS: dict[tuple[str, str], str] = {}
_LOCK = threading.Lock()


class Diagnoser:
    """Names the known mistake behind a figure's ✗ for one assignment (see the module docstring).

    Args:
        assignment: The assignment, with its grading material.
        catalog: Its figures.

    Attributes:
        unimportable: One line per known mistake tried so far whose package does not import, by id (the line
            ``grader verify`` prints): left out of the diagnosis, as the judge leaves it out.
    """

    def __init__(self, assignment: Assignment, catalog: Catalog) -> None:
        self.assignment = assignment
        self.probes = {probe.name: (probe, file.path, _hash(file.source, file.helpers))
                       for file in catalog.files for probe in file.probes}
        self.catalog = catalog
        self.unimportable: dict[str, str] = {}

    # Read on the first figure that shows something wrong, not before: a page with none never pays for them.
    @functools.cached_property
    def _diagnosable(self) -> tuple[list[Mutation], list[str]]:
        return diagnosable_mistakes(self.assignment)

    @property
    def mistakes(self) -> list[Mutation]:
        """The assignment's known mistakes that a figure can tell apart."""
        return self._diagnosable[0]  # a stale one left out, as grading leaves it out

    @property
    def left_out(self) -> list[str]:
        """One line per known mistake this diagnosis could not use (stale, or its package does not import), for
        the instructor (``grader show`` says each once on stderr, as ``grader grade`` does); none before a figure
        showed something wrong."""
        stale = self._diagnosable[1] if "_diagnosable" in self.__dict__ else []
        return [*stale, *self.unimportable.values()]

    @functools.cached_property
    def _fingerprint(self) -> str:
        return assignment_fingerprint(self.assignment)

    @classmethod
    def where_material(cls, assignment: Assignment, catalog: Catalog) -> Diagnoser | None:
        """A diagnoser if the assignment's known mistakes and reference are here (the instructor's copy), else None."""
        present = (assignment.root / MUTATION_FOLDERS["mistakes"]).is_dir() and assignment.reference.is_dir()
        return cls(assignment, catalog) if present else None

    def candidates(self, probe: Probe) -> list[Mutation]:
        """The known mistakes that may explain ``probe``'s outputs: those of the tasks it declares."""
        return [m for m in self.mistakes if m.task in probe.tasks]

    def _imports(self, mistake: Mutation, package: Path) -> bool:
        """Whether the mistake's package (applied in ``package``) imports, tried once per process; the line of one
        that does not is kept in ``unimportable``."""
        key = (self._fingerprint, mistake.id)
        if key not in _IMPORTS:
            try:
                load_mutation(package, mistake, f"_show_mistake_{self._fingerprint[:16]}_{mistake.id}",
                              self.assignment.modules)
                _IMPORTS[key] = ""
            except AssignmentError as exc:
                _IMPORTS[key] = str(exc)
        if _IMPORTS[key]:
            self.unimportable[mistake.id] = _IMPORTS[key]
        return not _IMPORTS[key]

    def diagnose(self, panels: list[Panel], outcome: RunOutcome, zygotes: list[Zygote]) -> None:
        """Set ``diagnosis`` on each panel whose figure shows something wrong, where the judge names a mistake.

        Args:
            panels: The drawn figures (changed in place).
            outcome: The probes' results on the student's code.
            zygotes: Started sandboxed workers (the reference and the mistakes run there, like the student's code).
        """
        # a ✗ from outputs (a probe that raised or hung gave none to compare)
        wrong = {panel.figure.probe.name for panel in panels if panel.shows_wrong
                 and outcome.probes.get(panel.figure.probe.name) is not None
                 and outcome.probes[panel.figure.probe.name].status == OK}
        asked = {name: self.candidates(self.probes[name][0]) for name in sorted(wrong)}
        asked = {name: mistakes for name, mistakes in asked.items() if mistakes}
        if not asked:
            return
        self._compute(asked, zygotes)
        for name, mistakes in asked.items():
            probe = self.probes[name][0]
            expected = _OUTPUTS.get(self._key("", name))
            if expected is None:
                continue  # the reference could not run this probe: nothing can be told apart
            found = unambiguous_mistake(outcome.probes[name].outputs, expected,
                                        [(m, _OUTPUTS.get(self._key(m.id, name))) for m in mistakes],
                                        probe.__check__.tolerance)
            for panel in panels:
                if found is not None and panel.figure.probe.name == name and panel.shows_wrong:
                    panel.diagnosis = found.hint

    def _key(self, package: str, probe: str) -> tuple[str, str, str, str]:
        return self._fingerprint, self.probes[probe][2], package, probe

    def _compute(self, asked: dict[str, list[Mutation]], zygotes: list[Zygote]) -> None:
        """Run the probes still unknown on the reference and on each mistake, in the sandbox, on every zygote."""
        needed: dict[str, tuple[Mutation | None, set[str]]] = {}
        for name, mistakes in asked.items():
            for mistake in [None, *mistakes]:
                package = mistake.id if mistake is not None else ""
                if self._key(package, name) not in _OUTPUTS:
                    needed.setdefault(package, (mistake, set()))[1].add(name)
        if not needed:
            return
        jobs = FigureJobs(self.assignment, self.catalog, zygotes)
        scratch = new_scratch(prefix="grader-show-diagnosis-")
        try:
            sources = {package: self._source(mistake, scratch / (package or "reference"))
                       for package, (mistake, _) in needed.items()}
            # one that does not import has no outputs: never named, as the judge never names it
            needed = {package: wanted for package, wanted in needed.items()
                      if wanted[0] is None or self._imports(wanted[0], sources[package])}
            prepared = {package: prepare_submission(sources[package], self.assignment,
                                                    scratch / (package or "reference") / "work")
                        for package in needed}
            items = [(package, prepared[package], task, names) for package, (_, names) in needed.items()
                     for task in jobs.tasks if names & {probe_name(c) for c in jobs.probes[task.id]}]

            def run(item: tuple[str, PreparedSubmission, Task, set[str]], zygote: Zygote) -> None:
                package, prepared, task, names = item
                results = jobs.run_task(task, prepared, {}, [], zygote, only=names)
                with _LOCK:
                    for name, result in results.items():
                        _OUTPUTS[self._key(package, name)] = result.outputs if result.status == OK else None

            jobs.jobs.serve(items, run)  # what no worker ran stays unknown: that mistake is not named
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _source(self, mistake: Mutation | None, folder: Path) -> Path:
        """The reference, or the reference with a known mistake applied (in ``folder``), as a package folder."""
        return self.assignment.reference if mistake is None else apply_mutation(
            self.assignment.reference, mistake, folder / "source" / self.assignment.package)


def _hash(source: str, helpers: dict[str, str]) -> str:
    digest = hashlib.sha256(source.encode())
    for name in sorted(helpers):
        digest.update(f"\0{name}\0{helpers[name]}".encode())
    return digest.hexdigest()
