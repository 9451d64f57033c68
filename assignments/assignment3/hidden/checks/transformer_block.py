"""Hidden checks of TransformerBlock: values (plain and causal), pre-norm residual structure, the MLP's layout.

Every block is built as TransformerBlock(dim, heads, mlp_ratio) after ctx.seed_torch(), then ctx.init_module
gives every parameter (LayerNorm weights 1 + noise, biases noise) seeded, distinct values, so a reused norm, a
missing residual or a post-norm block cannot hide behind gamma = 1, beta = 0. mlp_ratio differs from 4 in most
shapes. The student's block runs with the reference MultiHeadAttention.

Large inputs: tokens whose features all sit hundreds away from zero (an offset per token of std 300, a spread of
1 around it) must be normalised as nn.LayerNorm does (a variance taken as E[x^2] - E[x]^2 cancels there); the
check compares forward(x) - x, what the two sublayers add, with the "deep" tolerance (x itself would hide them,
and its float32 roundoff at that magnitude is ~3e-5).

Property checks (causality, structure, the input unchanged) are gated on the values (probe.gated): a block that
computes nothing cannot earn them.

Both sides of every mode: the value checks run in train mode, with and without autograd (and gradients); eval mode
(as when generating) is checked on a fresh block and when called again (_modes).
"""

import torch
from _modes import called_again_in_eval_mode, forward_with_causal

from autograder.probe import called_twice, check, future_unchanged, gate_values, gate_values_of, gated, same_as_fresh

SHAPES = [  # (dim, heads, mlp_ratio, batch, n)
    (16, 4, 2, 2, 5),
    (12, 3, 3, 3, 7),
    (8, 2, 1, 2, 1),
    (20, 5, 4, 1, 9),
]
CAUSAL_SHAPES = [(12, 3, 2, 2, 6), (16, 2, 3, 3, 9), (8, 4, 4, 1, 1)]
INIT_SCALE = 0.3


WHAT = "TransformerBlock"


def _block(impl, ctx, dim, heads, mlp_ratio):
    ctx.seed_torch()
    return ctx.init_module(impl.attention.TransformerBlock(dim, heads, mlp_ratio), scale=INIT_SCALE)


def _ordinary_call(impl, ctx):
    """The values of one ordinary and one causal forward (see autograder.probe.gating)."""
    block = _block(impl, ctx, 12, 3, 2)
    x = ctx.randn(2, 5, 12)
    with torch.no_grad():
        return {"TransformerBlock(12, 3, mlp_ratio=2)(x of shape (2, 5, 12))": block(x),
                "TransformerBlock(12, 3, mlp_ratio=2)(x of shape (2, 5, 12), causal=True)": block(x, causal=True)}


def _gate_values(impl, ctx):
    """The gate values of one ordinary call (autograder.probe.gating); an exception there fails the check."""
    return gate_values_of(lambda: _ordinary_call(impl, ctx))


def _call(dim, heads, mlp_ratio, shape, causal=False):
    return f"TransformerBlock({dim}, {heads}, mlp_ratio={mlp_ratio})(x of shape {shape}" + \
        (", causal=True)" if causal else ")")


@check("transformer_block", weight=3,
       description="forward for several (dim, heads, mlp_ratio) and sequence lengths (incl. a single token)")
def block_values(impl, ref, ctx):
    outputs = {}
    for dim, heads, ratio, batch, n in SHAPES:
        block = _block(impl, ctx, dim, heads, ratio)
        x = ctx.randn(batch, n, dim)
        outputs[_call(dim, heads, ratio, (batch, n, dim))] = block(x)
    return outputs


@check("transformer_block", weight=2, description="forward with causal=True for several shapes")
def causal_values(impl, ref, ctx):
    outputs = {}
    for dim, heads, ratio, batch, n in CAUSAL_SHAPES:
        block = _block(impl, ctx, dim, heads, ratio)
        x = ctx.randn(batch, n, dim)
        outputs[_call(dim, heads, ratio, (batch, n, dim), causal=True)] = block(x, causal=True)
    return outputs


# Causality, the ready-made way: earlier positions' outputs never move when only the last input changes.
_future_unchanged = future_unchanged("forward", "forward with the last token changed", shape="(batch, n, dim)",
                                     atol=1e-5, when="with causal=True")


