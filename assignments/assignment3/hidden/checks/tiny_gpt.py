"""Hidden checks of TinyGPT, graded with the reference TransformerBlock and sinusoidal_positions.

Every model is built with its constructor, then given seeded, distinct weights (ctx.init_module), so the
student's and the reference's models agree wherever their parameter names and shapes agree.

Large magnitudes: models whose token embeddings are large and whose attention scores reach the hundreds to
thousands (query and key projections scaled up) must still give finite, correct logits and attention maps
(compared with the "deep" tolerance).

Property checks (parts, causality, the length limit) are gated on the logits (probe.gated): a model that computes
nothing cannot earn them.

Both sides of every mode: the value checks run in train mode under torch.no_grad(); eval mode (as generate and
predictable_accuracy use the model: every position's logits, not the last one's only) is checked on a fresh model
and when called again, and training by the gradients reaching every part and one SGD step (_modes).
"""

import torch
from _modes import called_again_in_eval_mode, one_training_step
from torch import nn

from autograder.probe import called_twice, check, gate_values, gate_values_of, gated, same_as_fresh

SIZES = [  # (vocab, dim, heads, depth): the defaults, and sizes where vocab, dim, heads and depth all differ
    (10, 64, 4, 2),
    (13, 24, 3, 3),
    (7, 16, 2, 1),
]


def _model(impl, ctx, vocab, dim, heads, depth):
    ctx.seed_torch()
    model = ctx.init_module(impl.tiny_gpt.TinyGPT(vocab, dim, heads, depth))
    positions = getattr(model, "positions", None)
    if isinstance(positions, nn.Parameter) and positions.shape == (64, dim):
        # A positions parameter instead of a buffer costs the `parts` check only: undo init_module's noise.
        with torch.no_grad():
            positions.copy_(impl.positions.sinusoidal_positions(64, dim))
    return model


def _label(vocab, dim, heads, depth):
    return f"TinyGPT({vocab}, {dim}, {heads}, {depth})"


WHAT = "TinyGPT"


def _ordinary_call(impl, ctx):
    """The logits of one small model on one batch of ids (see autograder.probe.gating)."""
    model = _model(impl, ctx, 7, 16, 2, 1)
    ids = ctx.randint(0, 7, (2, 6))
    with torch.no_grad():
        return {"TinyGPT(7, 16, 2, 1) logits for ids of shape (2, 6)": model(ids)}


def _gate_values(impl, ctx):
    """The gate values of one ordinary call (autograder.probe.gating); an exception there fails the check."""
    return gate_values_of(lambda: _ordinary_call(impl, ctx))


@check("tiny_gpt", weight=3, tolerance="deep",
       description="logits of models of several sizes (non-default vocab, dim, heads and depth), batches of ids")
def logits(impl, ref, ctx):
    outputs = {}
    for (vocab, dim, heads, depth), (batch, n) in zip(SIZES, [(3, 11), (2, 17), (4, 5)]):
        model = _model(impl, ctx, vocab, dim, heads, depth)
        ids = ctx.randint(0, vocab, (batch, n))
        with torch.no_grad():
            outputs[f"{_label(vocab, dim, heads, depth)} logits for ids of shape {(batch, n)}"] = model(ids)
    model = _model(impl, ctx, 10, 32, 4, 1)
    ids = ctx.randint(0, 10, (1, 64))
    with torch.no_grad():
        outputs["TinyGPT(10, 32, 4, 1) logits for 64 ids (the longest allowed)"] = model(ids)
    return outputs


def _kind(module):
    return type(module).__name__ if module is not None else "missing"


@check("tiny_gpt", weight=1, verify=gated(what=WHAT), compare_reference=False,
       description="parts: tokens Embedding, positions buffer (64, dim) that is not a parameter, "
                   "blocks ModuleList of length depth, final norm, head Linear(dim, vocab)")
