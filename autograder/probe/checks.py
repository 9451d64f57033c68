"""The vocabulary of hidden checks: declare a check, build seeded inputs, and name the plain outputs to compare.

A hidden checks file is plain Python that imports this module and decorates functions with :func:`check`.
Each decorated function is a *probe*: ``probe(impl, ref, ctx) -> dict`` calls the code under test (``impl``)
on seeded inputs and returns named outputs (tensors, numbers, strings, lists of them). The grader runs the
probe twice on the same seed: in a sandboxed worker with ``impl`` = the student's package (the reference
substituted for what the task builds on), and in the trusted parent with ``impl`` = the reference. Outputs
are compared in the parent; ``verify`` adds properties checked on the student's plain outputs there.
"""

from __future__ import annotations

import inspect
import sys
import threading
import traceback
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from autograder.errors import AssignmentError
from autograder.probe.context import Context
from autograder.probe.gating import holding
from autograder.util.names import nearest

Outputs = dict[str, Any]


Probe = Callable[[Any, Any, "Context"], Mapping[str, Any]]


Verifier = Callable[["Outputs", "Outputs | None", "Context"], Iterable[str]]


@dataclass(frozen=True)
class Check:
    """One hidden check of a task.

    Attributes:
        name: Unique name (``task.function``) used in reports and seeds.
        task: Id of the task the check belongs to.
        weight: Share of the task's points this check carries, relative to the task's other checks.
        description: What is checked, in words a student can act on (never the inputs themselves).
        probe: Runs the code under test and returns named outputs.
        verify: Optional properties checked in the parent on the student's outputs (and the reference's).
        compare_reference: Whether every output must also match the reference's output for that name.
        tolerance: Name of the tolerance in autograder.judge.compare.TOLERANCES used for floating-point outputs.
        diagnose: Whether a failure is matched against the task's known mistakes (off for expensive probes).
    """

    name: str
    task: str
    weight: float
    description: str
    probe: Probe
    verify: Verifier | None = None
    compare_reference: bool = True
    tolerance: str = "float32"
    diagnose: bool = True


def check(
    task: str,
    *,
    weight: float = 1.0,
    description: str = "",
    verify: Verifier | None = None,
    compare_reference: bool = True,
    tolerance: str = "float32",
    diagnose: bool = True,
    holds: Callable[[Outputs], Any] | None = None,
    **unknown: Any,
) -> Callable[[Probe], Probe]:
    """Declare the decorated probe as a hidden check of ``task``.

    Args:
        task: Task id the check belongs to.
        weight: Relative weight inside the task.
        description: Student-facing sentence saying what is checked (default: the probe's docstring).
        verify: Parent-side property check ``verify(student, reference, ctx)`` yielding failure messages.
        compare_reference: Compare each output with the reference output of the same name.
        tolerance: Tolerance name for floating-point comparisons.
        diagnose: Match a failure against the task's known mistakes (turn off for expensive probes).
        holds: A plain property ``holds(outputs) -> bool`` (or one that asserts), judged on the student's outputs
            once they are right (``probe/gating.py:holding``); instead of ``verify``.
        **unknown: Refused, with the argument meant (``points=`` is ``weight=``).

    Returns:
        A decorator that attaches the Check to the probe and returns the probe unchanged.

    Raises:
        TypeError: An argument ``check`` does not take, or both ``holds`` and ``verify``.
    """
    if unknown:
        raise TypeError(unknown_argument(*next(iter(unknown.items()))))
    if holds is not None and verify is not None:
        raise TypeError("@check(holds=..., verify=...): give one of them (holds: a property of the outputs; verify: "
                        "a verifier yielding messages)")
    if holds is not None:
        verify = holding(holds, task, gate=not compare_reference)

    def decorate(probe: Probe) -> Probe:
        probe.__check__ = Check(  # type: ignore[attr-defined]
            name=f"{task}.{probe.__name__}",
            task=task,
            weight=float(weight),
            description=description or (probe.__doc__ or probe.__name__).strip().splitlines()[0],
            probe=probe,
            verify=verify,
            compare_reference=compare_reference,
            tolerance=tolerance,
            diagnose=diagnose,
        )
        return probe

    return decorate


# Words an instructor may reach for that name another argument of @check, with what that argument means.
MEANT = {"points": "weight", "score": "weight", "max_points": "weight", "atol": "tolerance", "rtol": "tolerance",
         "tol": "tolerance", "property": "holds", "verifier": "verify"}
MEANINGS = {"weight": "the check's share of its task's points, relative to the task's other checks; a task's "
                      "points are set in assignment.toml",
            "tolerance": "a tolerance's name: float32 (the default), deep, exact or angles",
            "holds": "a function of the outputs that returns True when the property holds"}


def unknown_argument(name: str, value: Any) -> str:
    """The one line refusing ``@check(name=value)``, with the argument meant and what it means."""
    known = [p for p in inspect.signature(check).parameters if p not in ("task", "unknown")]
    meant = MEANT.get(name) or nearest(name, known)
    fix = f"did you mean {meant}=? ({MEANINGS[meant]})" if meant in MEANINGS else \
        f"did you mean {meant}=?" if meant else f"its arguments: {', '.join(known)}"
    return f"@check({name}={value!r}): check() has no argument {name!r} — {fix}"


