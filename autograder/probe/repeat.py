"""State that survives between calls: a probe helper calling an object twice, and the verifier that judges it.

A KV-cache decoder that keeps its cache on the layer, a module that memoises a projection or a position slice,
a list of attention maps that grows with every call, a mutable default argument: each is right on the first
call and wrong on the second. :func:`called_twice` calls each input on a fresh object (the gate values: they
must equal the reference's), then every input in turn on one shared object; :func:`same_as_fresh` asks that
each call on the shared object equal the same call on a fresh object::

    @check("multi_head_attention", weight=1, compare_reference=False, verify=same_as_fresh("MultiHeadAttention"),
           description="a second call on the same layer (another input) equals a call on a fresh layer")
    def called_again(impl, ref, ctx):
        return called_twice(lambda: _layer(impl, ctx, 12, 3), lambda layer, x: layer(x),
                            {"x (2, 5, 12)": ctx.randn(2, 5, 12), "x (2, 7, 12)": ctx.randn(2, 7, 12)},
                            what="MultiHeadAttention(12, 3)")

``make`` must build the same object every time (seed it: ``ctx.seed_torch()`` and ``ctx.init_module``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import torch

from autograder.probe.checks import Outputs, Verifier
from autograder.probe.context import Context
from autograder.probe.gating import GATE, gate_values

FRESH = "on a fresh object: "
SHARED = "on the same object, after "
RAISED = "raised "


def called_twice(make: Callable[[], Any], call: Callable[[Any, Any], Any], inputs: Mapping[str, Any],
                 what: str) -> Outputs:
    """Probe helper: each input on its own fresh object, then every input in order on one shared object.

    Args:
        make: Builds the object (the same one every time: seeded).
        call: ``call(obj, input)``, the call under test.
        inputs: Two or more inputs in calling order, by a description the student reads.
        what: The call as the student reads it, e.g. ``"decode_with_cache(layer, tokens)"``.

    Returns:
        The fresh calls as gate values, and the later calls on the shared object (see :func:`same_as_fresh`); a
        later call that raises gives ``"raised <type>: <message>"`` (known mistakes can then be diagnosed).

    Raises:
        ValueError: If fewer than two inputs are given (one call says nothing about the next).
    """
    if len(inputs) < 2:
        raise ValueError("called_twice needs at least two inputs")
    names = list(inputs)
    outputs = gate_values({f"{FRESH}{what} with {name}": _detached(call(make(), inputs[name])) for name in names})
    shared = make()
    for index, name in enumerate(names):
        try:
            result = _detached(call(shared, inputs[name]))
        except NotImplementedError:
            raise
        except Exception as exc:  # noqa: BLE001 - failing only on a later call is the symptom: its value
            if not index:
                raise
            result = f"{RAISED}{type(exc).__name__}: {exc}"[:300]
        if index:
            outputs[f"{SHARED}{_earlier(names[:index])}: {what} with {name}"] = result
    return outputs


def same_as_fresh(what: str, tolerance: str = "float32") -> Verifier:
    """Verifier for :func:`called_twice`: once the fresh calls equal the reference's (the gate), every call on the
    shared object must equal the same call on a fresh object.

    Args:
        what: The function or class named in the messages.
        tolerance: Closeness of the two calls (``autograder.judge.compare.TOLERANCES``).
    """

    def verify(student: Outputs, reference: Mapping[str, Any], ctx: Context) -> Iterator[str]:
        from autograder.judge.compare import compare_value
        from autograder.probe.tolerances import named_tolerance

        closeness = named_tolerance(tolerance)
        failure = _fresh_failure(student, reference, what)
        if failure:
            yield failure
            return
        shared = [name for name in reference if name.startswith(SHARED)]
        if not shared:
            raise KeyError("no output of a second call on the same object (use called_twice)")
        for name in shared:
            earlier, call = name[len(SHARED):].split(": ", 1)
            fresh = f"{GATE}{FRESH}{call}"
            again = _raised(student, name)
            if again is not None:
                yield (f"{call}: called after {earlier} on the same object, {what} {again} where a fresh object "
                       f"answers: state from the earlier call survives into this one (a mask or buffer cut to the "
                       f"first input, a cache or list kept on the object, never reset?)")
                return
            if name not in student or fresh not in student:
                yield f"{name}: missing"
                return
            difference = compare_value(call, student[fresh], student[name], closeness)
            if difference:
                yield (f"{call}: called after {earlier} on the same object, {what} gives another answer than on a "
                       f"fresh object ({difference}): state from the earlier call survives into this one (a cache, "
                       f"buffer or list kept on the object, or a mutable default argument, never reset?)")
                return

    return verify


def _fresh_failure(student: Outputs, reference: Mapping[str, Any], what: str) -> str | None:
    """The gate's message, naming the first call on a fresh object that differs from the reference's and how (the
    value checks may call the object otherwise: in another mode, on other inputs); None if every one agrees."""
    from autograder.judge.compare import compare_value
    from autograder.probe.tolerances import named_tolerance

    for name, expected in reference.items():
        if name.startswith(GATE):
            difference = compare_value(name[len(GATE):], expected, student.get(name), named_tolerance("float32"))
            if difference:
                return f"{what} does not compute the right values yet: {difference}; the later calls count once it does"
    return None


def _raised(student: Outputs, name: str) -> str | None:
    """The exception a later call raised instead of answering (recorded under the call's name, which the
    reference's answer extends with ``[i]`` or ``.key`` when it is a list or a dict), or None."""
    for key, value in student.items():
        if key.startswith(SHARED) and name.startswith(key) and isinstance(value, str) and value.startswith(RAISED):
            return value
    return None


def _earlier(names: list[str]) -> str:
    return "a call with " + " and a call with ".join(names)


def _detached(value: Any) -> Any:
    """A tensor (or a list or tuple of them) detached and copied: a later call must not change what was returned."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_detached(v) for v in value) if type(value) in (list, tuple) else value
    return value
