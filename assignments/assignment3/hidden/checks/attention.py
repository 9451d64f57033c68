"""Hidden checks of scaled_dot_product_attention: values, weights, masking, shapes and errors.

Shapes are chosen so shortcuts cannot pass by accident: batch > 1, several heads, n != m, d_k != d_v,
d_k differing from heads * d_k, a single query, odd lengths. Float64 inputs, the inputs after the call and
the gradients reaching q, k and v are compared with the reference too.

Large scores: q and k hold whole numbers and d_k is a perfect square, so every score q.k / sqrt(d_k) is exact
in float32 whatever order the products are summed in (matmul, einsum, q scaled first); scores reach hundreds to
thousands, one row has a much larger maximum, whole rows sit far above or below zero, and under causal=True
masked keys score far above the visible ones. A softmax that does not subtract each row's maximum gives NaN
there, and a finite mask value (-1e4, -100) is overcome; -inf, -1e9 and torch.finfo(dtype).min masks, float64
internals and logsumexp forms agree with the reference. These checks use the "deep" tolerance: at a score of
magnitude S a correct float32 softmax carries a relative error of about S * 2**-24 (2.4e-4 at S = 4000).

Property checks (rows sum to 1, causality, inputs unchanged, the ValueError) are gated on the values
(probe.gated): a function that computes nothing cannot earn them.
"""

import torch

from autograder.probe import check, future_unchanged, gate_values, gated, raised

SHAPES = [  # (batch, heads, n, m, d_k, d_v)
    (3, 4, 7, 10, 8, 6),
    (2, 3, 1, 5, 16, 4),
    (1, 2, 9, 9, 5, 7),
]
CAUSAL_SHAPES = [(3, 4, 7, 8, 6), (2, 1, 1, 4, 4), (1, 2, 12, 5, 3)]  # (batch, heads, n, d_k, d_v)
WITH_AND_WITHOUT_MASK = [(5, 7, False), (6, 6, True)]  # (n, m, causal) for the float64 and gradient checks


def _inputs(ctx, batch, heads, n, m, d_k, d_v):
    return ctx.randn(batch, heads, n, d_k, scale=2.0), ctx.randn(batch, heads, m, d_k, scale=2.0), \
        ctx.randn(batch, heads, m, d_v)


def _label(q, k, v):
    return f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"



@check("attention", weight=1, description="causal=False (the default) on square inputs: no mask is applied")
def square_without_mask(impl, ref, ctx):
    outputs = {}
    for batch, heads, n, d_k, d_v in ((2, 3, 6, 4, 5), (1, 2, 9, 8, 8)):
        q, k, v = _inputs(ctx, batch, heads, n, n, d_k, d_v)
        out, weights = impl.attention.scaled_dot_product_attention(q, k, v)
        outputs[f"out for {_label(q, k, v)}"] = out
        outputs[f"weights for {_label(q, k, v)}"] = weights
    q, k, v = _inputs(ctx, 2, 2, 5, 5, 4, 4)
    out, weights = impl.attention.scaled_dot_product_attention(q, k, v, causal=False)
    outputs[f"out for {_label(q, k, v)}, causal=False"] = out
    outputs[f"weights for {_label(q, k, v)}, causal=False"] = weights
    return outputs


@check("attention", weight=3, description="output and weights on random inputs of several shapes (n != m, "
                                          "d_k != d_v, a single query)")
def random_values(impl, ref, ctx):
    outputs = {}
    for shape in SHAPES:
        q, k, v = _inputs(ctx, *shape)
        out, weights = impl.attention.scaled_dot_product_attention(q, k, v)
        outputs[f"out for {_label(q, k, v)}"] = out
        outputs[f"weights for {_label(q, k, v)}"] = weights
    return outputs


def _rows_sum_to_one(student, reference, ctx):
    for name, weights in student.items():
        total = weights.double().sum(-1)
        if not torch.isfinite(weights).all():
            yield f"{name}: the weights contain NaN or infinite values (is some row left with every key masked?)"
        elif not (total - 1).abs().max() <= 1e-4:
            yield f"{name}: each row must sum to 1 over the keys, found sums from " \
                  f"{float(total.min()):.4g} to {float(total.max()):.4g}"
        elif not weights.min() >= 0:
            yield f"{name}: weights must not be negative"


WHAT = "scaled_dot_product_attention"


@check("attention", weight=1, description="each row of the weights is non-negative and sums to 1 over the keys "
                                          "(with and without causal=True)",
       verify=gated(_rows_sum_to_one, what=WHAT), compare_reference=False)
