"""Hidden checks of MultiHeadAttention: self-, cross- and causal attention, weights, structure and errors.

Every layer is built as MultiHeadAttention(dim, heads) after ctx.seed_torch(), then ctx.init_module gives it
seeded, distinct weights (seeded by parameter name, so the reference layer gets the same ones). The student's
layer runs with the reference scaled_dot_product_attention, causal_mask, split_heads and merge_heads.

Large scores: layers on large inputs (x scaled by LARGE_SCALE) have attention scores in the hundreds to thousands;
attention written inside the class must stay finite and mask with -inf there (compared with the "deep"
tolerance: at a score of magnitude S a correct float32 softmax carries a relative error of ~S * 2**-24).

Property checks (causality, equivariance, weights agreeing with forward, structure, the ValueError) are gated on
the values (probe.gated): a layer that computes nothing cannot earn them.

Both sides of every mode: the value checks run in train mode, with and without autograd; eval mode (as when
generating) is checked on a fresh layer and when called again, and training by gradients and one SGD step (_modes).
"""

import torch
from _modes import called_again_in_eval_mode, forward_with_causal, one_training_step

from autograder.probe import (
    called_twice,
    check,
    future_unchanged,
    gate_values,
    gate_values_of,
    gated,
    raised,
    same_as_fresh,
)

SELF_SHAPES = [  # (dim, heads, batch, n): head size != dim, n != head size, a single token, odd lengths
    (12, 3, 2, 5),
    (32, 4, 3, 7),
    (10, 2, 2, 1),
    (6, 6, 1, 9),
]
CROSS_SHAPES = [  # (dim, heads, batch, n, m) with n != m
    (12, 3, 2, 5, 8),
    (16, 4, 3, 1, 6),
    (8, 2, 1, 7, 3),
]
CAUSAL_SHAPES = [(12, 3, 2, 6), (16, 2, 3, 9), (8, 4, 1, 1)]  # (dim, heads, batch, n)
INIT_SCALE = 0.3


WHAT = "MultiHeadAttention"
LARGE_SCALE = 25.0  # x ~ N(0, 25^2): scores ~ 25^2 times those of x ~ N(0, 1), i.e. hundreds to thousands


def _layer(impl, ctx, dim, heads):
    ctx.seed_torch()
    return ctx.init_module(impl.attention.MultiHeadAttention(dim, heads), scale=INIT_SCALE)


def _ordinary_call(impl, ctx):
    """The values of one ordinary self-attention and one causal forward (see autograder.probe.gating)."""
    layer = _layer(impl, ctx, 12, 3)
    x = ctx.randn(2, 5, 12)
    with torch.no_grad():
        return {"MultiHeadAttention(12, 3)(x of shape (2, 5, 12))": layer(x),
                "MultiHeadAttention(12, 3)(x of shape (2, 5, 12), causal=True)": layer(x, causal=True)}


def _gate_values(impl, ctx):
    """The gate values of one ordinary call (autograder.probe.gating); an exception there fails the check."""
    return gate_values_of(lambda: _ordinary_call(impl, ctx))



@check("multi_head_attention", weight=3,
       description="self-attention forward for several (dim, heads) and sequence lengths (incl. a single token)")
def self_attention_values(impl, ref, ctx):
    outputs = {}
    for dim, heads, batch, n in SELF_SHAPES:
        layer = _layer(impl, ctx, dim, heads)
        x = ctx.randn(batch, n, dim)
        outputs[f"MultiHeadAttention({dim}, {heads})(x of shape {(batch, n, dim)})"] = layer(x)
    return outputs


@check("multi_head_attention", weight=1,
       description="cross-attention with a context as long as x: queries from x, keys and values from context")
def cross_attention_same_length(impl, ref, ctx):
    dim, heads, batch, n = 12, 3, 2, 6
    layer = _layer(impl, ctx, dim, heads)
    x, context = ctx.randn(batch, n, dim), ctx.randn(batch, n, dim)
    call = f"MultiHeadAttention({dim}, {heads}) with x {(batch, n, dim)}, context {(batch, n, dim)}"
    return {f"forward of {call}": layer(x, context=context),
            f"attention_weights of {call}": layer.attention_weights(x, context=context)}