@check("transformer_block", weight=1, verify=gated(_future_unchanged, what=WHAT), compare_reference=False,
       description="causal=True: changing a later token never changes the outputs of earlier tokens")
def causal_future_never_changes_past(impl, ref, ctx):
    block = _block(impl, ctx, 12, 3, 2)
    x = ctx.randn(2, 7, 12)
    changed = x.clone()
    changed[:, -1] += ctx.randn(2, 12, scale=3.0)
    with torch.no_grad():
        forward = block(x, causal=True)
        return {"forward": forward, "forward with the last token changed": block(changed, causal=True),
                **gate_values({"TransformerBlock(12, 3, mlp_ratio=2)(x of shape (2, 7, 12), causal=True)": forward})}


def _last_linear(module):
    linears = [m for m in module.modules() if isinstance(m, torch.nn.Linear)]
    return linears[-1] if linears else None


def _residuals(student, reference, ctx):
    x, out = student["x"], student["forward with attention and MLP outputs zeroed"]
    if out.shape != x.shape:
        yield f"forward must keep the input's shape {tuple(x.shape)}, got {tuple(out.shape)}"
    elif not torch.allclose(out, x, rtol=1e-5, atol=1e-6):
        yield ("when the attention and the MLP add nothing, a pre-norm block must return its input unchanged: "
               "each sublayer's output must be added to the un-normalised input, with no norm after the sum")
    for label, formula in (("attention output zeroed", "x + mlp(norm2(x))"),
                           ("MLP output zeroed", "x + attn(norm1(x))")):
        name = f"forward with {label}"
        got, expected = student[name], reference[name]
        if got.shape != expected.shape or not torch.allclose(got, expected, rtol=1e-4, atol=1e-5):
            yield f"with the {label}, the block must return {formula}"


def _zero(module):
    with torch.no_grad():
        for param in module.parameters():
            param.zero_()


@check("transformer_block", weight=2, verify=_residuals, compare_reference=False,
       description="pre-norm residuals: with the attention's out_proj and/or the MLP's last Linear set to zero, the "
                   "block adds the remaining sublayer to its un-normalised input (and returns the input if both are "
                   "zero)")
def pre_norm_residuals(impl, ref, ctx):
    x = ctx.randn(2, 5, 12)
    outputs = {"x": x}
    for label, zeroed in (("attention and MLP outputs zeroed", ("attn", "mlp")), ("attention output zeroed", ("attn",)),
                          ("MLP output zeroed", ("mlp",))):
        block = _block(impl, ctx, 12, 3, 2)
        if "attn" in zeroed:
            _zero(block.attn.out_proj)
        if "mlp" in zeroed:
            _zero(_last_linear(block.mlp))
        with torch.no_grad():
            outputs[f"forward with {label}"] = block(x.clone())
    return outputs


@check("transformer_block", weight=1, verify=gated(what=WHAT), compare_reference=False,
       description="structure: norm1 and norm2 are separate LayerNorm(dim), attn is MultiHeadAttention(dim, heads), "
                   "mlp is Linear(dim, mlp_ratio * dim), GELU, Linear(mlp_ratio * dim, dim)")
def structure(impl, ref, ctx):
    outputs = {}
    for dim, heads, ratio in ((12, 3, 3), (8, 2, 1)):
        ctx.seed_torch()
        block = impl.attention.TransformerBlock(dim, heads, ratio)
        label = f"TransformerBlock({dim}, {heads}, mlp_ratio={ratio})"
        norm1, norm2 = getattr(block, "norm1", None), getattr(block, "norm2", None)
        outputs[f"type of {label}.norm1"] = type(norm1).__name__
        outputs[f"type of {label}.norm2"] = type(norm2).__name__
        outputs[f"{label}.norm1 is not norm2"] = norm1 is not norm2
        outputs[f"{label}.norm1.normalized_shape"] = list(getattr(norm1, "normalized_shape", ()))
        outputs[f"{label}.norm2.normalized_shape"] = list(getattr(norm2, "normalized_shape", ()))
        attn = getattr(block, "attn", None)
        outputs[f"type of {label}.attn"] = type(attn).__name__
        outputs[f"{label}.attn.heads"] = getattr(attn, "heads", None)
        mlp = getattr(block, "mlp", None)
        layers = list(mlp.children()) if isinstance(mlp, torch.nn.Module) else []
        outputs[f"layers of {label}.mlp"] = [type(layer).__name__ for layer in layers]
        outputs[f"(in, out) features of the Linear layers of {label}.mlp"] = [
            [layer.in_features, layer.out_features] for layer in layers if isinstance(layer, torch.nn.Linear)]
    outputs.update(_gate_values(impl, ctx))
    return outputs


