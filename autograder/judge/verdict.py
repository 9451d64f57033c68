"""The verdict on one check: the reference's outputs, the comparison, the verifier, and the likely mistake."""

from __future__ import annotations

import json
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from safetensors.torch import save as save_safetensors

from autograder.errors import AssignmentError, CheckFailed, TransportError
from autograder.judge.compare import closeness, compare_outputs
from autograder.judge.refcache import ReferenceStore
from autograder.judge.transport import decode_outputs, encode_outputs
from autograder.probe.checks import Check
from autograder.probe.context import Context, pin_torch_state
from autograder.reports.results import ERROR, FAILED, PASSED, CheckResult
from autograder.spec.assignment import Assignment
from autograder.spec.mutation import Mutation, apply_mutation, load_mutation

REFERENCE_LOCK = threading.RLock()  # torch's global state is process-wide: one probe at a time


def matching_mistakes(actual: dict[str, Any], candidates: Iterable[tuple[Mutation, dict[str, Any] | None]],
                      tolerance: str) -> Iterator[Mutation]:
    """The known mistakes whose outputs match the student's, in order (lazily: a caller taking the first computes
    no more candidates than it needs). A candidate whose outputs are None (it cannot run there) never matches."""
    for mistake, wrong in candidates:
        if wrong is not None and not compare_outputs(wrong, actual, tolerance):
            yield mistake


def unambiguous_mistake(actual: dict[str, Any], expected: dict[str, Any],
                        candidates: Iterable[tuple[Mutation, dict[str, Any] | None]],
                        tolerance: str) -> Mutation | None:
    """The known mistake the student's outputs match on inputs that tell it apart, or None.

    What ``grader show`` names under a figure: only mistakes whose outputs differ from the reference's on these
    inputs count (one the inputs cannot show is never named), and a name is given only when every match gives the
    same hint (two mistakes these inputs cannot tell apart name none).

    Args:
        actual: The student's outputs.
        expected: The reference's outputs on the same inputs.
        candidates: Each known mistake with its outputs on the same inputs (None if it cannot run there).
        tolerance: The comparison's tolerance (autograder.judge.compare.TOLERANCES).
    """
    visible = [(m, wrong) for m, wrong in candidates
               if wrong is not None and compare_outputs(expected, wrong, tolerance)]
    matches = list(matching_mistakes(actual, visible, tolerance))
    return matches[0] if matches and len({m.hint for m in matches}) == 1 else None


class LazyOutputs(Mapping):
    """The reference's outputs, computed only if a verifier reads them (some verifiers never do)."""

    def __init__(self, compute: Callable[[], dict[str, Any]]) -> None:
        self._compute = compute
        self._values: dict[str, Any] | None = None

    def _loaded(self) -> dict[str, Any]:
        if self._values is None:
            self._values = self._compute()
        return self._values

    def __getitem__(self, key: str) -> Any:
        return self._loaded()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


def failure_message(failures: list[str]) -> str:
    """A failed check's message: its first problem, and how many more there are."""
    more = len(failures) - 1
    return failures[0] + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


