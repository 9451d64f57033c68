"""An assignment's hidden checks run in this process and judged by the grader's own Judge (for the family tests)."""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from autograder.judge.verdict import Judge
from autograder.probe import Check, collect_checks, derive_seed, load_checks_file
from autograder.spec.assignment import Assignment
from autograder.spec.mutation import Mutation, apply_mutation
from autograder.spec.reference import load_package


class InProcess:
    """One assignment's reference and judge, for tests that run probes without the sandbox.

    Args:
        assignment: The assignment.
        label: Names the modules loaded here (one label per test module, so their packages never collide).
    """

    def __init__(self, assignment: Assignment, label: str) -> None:
        self.assignment = assignment
        self.label = label
        self.reference = load_package(assignment.reference, f"_test_{label}_reference", assignment.modules)
        self.judge = Judge(assignment, self.reference, {}, [], Path(tempfile.mkdtemp(prefix="judge-")))
        self._counter = itertools.count()

    def checks(self, task_id: str) -> list[Check]:
        """The hidden checks of one task, loaded here."""
        namespace = load_checks_file(self.assignment.task(task_id).checks, f"_test_{self.label}_checks_{task_id}")
        return [c for c in collect_checks(namespace) if c.task == task_id]

    def passes(self, check: Check, package: Any) -> bool:
        """The grader's verdict on one check, its probe run in this process."""
        with np.errstate(all="ignore"):
            return self.judge.passes(check, derive_seed(self.assignment.seed, check.name), package)

    def package(self, mutation: Mutation, tmp_path: Path) -> Any:
        """The reference with ``mutation`` applied, loaded under a fresh name."""
        folder = apply_mutation(self.assignment.reference, mutation, tmp_path / mutation.id)
        return load_package(folder, f"_test_{self.label}_{mutation.id}_{next(self._counter)}",
                            self.assignment.modules)
