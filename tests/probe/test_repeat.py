"""called_twice and same_as_fresh: state kept on an object between calls loses the check, fresh code keeps it."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import save

from autograder.judge.transport import decode_outputs, encode_outputs
from autograder.probe import Context, called_twice, same_as_fresh

CTX = Context(seed=7)


class Scale(torch.nn.Module):
    """Multiplies by 2; the leaky one also adds how many times it was called before (state never reset)."""

    def __init__(self, leaky: bool) -> None:
        super().__init__()
        self.leaky, self.calls = leaky, 0

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        self.calls += 1
        return [2 * x + (self.calls - 1 if self.leaky else 0)]


def read_back(raw: dict) -> dict:
    """The outputs as the grader reads them back from a job (lists flattened to ``name[i]``)."""
    values, tensors = encode_outputs(raw)
    return decode_outputs(values, save(tensors))


def outputs(leaky: bool) -> dict:
    inputs = {"x (2, 3)": torch.arange(6.0).reshape(2, 3), "x (4,)": torch.ones(4)}
    return read_back(called_twice(lambda: Scale(leaky), lambda layer, x: layer(x), inputs, what="Scale()"))


def test_a_call_on_the_same_object_must_equal_one_on_a_fresh_object() -> None:
    reference = outputs(leaky=False)
    assert list(same_as_fresh("Scale")(reference, reference, CTX)) == []
    leaky = outputs(leaky=True)
    problems = list(same_as_fresh("Scale")(leaky, reference, CTX))
    assert len(problems) == 1 and problems[0].startswith(
        "Scale() with x (4,)[0]: called after a call with x (2, 3) on the same object, Scale gives another answer "
        "than on a fresh object"), problems
    assert "state from the earlier call survives into this one" in problems[0]


def test_the_fresh_calls_are_the_gate_and_one_input_is_refused() -> None:
    reference = outputs(leaky=False)
    wrong = {name: value * 0 if isinstance(value, torch.Tensor) else value for name, value in reference.items()}
    assert list(same_as_fresh("Scale")(wrong, reference, CTX)) == [
        "Scale does not compute the right values yet: on a fresh object: Scale() with x (2, 3)[0]: values differ in 5 "
        "of 6 entries; max abs error 10 at (1, 2) (expected 10, got 0); the later calls count once it does"]
    with pytest.raises(ValueError):
        called_twice(lambda: Scale(False), lambda layer, x: layer(x), {"x": torch.ones(2)}, what="Scale()")


def test_a_later_call_that_raises_is_a_value_and_named_in_the_message() -> None:
    class Shrinking(Scale):
        def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
            self.calls += 1
            if self.calls > 1:
                raise ValueError("the mask was cut to the first length")
            return [2 * x]

    inputs = {"x (2, 3)": torch.ones(2, 3), "x (4,)": torch.ones(4)}
    raw = called_twice(lambda: Shrinking(False), lambda layer, x: layer(x), inputs, what="Scale()")
    assert raw["on the same object, after a call with x (2, 3): Scale() with x (4,)"] == \
        "raised ValueError: the mask was cut to the first length"
    reference = called_twice(lambda: Scale(False), lambda layer, x: layer(x), inputs, what="Scale()")
    problems = list(same_as_fresh("Scale")(read_back(raw), read_back(reference), CTX))
    assert "Scale raised ValueError: the mask was cut to the first length where a fresh object answers" in problems[0]
