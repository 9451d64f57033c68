"""Helpers a probe calls on the code under test: kinds of values, state dicts, row counters, raised exceptions."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Callable

import torch

from autograder.probe.checks import Outputs


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


@contextlib.contextmanager
def recording(module: Any, name: str, record: Callable[[Any], Any]) -> Iterator[None]:
    """Within the block, every call of ``module.name(...)`` also passes its result to ``record``.

    For a probe that must see what the code under test does inside a call it makes (e.g. which batches a
    student's ``train`` draws, which models it builds), without trusting what that code reports. Recording is
    best effort: an exception in ``record`` is ignored, and the original is put back on leaving the block.
    """
    original = getattr(module, name, None)
    if not callable(original):
        yield
        return

    def recorded(*args, **kwargs):
        result = original(*args, **kwargs)
        try:
            record(result)
        except Exception:  # noqa: BLE001 - recording is best effort; the check judges what it saw
            pass
        return result

    setattr(module, name, recorded)
    try:
        yield
    finally:
        setattr(module, name, original)
