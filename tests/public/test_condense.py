"""What ``grader check`` says of an exact-equality failure (``assert torch.equal(a, b)``): its shape or dtype when
they differ, else how many entries differ and the first one, as an ``assert_close`` with no tolerance says it."""

from __future__ import annotations

import torch

from autograder.public.condense import _equal_failure

MASK = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)


def test_a_shape_or_dtype_that_differs_is_said_first() -> None:
    assert _equal_failure("assert torch.equal(mask, expected)", MASK[:3, :3], MASK) == [
        "mask: shape (3, 3), expected (4, 4)"]
    assert _equal_failure("assert torch.equal(row, expected)", MASK[0, :3], MASK[0]) == [
        "row: shape (3,), expected (4,)"]
    assert _equal_failure("assert torch.equal(mask, expected)", MASK.int() * 2, MASK) == [
        "mask: dtype torch.int32, expected torch.bool"]


def test_values_that_differ_are_counted_and_the_first_is_shown_with_both_values() -> None:
    assert _equal_failure("assert torch.equal(steps, steps[:, :1].expand_as(steps))",
                          torch.tensor([[3, 3, 5]]), torch.tensor([[3, 3, 3]])) == [
        "steps (shape (1, 3)) differs from the expected values",
        "1 of 3 entries differ (must be equal); the first at index (0, 2): got 5, expected 3"]
    assert _equal_failure("assert torch.equal(out, expected)", torch.tensor([0.5, 0.25]),
                          torch.tensor([0.5, 1 / 3])) == [
        "out (shape (2,)) differs from the expected values",
        "1 of 2 entries differ (must be equal); the first at index (1,): got 0.25, expected 0.3333"]


def test_a_nan_in_both_tensors_is_said_to_be_why_they_are_not_equal() -> None:
    nan = float("nan")
    assert _equal_failure("assert torch.equal(out, expected)", torch.tensor([1.0, nan]), torch.tensor([1.0, nan]))[-1] \
        == ("1 of 2 entries differ (must be equal); the first at index (1,): got nan, expected nan (NaN equals "
            "nothing, itself included: no tensor holding a NaN is equal to another)")