def collect_checks(namespace: Mapping[str, Any]) -> list[Check]:
    """Return the checks declared in an executed checks file, in definition order."""
    return [value.__check__ for value in namespace.values() if hasattr(value, "__check__")]


HELPER_PREFIX = "_"


_HELPERS_LOCK = threading.Lock()


def helper_sources(checks_file: Path) -> dict[str, str]:
    """The helper modules beside a checks file (``_name.py`` in the same folder) that checks may import, by name.

    A helper holds what several checks files share; a name must not start with ``_reference_`` or ``_mistake_``.
    """
    return {path.stem: path.read_text() for path in sorted(checks_file.parent.glob(f"{HELPER_PREFIX}*.py"))}


def run_checks_file(code: types.CodeType, helpers: Mapping[str, types.CodeType], name: str) -> dict[str, Any]:
    """Execute a compiled checks file with its helper modules importable (only while it runs); return its
    namespace. The parent and the worker both load checks this way, so a helper behaves the same in both."""
    with _HELPERS_LOCK:
        saved = {helper: sys.modules.get(helper) for helper in helpers}
        try:
            for helper, helper_code in helpers.items():
                module = types.ModuleType(helper)
                sys.modules[helper] = module
                exec(helper_code, module.__dict__)  # noqa: S102 - instructor code, as every checks file
            namespace: dict[str, Any] = {"__name__": name}
            exec(code, namespace)  # noqa: S102 - the checks file itself
        finally:
            for helper, previous in saved.items():
                if previous is None:
                    sys.modules.pop(helper, None)
                else:
                    sys.modules[helper] = previous
    return namespace


def load_checks_file(path: Path, name: str) -> dict[str, Any]:
    """Execute the checks file at ``path`` (with its helpers) as the grader does; return its namespace."""
    helpers = {helper: compile(source, str(path.parent / f"{helper}.py"), "exec")
               for helper, source in helper_sources(path).items()}
    return run_checks_file(compile(path.read_text(), str(path), "exec"), helpers, name)


def task_checks(path: Path | None, task: str, task_ids: Sequence[str], absent: str = "") -> list[Check]:
    """Load a task's checks file as the grader does and return the task's checks, refusing what would be lost.

    Args:
        path: The task's checks file.
        task: The task's id.
        task_ids: Every task id of the assignment (the quiz's included).
        absent: Why the file is absent, if it is and the manifest is to blame (``spec.assignment.absent_file``).

    Raises:
        AssignmentError: The first of :func:`checks_file_problems`.
    """
    checks, problems = checks_file_problems(path, task, task_ids, absent)
    if problems:
        raise AssignmentError(problems[0])
    return checks


def checks_file_problems(path: Path | None, task: str, task_ids: Sequence[str],
                         absent: str = "") -> tuple[list[Check], list[str]]:
    """Load a task's checks file as the grader does: the task's checks, and one line per problem.

    The problems: the file does not exist (``absent`` when the manifest is to blame, else it is not part of this
    installation) or fails to load (with the line); a check is bound to a task the assignment does not have (with
    the nearest id); the file or a helper beside it names an unknown tolerance, in whatever form the probe API
    takes one (``probe/tolerances.py``); the file declares no check of the task.
    """
    if path is None or not path.is_file():
        return [], [absent or f"hidden checks for task {task!r} are not part of this installation ({path}); "
                              f"grading needs the instructor's copy"]
    try:
        namespace = load_checks_file(path, f"_checks_{task}")
    except Exception as exc:  # noqa: BLE001 - the instructor's file: one line saying where and what
        return [], [load_failure(path, exc)]
    from autograder.probe.tolerances import given_problem, given_tolerances, tolerance_problem

    checks = collect_checks(namespace)
    sources = [path] + [path.parent / f"{helper}.py" for helper in helper_sources(path)]
    given = [found for source in sources for found in given_tolerances(source)]
    problems = [line for line in map(given_problem, given) if line]
    for found in checks:
        where = f"{path}:{found.probe.__code__.co_firstlineno}"
        if found.task not in task_ids:
            close = nearest(found.task, task_ids)
            fix = f"did you mean {close}?" if close else f"tasks: {', '.join(task_ids)}"
            problems.append(f"{where}: @check({found.task!r}) names no task of the assignment (the check would "
                            f"never run): {found.task} — {fix}")
        unknown = tolerance_problem(found.tolerance)
        if unknown and found.tolerance not in {g.name for g in given}:  # a name the source does not spell out
            problems.append(f"{where}: check {found.name}: {unknown}")
    own = [c for c in checks if c.task == task]
    if not own and not problems:
        problems.append(f"{path} declares no check for task {task!r}")
    return own, problems


def load_failure(path: Path, exc: BaseException) -> str:
    """One line for a checks file (or a helper beside it) that failed to load: the file and line, the error."""
    line = exc.lineno if isinstance(exc, SyntaxError) else None
    failed_in = str(exc.filename or path) if isinstance(exc, SyntaxError) else str(path)
    if line is None:
        folder = str(path.parent)
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(folder)]
        if frames:
            failed_in, line = frames[-1].filename, frames[-1].lineno
    message = (exc.msg if isinstance(exc, SyntaxError) else str(exc)).splitlines()[0] if str(exc) else ""
    return f"{failed_in}:{line or '?'}: {type(exc).__name__}: {message}".rstrip(": ")
