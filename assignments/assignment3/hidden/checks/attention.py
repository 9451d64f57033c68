"""Hidden checks of scaled_dot_product_attention: values, weights, masking and shapes."""

from autograder.probe import check

SHAPES = [  # (batch, heads, n, m, d_k, d_v): non-square, n != m, d_k != d_v, a single query
    (3, 4, 7, 10, 8, 6),
    (2, 3, 1, 5, 16, 4),
    (1, 2, 9, 9, 5, 7),
]


def _inputs(ctx, batch, heads, n, m, d_k, d_v):
    return ctx.randn(batch, heads, n, d_k, scale=2.0), ctx.randn(batch, heads, m, d_k, scale=2.0), \
        ctx.randn(batch, heads, m, d_v)


@check("attention", weight=3, description="output and weights on random inputs of several shapes (n != m)")
def random_values(impl, ref, ctx):
    outputs = {}
    for shape in SHAPES:
        q, k, v = _inputs(ctx, *shape)
        out, weights = impl.attention.scaled_dot_product_attention(q, k, v)
        label = f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
        outputs[f"out for {label}"] = out
        outputs[f"weights for {label}"] = weights
    return outputs


def _rows_sum_to_one(student, reference, ctx):
    for name, weights in student.items():
        if name.startswith("weights"):
            total = weights.double().sum(-1)
            if (total - 1).abs().max() > 1e-4:
                yield f"{name}: rows must sum to 1, found sums up to {float(total.max()):.4g}"


@check("attention", weight=1, description="each row of the weights sums to 1 over the keys",
       verify=_rows_sum_to_one, compare_reference=False)
def rows_sum_to_one(impl, ref, ctx):
    q, k, v = _inputs(ctx, 2, 4, 6, 11, 8, 8)
    _, weights = impl.attention.scaled_dot_product_attention(q, k, v)
    return {"weights": weights}


@check("attention", weight=2, description="causal=True: values and weights on square inputs")
def causal_values(impl, ref, ctx):
    outputs = {}
    for batch, heads, n, d_k, d_v in [(3, 4, 7, 8, 6), (2, 1, 1, 4, 4), (1, 2, 12, 5, 3)]:
        q, k, v = _inputs(ctx, batch, heads, n, n, d_k, d_v)
        out, weights = impl.attention.scaled_dot_product_attention(q, k, v, causal=True)
        outputs[f"causal out for n={n}"] = out
        outputs[f"causal weights for n={n}"] = weights
    return outputs


def _future_unchanged(student, reference, ctx):
    a, b = student["out"], student["out with last token changed"]
    if a.shape != b.shape:
        yield "output shape changed with the input values"
    elif not (a[..., :-1, :] - b[..., :-1, :]).abs().max() <= 1e-6:
        yield "with causal=True, changing the last key and value changed the outputs of earlier queries"


@check("attention", weight=1, description="causal=True: changing a later token never changes earlier outputs",
       verify=_future_unchanged, compare_reference=False)
def future_never_changes_past(impl, ref, ctx):
    q, k, v = _inputs(ctx, 2, 3, 8, 8, 4, 5)
    out, _ = impl.attention.scaled_dot_product_attention(q.clone(), k.clone(), v.clone(), causal=True)
    k2, v2 = k.clone(), v.clone()
    k2[..., -1, :] += 5.0
    v2[..., -1, :] -= 3.0
    out2, _ = impl.attention.scaled_dot_product_attention(q.clone(), k2, v2, causal=True)
    return {"out": out, "out with last token changed": out2}


@check("attention", weight=1, description="three leading dimensions are not required: works on (batch, n, d) too")
def three_dimensional(impl, ref, ctx):
    q, k, v = ctx.randn(3, 5, 4), ctx.randn(3, 6, 4), ctx.randn(3, 6, 2)
    out, weights = impl.attention.scaled_dot_product_attention(q, k, v)
    return {"out": out, "weights": weights}