@check("transformer_block", weight=1, verify=gated(what=WHAT), compare_reference=False,
       description="leaves its input unchanged (no in-place residual on the caller's tensor)")
def input_unchanged(impl, ref, ctx):
    block = _block(impl, ctx, 12, 3, 2)
    x = ctx.randn(2, 6, 12)
    causal = block(x.clone(), causal=True)
    block(x, causal=True)
    block(x)
    return {"x after two forwards": x,
            **gate_values({"TransformerBlock(12, 3, mlp_ratio=2)(x of shape (2, 6, 12), causal=True)": causal})}


LARGE_SHAPES = [(12, 3, 2, 2, 5, False), (16, 4, 3, 3, 7, True)]  # (dim, heads, mlp_ratio, batch, n, causal)


@check("transformer_block", weight=2, tolerance="deep",
       description="large inputs (every feature of a token hundreds away from zero): what the two sublayers add to "
                   "x, plain and causal")
def large_inputs(impl, ref, ctx):
    outputs = {}
    for dim, heads, ratio, batch, n, causal in LARGE_SHAPES:
        block = _block(impl, ctx, dim, heads, ratio)
        x = ctx.randn(batch, n, dim) + ctx.randn(batch, n, 1, scale=300.0)
        with torch.no_grad():
            out = block(x.clone(), causal=causal)
        outputs[f"forward(x) - x for {_call(dim, heads, ratio, (batch, n, dim), causal)} with large x"] = \
            out - x if isinstance(out, torch.Tensor) and out.shape == x.shape else out
    return outputs


@check("transformer_block", weight=1,
       description="the gradient of its output reaches x, the norms and the attention")
def gradients(impl, ref, ctx):
    block = _block(impl, ctx, 12, 3, 2)
    x = ctx.randn(2, 6, 12).requires_grad_()
    probe = ctx.randn(2, 6, 12)
    loss = (block(x, causal=True) * probe).sum()
    named = dict(block.named_parameters())
    names = [name for name in ("norm1.weight", "norm2.bias", "attn.q_proj.weight") if name in named]
    grads = (torch.autograd.grad(loss, [x] + [named[name] for name in names], allow_unused=True)
             if loss.requires_grad else [None] * (1 + len(names)))
    return {f"gradient reaching {name}": grad for name, grad in zip(["x"] + names, grads)}


def _causal(block, x):
    """One causal forward per call (a plain and a causal forward in one call would hide a memoised sublayer behind
    the mistake of ignoring causal=True)."""
    with torch.no_grad():
        return block(x.clone(), causal=True)


@check("transformer_block", weight=1, compare_reference=False, verify=same_as_fresh(WHAT),
       description="a block called again (another length, then the first input) gives what a fresh block gives: "
                   "nothing kept on the block from one call changes the next")
def called_again(impl, ref, ctx):
    first = ctx.randn(2, 6, 12)
    return called_twice(lambda: _block(impl, ctx, 12, 3, 2), _causal,
                        {"x (2, 6, 12)": first, "x (2, 4, 12)": ctx.randn(2, 4, 12), "the first x again": first},
                        what="TransformerBlock(12, 3, mlp_ratio=2) with causal=True")


@check("transformer_block", weight=1, compare_reference=False, verify=same_as_fresh(WHAT),
       description="in eval mode under torch.no_grad() (as when generating), forward gives what it gives in train "
                   "mode, with and without causal=True, on a fresh block and when called again: nothing depends on "
                   "self.training, nothing is kept from one call to the next")
def eval_mode_called_again(impl, ref, ctx):
    first = ctx.randn(2, 6, 12)
    inputs = {"x (2, 6, 12)": (first, False), "x (2, 4, 12) with causal=True": (ctx.randn(2, 4, 12), True),
              "the first x again": (first, False)}
    return called_again_in_eval_mode(lambda: _block(impl, ctx, 12, 3, 2), forward_with_causal, inputs,
                                     what="TransformerBlock(12, 3, mlp_ratio=2)")
