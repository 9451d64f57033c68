"""Hidden checks of modules.MultiHeadCausalAttentionStacked: values, eval mode, structure, errors.

The student's layer runs with the reference CausalSelfAttention as its heads. Every layer is built after
ctx.seed_torch(), then ctx.init_module gives it seeded, distinct weights (by parameter name: heads.0.W_q.weight,
..., out_proj.weight). Shapes include one head, d_in != d_out, head width 1 and a single token. The causality,
structure and ValueError checks are gated on the values (probe.gated): a layer that computes nothing cannot earn
them.
"""

import torch
from _layer_again import (
    AGAIN,
    AGAIN_IN_EVAL_MODE,
    layer_called_again,
    layer_called_again_in_eval_mode,
)

from autograder.probe import (
    check,
    future_unchanged,
    gate_values,
    gate_values_of,
    gated,
    raised,
    same_as_fresh,
)

SHAPES = [  # (d_in, d_out, context_length, n_heads, batch, n, bias)
    (6, 12, 8, 3, 2, 5, False),
    (8, 8, 6, 2, 3, 6, False),
    (5, 4, 4, 1, 2, 1, False),
    (4, 6, 10, 6, 1, 9, False),
    (7, 10, 7, 2, 2, 7, True),
]
INIT_SCALE = 0.5


def _layer(impl, ctx, d_in, d_out, context_length, n_heads, dropout=0.0, bias=False):
    ctx.seed_torch()
    layer = impl.modules.MultiHeadCausalAttentionStacked(d_in, d_out, context_length, n_heads, dropout=dropout,
                                                        bias=bias)
    return ctx.init_module(layer, scale=INIT_SCALE)


WHAT = "MultiHeadCausalAttentionStacked"


def _ordinary_call(impl, ctx):
    layer = _layer(impl, ctx, 6, 8, 8, 2)
    with torch.no_grad():
        return {"MultiHeadCausalAttentionStacked(6, 8, 8, 2, dropout=0.0)(x of shape (2, 5, 6))":
                layer(ctx.randn(2, 5, 6))}


def _gate(impl, ctx):
    """The gate values of one ordinary call (autograder.probe.gating); an exception there fails the check."""
    return gate_values_of(lambda: _ordinary_call(impl, ctx))



@check("multi_head_stacked", weight=3,
       description="forward with dropout=0 for several (d_in, d_out, n_heads) incl. one head, head width 1, a "
                   "single token and bias=True")
def values(impl, ref, ctx):
    outputs = {}
    for d_in, d_out, context_length, n_heads, batch, n, bias in SHAPES:
        layer = _layer(impl, ctx, d_in, d_out, context_length, n_heads, bias=bias)
        x = ctx.randn(batch, n, d_in)
        call = f"MultiHeadCausalAttentionStacked({d_in}, {d_out}, {context_length}, {n_heads}, dropout=0.0, " \
               f"bias={bias})"
        outputs[f"{call}(x of shape {(batch, n, d_in)})"] = layer(x)
    return outputs


def _same_twice(student, reference, ctx):
    first, second = student["first call"], student["second call"]
    if first.shape != second.shape or not torch.equal(first, second):
        yield "in eval mode two calls on the same input must give the same output"


@check("multi_head_stacked", weight=1, verify=_same_twice,
       description="in eval mode with dropout=0.3 the output is deterministic and equals the attention without "
                   "dropout")
def eval_mode(impl, ref, ctx):
    layer = _layer(impl, ctx, 6, 8, 8, 2, dropout=0.3).eval()
    x = ctx.randn(3, 8, 6)
    with torch.no_grad():
        return {"first call": layer(x), "second call": layer(x)}


# Causality, the ready-made way: earlier positions' outputs never move when only the last input changes.
_future_unchanged = future_unchanged("forward", "forward with the last token changed", shape="(batch, n, d_out)",
                                     atol=1e-5)


@check("multi_head_stacked", weight=1, verify=gated(_future_unchanged, what=WHAT), compare_reference=False,
       description="changing a later token never changes the outputs of earlier tokens")
def causality(impl, ref, ctx):
    layer = _layer(impl, ctx, 6, 12, 8, 3).eval()
    x = ctx.randn(2, 7, 6)
    changed = x.clone()
    changed[:, -1] += ctx.randn(2, 6, scale=3.0)
    with torch.no_grad():
        forward = layer(x)
        return {"forward": forward, "forward with the last token changed": layer(changed),
                **gate_values({"MultiHeadCausalAttentionStacked(6, 12, 8, 3).eval()(x of shape (2, 7, 6))": forward})}