class Judge:
    """Judges a check's outputs in the trusted process: against the reference's outputs on the same seed, by the
    check's verifier, and, on a failure, against each known mistake's outputs to name the likely mistake.

    Reference and mistake outputs are computed once per check and seed, then cached, so a Grader that grades many
    submissions pays for them once.

    Args:
        assignment: The assignment.
        reference: The full reference package, loaded in this process.
        assets: The assignment's hidden assets by file name.
        mistakes: The known mistakes that carry a hint.
        scratch: A private folder for the mistakes' packages.
        store: Where the reference's outputs persist between graders (autograder.judge.refcache), or None.

    Attributes:
        unimportable: One line per known mistake tried so far whose package does not import
            (:func:`autograder.spec.mutation.load_mutation`), by id: left out of diagnosis, said to the
            instructor (``Grader.unimportable_mistakes``), never in a report.
    """

    def __init__(self, assignment: Assignment, reference: Any, assets: dict[str, bytes], mistakes: list[Mutation],
                 scratch: Path, store: ReferenceStore | None = None) -> None:
        self.assignment = assignment
        self.store = store
        self.reference = reference
        self.assets = assets
        self.mistakes = mistakes
        self.scratch = scratch
        self._mistake_packages: dict[str, Any] = {}
        self.unimportable: dict[str, str] = {}  # mistake id -> the line saying why it does not import
        self._wrong: dict[str, dict[str, Any] | None] = {}
        self._expected: dict[str, dict[str, Any]] = {}

    def expected_outputs(self, check: Check, seed: int) -> dict[str, Any]:
        """The reference's outputs for a check (computed once per seed, then cached in memory and in the store)."""
        key = f"{check.name}:{seed}"
        if key not in self._expected:
            self._expected[key] = self._stored_expected(check, seed, key)
        return self._expected[key]

    def _stored_expected(self, check: Check, seed: int, key: str) -> dict[str, Any]:
        """The reference's outputs from the store if it holds an intact entry, else computed (and stored)."""
        stored = self.store.get(key) if self.store is not None else None
        if stored is not None:
            try:
                return decode_outputs(*stored)
            except TransportError:
                pass  # a damaged entry: recomputed and rewritten below
        values, tensors = self._encoded_probe(check, seed, self.reference)
        if self.store is not None:
            self.store.put(key, values, tensors)
        return decode_outputs(values, tensors)

    def refuse_broken_check(self, check: Check, seed: int) -> None:
        """Called when a check's probe raised on a student's code: the exception is charged to the student only if
        the probe runs on the reference solution; where it raises there too, the check's own code is wrong.

        Raises:
            AssignmentError: If the probe raises on the reference (the checks file's line, the exception).
        """
        try:
            self.expected_outputs(check, seed)
        except Exception as exc:  # noqa: BLE001 - any exception of the probe on trusted code is the check's bug
            code = check.probe.__code__
            lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == code.co_filename]
            raise AssignmentError(f"{code.co_filename}:{lines[-1] if lines else code.co_firstlineno}: check "
                                  f"{check.name} raises on the reference solution too ({type(exc).__name__}: "
                                  f"{exc}): the check's code is wrong, not the student's") from None

    def run_reference_probe(self, check: Check, seed: int, implementation: Any) -> dict[str, Any]:
        return decode_outputs(*self._encoded_probe(check, seed, implementation))

    def _encoded_probe(self, check: Check, seed: int, implementation: Any) -> tuple[dict[str, Any], bytes | None]:
        """Run a probe on trusted code; its outputs as the transport sends them (JSON values, safetensors bytes).

        The values go through JSON as a worker's do, so stored and freshly computed outputs decode alike.
        """
        with REFERENCE_LOCK:  # torch's global RNG and settings are process-wide: one probe at a time
            pin_torch_state(seed)
            outputs = check.probe(implementation, self.reference, Context(seed, self.assets))
            values, tensors = encode_outputs(outputs)
        return json.loads(json.dumps(values)), save_safetensors(tensors) if tensors else None

    def judge(self, check: Check, seed: int, actual: dict[str, Any], result: CheckResult) -> CheckResult:
        expected = self.expected_outputs(check, seed) if check.compare_reference else None
        failures: list[str] = []
        if expected is not None:
            failures += compare_outputs(expected, actual, check.tolerance)
        if not actual:  # e.g. a worker whose output encoding was tampered with: never vacuous
            failures.append("no outputs came back")
        if check.verify:
            try:
                verify_context = Context(seed, self.assets, reference=self.reference)
                reference_view = expected if expected is not None else LazyOutputs(
                    lambda: self.expected_outputs(check, seed))
                failures += [str(m) for m in check.verify(actual, reference_view, verify_context)]
            except CheckFailed as exc:
                failures.append(str(exc))
            except AssignmentError as exc:  # the check's own mistake (an unknown tolerance): no student's points
                where = check.probe.__code__
                raise AssignmentError(f"{where.co_filename}:{where.co_firstlineno}: check {check.name}: {exc}") \
                    from None
            except Exception as exc:  # noqa: BLE001 - malformed student outputs can trip a verifier
                failures.append(f"the outputs could not be checked ({type(exc).__name__}: {exc})")
        if not failures:
            result.status, result.message = PASSED, ""
            return result
        result.status = FAILED
        result.message = failure_message(failures)
        result.hint = self.diagnose(check, seed, actual)
        return result

    def diagnose(self, check: Check, seed: int, actual: dict[str, Any]) -> str:
        """Name the known mistake of this task whose outputs match the student's, if any."""
        if not check.diagnose:
            return ""
        candidates = ((m, self._mistake_outputs(m, check, seed)) for m in self.mistakes if m.task == check.task)
        first = next(matching_mistakes(actual, candidates, check.tolerance), None)
        return first.hint if first is not None else ""

    def mistake_closeness(self, mistake: Mutation, check: Check, seed: int) -> float | None:
        """How near a mutation's outputs come to the reference's on a check's seed, in shares of what the check's
        tolerance allows (:func:`autograder.judge.compare.closeness`); None if the mutation cannot run the probe.
        ``grader audit`` says it of each check an escaped mistake passed."""
        wrong = self._mistake_outputs(mistake, check, seed)
        return None if wrong is None else closeness(self.expected_outputs(check, seed), wrong, check.tolerance)

    def _mistake_outputs(self, mistake: Mutation, check: Check, seed: int) -> dict[str, Any] | None:
        """What the known mistake outputs on this check (cached; None if it cannot run on this probe)."""
        key = f"{mistake.id}:{check.name}:{seed}"
        if key not in self._wrong:
            try:
                package = self._mistake_package(mistake)
                self._wrong[key] = None if package is None else self.run_reference_probe(check, seed, package)
            except Exception:  # noqa: BLE001 - a mistake that cannot run on this probe tells nothing
                self._wrong[key] = None
        return self._wrong[key]

    def _mistake_package(self, mistake: Mutation) -> Any | None:
        """The mistake's package, imported once; None (and its line kept in ``unimportable``) if it does not
        import: it can diagnose nothing, which the instructor is told and no student."""
        if mistake.id not in self._mistake_packages:
            folder = apply_mutation(self.assignment.reference, mistake, self.scratch / mistake.id)
            name = f"_mistake_{self.assignment.name}_{mistake.id}"
            try:
                self._mistake_packages[mistake.id] = load_mutation(folder, mistake, name, self.assignment.modules)
            except AssignmentError as exc:
                self._mistake_packages[mistake.id] = None
                self.unimportable[mistake.id] = str(exc)
        return self._mistake_packages[mistake.id]

    def passes(self, check: Check, seed: int, implementation: Any) -> bool:
        """Whether an implementation loaded in this process passes a check (an exception fails it): the verdict
        the grader would give, for tests and tools that run trusted code, never a student's."""
        try:
            actual = self.run_reference_probe(check, seed, implementation)
        except Exception:  # noqa: BLE001 - the code under test raising is a failed check
            return False
        result = CheckResult(check.name, check.description, check.weight, ERROR, seed=seed)
        return self.judge(check, seed, actual, result).status == PASSED