def rows_sum_to_one(impl, ref, ctx):
    q, k, v = _inputs(ctx, 2, 4, 6, 11, 8, 7)
    out, weights = impl.attention.scaled_dot_product_attention(q, k, v)
    q, k, v = _inputs(ctx, 2, 3, 9, 9, 4, 5)
    causal_out, causal_weights = impl.attention.scaled_dot_product_attention(q, k, v, causal=True)
    return {"weights for q (2, 4, 6, 8), k (2, 4, 11, 8)": weights,
            "weights with causal=True for q, k (2, 3, 9, 4)": causal_weights,
            **gate_values({"out for q (2, 4, 6, 8), k (2, 4, 11, 8)": out,
                      "out with causal=True for q, k (2, 3, 9, 4)": causal_out})}


@check("attention", weight=2, description="causal=True: output and weights on square inputs of several shapes")
def causal_values(impl, ref, ctx):
    outputs = {}
    for batch, heads, n, d_k, d_v in CAUSAL_SHAPES:
        q, k, v = _inputs(ctx, batch, heads, n, n, d_k, d_v)
        out, weights = impl.attention.scaled_dot_product_attention(q, k, v, causal=True)
        outputs[f"causal out for {_label(q, k, v)}"] = out
        outputs[f"causal weights for {_label(q, k, v)}"] = weights
    return outputs


LARGE_SHAPES = [(2, 3, 5, 7, 16, 6), (1, 4, 1, 3, 4, 5)]  # (batch, heads, n, m, d_k, d_v), d_k a perfect square
CAUSAL_LARGE_SHAPES = [(3, 2, 6, 16, 5), (2, 4, 9, 4, 3)]  # (batch, heads, n, d_k, d_v)


def _whole(ctx, *shape, bound=20):
    """Whole numbers in [-bound, bound] as float32: their products and sums are exact in float32."""
    return ctx.randint(-bound, bound + 1, shape).float()


def _large_inputs(ctx, batch, heads, n, m, d_k, d_v):
    """Scores in the hundreds (std ~140), query 0's about 16 times larger, rows 1 and 2 shifted by -/+1280."""
    q, k, v = _whole(ctx, batch, heads, n, d_k), _whole(ctx, batch, heads, m, d_k), ctx.randn(batch, heads, m, d_v)
    q[:, :, 0] *= 16
    k[..., 0] = 16.0  # a feature every key shares: a query's first feature shifts its whole row of scores
    for row, shift in ((1, -320.0), (2, 320.0)):
        if row < n:
            q[:, :, row, 0] = shift
    return q, k, v


def _causal_large_inputs(ctx, batch, heads, n, d_k, d_v):
    """Query 0's only visible key scores about -13000 and the last (future) key about +13000; the other scores
    lie in the thousands. A mask value that is finite (a fill of -1e4, or -1e4 added) is overcome here."""
    q, k, v = _whole(ctx, batch, heads, n, d_k), _whole(ctx, batch, heads, n, d_k), ctx.randn(batch, heads, n, d_v)
    k[:, :, 0] = -24 * q[:, :, 0]
    k[:, :, -1] = 24 * q[:, :, 0]
    return q, k, v


@check("attention", weight=2, tolerance="deep",
       description="large scores (hundreds to thousands, one row with a much larger maximum, whole rows far above "
                   "or below zero): finite and correct output and weights")
def large_scores(impl, ref, ctx):
    outputs = {}
    for shape in LARGE_SHAPES:
        q, k, v = _large_inputs(ctx, *shape)
        out, weights = impl.attention.scaled_dot_product_attention(q, k, v)
        outputs[f"out for large scores, {_label(q, k, v)}"] = out
        outputs[f"weights for large scores, {_label(q, k, v)}"] = weights
    return outputs


@check("attention", weight=2, tolerance="deep",
       description="causal=True with large scores: a masked key gets no weight however large its score, a visible "
                   "one keeps its weight however small its score")
def causal_large_scores(impl, ref, ctx):
    outputs = {}
    for batch, heads, n, d_k, d_v in CAUSAL_LARGE_SHAPES:
        q, k, v = _causal_large_inputs(ctx, batch, heads, n, d_k, d_v)
        out, weights = impl.attention.scaled_dot_product_attention(q, k, v, causal=True)
        outputs[f"causal out for large scores, {_label(q, k, v)}"] = out
        outputs[f"causal weights for large scores, {_label(q, k, v)}"] = weights
    return outputs


# Causality, the ready-made way: earlier positions' outputs never move when only the last input changes.
_future_unchanged = future_unchanged("out", "out with the last key and value changed", what="the last key and value",
                                     outputs_of="queries", last_changes_by=1e-3, when="with causal=True",
                                     nan_hint=" (is some query left with no key?)")


@check("attention", weight=1, description="causal=True: a later key/value never changes earlier outputs, "
                                          "and every query sees its own position",
       verify=gated(_future_unchanged, what=WHAT), compare_reference=False)
