"""Comparison of plain outputs: kinds, dtypes, shapes, finiteness and float32 tolerances."""

from __future__ import annotations

import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.judge.compare import TOLERANCES, compare_outputs, compare_tensors, compare_value
from autograder.judge.transport import Foreign

F32 = TOLERANCES["float32"]


def test_equal_tensors_pass():
    x = torch.randn(3, 4)
    assert compare_value("x", x, x.clone(), F32) is None


def test_dtype_is_checked_before_values():
    x = torch.randn(3, 4)
    message = compare_value("out", x, x.double(), F32)
    assert message == "out: expected dtype torch.float32, got torch.float64"


def test_shape_is_reported_with_both_shapes():
    message = compare_value("weights", torch.zeros(3, 4, 7, 10), torch.zeros(3, 4, 10, 7), F32)
    assert "expected shape (3, 4, 7, 10), got (3, 4, 10, 7)" in message


def test_nan_where_finite_expected_is_named_as_such():
    actual = torch.ones(2, 3)
    actual[1, 2] = float("nan")
    message = compare_value("out", torch.ones(2, 3), actual, F32)
    assert "NaN or infinite" in message and "(1, 2)" in message


def test_matching_infinities_pass_and_mismatched_fail():
    expected = torch.tensor([0.0, -math.inf, 1.0])
    assert compare_value("s", expected, expected.clone(), F32) is None
    assert compare_value("s", expected, torch.tensor([0.0, math.inf, 1.0]), F32) is not None


def test_value_error_reports_max_error_and_location():
    expected = torch.zeros(2, 5)
    actual = expected.clone()
    actual[1, 3] = 0.5
    message = compare_value("out", expected, actual, F32)
    assert "1 of 10 entries" in message and "max abs error 0.5" in message and "(1, 3)" in message


def test_bool_and_integer_tensors_compare_exactly():
    mask = torch.triu(torch.ones(4, 4, dtype=torch.bool), 1)
    assert compare_value("mask", mask, mask.clone(), F32) is None
    wrong = mask.clone()
    wrong[0, 0] = True
    assert "1 of 16 entries differ, first at (0, 0)" in compare_value("mask", mask, wrong, F32)


def test_python_int_must_stay_an_int():
    assert compare_value("bytes", 2**31, float(2**31), F32).startswith("bytes: expected int")
    assert compare_value("bytes", 2**31, 2**31, F32) is None
    assert compare_value("bytes", 2**31, 2**31 + 1, F32) == "bytes: expected 2147483648, got 2147483649"


def test_bool_is_not_accepted_for_int():
    assert compare_value("n", 1, True, F32) is not None


def test_numpy_instead_of_torch_is_named():
    import numpy as np

    message = compare_value("out", torch.zeros(2, 3), np.zeros((2, 3), dtype=np.float32), F32)
    assert message == "out: expected a torch.Tensor, got numpy.ndarray float32 (2, 3)"


def test_numpy_outputs_compare_like_tensors():
    import numpy as np

    x = np.linspace(0, 1, 6).reshape(2, 3)
    assert compare_value("z", x, x.copy(), F32) is None
    assert "dtype" in compare_value("z", x, x.astype(np.float32), F32)
    assert "values differ" in compare_value("z", x, x + 0.1, F32)


def test_foreign_objects_never_pass():
    message = compare_value("out", torch.zeros(2), Foreign("numpy.ndarray", "float32, shape (2,)"), F32)
    assert message == "out: expected a torch.Tensor, got numpy.ndarray (float32, shape (2,))"


def test_missing_and_extra_outputs_fail():
    failures = compare_outputs({"a": 1, "b": 2}, {"a": 1, "c": 3}, "exact")
    assert any("b: missing" in f for f in failures)
    assert any("unexpected extra outputs: c" in f for f in failures)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 64), st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_summing_in_another_order_stays_within_tolerance(n, rows, seed):
    generator = torch.Generator().manual_seed(seed)
    a = torch.randn(rows, n, generator=generator)
    b = torch.randn(n, 5, generator=generator)
    reference = a @ b
    reordered = torch.einsum("ik,kj->ij", a.flip(1), b.flip(0))
    via_double = (a.double() @ b.double()).float()
    assert compare_tensors("x", reference, reordered, F32) is None
    assert compare_tensors("x", reference, via_double, F32) is None


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(1e-2, 10.0))
def test_perturbations_of_a_realistic_mistake_size_are_caught(seed, size):
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(seed))
    y = x.clone()
    y[2, 3] += size
    assert compare_tensors("x", x, y, F32) is not None


def _positions(length: int, dim: int, dtype: torch.dtype) -> torch.Tensor:
    """The sinusoidal table computed in ``dtype`` throughout, returned in float32."""
    angles = torch.arange(length, dtype=dtype)[:, None] / 10000.0 ** (torch.arange(0, dim, 2, dtype=dtype) / dim)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(length, dim).float()


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)
    return (torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) @ v).float()


def test_a_more_accurate_answer_never_fails_where_the_float32_answer_passes():
    """Whichever side computes in float32 (the reference or the student), the float64-then-float32 answer is
    within the checks' tolerances of it: float64 position tables far from position 0 ("deep", as
    sinusoidal_positions' long tables), and attention with scores in the thousands ("deep")."""
    for length, dim in [(200, 48), (64, 64), (129, 10), (10, 8)]:
        float32, float64 = _positions(length, dim, torch.float32), _positions(length, dim, torch.float64)
        assert compare_tensors("table", float32, float64, TOLERANCES["deep"]) is None, (length, dim)
        assert compare_tensors("table", float64, float32, TOLERANCES["deep"]) is None, (length, dim)
    generator = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 3, 9, 8, generator=generator) * 25 for _ in range(3))
    float32, float64 = _attention(q, k, v, torch.float32), _attention(q, k, v, torch.float64)
    assert compare_tensors("out", float32, float64, TOLERANCES["deep"]) is None
    assert compare_tensors("out", float64, float32, TOLERANCES["deep"]) is None
