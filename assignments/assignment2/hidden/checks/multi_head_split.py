"""Hidden checks of modules.MultiHeadCausalAttention (split heads): values, equivalence with stacked heads,
eval mode, dropout on the weights, causality, structure, the mask buffer and errors.

Every layer is built after ctx.seed_torch(), then ctx.init_module gives it seeded, distinct weights. The
equivalence check builds the reference stacked layer and copies its weights into the student's layer with the
reference copy_stacked_to_split. The dropout check makes the values readable (each one-hot token's value is
[e_i, 1] in every head, out_proj is the identity), so the train-mode output shows every dropped-out weight
next to their sum, whatever random numbers the layer draws (see causal_self_attention.py).

Large inputs (scores in the thousands, spreads beyond 1e4, "deep" tolerance) catch a softmax written without
subtracting the maximum and a finite mask value that large scores overcome. The causality, structure and
ValueError checks are gated on the values (probe.gated): a layer that computes nothing cannot earn them.
"""

import torch
from _dropout_probe import dropout_verdict, one_hot_tokens, readable_value_weight
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
    (16, 16, 10, 4, 3, 10, False),
    (5, 8, 4, 2, 2, 1, False),
    (7, 9, 12, 3, 1, 11, False),
    (4, 6, 6, 6, 2, 6, False),
    (6, 10, 7, 2, 2, 7, True),
]
INIT_SCALE = 0.5
P_DROP = 0.5
READ_TOKENS = 5
READ_HEADS = 2
READ_BATCH = 6   # 6 x 2 heads x 15 visible weights: the dropped share of a correct layer is 0.5 +- 0.04


def _layer(impl, ctx, d_in, d_out, context_length, n_heads, dropout=0.0, bias=False, scale=INIT_SCALE):
    ctx.seed_torch()
    layer = impl.modules.MultiHeadCausalAttention(d_in, d_out, context_length, n_heads, dropout=dropout, bias=bias)
    return ctx.init_module(layer, scale=scale)


WHAT = "MultiHeadCausalAttention"


def _ordinary_call(impl, ctx):
    layer = _layer(impl, ctx, 6, 8, 8, 2)
    with torch.no_grad():
        return {"MultiHeadCausalAttention(6, 8, 8, 2, dropout=0.0)(x of shape (2, 5, 6))":
                layer(ctx.randn(2, 5, 6))}


def _gate(impl, ctx):
    """The gate values of one ordinary call (autograder.probe.gating); an exception there fails the check."""
    return gate_values_of(lambda: _ordinary_call(impl, ctx))



@check("multi_head_split", weight=3,
       description="forward with dropout=0 for several (d_in, d_out, n_heads) incl. n == context_length, a "
                   "single token, head width 1 and bias=True")
def values(impl, ref, ctx):
    outputs = {}
    for d_in, d_out, context_length, n_heads, batch, n, bias in SHAPES:
        layer = _layer(impl, ctx, d_in, d_out, context_length, n_heads, bias=bias)
        x = ctx.randn(batch, n, d_in)
        call = f"MultiHeadCausalAttention({d_in}, {d_out}, {context_length}, {n_heads}, dropout=0.0, bias={bias})"
        outputs[f"{call}(x of shape {(batch, n, d_in)})"] = layer(x)
    return outputs


def _same_as_stacked(student, reference, ctx):
    for case in ("bias=False", "bias=True"):
        stacked, split = student[f"stacked ({case})"], student[f"split ({case})"]
        if stacked.shape != split.shape:
            yield f"{case}: the split layer's output has shape {tuple(split.shape)}, the stacked layer's " \
                  f"{tuple(stacked.shape)}"
        elif not torch.allclose(split, stacked, rtol=1e-4, atol=1e-5):
            yield (f"{case}: with the stacked layer's weights copied in, the split layer must compute the same "
                   f"output (max difference {float((split - stacked).abs().max()):.3g}); check how the features are "
                   f"split into heads and merged back")


@check("multi_head_split", weight=2, verify=_same_as_stacked,
       description="with a stacked layer's weights copied in, the split layer computes the same output (eval mode)")