def future_never_changes_past(impl, ref, ctx):
    q, k, v = _inputs(ctx, 2, 3, 8, 8, 4, 5)
    out, weights = impl.attention.scaled_dot_product_attention(q.clone(), k.clone(), v.clone(), causal=True)
    k2, v2 = k.clone(), v.clone()
    k2[..., -1, :] += 5.0
    v2[..., -1, :] -= 3.0
    out2, _ = impl.attention.scaled_dot_product_attention(q.clone(), k2, v2, causal=True)
    return {"out": out, "out with the last key and value changed": out2,
            **gate_values({"causal out for q, k (2, 3, 8, 4), v (2, 3, 8, 5)": out,
                      "causal weights for q, k (2, 3, 8, 4), v (2, 3, 8, 5)": weights})}


@check("attention", weight=1, description="works for any number of leading dimensions: (batch, n, d) inputs")
def three_dimensional(impl, ref, ctx):
    q, k, v = ctx.randn(3, 5, 4, scale=2.0), ctx.randn(3, 6, 4, scale=2.0), ctx.randn(3, 6, 2)
    out, weights = impl.attention.scaled_dot_product_attention(q, k, v)
    return {"out for q (3, 5, 4), k (3, 6, 4), v (3, 6, 2)": out,
            "weights for q (3, 5, 4), k (3, 6, 4), v (3, 6, 2)": weights}


@check("attention", weight=1, description="causal=True with a different number of queries and keys raises "
                                          "ValueError", verify=gated(what=WHAT), compare_reference=False)
def causal_rejects_n_ne_m(impl, ref, ctx):
    outputs = {}
    for n, m in ((4, 6), (1, 3)):
        q, k, v = _inputs(ctx, 2, 2, n, m, 4, 4)
        outputs[f"exception for causal=True with n={n} queries, m={m} keys"] = raised(
            lambda: impl.attention.scaled_dot_product_attention(q, k, v, causal=True))
    q, k, v = _inputs(ctx, 2, 2, 5, 5, 4, 3)
    out, weights = impl.attention.scaled_dot_product_attention(q, k, v, causal=True)
    outputs.update(gate_values({"causal out for q, k (2, 2, 5, 4), v (2, 2, 5, 3)": out,
                           "causal weights for q, k (2, 2, 5, 4), v (2, 2, 5, 3)": weights}))
    return outputs


@check("attention", weight=1, description="float64 inputs give float64 output and weights (with and without "
                                          "causal=True)")
def float64_inputs(impl, ref, ctx):
    outputs = {}
    for n, m, causal in WITH_AND_WITHOUT_MASK:
        q, k, v = (t.double() for t in _inputs(ctx, 2, 3, n, m, 4, 6))
        out, weights = impl.attention.scaled_dot_product_attention(q, k, v, causal=causal)
        suffix = ", causal=True" if causal else ""
        outputs[f"out for float64 {_label(q, k, v)}{suffix}"] = out
        outputs[f"weights for float64 {_label(q, k, v)}{suffix}"] = weights
    return outputs


@check("attention", weight=1, verify=gated(what=WHAT), compare_reference=False,
       description="leaves q, k and v unchanged (no in-place operation on the caller's tensors)")
def inputs_unchanged(impl, ref, ctx):
    q, k, v = _inputs(ctx, 2, 3, 6, 6, 4, 5)
    before = {"q": q.clone(), "k": k.clone(), "v": v.clone()}
    out, weights = impl.attention.scaled_dot_product_attention(q, k, v)
    causal_out, _ = impl.attention.scaled_dot_product_attention(before["q"].clone(), before["k"].clone(),
                                                                 before["v"].clone(), causal=True)
    impl.attention.scaled_dot_product_attention(q, k, v, causal=True)
    return {"q after the calls": q, "k after the calls": k, "v after the calls": v,
            **gate_values({"out for q, k (2, 3, 6, 4), v (2, 3, 6, 5)": out,
                      "weights for q, k (2, 3, 6, 4), v (2, 3, 6, 5)": weights,
                      "causal out for q, k (2, 3, 6, 4), v (2, 3, 6, 5)": causal_out})}


@check("attention", weight=1, description="gradients of the output and the weights reach q, k and v (with and "
                                          "without causal=True)")
def gradients(impl, ref, ctx):
    outputs = {}
    for n, m, causal in WITH_AND_WITHOUT_MASK:
        q, k, v = (t.requires_grad_() for t in _inputs(ctx, 2, 3, n, m, 4, 6))
        out_probe, weights_probe = ctx.randn(2, 3, n, 6), ctx.randn(2, 3, n, m)
        out, weights = impl.attention.scaled_dot_product_attention(q, k, v, causal=causal)
        loss = (out * out_probe).sum() + (weights * weights_probe).sum()
        grads = (torch.autograd.grad(loss, (q, k, v), allow_unused=True) if loss.requires_grad
                 else (None, None, None))
        suffix = " with causal=True" if causal else ""
        for name, grad in zip("qkv", grads):
            outputs[f"gradient reaching {name}{suffix}"] = grad
    return outputs
