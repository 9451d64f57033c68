"""Hidden checks of numpy_attention.attention: values with and without the causal mask, and properties.

The student's function runs with the reference softmax. Projections have d_in != d_k != d_v so that a scale by
the wrong width, or values taken from the wrong projection, cannot pass by accident; shapes include a single
token and batches.

Large scores: inputs and projections of large magnitude give scores in the thousands to tens of thousands, in
float64. A softmax written inline without subtracting the maximum gives NaN there, and a finite mask value
(a fill of -1e4, or -1e4 added) is overcome; -inf, -1e9 and np.finfo min masks agree with the reference. The
property checks are gated on the values (probe.gated): a function that computes nothing cannot earn them.
"""

import numpy as np
import torch
from _numpy_inputs import numpy_array, quiet

from autograder.probe import check, gate_values, gated

SHAPES = [  # (leading batch dims, n, d_in, d_k, d_v)
    ((), 5, 4, 3, 6),
    ((), 1, 3, 5, 2),
    ((2,), 6, 5, 4, 3),
    ((), 7, 8, 8, 8),
    ((2, 3), 4, 3, 2, 5),
]


def _inputs(ctx, lead, n, d_in, d_k, d_v):
    return (numpy_array(ctx, *lead, n, d_in), numpy_array(ctx, d_in, d_k), numpy_array(ctx, d_in, d_k),
            numpy_array(ctx, d_in, d_v))


def _label(X, W_q, W_v):
    return f"X {X.shape}, W_q/W_k {W_q.shape}, W_v {W_v.shape}"


@check("attention", weight=3, description="Z and weights without a mask for several shapes (d_in, d_k, d_v "
                                          "all different, a single token, batches)")
@quiet
def values(impl, ref, ctx):
    outputs = {}
    for shape in SHAPES:
        X, W_q, W_k, W_v = _inputs(ctx, *shape)
        Z, weights = impl.numpy_attention.attention(X, W_q, W_k, W_v)
        outputs[f"Z for {_label(X, W_q, W_v)}"] = Z
        outputs[f"weights for {_label(X, W_q, W_v)}"] = weights
    return outputs


@check("attention", weight=3, description="Z and weights with causal=True for several shapes")
@quiet
def causal_values(impl, ref, ctx):
    outputs = {}
    for shape in SHAPES:
        X, W_q, W_k, W_v = _inputs(ctx, *shape)
        Z, weights = impl.numpy_attention.attention(X, W_q, W_k, W_v, causal=True)
        outputs[f"Z with causal=True for {_label(X, W_q, W_v)}"] = Z
        outputs[f"weights with causal=True for {_label(X, W_q, W_v)}"] = weights
    return outputs


def _rows(student, reference, ctx):
    for name in ("weights", "weights with causal=True"):
        weights = student[name]
        if not isinstance(weights, np.ndarray) or weights.shape != (2, 6, 6):
            yield f"{name} for X (2, 6, 4) must be a numpy array of shape (2, 6, 6)"
            return
        if not np.all(np.isfinite(weights)) or weights.min() < 0:
            yield f"{name}: entries must be finite and non-negative"
        elif np.abs(weights.sum(axis=-1) - 1).max() > 1e-6:
            yield f"{name}: every row must sum to 1 over the keys (mask before the softmax, not after)"
    causal = student["weights with causal=True"]
    future = np.triu(np.ones((6, 6), dtype=bool), k=1)
    if np.abs(causal[:, future]).max() > 0:
        yield "with causal=True, every weight above the diagonal (a key in the future) must be exactly 0"
    elif np.abs(causal[:, ~future]).min() <= 0:
        yield "with causal=True, every token must still attend to itself and to every earlier token"


@check("attention", weight=2, verify=gated(_rows, what="attention"), compare_reference=False,
       description="rows of the weights sum to 1; with causal=True weights above the diagonal are exactly 0 and "
                   "none on or below it")
