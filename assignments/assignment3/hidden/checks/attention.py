"""Hidden checks of scaled_dot_product_attention: values, weights, masking, shapes and errors.

Shapes are chosen so shortcuts cannot pass by accident: batch > 1, several heads, n != m, d_k != d_v,
d_k differing from heads * d_k, a single query, odd lengths. Float64 inputs, the inputs after the call and
the gradients reaching q, k and v are compared with the reference too.
"""

import torch

from autograder.probe import check, raised

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


@check("attention", weight=1, description="each row of the weights is non-negative and sums to 1 over the keys "
                                          "(with and without causal=True)",
       verify=_rows_sum_to_one, compare_reference=False)
def rows_sum_to_one(impl, ref, ctx):
    q, k, v = _inputs(ctx, 2, 4, 6, 11, 8, 8)
    _, weights = impl.attention.scaled_dot_product_attention(q, k, v)
    q, k, v = _inputs(ctx, 2, 3, 9, 9, 4, 4)
    _, causal_weights = impl.attention.scaled_dot_product_attention(q, k, v, causal=True)
    return {"weights for q (2, 4, 6, 8), k (2, 4, 11, 8)": weights,
            "weights with causal=True for q, k (2, 3, 9, 4)": causal_weights}


@check("attention", weight=2, description="causal=True: output and weights on square inputs of several shapes")
def causal_values(impl, ref, ctx):
    outputs = {}
    for batch, heads, n, d_k, d_v in CAUSAL_SHAPES:
        q, k, v = _inputs(ctx, batch, heads, n, n, d_k, d_v)
        out, weights = impl.attention.scaled_dot_product_attention(q, k, v, causal=True)
        outputs[f"causal out for {_label(q, k, v)}"] = out
        outputs[f"causal weights for {_label(q, k, v)}"] = weights
    return outputs


def _future_unchanged(student, reference, ctx):
    a, b = student["out"], student["out with the last key and value changed"]
    if a.shape != b.shape or a.dim() < 2:
        yield "the output's shape changed with the input values"
    elif not (torch.isfinite(a).all() and torch.isfinite(b).all()):
        yield "with causal=True, the output contains NaN or infinite values (is some query left with no key?)"
    elif not (a[..., :-1, :] - b[..., :-1, :]).abs().max() <= 1e-6:
        yield "with causal=True, changing the last key and value changed the outputs of earlier queries"
    elif not (a[..., -1, :] - b[..., -1, :]).abs().max() > 1e-3:
        yield "with causal=True, the last query must still see the last key and value"


@check("attention", weight=1, description="causal=True: a later key/value never changes earlier outputs, "
                                          "and every query sees its own position",
       verify=_future_unchanged, compare_reference=False)
def future_never_changes_past(impl, ref, ctx):
    q, k, v = _inputs(ctx, 2, 3, 8, 8, 4, 5)
    out, _ = impl.attention.scaled_dot_product_attention(q.clone(), k.clone(), v.clone(), causal=True)
    k2, v2 = k.clone(), v.clone()
    k2[..., -1, :] += 5.0
    v2[..., -1, :] -= 3.0
    out2, _ = impl.attention.scaled_dot_product_attention(q.clone(), k2, v2, causal=True)
    return {"out": out, "out with the last key and value changed": out2}


@check("attention", weight=1, description="works for any number of leading dimensions: (batch, n, d) inputs")
def three_dimensional(impl, ref, ctx):
    q, k, v = ctx.randn(3, 5, 4, scale=2.0), ctx.randn(3, 6, 4, scale=2.0), ctx.randn(3, 6, 2)
    out, weights = impl.attention.scaled_dot_product_attention(q, k, v)
    return {"out for q (3, 5, 4), k (3, 6, 4), v (3, 6, 2)": out,
            "weights for q (3, 5, 4), k (3, 6, 4), v (3, 6, 2)": weights}


@check("attention", weight=1, description="causal=True with a different number of queries and keys raises "
                                          "ValueError")
def causal_rejects_n_ne_m(impl, ref, ctx):
    outputs = {}
    for n, m in ((4, 6), (1, 3)):
        q, k, v = _inputs(ctx, 2, 2, n, m, 4, 4)
        outputs[f"exception for causal=True with n={n} queries, m={m} keys"] = raised(
            lambda: impl.attention.scaled_dot_product_attention(q, k, v, causal=True))
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


@check("attention", weight=1, tolerance="exact",
       description="leaves q, k and v unchanged (no in-place operation on the caller's tensors)")
def inputs_unchanged(impl, ref, ctx):
    q, k, v = _inputs(ctx, 2, 3, 6, 6, 4, 5)
    impl.attention.scaled_dot_product_attention(q, k, v)
    impl.attention.scaled_dot_product_attention(q, k, v, causal=True)
    return {"q after the calls": q, "k after the calls": k, "v after the calls": v}


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
