"""Hidden checks of numpy_attention.self_attention (weight-free): values, batches, properties.

The student's function runs with the reference softmax. Shapes include n != d, a single token and batched
inputs, so a softmax over the wrong axis (X X^T is symmetric, its column softmax is the transpose) or X.T on
a batch cannot pass by accident. Large inputs (scores in the thousands) catch a softmax written inline without
subtracting the maximum. The properties check is gated on the values (probe.gated).
"""

import numpy as np
import torch
from _numpy_inputs import numpy_array

from autograder.probe import check, gate_values, gated

SHAPES = [(4, 3), (6, 6), (1, 5), (7, 2)]  # (n, d)
BATCHED = [(2, 5, 4), (3, 1, 2), (2, 3, 6, 3)]


@check("self_attention", weight=3, description="Z and weights for X of shape (n, d) with n != d, n == d and "
                                               "a single token")
def values(impl, ref, ctx):
    outputs = {}
    for shape in SHAPES:
        Z, weights = impl.numpy_attention.self_attention(numpy_array(ctx, *shape, scale=0.8))
        outputs[f"Z for X of shape {shape}"] = Z
        outputs[f"weights for X of shape {shape}"] = weights
    return outputs


@check("self_attention", weight=2, description="Z and weights for batched X of shape (batch, n, d) and "
                                               "(b1, b2, n, d): every sequence attends within itself")
def batched_values(impl, ref, ctx):
    outputs = {}
    for shape in BATCHED:
        Z, weights = impl.numpy_attention.self_attention(numpy_array(ctx, *shape, scale=0.8))
        outputs[f"Z for X of shape {shape}"] = Z
        outputs[f"weights for X of shape {shape}"] = weights
    return outputs


def _properties(student, reference, ctx):
    Z, weights, order = student["Z"], student["weights"], student["order"]
    Zp, weights_p = student["Z of permuted tokens"], student["weights of permuted tokens"]
    n = len(order)
    if not all(isinstance(a, np.ndarray) for a in (Z, weights, Zp, weights_p)):
        yield "self_attention must return a pair of numpy arrays (Z, weights)"
    elif weights.shape != (n, n) or Z.shape != (n, 4):
        yield f"for X of shape ({n}, 4), Z must have shape ({n}, 4) and weights ({n}, {n})"
    elif weights.min() < 0 or np.abs(weights.sum(axis=-1) - 1).max() > 1e-6:
        yield "every row of the weights must be non-negative and sum to 1 (softmax over the keys, the last axis)"
    elif np.abs(Zp - Z[order]).max() > 1e-6 or np.abs(weights_p - weights[order][:, order]).max() > 1e-6:
        yield "permuting the tokens must permute Z (and the rows and columns of the weights) the same way"


@check("self_attention", weight=1, verify=gated(_properties, what="self_attention"), compare_reference=False,
       description="rows of the weights sum to 1, and permuting the tokens permutes the outputs")
def properties(impl, ref, ctx):
    X = numpy_array(ctx, 6, 4, scale=0.8)
    order = torch.randperm(6, generator=ctx.generator).numpy()
    Z, weights = impl.numpy_attention.self_attention(X)
    Zp, weights_p = impl.numpy_attention.self_attention(X[order].copy())
    return {"Z": Z, "weights": weights, "Z of permuted tokens": Zp, "weights of permuted tokens": weights_p,
            "order": order, **gate_values({"Z for X of shape (6, 4)": Z, "weights for X of shape (6, 4)": weights})}


@check("self_attention", weight=2,
       description="large inputs (scores in the thousands, rows of very different magnitude): finite, correct Z "
                   "and weights")
def large_scores(impl, ref, ctx):
    outputs = {}
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for shape in ((5, 3), (2, 6, 4)):
            X = numpy_array(ctx, *shape, scale=20.0)
            X[..., 0, :] *= 4.0  # one token much longer than the others: its row's maximum is far larger
            Z, weights = impl.numpy_attention.self_attention(X)
            outputs[f"Z for large X of shape {shape}"] = Z
            outputs[f"weights for large X of shape {shape}"] = weights
    return outputs
