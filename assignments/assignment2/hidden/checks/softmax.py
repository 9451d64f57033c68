"""Hidden checks of numpy_attention.softmax: values on several shapes and axes, stability, properties.

Inputs are float64 NumPy arrays from the check's seeded generator; outputs are compared with the reference's
(same dtype, same shape, then values). Stability inputs sit around +-1000, where exp overflows unless the
maximum is subtracted slice by slice. The properties check is gated on the values (probe.gated): a constant
such as 1/n (rows that sum to 1 and ignore a shift) earns nothing.
"""

import numpy as np
from _numpy_inputs import numpy_array, quiet

from autograder.probe import check, gate_values, gated


@check("softmax", weight=3, description="softmax(x) along the last axis for 1-D, 2-D and 3-D inputs, "
                                        "a single element, and inputs of larger magnitude")
@quiet
def last_axis_values(impl, ref, ctx):
    outputs = {}
    for shape, scale in (((5,), 1.0), ((4, 7), 2.0), ((2, 3, 6), 1.0), ((1,), 1.0), ((3, 3), 8.0)):
        x = numpy_array(ctx, *shape, scale=scale)
        outputs[f"softmax(x of shape {shape})"] = impl.numpy_attention.softmax(x)
    return outputs


@check("softmax", weight=2, description="softmax(x, axis=...) normalises along the requested axis "
                                        "(axis=0, axis=1 of a 3-D array, axis=-2)")
@quiet
def other_axes(impl, ref, ctx):
    outputs = {}
    for shape, axis in (((4, 6), 0), ((2, 5, 3), 1), ((3, 4, 5), -2), ((6, 2), -1)):
        x = numpy_array(ctx, *shape, scale=2.0)
        outputs[f"softmax(x of shape {shape}, axis={axis})"] = impl.numpy_attention.softmax(x, axis=axis)
    return outputs


@check("softmax", weight=2, description="numerical stability: inputs around 1000 and -1000, and rows of very "
                                        "different magnitude in one array, give finite, correct values")
@quiet
def stability(impl, ref, ctx):
    softmax = impl.numpy_attention.softmax
    mixed = numpy_array(ctx, 3, 5)
    mixed[0] += 1000.0
    mixed[2] -= 1000.0
    return {
        "softmax(x of shape (4, 6) with entries around 1000)": softmax(numpy_array(ctx, 4, 6, shift=1000.0)),
        "softmax(x of shape (4, 6) with entries around -1000)": softmax(numpy_array(ctx, 4, 6, shift=-1000.0)),
        "softmax(x of shape (3, 5) whose rows lie around 1000, 0 and -1000)": softmax(mixed),
        "softmax([1000.0, 0.0, -1000.0])": softmax(np.array([1000.0, 0.0, -1000.0])),
        "softmax(x of shape (3, 4) with entries around 1000, axis=0)": softmax(numpy_array(ctx, 3, 4, shift=1000.0),
                                                                                axis=0),
    }


def _properties(student, reference, ctx):
    for name in ("softmax(x) for x of shape (5, 8)", "softmax(x + 7) for the same x"):
        value = student[name]
        if not isinstance(value, np.ndarray) or value.shape != (5, 8):
            yield f"{name}: expected a numpy.ndarray of shape (5, 8)"
            return
        if not np.all(np.isfinite(value)) or value.min() < 0:
            yield f"{name}: entries must be finite and non-negative"
            return
        if np.abs(value.sum(axis=-1) - 1).max() > 1e-6:
            yield f"{name}: each row must sum to 1 along the last axis"
            return
    if np.abs(student["softmax(x) for x of shape (5, 8)"] - student["softmax(x + 7) for the same x"]).max() > 1e-6:
        yield "adding the same constant to every entry must not change the softmax"
    if not np.array_equal(student["x after the call"], student["x before the call"]):
        yield "softmax must not modify its input array in place (compute on a copy, e.g. x - x.max(...))"


@check("softmax", weight=1, verify=gated(_properties, what="softmax"), compare_reference=False,
       description="rows are non-negative and sum to 1, adding a constant changes nothing, and the input array "
                   "is not modified in place")
@quiet
def properties(impl, ref, ctx):
    x = numpy_array(ctx, 5, 8, scale=3.0)
    before = x.copy()
    first = impl.numpy_attention.softmax(x)
    after = x.copy()
    shifted = impl.numpy_attention.softmax(before + 7.0)
    return {"softmax(x) for x of shape (5, 8)": first, "softmax(x + 7) for the same x": shifted,
            "x before the call": before, "x after the call": after,
            **gate_values({"softmax(x) for x of shape (5, 8)": first})}
