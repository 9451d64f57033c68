"""Gate a property check on the task's values, so that a blind implementation earns nothing from it.

A property such as "leaves its inputs unchanged", "rows sum to 1", "a later token never changes earlier outputs",
"raises ValueError for bad arguments" or "has the right attributes" is satisfied by code that computes nothing:
one that raises, returns zeros, ones, a uniform or random tensor of the right shape, an echo of an input or a
dtype-converted copy of one. Such a check's probe also returns the task's values on one ordinary call, under a
name starting with GATE; ``gated(verify)`` compares those with the reference's first (float32 tolerance), and
only when they agree judges the property itself (``verify`` on the other outputs; without ``verify``, the other
outputs must equal the reference's exactly).

``@check(holds=property)`` is the plain form (:func:`holding`): a property is a function of the student's outputs
that returns True or False (or asserts), gated by the comparison with the reference every check makes by default.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: checks.py imports this module (``@check(holds=...)``)
    from autograder.probe.checks import Outputs, Verifier

GATE = "values: "


def gate_values(outputs: Outputs) -> Outputs:
    """Name every output of an ordinary call as a gate value (``{name: value}`` -> ``{GATE + name: value}``)."""
    return {GATE + name: value for name, value in outputs.items()}


def gate_values_of(compute: Callable[[], Outputs]) -> Outputs:
    """``gate_values(compute())``; if the call raises (other than NotImplementedError), one gate value naming the
    exception instead, so that the property check fails (and can be diagnosed) rather than erring."""
    try:
        outputs = compute()
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - the exception's type is the value
        return {GATE + "the ordinary call": f"raised {type(exc).__name__}"}
    return gate_values(outputs)


def _split(outputs: Mapping[str, Any]) -> tuple[Outputs, Outputs]:
    gate = {name: value for name, value in outputs.items() if name.startswith(GATE)}
    rest = {name: value for name, value in outputs.items() if not name.startswith(GATE)}
    return gate, rest


def gate_failures(student: Outputs, reference: Mapping[str, Any], what: str, tolerance: str = "float32") -> list[str]:
    """One failure message if the student's gate values differ from the reference's, else none."""
    from autograder.judge.compare import compare_value
    from autograder.probe.tolerances import named_tolerance

    closeness = named_tolerance(tolerance)
    expected, _ = _split(dict(reference.items()))
    for name, value in expected.items():
        if name not in student or compare_value(name, value, student[name], closeness):
            return [f"{what} does not compute the right values yet (see the value checks); this property "
                    f"counts only once they are right"]
    return []


def gated(verify: Verifier | None = None, *, what: str, tolerance: str = "float32") -> Verifier:
    """A verifier judging ``verify`` (or exact equality with the reference) only once the gate values are right.

    Args:
        verify: The property's verifier ``verify(student, reference, ctx)``, given the outputs without the gate
            values; None compares those outputs with the reference's exactly.
        what: The function or class named in the failure message, e.g. "scaled_dot_product_attention".
        tolerance: Tolerance of the gate values.
    """

    def judge(student, reference, ctx):
        failures = gate_failures(student, reference, what, tolerance)
        if failures:
            yield from failures
            return
        _, rest = _split(student)
        if verify is not None:
            yield from verify(rest, _Rest(reference), ctx)
            return
        from autograder.judge.compare import TOLERANCES, compare_value

        _, expected = _split(dict(reference.items()))
        for name, value in expected.items():
            message = compare_value(name, value, rest[name], TOLERANCES["exact"]) if name in rest else \
                f"{name}: missing"
            if message:
                yield message

    return judge


def holding(holds: Callable[[Outputs], Any], what: str, gate: bool) -> Verifier:
    """The verifier of ``@check(holds=property)``: the property judged on the student's outputs (without the gate
    values), once the gate values are right.

    Args:
        holds: ``holds(outputs)``, given the student's outputs by name: True (or None) when the property holds,
            False when it does not (the message is its docstring's first line), or an ``assert`` that fails (its
            message, else the docstring's).
        what: What the gate's message names (the task).
        gate: Judge the gate values first (the check does not compare its outputs with the reference's, so the
            gate values named with :func:`gate_values`, if the probe has any, are what the property waits for).
    """

    def judge(student, reference, ctx):
        if gate and any(name.startswith(GATE) for name in reference):
            failures = gate_failures(student, reference, what)
            if failures:
                yield from failures
                return
        _, rest = _split(student)
        yield from property_failures(holds, rest)

    return judge


def property_failures(holds: Callable[[Outputs], Any], outputs: Outputs) -> list[str]:
    """The sentence saying that ``holds(outputs)`` does not hold (none when it holds)."""
    expected = expectation(holds)
    try:
        result = holds(outputs)
    except AssertionError as exc:  # its message's first line (pytest's rewriting adds the operands' reprs below)
        said = str(exc).strip().splitlines()
        return [said[0] if said else f"{expected}: does not hold"]
    return [] if result is None or bool(result) else [f"{expected}: does not hold"]


def expectation(holds: Callable[..., Any]) -> str:
    """What a property function expects, in words: its docstring's first line, else its name."""
    doc = (getattr(holds, "__doc__", None) or "").strip()
    return doc.splitlines()[0].rstrip(".") if doc else getattr(holds, "__name__", "the property").replace("_", " ")


class _Rest:
    """The reference's outputs without the gate values, read lazily (a verifier may never look at them)."""

    def __init__(self, reference):
        self._reference = reference

    def __getitem__(self, name):
        return self._reference[name]

    def get(self, name, default=None):
        try:
            return self._reference[name]
        except KeyError:
            return default

    def items(self):
        return [(name, value) for name, value in self._reference.items() if not name.startswith(GATE)]

    def keys(self):
        return [name for name, _ in self.items()]

    def __iter__(self):
        return iter(self.keys())

    def __contains__(self, name):
        return name in self.keys()
