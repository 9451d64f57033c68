"""Hidden checks of the data, loss, accuracy, generation and training of TinyGPT (graded with the reference TinyGPT).

* progression_batch is checked by its properties only (any correct sampler passes, whatever order it draws in).
* next_token_loss is compared with the reference on random logits, together with its gradient.
* predictable_accuracy and generate are run on the reference TinyGPT loaded with the shipped trained weights
  (hidden/assets/tiny_gpt_trained.safetensors, made by hidden/make_assets.py) and on untrained models.
* train is run for real; the weights it returns are loaded into the reference TinyGPT in the trusted parent
  and evaluated there on every progression (the losses the student reports are never trusted alone).
"""

import math

import torch
from torch.nn import functional as F

from autograder.probe import CheckFailed, check, recording, state_dict_outputs

ASSET = "tiny_gpt_trained.safetensors"
VOCAB = 10
# 120 steps leave a margin against MAX_LOSS / MIN_ACCURACY: the reference reaches loss 0.24 and 99.9-100 % (seeds
# 1, 2), Adam 0.24 / 100 %, batches of 32 0.28 / 99.7 %, a three times smaller learning rate 0.39 / 98.3 %; 100
# steps would fail that last one (0.64 / 92.3 %), and every step is on the critical path of `grader grade`.
TRAIN_STEPS, TRAIN_SEED = 120, 1
MAX_TRAINED_ELEMENTS = 10_000_000  # the default TinyGPT has ~0.1 M; the verifier rebuilds it in the grader's process
MAX_LOSS, MIN_ACCURACY = 0.6, 0.95  # a trained model reaches ~0.21 (ln 10 / 11) and 100%; no learning is ln 10


def _trained_model(ref, ctx):
    from safetensors.torch import load

    model = ref.tiny_gpt.TinyGPT()
    model.load_state_dict(load(ctx.assets[ASSET]))
    return model.eval()


def _untrained_model(ref, ctx, dim=32, heads=4, depth=1):
    ctx.seed_torch()
    return ctx.init_module(ref.tiny_gpt.TinyGPT(VOCAB, dim, heads, depth), scale=0.5).eval()


def _progressions(ctx, batch, length):
    """Arithmetic progressions mod 10 built here (never with the student's sampler)."""
    start, step = ctx.randint(0, VOCAB, (batch, 1)), ctx.randint(0, VOCAB, (batch, 1))
    return (start + step * torch.arange(length)) % VOCAB


def _all_progressions(length):
    start, step = torch.arange(VOCAB).repeat_interleave(VOCAB)[:, None], torch.arange(VOCAB).repeat(VOCAB)[:, None]
    return (start + step * torch.arange(length)) % VOCAB


class _NextDigitModel(torch.nn.Module):
    """Always predicts (current token + 1) mod 10: right exactly on the rows whose step is 1."""

    def forward(self, ids):
        return F.one_hot((ids + 1) % VOCAB, VOCAB).float()


# -- progression_batch: properties only -------------------------------------------------------------------

LARGE = "progression_batch(256, length=12, generator seeded 11)"
AGAIN = "progression_batch(256, length=12, generator seeded 11) again"
OTHER = "progression_batch(256, length=12, generator seeded 12)"
SHAPES = {
    LARGE: (256, 12), AGAIN: (256, 12), OTHER: (256, 12),
    "progression_batch(3, 5, generator=...)": (3, 5),
    "progression_batch(2, length=1, generator=...)": (2, 1),
    "progression_batch(64, length=20, generator=...)": (64, 20),
    "progression_batch(4) with torch's global generator": (4, 12),
    "progression_batch(4) with torch's global generator, again": (4, 12),
}
GLOBAL, GLOBAL_AGAIN = list(SHAPES)[-2:]


