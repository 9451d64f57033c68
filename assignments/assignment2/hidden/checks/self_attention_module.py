"""Hidden checks of modules.SelfAttention: values (3-D and 2-D inputs, with and without bias), structure.

Every layer is built after ctx.seed_torch(), then ctx.init_module gives it seeded, distinct weights (seeded by
parameter name, so the student's W_q, W_k, W_v get the same values as the reference's). d_in != d_out in
most shapes, so a scale by sqrt(d_in) or a projection of the wrong size cannot pass by accident. Large inputs
(scores in the hundreds to thousands, "deep" tolerance) catch a softmax written without subtracting the maximum.
The equivariance and structure checks are gated on the values (probe.gated). The value checks run in train
mode; eval mode is checked on a fresh layer and when called again (_layer_again).
"""

import torch
from _layer_again import (
    AGAIN,
    AGAIN_IN_EVAL_MODE,
    layer_called_again,
    layer_called_again_in_eval_mode,
)

from autograder.probe import check, gate_values, gate_values_of, gated, same_as_fresh

SHAPES = [  # (d_in, d_out, batch, n)
    (4, 6, 2, 5),
    (6, 3, 3, 7),
    (5, 5, 2, 1),
    (3, 8, 1, 9),
]
INIT_SCALE = 0.5


WHAT = "SelfAttention"


def _layer(impl, ctx, d_in, d_out, **kwargs):
    ctx.seed_torch()
    return ctx.init_module(impl.modules.SelfAttention(d_in, d_out, **kwargs), scale=INIT_SCALE)


def _ordinary_call(impl, ctx):
    layer = _layer(impl, ctx, 5, 3)
    with torch.no_grad():
        return {"SelfAttention(5, 3)(x of shape (2, 6, 5))": layer(ctx.randn(2, 6, 5))}


def _gate(impl, ctx):
    """The gate values of one ordinary call (autograder.probe.gating); an exception there fails the check."""
    return gate_values_of(lambda: _ordinary_call(impl, ctx))


@check("self_attention_module", weight=3, description="forward for several (d_in, d_out) and sequence lengths "
                                                      "(incl. a single token) on (batch, n, d_in) inputs")
def values(impl, ref, ctx):
    outputs = {}
    for d_in, d_out, batch, n in SHAPES:
        layer = _layer(impl, ctx, d_in, d_out)
        x = ctx.randn(batch, n, d_in)
        outputs[f"SelfAttention({d_in}, {d_out})(x of shape {(batch, n, d_in)})"] = layer(x)
    return outputs


@check("self_attention_module", weight=1, description="forward on an unbatched (n, d_in) input and with "
                                                      "bias=True")
def unbatched_and_bias(impl, ref, ctx):
    layer = _layer(impl, ctx, 4, 6)
    with_bias = _layer(impl, ctx, 5, 3, bias=True)
    return {"SelfAttention(4, 6)(x of shape (7, 4))": layer(ctx.randn(7, 4)),
            "SelfAttention(5, 3, bias=True)(x of shape (2, 6, 5))": with_bias(ctx.randn(2, 6, 5))}


def _equivariant(student, reference, ctx):
    out, permuted, order = student["forward"], student["forward of permuted tokens"], student["order"]
    if out.shape != permuted.shape or out.dim() != 3:
        yield f"forward must return shape (batch, n, d_out), got {tuple(permuted.shape)}"
    elif not torch.allclose(permuted, out[:, order], rtol=1e-4, atol=1e-5):
        yield "permuting the input tokens must permute the outputs the same way (no mask in SelfAttention)"


@check("self_attention_module", weight=1, verify=gated(_equivariant, what=WHAT), compare_reference=False,
       description="permuting the tokens permutes the outputs (permutation equivariance)")
def permutation_equivariance(impl, ref, ctx):
    layer = _layer(impl, ctx, 6, 4)
    x = ctx.randn(2, 7, 6)
    order = torch.randperm(7, generator=ctx.generator)
    with torch.no_grad():
        forward = layer(x)
        return {"forward": forward, "forward of permuted tokens": layer(x[:, order].contiguous()), "order": order,
                **gate_values({"SelfAttention(6, 4)(x of shape (2, 7, 6))": forward})}


@check("self_attention_module", weight=1, verify=gated(what=WHAT), compare_reference=False,
       description="W_q, W_k, W_v are nn.Linear(d_in, d_out) with a bias exactly when bias=True, and the layer "
                   "has no other parameters")
def structure(impl, ref, ctx):
    outputs = {}
    for bias in (False, True):
        ctx.seed_torch()
        layer = impl.modules.SelfAttention(5, 7, bias=bias)
        label = f"SelfAttention(5, 7, bias={bias})"
        for name in ("W_q", "W_k", "W_v"):
            proj = getattr(layer, name, None)
            outputs[f"type of {label}.{name}"] = type(proj).__name__
            outputs[f"(in, out) features of {label}.{name}"] = [getattr(proj, "in_features", None),
                                                                 getattr(proj, "out_features", None)]
            outputs[f"{label}.{name} has a bias"] = getattr(proj, "bias", None) is not None
        outputs[f"parameter names of {label}"] = sorted(name for name, _ in layer.named_parameters())
    outputs.update(_gate(impl, ctx))
    return outputs


LARGE_SCALE = 20.0  # x ~ N(0, 20^2): scores ~ 0.25 * d_in * 400, hundreds to thousands


@check("self_attention_module", weight=2, tolerance="deep",
       description="large inputs (attention scores in the hundreds to thousands): finite, correct outputs")
def large_scores(impl, ref, ctx):
    outputs = {}
    for d_in, d_out, batch, n in ((6, 4, 2, 7), (8, 5, 3, 5)):
        layer = _layer(impl, ctx, d_in, d_out)
        with torch.no_grad():
            outputs[f"SelfAttention({d_in}, {d_out})(large x of shape {(batch, n, d_in)})"] = \
                layer(ctx.randn(batch, n, d_in, scale=LARGE_SCALE))
    return outputs


@check("self_attention_module", weight=1, compare_reference=False, verify=same_as_fresh(WHAT), description=AGAIN)
def called_again(impl, ref, ctx):
    return layer_called_again(lambda: _layer(impl, ctx, 5, 4), ctx, (2, 6, 5), (2, 4, 5),
                              "SelfAttention(5, 4)")


@check("self_attention_module", weight=1, compare_reference=False, verify=same_as_fresh(WHAT),
       description=AGAIN_IN_EVAL_MODE)
def eval_mode_called_again(impl, ref, ctx):
    return layer_called_again_in_eval_mode(lambda: _layer(impl, ctx, 5, 4), ctx, (2, 6, 5), (2, 4, 5),
                                           "SelfAttention(5, 4)")
