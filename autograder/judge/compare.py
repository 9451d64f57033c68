"""Compare a student's plain outputs with the reference's: kind, dtype, shape, finiteness, then values.

Tolerances live here and only here. Graded code runs in float32 on the CPU with one thread. float32 has a
unit roundoff of 2**-24 ≈ 6e-8; a correct implementation that sums in another order (einsum instead of
matmul, a fused attention kernel, float64 internally and cast back) differs from the reference by a few
roundoffs per reduction, amplified at most ~10x through softmax and LayerNorm at the input scales the
checks use (|x| ≲ 5). ``rtol=1e-4, atol=1e-5`` leaves two orders of magnitude above that, while every
realistic mistake (a wrong scale, axis, mask, norm or residual) moves outputs by 1e-2 or more.
Whichever side computes in float32, a more accurate answer (a float64 position table or attention cast back)
stays within the tolerance the checks use on it: tests/judge/test_compare.py asserts both directions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from autograder.judge.transport import Foreign
from autograder.util.wording import entries_differ


@dataclass(frozen=True)
class Tolerance:
    """Elementwise closeness: ``|actual - expected| <= atol + rtol * |expected|``."""

    rtol: float
    atol: float


TOLERANCES: dict[str, Tolerance] = {
    "float32": Tolerance(rtol=1e-4, atol=1e-5),
    # Outputs after several layers or a few optimisation steps accumulate more roundoff (~1e-5 relative).
    "deep": Tolerance(rtol=1e-3, atol=1e-4),
    "exact": Tolerance(rtol=0.0, atol=0.0),
    # Sines of large angles: a float32 angle p * w carries an absolute error up to p * 2**-24 (1.5e-5 at
    # p = 256), which passes unchanged into sin and cos near zero, where a relative tolerance gives no room.
    "angles": Tolerance(rtol=1e-4, atol=1e-4),
}


def describe(value: Any) -> str:
    """A short description of a value's kind, e.g. ``tensor float32 (3, 4)`` or ``int``."""
    if isinstance(value, torch.Tensor):
        return f"tensor {str(value.dtype).replace('torch.', '')} {tuple(value.shape)}"
    if isinstance(value, np.ndarray):
        return f"numpy.ndarray {value.dtype} {tuple(value.shape)}"
    if isinstance(value, Foreign):
        return value.describe()
    return type(value).__name__


def compare_value(name: str, expected: Any, actual: Any, tolerance: Tolerance) -> str | None:
    """Compare one output with the reference's.

    Args:
        name: The output's name (used in the message).
        expected: The reference's value.
        actual: The student's value (already decoded from untrusted bytes).
        tolerance: Closeness for floating-point tensors and floats.

    Returns:
        None if they agree, else a one-line message a student can act on.
    """
    if isinstance(expected, torch.Tensor):
        if type(actual) is not torch.Tensor:
            return f"{name}: expected a torch.Tensor, got {describe(actual)}"
        return compare_tensors(name, expected, actual, tolerance)
    if isinstance(expected, np.ndarray):
        if type(actual) is not np.ndarray:
            return f"{name}: expected a numpy.ndarray, got {describe(actual)}"
        if actual.dtype != expected.dtype:
            return f"{name}: expected dtype {expected.dtype}, got {actual.dtype}"
        return compare_tensors(name, torch.from_numpy(expected), torch.from_numpy(actual), tolerance)
    if type(expected) is not type(actual):
        return f"{name}: expected {describe(expected)} {_short(expected)}, got {describe(actual)} {_short(actual)}".rstrip()
    if isinstance(expected, float):
        if math.isnan(expected) and math.isnan(actual):
            return None
        if abs(actual - expected) <= tolerance.atol + tolerance.rtol * abs(expected):
            return None
        return f"{name}: expected {expected:.6g}, got {actual:.6g}"
    if expected != actual:
        return f"{name}: expected {_short(expected)}, got {_short(actual)}"
    return None


def compare_tensors(name: str, expected: torch.Tensor, actual: torch.Tensor, tolerance: Tolerance) -> str | None:
    """Compare two plain tensors: dtype, shape, finiteness, then values within tolerance.

    Returns:
        None if they agree, else a message naming the first difference found.
    """
    if actual.dtype != expected.dtype:
        return f"{name}: expected dtype {expected.dtype}, got {actual.dtype}"
    if actual.shape != expected.shape:
        return f"{name}: expected shape {tuple(expected.shape)}, got {tuple(actual.shape)}"
    if not (expected.is_floating_point() or expected.is_complex()):
        differs = actual != expected
        if differs.any():
            index = _first_index(differs)
            return (f"{name}: {entries_differ(int(differs.sum()), differs.numel())}, "
                    f"first at {index}: expected {_item(expected, index)}, got {_item(actual, index)}")
        return None
    return _compare_floats(name, expected, actual, tolerance)