def _progression_properties(student, reference, ctx):
    for name, shape in SHAPES.items():
        ids = student.get(name)
        if type(ids) is not torch.Tensor:
            yield f"{name}: expected a torch.Tensor, got {type(ids).__name__}"
            return
        if ids.dtype != torch.long:
            yield f"{name}: expected dtype torch.int64 (long), got {ids.dtype}"
            return
        if tuple(ids.shape) != shape:
            yield f"{name}: expected shape {shape}, got {tuple(ids.shape)}"
            return
        if ids.numel() and (ids.min() < 0 or ids.max() > VOCAB - 1):
            yield f"{name}: values must lie in 0..9, found {int(ids.min())}..{int(ids.max())}"
            return
        steps = (ids[:, 1:] - ids[:, :-1]) % VOCAB
        if steps.numel() and not torch.equal(steps, steps[:, :1].expand_as(steps)):
            row = int((steps != steps[:, :1]).any(dim=1).nonzero()[0])
            yield (f"{name}: row {row} is not an arithmetic progression modulo 10 (the difference between "
                   f"neighbours must be the same step all along the row)")
            return
    large = student[LARGE]
    if not torch.equal(large, student[AGAIN]):
        yield "two generators seeded alike gave different batches: draw every random number from `generator`"
    if torch.equal(large, student[OTHER]):
        yield "generators with different seeds gave the same batch: draw every random number from `generator`"
    starts, steps = large[:, 0], (large[:, 1] - large[:, 0]) % VOCAB
    for what, values in (("starts", starts), ("steps", steps)):
        missing = sorted(set(range(VOCAB)) - {int(x) for x in torch.unique(values)})
        if missing:  # a uniform sampler misses a digit in 256 rows with probability 2e-11
            yield (f"{LARGE}: the {what} of 256 rows never take the value(s) {missing}; each row needs its own "
                   f"{what[:-1]} drawn uniformly from 0..9 (torch.randint's upper bound is exclusive)")
    if torch.equal(student[GLOBAL], student[GLOBAL_AGAIN]):
        yield ("progression_batch(4) without a generator returned the same batch twice in a row: without a "
               "generator, draw from torch's global generator")


@check("tiny_gpt_training", weight=2, compare_reference=False, verify=_progression_properties,
       description="progression_batch: shape, long dtype, digits 0..9, one step per row, the length argument, "
                   "the generator honoured, starts and steps varying across the batch")
def progression_batch(impl, ref, ctx):
    batch_of = impl.tiny_gpt.progression_batch
    seeded = lambda seed: torch.Generator().manual_seed(seed)
    outputs = {
        LARGE: batch_of(256, length=12, generator=seeded(11)),
        AGAIN: batch_of(256, length=12, generator=seeded(11)),
        OTHER: batch_of(256, length=12, generator=seeded(12)),
        "progression_batch(3, 5, generator=...)": batch_of(3, 5, generator=seeded(13)),
        "progression_batch(2, length=1, generator=...)": batch_of(2, length=1, generator=seeded(14)),
        "progression_batch(64, length=20, generator=...)": batch_of(64, length=20, generator=seeded(15)),
    }
    ctx.seed_torch()
    outputs[GLOBAL] = batch_of(4)
    outputs[GLOBAL_AGAIN] = batch_of(4)
    return outputs


# -- next_token_loss ---------------------------------------------------------------------------------------


@check("tiny_gpt_training", weight=2,
       description="next_token_loss: value and gradient on random logits (several batch sizes, lengths, vocab sizes)")
def next_token_loss(impl, ref, ctx):
    outputs = {}
    for batch, n, vocab in [(3, 9, 10), (1, 2, 10), (2, 5, 13)]:
        logits = ctx.randn(batch, n, vocab, scale=2.0).requires_grad_()
        ids = ctx.randint(0, vocab, (batch, n))
        loss = impl.tiny_gpt.next_token_loss(logits, ids)
        label = f"next_token_loss(logits {(batch, n, vocab)}, ids {(batch, n)})"
        outputs[label] = loss.detach() if isinstance(loss, torch.Tensor) else loss
        if isinstance(loss, torch.Tensor) and loss.requires_grad and loss.numel() == 1:
            loss.backward()
            outputs[f"gradient of {label} with respect to the logits"] = logits.grad
        else:
            outputs[f"gradient of {label} with respect to the logits"] = "no gradient reaches the logits"
    return outputs


# -- predictable_accuracy ----------------------------------------------------------------------------------


@check("tiny_gpt_training", weight=2,
       description="predictable_accuracy: a trained and untrained models, fresh progressions and random ids, "
                   "lengths 3 to 20")
def predictable_accuracy(impl, ref, ctx):
    accuracy = impl.tiny_gpt.predictable_accuracy
    trained, untrained, counter = _trained_model(ref, ctx), _untrained_model(ref, ctx), _NextDigitModel()
    outputs = {}
    for batch, length in [(64, 12), (16, 3), (32, 20)]:
        ids = _progressions(ctx, batch, length)
        outputs[f"trained model on {batch} progressions of length {length}"] = accuracy(trained, ids)
        outputs[f"untrained model on {batch} progressions of length {length}"] = accuracy(untrained, ids)
        outputs[f"next-digit model on {batch} progressions of length {length}"] = accuracy(counter, ids)
    outputs["trained model on random digits (32, 12)"] = accuracy(trained, ctx.randint(0, VOCAB, (32, 12)))
    return outputs