def parts(impl, ref, ctx):
    outputs = {}
    for vocab, dim, heads, depth in SIZES[1:]:
        ctx.seed_torch()
        model = impl.tiny_gpt.TinyGPT(vocab, dim, heads, depth)
        label = _label(vocab, dim, heads, depth)
        tokens, blocks = getattr(model, "tokens", None), getattr(model, "blocks", None)
        norm, head = getattr(model, "norm", None), getattr(model, "head", None)
        buffers, parameters = dict(model.named_buffers()), dict(model.named_parameters())
        positions = buffers.get("positions")
        outputs[f"{label}.tokens"] = _kind(tokens)
        outputs[f"{label}.tokens (num_embeddings, embedding_dim)"] = \
            [int(tokens.num_embeddings), int(tokens.embedding_dim)] if isinstance(tokens, nn.Embedding) else "n/a"
        outputs[f"{label}.positions is a buffer"] = positions is not None
        outputs[f"{label}.positions is a parameter"] = "positions" in parameters
        outputs[f"{label}.positions (a buffer)"] = \
            positions.detach().clone() if isinstance(positions, torch.Tensor) else "missing"
        outputs[f"{label}.blocks"] = _kind(blocks)
        outputs[f"{label}.blocks length"] = len(blocks) if isinstance(blocks, nn.ModuleList) else -1
        outputs[f"{label}.norm"] = _kind(norm)
        outputs[f"{label}.norm normalized_shape"] = \
            [int(s) for s in norm.normalized_shape] if isinstance(norm, nn.LayerNorm) else "n/a"
        outputs[f"{label}.head"] = _kind(head)
        outputs[f"{label}.head (in_features, out_features, has bias)"] = \
            [int(head.in_features), int(head.out_features), head.bias is not None] \
            if isinstance(head, nn.Linear) else "n/a"
        outputs[f"{label} number of parameters"] = sum(int(p.numel()) for p in parameters.values())
    outputs.update(_gate_values(impl, ctx))
    return outputs


@check("tiny_gpt", weight=1, description="embed(ids): token embeddings plus the position vectors of 0 .. n-1")
def embed(impl, ref, ctx):
    outputs = {}
    for (vocab, dim, heads, depth), (batch, n) in zip(SIZES[:2], [(2, 9), (3, 64)]):
        model = _model(impl, ctx, vocab, dim, heads, depth)
        ids = ctx.randint(0, vocab, (batch, n))
        with torch.no_grad():
            outputs[f"{_label(vocab, dim, heads, depth)}.embed(ids of shape {(batch, n)})"] = model.embed(ids)
    return outputs


@check("tiny_gpt", weight=2, tolerance="deep",
       description="attention_maps: one causal (batch, heads, n, n) map per block, in order, with the right values")
def attention_maps(impl, ref, ctx):
    outputs = {}
    for (vocab, dim, heads, depth), (batch, n) in zip(SIZES[1:], [(2, 10), (3, 6)]):
        model = _model(impl, ctx, vocab, dim, heads, depth)
        ids = ctx.randint(0, vocab, (batch, n))
        with torch.no_grad():
            maps = model.attention_maps(ids)
        label = f"{_label(vocab, dim, heads, depth)}.attention_maps(ids of shape {(batch, n)})"
        outputs[f"{label}: number of maps"] = len(maps) if isinstance(maps, (list, tuple)) else -1
        outputs[label] = list(maps) if isinstance(maps, (list, tuple)) else maps
    return outputs


def _earlier_predictions_unchanged(student, reference, ctx):
    for name, logits in student.items():
        if not name.startswith("logits") or " changed" in name:
            continue
        for position in (9, 5):
            changed = student[f"{name} with token {position} changed"]
            if changed.shape != logits.shape:
                yield f"{name}: the logits' shape changed with the token values"
                continue
            moved = (changed[:, :position] - logits[:, :position]).abs().max()
            if not moved <= 1e-5:
                yield (f"{name}: changing token {position} changed the predictions at earlier positions "
                       f"(by up to {float(moved):.3g}); every block must attend causally")
                return


@check("tiny_gpt", weight=1, compare_reference=False, verify=gated(_earlier_predictions_unchanged, what=WHAT),
       description="causality: changing a later token never changes an earlier prediction")
def causality(impl, ref, ctx):
    outputs = {}
    for vocab, dim, heads, depth in SIZES[1:]:
        model = _model(impl, ctx, vocab, dim, heads, depth)
        ids = ctx.randint(0, vocab, (2, 10))
        name = f"logits of {_label(vocab, dim, heads, depth)}"
        with torch.no_grad():
            outputs[name] = model(ids.clone())
            outputs.update(gate_values({f"{name} for ids of shape (2, 10)": outputs[name]}))
            for position in (9, 5):
                changed = ids.clone()
                changed[:, position] = (changed[:, position] + 1) % vocab
                outputs[f"{name} with token {position} changed"] = model(changed)
    return outputs


@check("tiny_gpt", weight=1, verify=gated(what=WHAT), compare_reference=False,
       description="ids longer than 64 tokens raise ValueError; 64 tokens are accepted")
