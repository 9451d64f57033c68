"""Ready-made verifiers: properties a check asserts on the student's plain outputs, with messages students read.

A verifier runs in the trusted parent on decoded outputs (``verify(student, reference, ctx)`` yields failure
messages). Each factory here returns one. A property that a constant, an echo of the input or random numbers
could satisfy is always gated on the task's values (``probe.gating``; docs/WRITING_CHECKS.md), so that blind code
cannot collect its points::

    @check("attention", weight=1, description="rows of the weights sum to 1",
           verify=gated(rows_sum_to_one("weights*"), what="scaled_dot_product_attention"), compare_reference=False)
    def rows(impl, ref, ctx):
        q, k, v = ctx.randn(2, 3, 6, 4), ctx.randn(2, 3, 9, 4), ctx.randn(2, 3, 9, 5)
        out, weights = impl.attention.scaled_dot_product_attention(q, k, v)
        return {**gate_values({"out": out}), "weights": weights}

Outputs are named by the probe; a factory's ``names`` select them: an exact output name, or a prefix ending in
``*`` for every output whose name starts with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import torch

from autograder.probe.checks import Outputs, Verifier
from autograder.probe.context import Context
from autograder.probe.helpers import kind_of


def select(outputs: Outputs, names: Iterable[str]) -> list[tuple[str, Any]]:
    """The outputs named by ``names`` (``"x*"`` selects every name starting with ``x``), in the probe's order.

    Raises:
        KeyError: If a name selects nothing: a verifier that checks nothing must not pass.
    """
    chosen: list[tuple[str, Any]] = []
    for name in names:
        if name.endswith("*"):
            found = [(key, value) for key, value in outputs.items() if key.startswith(name[:-1])]
        else:
            found = [(name, outputs[name])] if name in outputs else []
        if not found:
            raise KeyError(f"no output named {name!r}")
        chosen += found
    return chosen


def _tensor_problem(name: str, value: Any) -> str:
    """Why ``value`` cannot be checked as a tensor of real numbers ('' when it can)."""
    if not isinstance(value, torch.Tensor):
        return f"{name} must be a torch.Tensor, got {kind_of(value)}"
    if value.is_complex() or value.dtype == torch.bool:
        return f"{name} must hold real numbers, got dtype {value.dtype}"
    return ""


def rows_sum_to_one(*names: str, atol: float = 1e-4) -> Verifier:
    """Every row (the last dimension) of the named tensors is finite, non-negative and sums to 1.

    Args:
        names: Output names (or ``prefix*``) of attention weights or probabilities.
        atol: How far a row's sum may be from 1 (float32 sums of a few dozen terms are within 1e-6).
    """

    def verify(student: Outputs, reference: Outputs | None, ctx: Context) -> Iterator[str]:
        for name, weights in select(student, names):
            problem = _tensor_problem(name, weights)
            if problem:
                yield problem
                continue
            total = weights.double().sum(-1)
            if not torch.isfinite(weights).all():
                yield (f"{name}: the weights contain NaN or infinite values (an exp that overflowed, or a row "
                       f"with every entry masked?)")
            elif not (total - 1).abs().max() <= atol:
                yield (f"{name}: each row must sum to 1 over the last dimension, found sums from "
                       f"{float(total.min()):.4g} to {float(total.max()):.4g}")
            elif not weights.min() >= 0:
                yield f"{name}: weights must not be negative"

    return verify


def future_unchanged(before: str, after: str, *, what: str = "the last token", outputs_of: str = "tokens",
                     atol: float = 1e-6, last_changes_by: float | None = None, shape: str | None = None,
                     when: str = "", nan_hint: str = "") -> Verifier:
    """Causality: changing the last position's input leaves every earlier position's output unchanged.

    The probe returns the output twice, for inputs that differ only at the last position; positions run along
    the second-to-last dimension.

    Args:
        before: Output name of the first call (also names the call in the shape message, e.g. "forward").
        after: Output name of the call whose last position's input changed.
        what: What the probe changed, in the student's words ("the last token", "the last key and value").
        outputs_of: What the earlier positions are ("tokens", "queries").
        atol: How much an earlier position's output may move (float32 noise only).
        last_changes_by: If set, the last position's output must move by more than this (it sees its own input).
        shape: The expected shape in words, e.g. "(batch, n, dim)": the output must have that many dimensions.
        when: Words that say under which setting causality holds, e.g. "with causal=True".
        nan_hint: Words added to the message about NaN outputs (what usually causes them).
    """
    lead = f"{when}, " if when else ""

    def verify(student: Outputs, reference: Outputs | None, ctx: Context) -> Iterator[str]:
        (_, a), (_, b) = select(student, [before]) + select(student, [after])
        problem = _tensor_problem(before, a) or _tensor_problem(after, b)
        rank = shape.count(",") + 1 if shape else None
        if problem:
            yield problem
        elif rank is not None and (a.shape != b.shape or a.dim() != rank):
            yield f"{before} must return shape {shape}, got {tuple(a.shape)}"
        elif a.shape != b.shape or a.dim() < 2:
            yield f"the output's shape changed with the input values ({tuple(a.shape)} and {tuple(b.shape)})"
        elif not (torch.isfinite(a).all() and torch.isfinite(b).all()):
            yield f"{lead}the output contains NaN or infinite values{nan_hint}"
        elif not (a[..., :-1, :] - b[..., :-1, :]).abs().max() <= atol:
            yield f"{lead}changing {what} changed the outputs of earlier {outputs_of}"
        elif last_changes_by is not None and not (a[..., -1, :] - b[..., -1, :]).abs().max() > last_changes_by:
            yield f"{lead}the last position must still see {what}"

    return verify


def kind_is(name: str, expected: type | tuple[type, ...], what: str) -> Verifier:
    """The named output is of the expected Python type (judged on the decoded value, never on a type name the
    student's code reports).

    Args:
        name: The output's name.
        expected: The accepted type(s) of the decoded value (e.g. ``torch.Tensor``, ``int``).
        what: The expected kind in words ("a torch.Tensor", "a Python int").
    """

    def verify(student: Outputs, reference: Outputs | None, ctx: Context) -> Iterator[str]:
        for label, value in select(student, [name]):
            wrong_bool = isinstance(value, bool) and bool not in (expected if isinstance(expected, tuple)
                                                                  else (expected,))
            if not isinstance(value, expected) or wrong_bool:
                yield f"{label} must be {what}, got {kind_of(value)}"

    return verify


def dtype_is(*names: str, dtype: torch.dtype) -> Verifier:
    """The named tensors have exactly this dtype (e.g. a mask of ``torch.bool``)."""

    def verify(student: Outputs, reference: Outputs | None, ctx: Context) -> Iterator[str]:
        for name, value in select(student, names):
            if not isinstance(value, torch.Tensor):
                yield f"{name} must be a torch.Tensor of dtype {dtype}, got {kind_of(value)}"
            elif value.dtype != dtype:
                yield f"{name} must have dtype {dtype}, got {value.dtype}"

    return verify


def tensor_is(shapes: Mapping[str, tuple[int, ...] | None], *, dtype: torch.dtype | None = None) -> Verifier:
    """Each named output is a tensor (judged on the decoded value), of this dtype and of its shape: the kind, dtype
    and shape check of a function's result in one line, with the first problem of each output as its message.

    Args:
        shapes: Output name -> its expected shape (None: any shape).
        dtype: The expected dtype (None: any).
    """

    def verify(student: Outputs, reference: Outputs | None, ctx: Context) -> Iterator[str]:
        for name, shape in shapes.items():
            (_, value), = select(student, [name])
            if type(value) is not torch.Tensor:
                yield f"{name} must be a torch.Tensor, got {kind_of(value)}"
            elif dtype is not None and value.dtype != dtype:
                yield f"{name} must be a {_dtype_words(dtype)} tensor, got {_dtype_kind(value.dtype)} ({value.dtype})"
            elif shape is not None and tuple(value.shape) != tuple(shape):
                yield f"{name} must have shape {tuple(shape)}, got {tuple(value.shape)}"

    return verify


def _dtype_words(dtype: torch.dtype) -> str:
    return "bool" if dtype == torch.bool else str(dtype).removeprefix("torch.")


def _dtype_kind(dtype: torch.dtype) -> str:
    """A dtype's family in words, so the message says what kind of mistake it is."""
    if dtype == torch.bool:
        return "bool"
    if dtype.is_floating_point:
        return "a floating-point dtype"
    return "a complex dtype" if dtype.is_complex else "an integer dtype"


def close_to(name: str, partner: str, *, rtol: float | None = None, atol: float | None = None,
             what: str = "") -> Verifier:
    """Output ``name`` equals output ``partner`` within ``atol + rtol * |partner|``: a result the probe computed
    a second way (e.g. from the student's own weights, or a decoding with and without a cache).

    Args:
        name: The output to judge.
        partner: The output it must equal (computed by the probe).
        rtol: Relative tolerance (default: the ``float32`` tolerance's).
        atol: Absolute tolerance (default: the ``float32`` tolerance's).
        what: Words prefixed to the message (what the two outputs should agree on).
    """

    def verify(student: Outputs, reference: Outputs | None, ctx: Context) -> Iterator[str]:
        from autograder.judge.compare import TOLERANCES, Tolerance, compare_value  # lazily: the grader side only

        default = TOLERANCES["float32"]
        tolerance = Tolerance(rtol=default.rtol if rtol is None else rtol, atol=default.atol if atol is None else atol)
        (_, value), = select(student, [name])
        (_, expected), = select(student, [partner])
        message = compare_value(f"{name} (against {partner})", expected, value, tolerance)
        if message:
            yield f"{what}: {message}" if what else message

    return verify


def unchanged(pairs: dict[str, str], *, what: str = "its inputs") -> Verifier:
    """Each output equals its partner exactly (e.g. a tensor before and after the call: no in-place change).

    Args:
        pairs: Output name -> the name of the output it must equal.
        what: What must stay unchanged, in the student's words.
    """

    def verify(student: Outputs, reference: Outputs | None, ctx: Context) -> Iterator[str]:
        for name, partner in pairs.items():
            (_, a), (_, b) = select(student, [name]) + select(student, [partner])
            same = (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                    and a.dtype == b.dtype and bool(torch.equal(a, b))) if isinstance(a, torch.Tensor) else a == b
            if not same:
                yield f"the code changed {what}: {name} differs from {partner} (an in-place operation?)"

    return verify


def exact_values(expected: dict[str, Any], *, what: str = "") -> Verifier:
    """The named outputs equal these exact values (counts, sizes, token ids): no tolerance.

    Args:
        expected: Output name -> the exact value (an int, a string, a list of them).
        what: Words prefixed to each message (e.g. "rows through the key projection").
    """

    def verify(student: Outputs, reference: Outputs | None, ctx: Context) -> Iterator[str]:
        for name, value in expected.items():
            (_, got), = select(student, [name])
            if isinstance(got, torch.Tensor) and got.numel() == 1 and not isinstance(value, torch.Tensor):
                got = got.item()
            if type(got) is bool or got != value:
                prefix = f"{what}: " if what else ""
                yield f"{prefix}{name}: expected {value!r}, got {got!r}"

    return verify


def all_of(*verifiers: Verifier) -> Verifier:
    """Every verifier's messages, in order (e.g. a property and a kind check on the same outputs)."""

    def verify(student: Outputs, reference: Outputs | None, ctx: Context) -> Iterator[str]:
        for verifier in verifiers:
            yield from verifier(student, reference, ctx)

    return verify