# -- generate ----------------------------------------------------------------------------------------------


@check("tiny_gpt_training", weight=3,
       description="generate: greedy continuations of 1-D and batched prefixes (trained and untrained models), "
                   "prefix included, new_tokens=0")
def generate(impl, ref, ctx):
    generate = impl.tiny_gpt.generate
    trained, untrained = _trained_model(ref, ctx), _untrained_model(ref, ctx, dim=16, heads=2, depth=2)
    batched = _progressions(ctx, 5, 3)
    random_prefix = ctx.randint(0, VOCAB, (3, 4))
    return {
        "generate(trained, tensor([3, 5]), 6)": generate(trained, torch.tensor([3, 5]), 6),
        "generate(trained, tensor([7]), 4)": generate(trained, torch.tensor([7]), 4),
        "generate(trained, 5 progressions of 3 tokens, 7)": generate(trained, batched.clone(), 7),
        "generate(trained, tensor([2, 9, 6]), 0)": generate(trained, torch.tensor([2, 9, 6]), 0),
        "generate(trained, 5 progressions of 3 tokens, 0)": generate(trained, batched.clone(), 0),
        "generate(untrained, 3 random prefixes of 4 tokens, 5)": generate(untrained, random_prefix.clone(), 5),
    }


# -- train -------------------------------------------------------------------------------------------------


def _train_contract(student, reference, ctx):
    if not student["train returned a pair (model, losses)"]:
        yield "train must return a pair (model, losses)"
        return
    if not student["model is a TinyGPT"]:
        yield "the model train returns must be a TinyGPT"
    if student["model is in training mode"]:
        yield "train must return the model in eval mode (call model.eval())"
    if student["number of losses"] != 3:
        yield f"train(steps=3) must return 3 losses (one per step), got {student['number of losses']}"
    elif not student["every loss is a Python float"]:
        yield "each loss must be a Python float (use loss.item())"
    elif not student["every loss is finite"]:
        yield "some losses are NaN or infinite"
    elif not student["same seed, same losses and weights"]:
        yield "train is not deterministic: two runs with the same seed gave different losses or weights"
    elif not student["other seed, other losses"]:
        yield "train(seed=...) must seed the weights and the batches: another seed gave the same losses"
    if student.get("other seed, other initial weights") is False:
        yield "train(seed=...) must seed the initial weights: seeds 5 and 6 built identical TinyGPTs"
    if student.get("other seed, other first batch") is False:
        yield ("train(seed=...) must seed the batch generator: seeds 5 and 6 drew the same first batch from "
               "progression_batch")


def _summary(result):
    pair = isinstance(result, tuple) and len(result) == 2
    model, losses = result if pair else (None, None)
    losses = list(losses) if isinstance(losses, (list, tuple)) else []
    floats = [float(x) for x in losses if isinstance(x, float)]
    return pair, model, losses, floats


@check("tiny_gpt_training", weight=1, compare_reference=False, verify=_train_contract,
       description="train(steps=3): returns (TinyGPT in eval mode, one float loss per step), deterministic per seed")
def train_contract(impl, ref, ctx):
    ctx.seed_torch()
    seen = {5: ([], []), 6: ([], [])}  # per seed: the batches drawn, the initial weights of the models built

    module = impl.tiny_gpt  # once: each impl.<module> access puts the substituted reference TinyGPT back

    def run(seed):
        batches, models = seen[seed]
        with recording(module, "progression_batch", batches.append), \
                recording(module, "TinyGPT", lambda m: models.append(_weights(m))):
            return module.train(steps=3, seed=seed)

    first, second, third = run(5), run(5), run(6)
    pair, model, losses, floats = _summary(first)
    _, model2, losses2, _ = _summary(second)
    _, _, losses3, _ = _summary(third)
    same_weights = isinstance(model, torch.nn.Module) and isinstance(model2, torch.nn.Module) and all(
        torch.equal(a, b) for a, b in zip(model.state_dict().values(), model2.state_dict().values()))
    return {
        "train returned a pair (model, losses)": pair,
        "model is a TinyGPT": isinstance(model, impl.tiny_gpt.TinyGPT),
        "model is in training mode": bool(getattr(model, "training", True)),
        "number of losses": len(losses),
        "every loss is a Python float": len(floats) == len(losses),
        "every loss is finite": all(math.isfinite(x) for x in floats),
        "same seed, same losses and weights": same_weights and losses == losses2,
        "other seed, other losses": losses != losses3,
        "other seed, other initial weights": _differ(seen[5][1], seen[6][1]),
        "other seed, other first batch": _differ(seen[5][0], seen[6][0]),
    }