@check("multi_head_attention", weight=2,
       description="cross-attention: queries from x, keys and values from context (n != m), forward and "
                   "attention_weights")
def cross_attention_values(impl, ref, ctx):
    outputs = {}
    for dim, heads, batch, n, m in CROSS_SHAPES:
        layer = _layer(impl, ctx, dim, heads)
        x, context = ctx.randn(batch, n, dim), ctx.randn(batch, m, dim)
        call = f"MultiHeadAttention({dim}, {heads}) with x {(batch, n, dim)}, context {(batch, m, dim)}"
        outputs[f"forward of {call}"] = layer(x, context=context)
        outputs[f"attention_weights of {call}"] = layer.attention_weights(x, context=context)
    return outputs


@check("multi_head_attention", weight=2,
       description="causal=True: forward and attention_weights for several shapes")
def causal_values(impl, ref, ctx):
    outputs = {}
    for dim, heads, batch, n in CAUSAL_SHAPES:
        layer = _layer(impl, ctx, dim, heads)
        x = ctx.randn(batch, n, dim)
        call = f"MultiHeadAttention({dim}, {heads}) with x {(batch, n, dim)}, causal=True"
        outputs[f"forward of {call}"] = layer(x, causal=True)
        outputs[f"attention_weights of {call}"] = layer.attention_weights(x, causal=True)
    return outputs


# Causality, the ready-made way: earlier positions' outputs never move when only the last input changes.
_future_unchanged = future_unchanged("forward", "forward with the last token changed", shape="(batch, n, dim)",
                                     atol=1e-5, when="with causal=True")


@check("multi_head_attention", weight=1, verify=gated(_future_unchanged, what=WHAT), compare_reference=False,
       description="causal=True: changing a later token never changes the outputs of earlier tokens")
def causal_future_never_changes_past(impl, ref, ctx):
    layer = _layer(impl, ctx, 12, 3)
    x = ctx.randn(2, 7, 12)
    changed = x.clone()
    changed[:, -1] += ctx.randn(2, 12, scale=3.0)
    with torch.no_grad():
        forward = layer(x, causal=True)
        return {"forward": forward, "forward with the last token changed": layer(changed, causal=True),
                **gate_values({"MultiHeadAttention(12, 3)(x of shape (2, 7, 12), causal=True)": forward})}


def _weights_match_forward(student, reference, ctx):
    for case in ("self-attention", "cross-attention", "causal self-attention"):
        weights, forward, rebuilt = (student[f"{case}: {part}"] for part in ("weights", "forward", "rebuilt"))
        expected_shape = tuple(reference[f"{case}: weights"].shape)
        if tuple(weights.shape) != expected_shape:
            yield f"{case}: attention_weights must have shape (batch, heads, n, m) = {expected_shape}, " \
                  f"got {tuple(weights.shape)}"
        elif not torch.isfinite(weights).all():
            yield f"{case}: attention_weights contains NaN or infinite values"
        elif not (weights.double().sum(-1) - 1).abs().max() <= 1e-4:
            yield f"{case}: each row of attention_weights must sum to 1"
        elif forward.shape != rebuilt.shape:
            yield f"{case}: forward must return shape (batch, n, dim) = {tuple(rebuilt.shape)}, got {tuple(forward.shape)}"
        elif not torch.allclose(rebuilt.double(), forward.double(), rtol=1e-4, atol=1e-5):
            yield f"{case}: forward must equal out_proj(merged heads of attention_weights times the values)"


@check("multi_head_attention", weight=2, verify=gated(_weights_match_forward, what=WHAT), compare_reference=False,
       description="attention_weights has shape (batch, heads, n, m), rows summing to 1, and agrees with forward "
                   "(self, cross and causal)")