def same_as_stacked(impl, ref, ctx):
    outputs = {}
    for bias in (False, True):
        ctx.seed_torch()
        stacked = ctx.init_module(impl.modules.MultiHeadCausalAttentionStacked(6, 12, 9, 3, dropout=0.1,
                                                                               bias=bias), scale=INIT_SCALE)
        split = impl.modules.MultiHeadCausalAttention(6, 12, 9, 3, dropout=0.1, bias=bias)
        impl.modules.copy_stacked_to_split(stacked, split)
        x = ctx.randn(2, 9, 6)
        with torch.no_grad():
            outputs[f"stacked (bias={bias})"] = stacked.eval()(x)
            outputs[f"split (bias={bias})"] = split.eval()(x)
    return outputs


def _same_twice(student, reference, ctx):
    first, second = student["first call"], student["second call"]
    if first.shape != second.shape or not torch.equal(first, second):
        yield "in eval mode two calls on the same input must give the same output (dropout must be off)"


@check("multi_head_split", weight=1, verify=_same_twice,
       description="in eval mode with dropout=0.3 the output is deterministic and equals the attention without "
                   "dropout")
def eval_mode(impl, ref, ctx):
    layer = _layer(impl, ctx, 6, 8, 8, 2, dropout=0.3).eval()
    x = ctx.randn(3, 8, 6)
    with torch.no_grad():
        return {"first call": layer(x), "second call": layer(x)}


def _dropout_on_weights(student, reference, ctx):
    yield from dropout_verdict(student, READ_HEADS, READ_TOKENS, P_DROP)


@check("multi_head_split", weight=2, verify=_dropout_on_weights, compare_reference=False,
       description="in train mode with dropout=0.5, dropout acts on every head's attention weights (after the "
                   "mask and the softmax): each weight is either 0 or doubled, and the output is those weights "
                   "times V")
def dropout_on_weights(impl, ref, ctx):
    n, heads = READ_TOKENS, READ_HEADS
    d_out = heads * (n + 1)
    layer = _layer(impl, ctx, n, d_out, n + 2, heads, dropout=P_DROP, scale=0.8)
    with torch.no_grad():
        layer.W_v.weight.copy_(readable_value_weight(n, heads, n))
        layer.out_proj.weight.copy_(torch.eye(d_out))
        for proj in (layer.W_v, layer.out_proj):  # bias mistakes are the structure check's business
            if proj.bias is not None:
                proj.bias.zero_()
        x = one_hot_tokens(READ_BATCH, n, n)
        eval_out = layer.eval()(x)
        ctx.seed_torch(1)
        train_out = layer.train()(x)
    return {"eval": eval_out, "train": train_out}


# Causality, the ready-made way: earlier positions' outputs never move when only the last input changes.
_future_unchanged = future_unchanged("forward", "forward with the last token changed", shape="(batch, n, d_out)",
                                     atol=1e-5, nan_hint=" (does some token see no key at all?)")


@check("multi_head_split", weight=1, verify=gated(_future_unchanged, what=WHAT), compare_reference=False,
       description="changing a later token never changes the outputs of earlier tokens (eval mode)")
def causality(impl, ref, ctx):
    layer = _layer(impl, ctx, 6, 12, 9, 3, dropout=0.2).eval()
    x = ctx.randn(2, 7, 6)
    changed = x.clone()
    changed[:, -1] += ctx.randn(2, 6, scale=3.0)
    with torch.no_grad():
        forward = layer(x)
        return {"forward": forward, "forward with the last token changed": layer(changed),
                **gate_values({"MultiHeadCausalAttention(6, 12, 9, 3).eval()(x of shape (2, 7, 6))": forward})}


def _describe_dtype(value):
    dtype = getattr(value, "dtype", None)
    return str(dtype).replace("torch.", "") if isinstance(dtype, torch.dtype) else f"no dtype ({type(value).__name__})"


@check("multi_head_split", weight=2, verify=gated(what=WHAT), compare_reference=False,
       description="n_heads, head_dim; W_q, W_k, W_v are nn.Linear(d_in, d_out) with a bias exactly when "
                   "bias=True; out_proj is nn.Linear(d_out, d_out) with a bias; mask is a bool buffer (not a "
                   "parameter) of shape (context_length, context_length), True above the diagonal")