def _compare_floats(name: str, expected: torch.Tensor, actual: torch.Tensor, tolerance: Tolerance) -> str | None:
    expected64, actual64 = expected.double(), actual.double()
    finite_expected = torch.isfinite(expected64)
    nonfinite_actual = ~torch.isfinite(actual64) & finite_expected
    if nonfinite_actual.any():
        index = _first_index(nonfinite_actual)
        return (f"{name}: {int(nonfinite_actual.sum())} entries are NaN or infinite where finite values "
                f"were expected, first at {index}")
    special = ~finite_expected
    if special.any():
        same = (expected64[special] == actual64[special]) | (expected64[special].isnan() & actual64[special].isnan())
        if not same.all():
            return f"{name}: entries that should be ±inf or NaN differ"
    error = (actual64 - expected64).abs().masked_fill(special, 0.0)
    allowed = tolerance.atol + tolerance.rtol * expected64.abs().masked_fill(special, 0.0)
    bad = error > allowed
    if not bad.any():
        return None
    index = _first_index(error == error.max())
    return (f"{name}: values differ in {int(bad.sum())} of {bad.numel()} entries; max abs error "
            f"{float(error.max()):.3g} at {index} (expected {_item(expected, index)}, got {_item(actual, index)})")


def _first_index(mask: torch.Tensor) -> tuple[int, ...]:
    return tuple(int(i) for i in mask.nonzero()[0]) if mask.dim() else ()


def _item(tensor: torch.Tensor, index: tuple[int, ...]) -> str:
    value = tensor[index].item() if index else tensor.item()
    return f"{value:.5g}" if isinstance(value, float) else str(value)


def _short(value: Any) -> str:
    if isinstance(value, Foreign):
        return ""  # describe() already says all there is
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def compare_outputs(expected: dict[str, Any], actual: dict[str, Any], tolerance: str) -> list[str]:
    """Compare every named output; missing and unexpected names are failures too."""
    tol = TOLERANCES[tolerance]
    failures = []
    for name, value in expected.items():
        if name not in actual:
            failures.append(f"{name}: missing (got outputs {_names(sorted(actual)) or 'none'})")
            continue
        message = compare_value(name, value, actual[name], tol)
        if message:
            failures.append(message)
    extra = sorted(set(actual) - set(expected))
    if extra:
        failures.append(f"unexpected extra outputs: {_names(extra)}")
    return failures


def closeness(expected: dict[str, Any], actual: dict[str, Any], tolerance: str) -> float:
    """How near two sets of outputs come to differing under a tolerance: the largest ``|actual - expected|`` over
    what the tolerance allows, across every floating-point entry (0: the same values; above 1: they differ).

    Non-float values, shapes, dtypes and non-finite entries either agree (0) or not (``math.inf``), as
    :func:`compare_value` judges them; a missing output is ``math.inf``.
    """
    closeness_of = TOLERANCES[tolerance]
    worst = 0.0
    for name, value in expected.items():
        worst = max(worst, _closeness(value, actual[name], closeness_of) if name in actual else math.inf)
    return worst


def _closeness(expected: Any, actual: Any, tolerance: Tolerance) -> float:
    if compare_value("", expected, actual, Tolerance(rtol=0.0, atol=math.inf)) is not None:
        return math.inf  # kind, dtype, shape, exact values or non-finite entries differ: no tolerance helps
    values = [torch.as_tensor(v, dtype=torch.float64) if isinstance(v, (float, np.ndarray)) else v
              for v in (expected, actual)]
    if not (type(values[0]) is torch.Tensor and values[0].is_floating_point()):
        return 0.0
    expected64, actual64 = (v.double() for v in values)
    finite = torch.isfinite(expected64)
    error = (actual64 - expected64).abs().masked_fill(~finite, 0.0)
    allowed = tolerance.atol + tolerance.rtol * expected64.abs().masked_fill(~finite, 0.0)
    ratios = torch.where(error == 0, 0.0, error / allowed)  # nothing allowed and a difference: infinity
    return float(ratios.max()) if ratios.numel() else 0.0


def _names(names: list[str], count: int = 5, width: int = 60) -> str:
    shown = [name if len(name) <= width else name[: width - 3] + "..." for name in names[:count]]
    return ", ".join(shown) + (f" and {len(names) - count} more" if len(names) > count else "")
