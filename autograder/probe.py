"""The vocabulary of hidden checks: declare a check, build seeded inputs, and name the plain outputs to compare.

A hidden checks file is plain Python that imports this module and decorates functions with :func:`check`.
Each decorated function is a *probe*: ``probe(impl, ref, ctx) -> dict`` calls the code under test (``impl``)
on seeded inputs and returns named outputs (tensors, numbers, strings, lists of them). The grader runs the
probe twice on the same seed: in a sandboxed worker with ``impl`` = the student's package (the reference
substituted for what the task builds on), and in the trusted parent with ``impl`` = the reference. Outputs
are compared in the parent; ``verify`` adds properties checked on the student's plain outputs there.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

import torch

Outputs = dict[str, Any]
Probe = Callable[[Any, Any, "Context"], Mapping[str, Any]]
Verifier = Callable[["Outputs", "Outputs | None", "Context"], Iterable[str]]


class CheckFailed(Exception):
    """Raised by a verifier to fail a check with a message meant for the student."""


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
        tolerance: Name of the tolerance in autograder.compare.TOLERANCES used for floating-point outputs.
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
) -> Callable[[Probe], Probe]:
    """Declare the decorated probe as a hidden check of ``task``.

    Args:
        task: Task id the check belongs to.
        weight: Relative weight inside the task.
        description: Student-facing sentence saying what is checked.
        verify: Parent-side property check ``verify(student, reference, ctx)`` yielding failure messages.
        compare_reference: Compare each output with the reference output of the same name.
        tolerance: Tolerance name for floating-point comparisons.
        diagnose: Match a failure against the task's known mistakes (turn off for expensive probes).

    Returns:
        A decorator that attaches the Check to the probe and returns the probe unchanged.
    """

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


def derive_seed(base_seed: int, check_name: str) -> int:
    """Derive a check's seed from the assignment's base seed and the check's name (stable across runs)."""
    digest = hashlib.sha256(f"{base_seed}:{check_name}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


@dataclass
class Context:
    """Seeded input factory and assets handed to a probe; identical in the worker and in the parent.

    Attributes:
        seed: The check's seed.
        assets: Named binary assets of the assignment (e.g. trained weights), read-only bytes.
        reference: The full reference package, set only in the trusted parent when a verifier runs (so a
            verifier can evaluate weights a student's code produced); None in the worker.
    """

    seed: int
    assets: Mapping[str, bytes] = field(default_factory=dict)
    reference: Any = None

    def __post_init__(self) -> None:
        self.generator = torch.Generator().manual_seed(self.seed)

    def randn(self, *shape: int, scale: float = 1.0) -> torch.Tensor:
        """A float32 tensor of standard normal values (times ``scale``) from the check's generator."""
        return torch.randn(*shape, generator=self.generator, dtype=torch.float32) * scale

    def randint(self, low: int, high: int, shape: tuple[int, ...]) -> torch.Tensor:
        """A long tensor of integers in ``[low, high)`` from the check's generator."""
        return torch.randint(low, high, shape, generator=self.generator, dtype=torch.long)

    def seed_torch(self, offset: int = 0) -> None:
        """Seed torch's global generator (for code under test that draws from it, e.g. nn.Linear init)."""
        torch.manual_seed(self.seed + offset)

    def init_module(self, module: torch.nn.Module, scale: float = 0.5) -> torch.nn.Module:
        """Overwrite every parameter of ``module`` with seeded, distinct, non-trivial values.

        LayerNorm weights become ``1 + noise`` and biases noise, so a reused or missing norm cannot hide
        behind the default weight 1 and bias 0. Each parameter's values are drawn from its own name's seed, so
        the student's and the reference's modules agree wherever their parameter names and shapes agree; the
        children of an ``nn.Sequential`` are named by position (its order is its meaning), so
        ``Sequential(OrderedDict(fc1=..., act=..., fc2=...))`` gets the same weights as ``Sequential(a, b, c)``.
        """
        with torch.no_grad():
            for name, param in canonical_parameters(module):
                generator = torch.Generator().manual_seed(derive_seed(self.seed, name))
                noise = torch.randn(*param.shape, generator=generator, dtype=torch.float32) * scale
                is_norm_weight = name.endswith("weight") and param.dim() == 1
                param.copy_(1.0 + noise if is_norm_weight else noise)
        return module


def canonical_parameters(module: torch.nn.Module, prefix: str = "",
                         seen: set[int] | None = None) -> Iterator[tuple[str, torch.nn.Parameter]]:
    """``module.named_parameters()`` (same order, shared parameters once) with each child of an ``nn.Sequential``
    named by its position instead of its label."""
    seen = set() if seen is None else seen
    for name, param in module.named_parameters(recurse=False):
        if id(param) not in seen:
            seen.add(id(param))
            yield prefix + name, param
    for index, (name, child) in enumerate(module.named_children()):
        label = str(index) if isinstance(module, torch.nn.Sequential) else name
        yield from canonical_parameters(child, f"{prefix}{label}.", seen)


def kind_of(value: Any) -> str:
    """What a decoded output is, in words, for a verifier: a foreign value's own description (made by the
    grader's transport, never named by the student's code), otherwise the type's name."""
    describe = getattr(value, "describe", None)
    return describe() if callable(describe) else type(value).__name__


def state_dict_outputs(module: torch.nn.Module, prefix: str = "state") -> Outputs:
    """Name every entry of a module's state dict as a probe output (e.g. to check the weights a model learnt)."""
    return {f"{prefix}.{key}": value.detach().clone() for key, value in module.state_dict().items()}


def rows_counter(module: torch.nn.Module) -> dict[str, int]:
    """Count the rows (leading elements per feature) and calls passing through a module via a forward hook.

    Returns:
        A live dict with ``rows`` (input elements // last dim), ``calls`` and ``max_positions``
        (largest size of the second-to-last dimension seen in one call).
    """
    counts = {"rows": 0, "calls": 0, "max_positions": 0}

    def hook(_module: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> None:
        x = inputs[0]
        counts["rows"] += x.numel() // x.shape[-1]
        counts["calls"] += 1
        counts["max_positions"] = max(counts["max_positions"], x.shape[-2] if x.dim() >= 2 else 1)

    module.register_forward_pre_hook(hook)
    return counts


def raised(call: Callable[[], Any]) -> str:
    """The name of the exception ``call()`` raises, or ``"no exception"``.

    NotImplementedError propagates, so a stub still counts as not implemented rather than "raised an error".
    """
    try:
        call()
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - the exception's type is the output
        return type(exc).__name__
    return "no exception"


def pin_torch_state(seed: int) -> None:
    """Pin torch's global state before a probe runs; the worker and the parent both call this, so the student's
    code and the reference see the same default dtype, grad mode, thread count and seed."""
    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    torch.set_num_threads(1)
    torch.manual_seed(seed)
