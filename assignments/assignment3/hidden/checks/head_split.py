"""Hidden checks of split_heads and merge_heads: values, the head layout, round trips and errors.

Shapes have batch > 1, sequence lengths different from the head size, a single token, odd sizes, and
one head of size 1, so a split without the transpose or an interleaved split cannot pass by accident. The
ValueError check is gated on split_heads' values (probe.gated): a function that always raises earns nothing.
"""

import torch

from autograder.probe import check, gate_values, gate_values_of, gated, raised

SPLIT_SHAPES = [  # (batch, n, dim, heads)
    (2, 5, 12, 3),
    (3, 7, 32, 4),
    (2, 1, 6, 2),
    (1, 3, 5, 5),
]
MERGE_SHAPES = [  # (batch, heads, n, d)
    (2, 3, 5, 4),
    (3, 4, 7, 8),
    (2, 2, 1, 3),
    (1, 5, 3, 1),
]



@check("head_split", weight=2, tolerance="exact",
       description="split_heads(x, heads) on inputs of several shapes: values and shape (batch, heads, n, d)")
def split_values(impl, ref, ctx):
    outputs = {}
    for batch, n, dim, heads in SPLIT_SHAPES:
        x = ctx.randn(batch, n, dim)
        outputs[f"split_heads(x of shape {(batch, n, dim)}, heads={heads})"] = impl.attention.split_heads(x, heads)
    return outputs


def _head_layout(student, reference, ctx):
    x, split = reference["x"], student["split"]  # the input as the trusted parent made it, not as it came back
    heads, d = 4, 3
    if tuple(split.shape) != (2, heads, 5, d):
        yield f"split_heads(x of shape (2, 5, 12), heads=4) must have shape (2, 4, 5, 3), got {tuple(split.shape)}"
        return
    for h in range(heads):
        if not torch.equal(split[:, h], x[..., h * d:(h + 1) * d]):
            yield f"head {h} must hold features {h * d}..{(h + 1) * d - 1} of every token, in order"
            return


@check("head_split", weight=1, verify=_head_layout, compare_reference=False,
       description="split_heads gives head h the consecutive features h*d .. (h+1)*d - 1 of every token")
def split_layout(impl, ref, ctx):
    x = ctx.randn(2, 5, 12)
    return {"x": x, "split": impl.attention.split_heads(x.clone(), 4)}


@check("head_split", weight=2, tolerance="exact",
       description="merge_heads(x) on inputs of several shapes: values and shape (batch, n, heads * d)")
def merge_values(impl, ref, ctx):
    outputs = {}
    for batch, heads, n, d in MERGE_SHAPES:
        x = ctx.randn(batch, heads, n, d)
        outputs[f"merge_heads(x of shape {(batch, heads, n, d)})"] = impl.attention.merge_heads(x)
    return outputs


def _round_trips(student, reference, ctx):
    for name in ("merge_heads(split_heads(x, 3))", "split_heads(merge_heads(y), 3)"):
        original = reference["x"] if name.startswith("merge") else reference["y"]
        back = student[name]
        if tuple(back.shape) != tuple(original.shape):
            yield f"{name} must have the shape of its input {tuple(original.shape)}, got {tuple(back.shape)}"
        elif not torch.equal(back, original):
            yield f"{name} must give back its input exactly"


@check("head_split", weight=1, verify=gated(_round_trips, what="split_heads and merge_heads"),
       compare_reference=False,
       description="merge_heads undoes split_heads and split_heads undoes merge_heads, exactly")
def round_trip(impl, ref, ctx):
    x, y = ctx.randn(3, 7, 12), ctx.randn(2, 3, 5, 4)
    # An echo of the input round-trips too: the property counts only once both functions compute their values.
    gate = gate_values_of(lambda: {"split_heads(x of shape (3, 7, 12), 3)": impl.attention.split_heads(x.clone(), 3),
                                   "merge_heads(y of shape (2, 3, 5, 4))": impl.attention.merge_heads(y.clone())})
    return {
        "x": x,
        "y": y,
        "merge_heads(split_heads(x, 3))": impl.attention.merge_heads(impl.attention.split_heads(x.clone(), 3)),
        "split_heads(merge_heads(y), 3)": impl.attention.split_heads(impl.attention.merge_heads(y.clone()), 3),
        **gate,
    }


@check("head_split", weight=1, verify=gated(what="split_heads"), compare_reference=False,
       description="split_heads raises ValueError when heads does not divide dim")
def split_rejects_bad_heads(impl, ref, ctx):
    outputs = {}
    for dim, heads in ((10, 4), (12, 5)):
        x = ctx.randn(2, 3, dim)
        outputs[f"exception for split_heads with dim={dim}, heads={heads}"] = raised(
            lambda: impl.attention.split_heads(x, heads))
    x = ctx.randn(2, 3, 12)
    outputs.update(gate_values({"split_heads(x of shape (2, 3, 12), heads=4)": impl.attention.split_heads(x, 4)}))
    return outputs