@check("multi_head_stacked", weight=2, verify=gated(what=WHAT), compare_reference=False,
       description="heads is an nn.ModuleList of n_heads distinct CausalSelfAttention(d_in, d_out // n_heads, "
                   "context_length, dropout, bias); out_proj is nn.Linear(d_out, d_out) with a bias")
def structure(impl, ref, ctx):
    outputs = {}
    for d_in, d_out, context_length, n_heads, dropout, bias in ((5, 12, 7, 3, 0.25, False),
                                                                 (4, 6, 5, 2, 0.0, True)):
        ctx.seed_torch()
        layer = impl.modules.MultiHeadCausalAttentionStacked(d_in, d_out, context_length, n_heads,
                                                             dropout=dropout, bias=bias)
        label = f"MultiHeadCausalAttentionStacked({d_in}, {d_out}, {context_length}, {n_heads}, " \
                f"dropout={dropout}, bias={bias})"
        heads = getattr(layer, "heads", None)
        outputs[f"type of {label}.heads"] = type(heads).__name__
        head_list = list(heads) if isinstance(heads, torch.nn.ModuleList) else []
        outputs[f"number of {label}.heads"] = len(head_list)
        outputs[f"{label}.heads are distinct modules"] = len({id(h) for h in head_list}) == len(head_list)
        outputs[f"types of {label}.heads"] = [type(h).__name__ for h in head_list]
        outputs[f"(in, out) features of W_q in {label}.heads"] = [
            [getattr(getattr(h, "W_q", None), "in_features", None), getattr(getattr(h, "W_q", None),
                                                                            "out_features", None)]
            for h in head_list]
        outputs[f"W_q of {label}.heads has a bias"] = [getattr(getattr(h, "W_q", None), "bias", None) is not None
                                                        for h in head_list]
        outputs[f"dropout p of {label}.heads"] = [float(getattr(getattr(h, "dropout", None), "p", -1.0))
                                                   for h in head_list]
        outputs[f"mask shape of {label}.heads"] = [[int(s) for s in getattr(getattr(h, "mask", None), "shape", ())]
                                                    for h in head_list]
        out_proj = getattr(layer, "out_proj", None)
        outputs[f"type of {label}.out_proj"] = type(out_proj).__name__
        outputs[f"(in, out) features of {label}.out_proj"] = [getattr(out_proj, "in_features", None),
                                                              getattr(out_proj, "out_features", None)]
        outputs[f"{label}.out_proj has a bias"] = getattr(out_proj, "bias", None) is not None
    outputs.update(_gate(impl, ctx))
    return outputs


@check("multi_head_stacked", weight=1, verify=gated(what=WHAT), compare_reference=False,
       description="raises ValueError when n_heads does not divide d_out")
def errors(impl, ref, ctx):
    ctx.seed_torch()
    build = impl.modules.MultiHeadCausalAttentionStacked
    outputs = {f"exception for MultiHeadCausalAttentionStacked(4, {d_out}, 6, {n_heads})": raised(
        lambda: build(4, d_out, 6, n_heads)) for d_out, n_heads in ((10, 4), (9, 2))}
    return {**outputs, **_gate(impl, ctx)}


@check("multi_head_stacked", weight=1, compare_reference=False, verify=same_as_fresh(WHAT), description=AGAIN)
def called_again(impl, ref, ctx):
    return layer_called_again(lambda: _layer(impl, ctx, 5, 6, 8, 2), ctx, (2, 5, 5), (2, 8, 5),
                              "MultiHeadCausalAttentionStacked(5, 6, 8, 2)")


@check("multi_head_stacked", weight=1, compare_reference=False, verify=same_as_fresh(WHAT),
       description=AGAIN_IN_EVAL_MODE)
def eval_mode_called_again(impl, ref, ctx):
    return layer_called_again_in_eval_mode(lambda: _layer(impl, ctx, 5, 6, 8, 2, dropout=0.3), ctx, (2, 5, 5),
                                           (2, 8, 5), "MultiHeadCausalAttentionStacked(5, 6, 8, 2, dropout=0.3)")