def length_limit(impl, ref, ctx):
    model = _model(impl, ctx, 10, 16, 2, 1)
    outputs = {}
    for n in (65, 80):
        try:
            with torch.no_grad():
                model(torch.zeros(2, n, dtype=torch.long))
            raised = False
        except NotImplementedError:
            raise
        except Exception as exc:  # noqa: BLE001 - any other exception is the wrong one
            raised = isinstance(exc, ValueError)
        outputs[f"TinyGPT forward on {n} ids raised ValueError"] = raised
    with torch.no_grad():
        outputs["shape of TinyGPT forward on 64 ids"] = [int(s) for s in model(torch.zeros(2, 64, dtype=torch.long)).shape]
    outputs.update(_gate_values(impl, ctx))
    return outputs


LARGE_SIZES = [((13, 24, 3, 2), (2, 9)), ((7, 16, 4, 1), (3, 12))]  # ((vocab, dim, heads, depth), (batch, n))


def _large_model(impl, ctx, vocab, dim, heads, depth):
    """Token embeddings 30 times larger, and every block's query and key projections 12 times larger."""
    model = _model(impl, ctx, vocab, dim, heads, depth)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name == "tokens.weight":
                param.mul_(30.0)
            elif ".attn.q_proj." in name or ".attn.k_proj." in name:
                param.mul_(12.0)
    return model


@check("tiny_gpt", weight=1, tolerance="deep",
       description="large magnitudes (large token embeddings, attention scores in the hundreds to thousands): "
                   "logits and attention_maps stay finite and correct")
def large_magnitudes(impl, ref, ctx):
    outputs = {}
    for (vocab, dim, heads, depth), (batch, n) in LARGE_SIZES:
        model = _large_model(impl, ctx, vocab, dim, heads, depth)
        ids = ctx.randint(0, vocab, (batch, n))
        label = f"{_label(vocab, dim, heads, depth)} with large weights"
        with torch.no_grad():
            outputs[f"{label}: logits for ids of shape {(batch, n)}"] = model(ids)
            maps = model.attention_maps(ids)
        outputs[f"{label}: attention_maps for ids of shape {(batch, n)}"] = \
            list(maps) if isinstance(maps, (list, tuple)) else maps
    return outputs


def _logits_and_maps(model, ids):
    with torch.no_grad():
        maps = model.attention_maps(ids)
        return [model(ids)] + (list(maps) if isinstance(maps, (list, tuple)) else [maps])


@check("tiny_gpt", weight=1, compare_reference=False, verify=same_as_fresh(WHAT),
       description="a model called again (forward and attention_maps; another length, then the first ids) gives what "
                   "a fresh model gives: nothing kept on the model from one call changes the next")
def called_again(impl, ref, ctx):
    first = ctx.randint(0, 13, (2, 10))
    return called_twice(lambda: _model(impl, ctx, 13, 24, 3, 2), _logits_and_maps,
                        {"ids (2, 10)": first, "ids (3, 6)": ctx.randint(0, 13, (3, 6)), "the first ids again": first},
                        what="TinyGPT(13, 24, 3, 2): logits and attention_maps")


@check("tiny_gpt", weight=2, compare_reference=False, verify=same_as_fresh(WHAT),
       description="in eval mode under torch.no_grad() (as generate and predictable_accuracy use it), forward "
                   "returns the logits of every position and attention_maps its maps, as in train mode, on a fresh "
                   "model and when called again: nothing depends on self.training, nothing is kept between calls")
def eval_mode_called_again(impl, ref, ctx):
    first = ctx.randint(0, 13, (2, 10))
    return called_again_in_eval_mode(
        lambda: _model(impl, ctx, 13, 24, 3, 2), _logits_and_maps,
        {"ids (2, 10)": first, "ids (3, 6)": ctx.randint(0, 13, (3, 6)), "the first ids again": first},
        what="TinyGPT(13, 24, 3, 2): logits and attention_maps")


@check("tiny_gpt", weight=1, tolerance="deep",
       description="training: the gradients of the logits reach the token embeddings, the blocks, the final norm and "
                   "the head, and after one SGD step the model computes with the new weights")
def gradients(impl, ref, ctx):
    model = _model(impl, ctx, 13, 24, 3, 2)
    ids, probe = ctx.randint(0, 13, (2, 10)), ctx.randn(2, 10, 13)
    return one_training_step(model, lambda m: (m(ids) * probe).sum(),
                             ["tokens.weight", "blocks.0.attn.q_proj.weight", "blocks.1.norm2.bias", "norm.weight",
                              "head.weight"])