def _weights(model):
    return [p.detach().clone() for p in model.parameters()]


def _differ(first, second):
    """Whether the first things recorded under two seeds differ (None if either run recorded nothing)."""
    if not first or not second:
        return None
    a, b = first[0], second[0]
    a, b = (a if isinstance(a, list) else [a]), (b if isinstance(b, list) else [b])
    return len(a) != len(b) or any(x.shape != y.shape or not torch.equal(x, y) for x, y in zip(a, b))


def _reference_model(ctx, state, heads):
    """Rebuild the student's trained weights as the reference TinyGPT (in the trusted parent)."""
    package = getattr(ctx, "reference", None)
    if package is None:
        raise CheckFailed("the grader could not evaluate the trained weights (no reference model is available "
                          "to the verifier); please report this to the course staff")
    if type(heads) is not int:
        raise CheckFailed("the model train returned has no attention layer with a number of heads")
    if sum(v.numel() for v in state.values() if type(v) is torch.Tensor) > MAX_TRAINED_ELEMENTS:
        raise CheckFailed(f"the trained model has more than {MAX_TRAINED_ELEMENTS:,} weights; train the TinyGPT of "
                          f"the module's defaults")
    tokens = state.get("tokens.weight")
    if type(tokens) is not torch.Tensor or tokens.dim() != 2:
        raise CheckFailed("the trained model has no token embedding `tokens.weight` of shape (vocab, dim)")
    vocab, dim = (int(s) for s in tokens.shape)
    depth = len({key.split(".")[1] for key in state if key.startswith("blocks.")})
    if vocab != VOCAB or not (1 <= dim <= 256 and 1 <= depth <= 8 and 1 <= heads <= dim and dim % heads == 0):
        raise CheckFailed(f"train must train a TinyGPT over the 10 digits; got vocab {vocab}, dim {dim}, "
                          f"depth {depth}, heads {heads}")
    model = package.tiny_gpt.TinyGPT(vocab, dim, heads, depth)
    try:
        model.load_state_dict({key: value.float() for key, value in state.items()})
    except (RuntimeError, AttributeError) as exc:
        raise CheckFailed(f"the trained weights do not fit a TinyGPT({vocab}, {dim}, {heads}, {depth}): "
                          f"{str(exc).splitlines()[0][:200]}") from None
    return model.eval()


def _learnt(student, reference, ctx):
    # Only what the weights learnt counts here: the losses' number and type cost train_contract's point.
    state = {key[len("state."):]: value for key, value in student.items() if key.startswith("state.")}
    model = _reference_model(ctx, state, student.get("heads"))
    ids = _all_progressions(12)
    with torch.no_grad():
        logits = model(ids)
    loss = float(F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), ids[:, 1:].reshape(-1)))
    accuracy = float((logits[:, 1:-1].argmax(dim=-1) == ids[:, 2:]).float().mean())
    if not (loss <= MAX_LOSS and accuracy >= MIN_ACCURACY):
        yield (f"after train(steps={TRAIN_STEPS}, seed={TRAIN_SEED}) the model's next-token loss on all 100 "
               f"progressions of 12 tokens is {loss:.3f} (ln 10 = 2.303 is no learning; a trained model reaches "
               f"about 0.21) and it predicts {accuracy:.1%} of the predictable tokens right (needed: "
               f"loss <= {MAX_LOSS}, accuracy >= {MIN_ACCURACY:.0%}); check the loss, the optimiser, the "
               f"learning rate and that every step updates the weights")


@check("tiny_gpt_training", weight=6, compare_reference=False, diagnose=False, verify=_learnt,
       description=f"train(steps={TRAIN_STEPS}) learns: its weights, evaluated by the grader, continue "
                   f"every progression")
def train_learns(impl, ref, ctx):
    ctx.seed_torch()
    model, _losses = impl.tiny_gpt.train(steps=TRAIN_STEPS, seed=TRAIN_SEED)
    blocks = getattr(model, "blocks", None)
    attn = getattr(blocks[0], "attn", None) if blocks is not None and len(blocks) else None
    outputs = state_dict_outputs(model)
    outputs["heads"] = int(getattr(attn, "heads", 4))
    return outputs