@quiet
def rows_and_mask(impl, ref, ctx):
    X, W_q, W_k, W_v = _inputs(ctx, (2,), 6, 4, 3, 5)
    Z, weights = impl.numpy_attention.attention(X, W_q, W_k, W_v)
    Z_causal, causal = impl.numpy_attention.attention(X, W_q, W_k, W_v, causal=True)
    return {"weights": weights, "weights with causal=True": causal,
            **gate_values({"Z for X (2, 6, 4)": Z, "Z with causal=True for X (2, 6, 4)": Z_causal})}


def _future_and_order(student, reference, ctx):
    Z, Z_changed = student["causal Z"], student["causal Z with the last token changed"]
    Z_plain, Z_perm, order = student["Z"], student["Z of permuted tokens"], student["order"]
    if Z.shape != Z_changed.shape or Z.ndim != 2:
        yield "Z must have shape (n, d_v)"
    elif not np.all(np.isfinite(Z)):
        yield "with causal=True, Z contains NaN or infinite values (does some token see no key at all?)"
    elif np.abs(Z[:-1] - Z_changed[:-1]).max() > 1e-9:
        yield "with causal=True, changing the last token changed the outputs of earlier tokens"
    elif np.abs(Z[-1] - Z_changed[-1]).max() < 1e-6:
        yield "with causal=True, the last token must still see itself"
    elif Z_perm.shape != Z_plain.shape or np.abs(Z_perm - Z_plain[order]).max() > 1e-6:
        yield "without a mask, permuting the tokens must permute the outputs the same way"


@check("attention", weight=2, verify=gated(_future_and_order, what="attention"), compare_reference=False,
       description="with causal=True a later token never changes earlier outputs; without a mask, permuting the "
                   "tokens permutes the outputs")
@quiet
def causality_and_equivariance(impl, ref, ctx):
    attention = impl.numpy_attention.attention
    X, W_q, W_k, W_v = _inputs(ctx, (), 7, 4, 3, 5)
    changed = X.copy()
    changed[-1] += numpy_array(ctx, 4, scale=3.0)
    order = torch.randperm(7, generator=ctx.generator).numpy()
    causal_Z = attention(X.copy(), W_q, W_k, W_v, causal=True)[0]
    return {
        **gate_values({"Z with causal=True for X (7, 4)": causal_Z}),
        "causal Z": causal_Z,
        "causal Z with the last token changed": attention(changed, W_q, W_k, W_v, causal=True)[0],
        "Z": attention(X.copy(), W_q, W_k, W_v)[0],
        "Z of permuted tokens": attention(X[order].copy(), W_q, W_k, W_v)[0],
        "order": order,
    }


LARGE_SHAPES = [  # (leading batch dims, n, d_in, d_k, d_v)
    ((2,), 6, 5, 4, 3),
    ((), 7, 8, 6, 5),
]


def _large_inputs(ctx, lead, n, d_in, d_k, d_v):
    """Tokens of scale 10 and projections of scale 3: scores of several thousands, spreads beyond 1e4."""
    return (numpy_array(ctx, *lead, n, d_in, scale=10.0), numpy_array(ctx, d_in, d_k, scale=3.0),
            numpy_array(ctx, d_in, d_k, scale=3.0), numpy_array(ctx, d_in, d_v))


@check("attention", weight=2,
       description="large scores (thousands to tens of thousands), without and with causal=True: finite, correct "
                   "Z and weights, masked keys get no weight however large their scores")
@quiet
def large_scores(impl, ref, ctx):
    outputs = {}
    for shape in LARGE_SHAPES:
        X, W_q, W_k, W_v = _large_inputs(ctx, *shape)
        for causal in (False, True):
            Z, weights = impl.numpy_attention.attention(X, W_q, W_k, W_v, causal=causal)
            suffix = " with causal=True" if causal else ""
            outputs[f"Z{suffix} for large {_label(X, W_q, W_v)}"] = Z
            outputs[f"weights{suffix} for large {_label(X, W_q, W_v)}"] = weights
    return outputs