def structure(impl, ref, ctx):
    outputs = {}
    for d_in, d_out, context_length, n_heads, bias in ((5, 12, 7, 3, False), (4, 6, 5, 2, True)):
        ctx.seed_torch()
        layer = impl.modules.MultiHeadCausalAttention(d_in, d_out, context_length, n_heads, dropout=0.1, bias=bias)
        label = f"MultiHeadCausalAttention({d_in}, {d_out}, {context_length}, {n_heads}, bias={bias})"
        outputs[f"{label}.n_heads"] = getattr(layer, "n_heads", None)
        outputs[f"{label}.head_dim"] = getattr(layer, "head_dim", None)
        for name in ("W_q", "W_k", "W_v", "out_proj"):
            proj = getattr(layer, name, None)
            outputs[f"type of {label}.{name}"] = type(proj).__name__
            outputs[f"(in, out) features of {label}.{name}"] = [getattr(proj, "in_features", None),
                                                                 getattr(proj, "out_features", None)]
            outputs[f"{label}.{name} has a bias"] = getattr(proj, "bias", None) is not None
        outputs[f"parameter names of {label}"] = sorted(name for name, _ in layer.named_parameters())
        mask = getattr(layer, "mask", None)
        outputs[f"{label}.mask is a registered buffer"] = "mask" in dict(layer.named_buffers())
        outputs[f"dtype of {label}.mask"] = _describe_dtype(mask)
        if isinstance(mask, torch.Tensor) and mask.shape == (context_length, context_length):
            outputs[f"{label}.mask (as bool)"] = mask.detach().bool().clone()
        else:
            outputs[f"{label}.mask (as bool)"] = "missing or of the wrong shape"
        moved = getattr(layer.to("meta"), "mask", None)
        outputs[f"device of {label}.mask after .to('meta')"] = str(getattr(moved, "device", "none"))
    outputs.update(_gate(impl, ctx))
    return outputs


@check("multi_head_split", weight=1, verify=gated(what=WHAT), compare_reference=False,
       description="raises ValueError when n_heads does not divide d_out, and for sequences longer than "
                   "context_length")
def errors(impl, ref, ctx):
    ctx.seed_torch()
    build = impl.modules.MultiHeadCausalAttention
    outputs = {f"exception for MultiHeadCausalAttention(4, {d_out}, 6, {n_heads})": raised(
        lambda: build(4, d_out, 6, n_heads)) for d_out, n_heads in ((10, 4), (9, 2))}
    layer = _layer(impl, ctx, 3, 4, 5, 2)
    longer = ctx.randn(2, 6, 3)
    outputs["exception for MultiHeadCausalAttention(3, 4, 5, 2)(x of shape (2, 6, 3))"] = raised(
        lambda: layer(longer))
    outputs.update(_gate(impl, ctx))
    return outputs


LARGE_SHAPES = [(6, 12, 8, 3, 2, 7), (8, 8, 9, 2, 3, 9)]  # (d_in, d_out, context_length, n_heads, batch, n)
LARGE_SCALE = 60.0  # x ~ N(0, 60^2): scores of several thousands, spreads beyond 1e4 in some rows


@check("multi_head_split", weight=2, tolerance="deep",
       description="large inputs (scores in the thousands, eval mode): finite, correct outputs, future tokens get no "
                   "weight however large their scores")
def large_scores(impl, ref, ctx):
    outputs = {}
    for d_in, d_out, context_length, n_heads, batch, n in LARGE_SHAPES:
        layer = _layer(impl, ctx, d_in, d_out, context_length, n_heads, dropout=0.1).eval()
        with torch.no_grad():
            outputs[f"MultiHeadCausalAttention({d_in}, {d_out}, {context_length}, {n_heads}).eval()(large x of shape "
                    f"{(batch, n, d_in)})"] = layer(ctx.randn(batch, n, d_in, scale=LARGE_SCALE))
    return outputs


@check("multi_head_split", weight=1, compare_reference=False, verify=same_as_fresh(WHAT), description=AGAIN)
def called_again(impl, ref, ctx):
    return layer_called_again(lambda: _layer(impl, ctx, 5, 6, 8, 3), ctx, (2, 5, 5), (2, 8, 5),
                              "MultiHeadCausalAttention(5, 6, 8, 3)")


@check("multi_head_split", weight=1, compare_reference=False, verify=same_as_fresh(WHAT),
       description=AGAIN_IN_EVAL_MODE)
def eval_mode_called_again(impl, ref, ctx):
    return layer_called_again_in_eval_mode(lambda: _layer(impl, ctx, 5, 6, 8, 3, dropout=0.3), ctx,
                                           (2, 5, 5), (2, 8, 5), "MultiHeadCausalAttention(5, 6, 8, 3, dropout=0.3)")
