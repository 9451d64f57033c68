"""Hidden checks of modules.CausalSelfAttention: values, eval mode, dropout on the weights, the mask buffer.

Every layer is built after ctx.seed_torch(), then ctx.init_module gives it seeded, distinct weights. Values are
compared with dropout=0 (train mode) or in eval mode, where the output is deterministic. Where dropout goes is
checked without relying on the random numbers: the values are made readable (each one-hot token's value
vector is [e_i, 1]), so in train mode the output shows every dropped-out attention weight (its first n
features) next to their sum (the last one). Dropout on the weights gives entries that are either 0 or
2x the eval-mode weight (p = 0.5) whose sum is the last feature; dropout on the scores, the values or the
output cannot produce that, whatever random numbers it draws.

Large inputs (scores in the thousands, the first token's own score in the tens of thousands, "deep" tolerance)
catch a softmax written without subtracting the maximum and a finite mask value that large scores overcome.
The causality, mask-buffer and structure checks are gated on the values (probe.gated): a layer that computes nothing cannot earn them.
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

SHAPES = [  # (d_in, d_out, context_length, batch, n, bias)
    (4, 6, 8, 2, 5, False),
    (6, 3, 7, 3, 7, False),
    (5, 5, 4, 2, 1, False),
    (3, 8, 12, 1, 9, False),
    (5, 4, 6, 2, 6, True),
]
INIT_SCALE = 0.5
P_DROP = 0.5
READ_TOKENS = 5   # one-hot tokens in the dropout check
READ_BATCH = 12   # 12 x 15 visible weights: the dropped share of a correct layer is 0.5 +- 0.04


def _layer(impl, ctx, d_in, d_out, context_length, dropout=0.0, bias=False, scale=INIT_SCALE):
    ctx.seed_torch()
    layer = impl.modules.CausalSelfAttention(d_in, d_out, context_length, dropout=dropout, bias=bias)
    return ctx.init_module(layer, scale=scale)


WHAT = "CausalSelfAttention"


def _ordinary_call(impl, ctx):
    layer = _layer(impl, ctx, 5, 3, 8)
    with torch.no_grad():
        return {"CausalSelfAttention(5, 3, 8, dropout=0.0)(x of shape (2, 6, 5))": layer(ctx.randn(2, 6, 5))}


def _gate(impl, ctx):
    """The gate values of one ordinary call (autograder.probe.gating); an exception there fails the check."""
    return gate_values_of(lambda: _ordinary_call(impl, ctx))



@check("causal_self_attention", weight=3,
       description="forward with dropout=0 for several (d_in, d_out, context_length), sequences shorter than and "
                   "as long as context_length, a single token, and bias=True")
def values(impl, ref, ctx):
    outputs = {}
    for d_in, d_out, context_length, batch, n, bias in SHAPES:
        layer = _layer(impl, ctx, d_in, d_out, context_length, bias=bias)
        x = ctx.randn(batch, n, d_in)
        call = f"CausalSelfAttention({d_in}, {d_out}, {context_length}, dropout=0.0, bias={bias})"
        outputs[f"{call}(x of shape {(batch, n, d_in)})"] = layer(x)
    return outputs


def _same_twice(student, reference, ctx):
    first, second = student["first call"], student["second call"]
    if first.shape != second.shape or not torch.equal(first, second):
        yield "in eval mode two calls on the same input must give the same output (dropout must be off)"


@check("causal_self_attention", weight=2, verify=_same_twice,
       description="in eval mode with dropout=0.3 the output is deterministic and equals the attention without "
                   "dropout")
def eval_mode(impl, ref, ctx):
    layer = _layer(impl, ctx, 6, 4, 8, dropout=0.3).eval()
    x = ctx.randn(3, 8, 6)
    with torch.no_grad():
        return {"first call": layer(x), "second call": layer(x)}


def _dropout_on_weights(student, reference, ctx):
    yield from dropout_verdict(student, 1, READ_TOKENS, P_DROP)


@check("causal_self_attention", weight=2, verify=_dropout_on_weights, compare_reference=False,
       description="in train mode with dropout=0.5, dropout acts on the attention weights (after the mask and "
                   "the softmax): each weight is either 0 or doubled, and the output is those weights times V")
def dropout_on_weights(impl, ref, ctx):
    n = READ_TOKENS
    layer = _layer(impl, ctx, n, n + 1, n + 2, dropout=P_DROP, scale=0.8)
    with torch.no_grad():
        layer.W_v.weight.copy_(readable_value_weight(n, 1, n))
        if layer.W_v.bias is not None:  # a bias mistake is the structure check's business, not this one's
            layer.W_v.bias.zero_()
        x = one_hot_tokens(READ_BATCH, n, n)
        eval_out = layer.eval()(x)
        ctx.seed_torch(1)
        train_out = layer.train()(x)
    return {"eval": eval_out, "train": train_out}


# Causality, the ready-made way: earlier positions' outputs never move when only the last input changes.
_future_unchanged = future_unchanged("forward", "forward with the last token changed", shape="(batch, n, d_out)",
                                     last_changes_by=1e-4, nan_hint=" (does some token see no key at all?)")


@check("causal_self_attention", weight=1, verify=gated(_future_unchanged, what=WHAT), compare_reference=False,
       description="changing a later token never changes the outputs of earlier tokens (eval mode)")
def causality(impl, ref, ctx):
    layer = _layer(impl, ctx, 4, 5, 9, dropout=0.2).eval()
    x = ctx.randn(2, 7, 4)
    changed = x.clone()
    changed[:, -1] += ctx.randn(2, 4, scale=3.0)
    with torch.no_grad():
        forward = layer(x)
        return {"forward": forward, "forward with the last token changed": layer(changed),
                **gate_values({"CausalSelfAttention(4, 5, 9).eval()(x of shape (2, 7, 4))": forward})}


def _describe_dtype(value):
    dtype = getattr(value, "dtype", None)
    return str(dtype).replace("torch.", "") if isinstance(dtype, torch.dtype) else f"no dtype ({type(value).__name__})"


@check("causal_self_attention", weight=2, verify=gated(what=WHAT), compare_reference=False,
       description="mask is a registered buffer (not a parameter): bool, shape (context_length, context_length), "
                   "True strictly above the diagonal; it follows module.to(device) and stays bool under "
                   "module.to(torch.float64)")
def mask_buffer(impl, ref, ctx):
    outputs = {}
    for context_length in (1, 6):
        ctx.seed_torch()
        layer = impl.modules.CausalSelfAttention(4, 3, context_length)
        label = f"CausalSelfAttention(4, 3, context_length={context_length})"
        mask = getattr(layer, "mask", None)
        outputs[f"{label}.mask is a registered buffer"] = "mask" in dict(layer.named_buffers())
        outputs[f"{label}.mask is a parameter"] = "mask" in dict(layer.named_parameters())
        outputs[f"dtype of {label}.mask"] = _describe_dtype(mask)
        outputs[f"shape of {label}.mask"] = [int(s) for s in getattr(mask, "shape", ())]
        if isinstance(mask, torch.Tensor) and mask.shape == (context_length, context_length):
            outputs[f"{label}.mask (as bool)"] = mask.detach().bool().clone()
        else:
            outputs[f"{label}.mask (as bool)"] = "missing or of the wrong shape"
        outputs[f"dtype of {label}.mask after .to(torch.float64)"] = _describe_dtype(
            getattr(layer.to(torch.float64), "mask", None))
        moved = getattr(layer.to("meta"), "mask", None)
        outputs[f"device of {label}.mask after .to('meta')"] = str(getattr(moved, "device", "none"))
    outputs.update(_gate(impl, ctx))
    return outputs


@check("causal_self_attention", weight=1,
       description="after module.to(torch.float64) the layer runs on float64 inputs and returns float64 outputs")
def float64(impl, ref, ctx):
    layer = _layer(impl, ctx, 5, 4, 8).to(torch.float64)
    x = ctx.randn(2, 6, 5).double()
    return {"CausalSelfAttention(5, 4, 8).to(torch.float64)(x of shape (2, 6, 5), float64)": layer(x)}


@check("causal_self_attention", weight=1,
       description="a sequence of context_length tokens works; a longer one raises ValueError")
def context_length(impl, ref, ctx):
    layer = _layer(impl, ctx, 3, 4, 5)
    longer = ctx.randn(2, 6, 3)
    return {"CausalSelfAttention(3, 4, 5)(x of shape (2, 5, 3))": layer(ctx.randn(2, 5, 3)),
            "exception for CausalSelfAttention(3, 4, 5)(x of shape (2, 6, 3))": raised(lambda: layer(longer))}


@check("causal_self_attention", weight=1, verify=gated(what=WHAT), compare_reference=False,
       description="W_q, W_k, W_v are nn.Linear(d_in, d_out) with a bias exactly when bias=True, and the layer "
                   "has no other parameters")
def structure(impl, ref, ctx):
    outputs = {}
    for bias in (False, True):
        ctx.seed_torch()
        layer = impl.modules.CausalSelfAttention(5, 7, 9, dropout=0.1, bias=bias)
        label = f"CausalSelfAttention(5, 7, 9, bias={bias})"
        for name in ("W_q", "W_k", "W_v"):
            proj = getattr(layer, name, None)
            outputs[f"type of {label}.{name}"] = type(proj).__name__
            outputs[f"(in, out) features of {label}.{name}"] = [getattr(proj, "in_features", None),
                                                                 getattr(proj, "out_features", None)]
            outputs[f"{label}.{name} has a bias"] = getattr(proj, "bias", None) is not None
        outputs[f"parameter names of {label}"] = sorted(name for name, _ in layer.named_parameters())
    outputs.update(_gate(impl, ctx))
    return outputs


LARGE_SHAPES = [(6, 4, 8, 2, 7), (8, 5, 9, 3, 9)]  # (d_in, d_out, context_length, batch, n)
LARGE_SCALE = 60.0  # x ~ N(0, 60^2): scores of several thousands, spreads beyond 1e4 in some rows


@check("causal_self_attention", weight=2, tolerance="deep",
       description="large inputs (scores in the thousands, eval mode): finite, correct outputs, future tokens get no "
                   "weight however large their scores")
def large_scores(impl, ref, ctx):
    outputs = {}
    for d_in, d_out, context_length, batch, n in LARGE_SHAPES:
        layer = _layer(impl, ctx, d_in, d_out, context_length, dropout=0.1).eval()
        x = ctx.randn(batch, n, d_in, scale=LARGE_SCALE)
        x[:, 0] *= 3.0  # the first token, which sees only itself, gets scores of tens of thousands
        with torch.no_grad():
            outputs[f"CausalSelfAttention({d_in}, {d_out}, {context_length}).eval()(large x of shape "
                    f"{(batch, n, d_in)})"] = layer(x)
    return outputs


@check("causal_self_attention", weight=1, compare_reference=False, verify=same_as_fresh(WHAT), description=AGAIN)
def called_again(impl, ref, ctx):
    return layer_called_again(lambda: _layer(impl, ctx, 5, 3, 8), ctx, (2, 5, 5), (2, 8, 5),
                              "CausalSelfAttention(5, 3, 8)")


@check("causal_self_attention", weight=1, compare_reference=False, verify=same_as_fresh(WHAT),
       description=AGAIN_IN_EVAL_MODE)
def eval_mode_called_again(impl, ref, ctx):
    return layer_called_again_in_eval_mode(lambda: _layer(impl, ctx, 5, 3, 8, dropout=0.3), ctx,
                                           (2, 5, 5), (2, 8, 5), "CausalSelfAttention(5, 3, 8, dropout=0.3)")