def weights_agree_with_forward(impl, ref, ctx):
    dim, heads, batch, n, m = 12, 3, 2, 5, 7
    layer = _layer(impl, ctx, dim, heads)
    x, context = ctx.randn(batch, n, dim), ctx.randn(batch, m, dim)
    outputs = {}
    for case, source, kwargs in (("self-attention", x, {}), ("cross-attention", context, {"context": context}),
                                 ("causal self-attention", x, {"causal": True})):
        with torch.no_grad():
            weights = layer.attention_weights(x, **kwargs)
            forward = layer(x, **kwargs)
            if weights.shape == (batch, heads, n, source.shape[1]):
                value_heads = layer.v_proj(source).view(batch, -1, heads, dim // heads).transpose(1, 2)
                mixed = (weights @ value_heads).transpose(1, 2).reshape(batch, n, dim)
                rebuilt = layer.out_proj(mixed)
            else:
                rebuilt = torch.full_like(forward, float("nan"))
        outputs[f"{case}: weights"] = weights
        outputs[f"{case}: forward"] = forward
        outputs[f"{case}: rebuilt"] = rebuilt
        outputs.update(gate_values({f"{case}: forward of MultiHeadAttention(12, 3) with x (2, 5, 12)": forward}))
    return outputs


def _equivariant(student, reference, ctx):
    out, permuted_out, order = student["forward"], student["forward of permuted tokens"], student["order"]
    if out.shape != permuted_out.shape or out.dim() != 3:
        yield f"forward must return shape (batch, n, dim), got {tuple(permuted_out.shape)}"
    elif not torch.allclose(permuted_out, out[:, order], rtol=1e-4, atol=1e-5):
        yield "without a mask, permuting the input tokens must permute the outputs the same way"


@check("multi_head_attention", weight=1, verify=gated(_equivariant, what=WHAT), compare_reference=False,
       description="without a mask, permuting the tokens permutes the outputs (permutation equivariance)")
def permutation_equivariance(impl, ref, ctx):
    layer = _layer(impl, ctx, 16, 4)
    x = ctx.randn(2, 7, 16)
    order = torch.randperm(7, generator=ctx.generator)
    with torch.no_grad():
        forward = layer(x)
        return {"forward": forward, "forward of permuted tokens": layer(x[:, order].contiguous()), "order": order,
                **gate_values({"MultiHeadAttention(16, 4)(x of shape (2, 7, 16))": forward})}


@check("multi_head_attention", weight=1, verify=gated(what=WHAT), compare_reference=False,
       description="the layer has `heads` and four different nn.Linear(dim, dim) projections with bias: q_proj, "
                   "k_proj, v_proj, out_proj")
def structure(impl, ref, ctx):
    ctx.seed_torch()
    layer = impl.attention.MultiHeadAttention(12, 3)
    outputs = {"layer.heads": getattr(layer, "heads", None)}
    for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
        proj = getattr(layer, name, None)
        outputs[f"type of layer.{name}"] = type(proj).__name__
        weight, bias = getattr(proj, "weight", None), getattr(proj, "bias", None)
        outputs[f"shape of layer.{name}.weight"] = [int(s) for s in getattr(weight, "shape", ())]
        outputs[f"layer.{name} has a bias"] = bias is not None
    projections = [getattr(layer, name, None) for name in ("q_proj", "k_proj", "v_proj", "out_proj")]
    outputs["q_proj, k_proj, v_proj and out_proj are four different modules"] = len({id(p) for p in projections}) == 4
    outputs.update(_gate_values(impl, ctx))
    return outputs


@check("multi_head_attention", weight=1, verify=gated(what=WHAT), compare_reference=False,
       description="MultiHeadAttention(dim, heads) raises ValueError when heads does not divide dim")
def rejects_bad_heads(impl, ref, ctx):
    ctx.seed_torch()
    outputs = {f"exception for MultiHeadAttention({dim}, {heads})": raised(
        lambda: impl.attention.MultiHeadAttention(dim, heads)) for dim, heads in ((10, 4), (12, 5))}
    return {**outputs, **_gate_values(impl, ctx)}


LARGE_SHAPES = [(12, 3, 2, 5, 8), (16, 2, 3, 7, 4)]  # (dim, heads, batch, n, m): cross-attention with n != m
CAUSAL_LARGE_SHAPES = [(12, 3, 2, 6), (20, 4, 1, 9)]  # (dim, heads, batch, n)


@check("multi_head_attention", weight=2, tolerance="deep",
       description="large inputs (attention scores in the hundreds to thousands): self- and cross-attention, "
                   "forward and attention_weights stay finite and correct")
def large_scores(impl, ref, ctx):
    outputs = {}
    for dim, heads, batch, n, m in LARGE_SHAPES:
        layer = _layer(impl, ctx, dim, heads)
        x, context = ctx.randn(batch, n, dim, scale=LARGE_SCALE), ctx.randn(batch, m, dim, scale=LARGE_SCALE)
        label = f"MultiHeadAttention({dim}, {heads}) with large x {(batch, n, dim)}"
        with torch.no_grad():
            outputs[f"forward of {label}"] = layer(x)
            outputs[f"attention_weights of {label}"] = layer.attention_weights(x)
            outputs[f"forward of {label}, large context {(batch, m, dim)}"] = layer(x, context=context)
    return outputs


@check("multi_head_attention", weight=2, tolerance="deep",
       description="causal=True with large inputs (scores in the thousands): future tokens get no weight however "
                   "large their scores")
def causal_large_scores(impl, ref, ctx):
    outputs = {}
    for dim, heads, batch, n in CAUSAL_LARGE_SHAPES:
        layer = _layer(impl, ctx, dim, heads)
        x = ctx.randn(batch, n, dim, scale=2 * LARGE_SCALE)
        label = f"MultiHeadAttention({dim}, {heads}) with large x {(batch, n, dim)}, causal=True"
        with torch.no_grad():
            outputs[f"forward of {label}"] = layer(x, causal=True)
            outputs[f"attention_weights of {label}"] = layer.attention_weights(x, causal=True)
    return outputs


def _forward_and_weights(layer, x):
    with torch.no_grad():
        return [layer(x), layer(x, causal=True), layer.attention_weights(x)]


@check("multi_head_attention", weight=1, compare_reference=False, verify=same_as_fresh(WHAT),
       description="a layer called again (another length, then the first input) gives what a fresh layer gives: "
                   "nothing kept on the layer from one call changes the next")
def called_again(impl, ref, ctx):
    first = ctx.randn(2, 5, 12)
    return called_twice(lambda: _layer(impl, ctx, 12, 3), _forward_and_weights,
                        {"x (2, 5, 12)": first, "x (2, 8, 12)": ctx.randn(2, 8, 12), "the first x again": first},
                        what="MultiHeadAttention(12, 3): forward, causal forward and attention_weights")


@check("multi_head_attention", weight=1, compare_reference=False, verify=same_as_fresh(WHAT),
       description="in eval mode under torch.no_grad() (as when generating), forward gives what it gives in train "
                   "mode, on a fresh layer and when called again (another length with causal=True, then the first "
                   "input): nothing depends on self.training, no keys or values are kept from one call to the next")
def eval_mode_called_again(impl, ref, ctx):
    first = ctx.randn(2, 6, 12)
    inputs = {"x (2, 6, 12)": (first, False), "x (2, 4, 12) with causal=True": (ctx.randn(2, 4, 12), True),
              "the first x again": (first, False)}
    return called_again_in_eval_mode(lambda: _layer(impl, ctx, 12, 3), forward_with_causal, inputs,
                                     what="MultiHeadAttention(12, 3)")


@check("multi_head_attention", weight=1, tolerance="deep",
       description="training: the gradients of self-, causal and cross-attention reach x, the context and all four "
                   "projections, and after one SGD step the layer computes with the new weights")
def gradients(impl, ref, ctx):
    layer = _layer(impl, ctx, 12, 3)
    x, context = ctx.randn(2, 5, 12).requires_grad_(), ctx.randn(2, 7, 12).requires_grad_()
    probes = [ctx.randn(2, 5, 12) for _ in range(3)]

    def loss_of(module):
        outputs = (module(x), module(x, causal=True), module(x, context=context))
        return sum((out * probe).sum() for out, probe in zip(outputs, probes))

    return one_training_step(layer, loss_of, ["q_proj.weight", "k_proj.weight", "v_proj.bias", "out_proj.weight"],
                             {"x": x, "the context": context})
