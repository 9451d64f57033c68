"""Hidden checks of decode_with_cache and decode_without_cache, graded with the reference attention layer.

Values: both decoders must reproduce layer(tokens, causal=True) on several shapes, including a single token,
odd lengths, a head size different from n, and 20 tokens (longer than any plausible sliding window); and on
large tokens, whose attention scores reach the hundreds to thousands ("deep" tolerance).

Caching, by its effect: _versioned makes the layer's key and value projections change as decoding proceeds.
Whenever q_proj, k_proj or v_proj receives a token of a later position p than any seen before, k_proj and
v_proj move to the weights W_0 + p * D (biases b_0 + p * d), in the student's run and in the reference's alike.
A decoder that caches computes token j's key and value once, at step j, with W_j; one that computes them again
later gets other numbers, whatever API it computes them with (the modules, F.linear on their weights, a matmul,
or weights copied earlier). Without the cache, every step recomputes the whole prefix with the current weights.
Work (a diagnosis, of lower weight): forward hooks count the token rows entering q_proj, k_proj and v_proj.
With the cache every token is projected exactly once and one position at a time (batch * n rows, one position
per call); without it the keys and values of the whole prefix are recomputed at every step
(batch * n (n + 1) / 2 rows).

Both modes: a decoder is used at inference, so the value checks give it the layer in train mode and in eval mode
(every other shape), and the calls again on one layer, with autograd on, switch it from eval to train mode and
back: a cache kept on the layer "for generation" is one never reset.
"""

import torch

from autograder.probe import called_twice, check, rows_counter, same_as_fresh

SHAPES = [  # (batch, n, dim, heads)
    (2, 7, 24, 3),   # head size 8 != n
    (1, 1, 16, 4),   # a single token
    (3, 9, 20, 5),   # odd n, head size 4
    (2, 20, 12, 2),  # longer than a sliding window would keep
]
WORK_SHAPES = [(2, 20, 16, 4), (3, 1, 8, 2), (1, 13, 12, 3)]


VERSIONED_SHAPES = [(2, 9, 24, 3), (3, 6, 20, 5), (1, 13, 12, 2)]  # (batch, n, dim, heads)
LARGE_SHAPES = [(2, 8, 24, 3), (1, 11, 20, 4)]
LARGE_SCALE = 30.0  # tokens ~ N(0, 30^2): attention scores in the hundreds to thousands
STEP_SCALE = 0.05   # how far k_proj's and v_proj's weights move per position (init_module's scale is 0.5)


def _layer_and_tokens(ref, ctx, batch, n, dim, heads, scale=2.0):
    ctx.seed_torch()
    layer = ctx.init_module(ref.attention.MultiHeadAttention(dim, heads))
    return layer, ctx.randn(batch, n, dim, scale=scale)


def _newest_position(x, tokens):
    """The largest position p such that some row of x equals token p of some sequence (-1 if none does)."""
    if not isinstance(x, torch.Tensor) or x.dim() < 1 or x.shape[-1] != tokens.shape[-1] or x.numel() == 0:
        return -1
    rows = x.detach().reshape(-1, tokens.shape[-1]).to(tokens.dtype)
    hits = (rows[:, None, None, :] == tokens[None]).all(-1).any(0).any(0)  # (n,): position p occurs in x
    found = hits.nonzero()
    return int(found.max()) if len(found) else -1


def _versioned(layer, tokens, ctx):
    """Make k_proj and v_proj take the weights of the newest position any projection has received (see the
    module docstring). The moves are seeded by the check, so the student's and the reference's runs agree."""
    projections = {name: getattr(layer, name) for name in ("k_proj", "v_proj")}
    start = {name: (m.weight.detach().clone(), m.bias.detach().clone()) for name, m in projections.items()}
    moves = {name: (ctx.randn(*m.weight.shape, scale=STEP_SCALE), ctx.randn(*m.bias.shape, scale=STEP_SCALE))
             for name, m in projections.items()}
    newest = {"position": 0}

    def follow(_module, inputs):
        position = _newest_position(inputs[0] if inputs else None, tokens)
        if position > newest["position"]:
            newest["position"] = position
            with torch.no_grad():
                for name, module in projections.items():
                    (weight, bias), (move_weight, move_bias) = start[name], moves[name]
                    module.weight.copy_(weight + position * move_weight)
                    module.bias.copy_(bias + position * move_bias)

    for name in ("q_proj", "k_proj", "v_proj"):
        getattr(layer, name).register_forward_pre_hook(follow)
    return layer


def _decoded(decode, ref, ctx, name):
    outputs = {}
    for index, (batch, n, dim, heads) in enumerate(SHAPES):
        layer, tokens = _layer_and_tokens(ref, ctx, batch, n, dim, heads)
        layer.train(index % 2 == 0)
        with torch.no_grad():
            out = decode(layer, tokens)
        mode = "" if layer.training else " in eval mode"
        outputs[f"{name}(MultiHeadAttention({dim}, {heads}){mode}, tokens of shape {(batch, n, dim)})"] = out
    return outputs


@check("kv_cache_decode", weight=3,
       description="decode_with_cache equals layer(tokens, causal=True) (one token, odd n, 20 tokens, n != head size)")
def cached_values(impl, ref, ctx):
    return _decoded(impl.kv_cache.decode_with_cache, ref, ctx, "decode_with_cache")


@check("kv_cache_decode", weight=2,
       description="decode_without_cache equals layer(tokens, causal=True) on the same shapes")
def uncached_values(impl, ref, ctx):
    return _decoded(impl.kv_cache.decode_without_cache, ref, ctx, "decode_without_cache")


@check("kv_cache_decode", weight=1, tolerance="deep",
       description="both decoders equal layer(tokens, causal=True) on large tokens (attention scores in the hundreds "
                   "to thousands)")
def large_scores(impl, ref, ctx):
    outputs = {}
    for batch, n, dim, heads in LARGE_SHAPES:
        for name in ("decode_with_cache", "decode_without_cache"):
            layer, tokens = _layer_and_tokens(ref, ctx, batch, n, dim, heads, scale=LARGE_SCALE)
            with torch.no_grad():
                outputs[f"{name}(MultiHeadAttention({dim}, {heads}), large tokens of shape {(batch, n, dim)})"] = \
                    getattr(impl.kv_cache, name)(layer, tokens)
    return outputs


def _count_rows(decode, ref, ctx):
    outputs = {}
    for batch, n, dim, heads in WORK_SHAPES:
        layer, tokens = _layer_and_tokens(ref, ctx, batch, n, dim, heads)
        counters = {name: rows_counter(getattr(layer, name)) for name in ("q_proj", "k_proj", "v_proj")}
        with torch.no_grad():
            decoded = decode(layer, tokens)
        label = f"batch {batch}, n {n}"
        outputs[f"output for {label}"] = decoded
        for name, counts in counters.items():
            outputs[f"{name} rows for {label}"] = int(counts["rows"])
            outputs[f"{name} largest positions per call for {label}"] = int(counts["max_positions"])
    return outputs


def _shape_of(name):
    batch, n = name.rsplit(" for batch ", 1)[1].split(", n ")
    return int(batch), int(n)


def _wrong_outputs(student, reference, function):
    """The work counts come from the student's process, so they only count for outputs that are right."""
    for name, expected in reference.items():
        if name.startswith("output for "):
            got = student.get(name)
            if type(got) is not torch.Tensor or got.shape != expected.shape or not torch.allclose(
                    got, expected, rtol=1e-3, atol=1e-4):
                return [f"{function} gives wrong outputs (see its value checks); its work is counted only once "
                        f"they are right"]
    return []


def _counts(student):
    return [(name, value) for name, value in student.items() if not name.startswith("output for ")]


def _cached_work(student, reference, ctx):
    wrong = _wrong_outputs(student, reference, "decode_with_cache")
    yield from wrong
    for name, value in ([] if wrong else _counts(student)):
        batch, n = _shape_of(name)
        projection = name.split(" ", 1)[0]
        if " rows for " in name and value != batch * n:
            more = " (the prefix is projected again at every step)" if value == batch * n * (n + 1) // 2 else ""
            yield (f"decode_with_cache on a batch of {batch} sequences of {n} tokens sent {value} token rows "
                   f"through {projection}; with a cache each token is projected exactly once ({batch * n} rows)"
                   + more)
        if " largest positions " in name and value != 1:
            yield (f"decode_with_cache passed {value} positions to {projection} in one call (batch {batch}, "
                   f"n {n}); at each step only the new token (input of shape (batch, 1, dim)) is projected")


@check("kv_cache_decode", weight=1, compare_reference=False, verify=_cached_work,
       description="with the cache each token goes through q_proj, k_proj and v_proj exactly once, one at a time")
def cached_work(impl, ref, ctx):
    return _count_rows(impl.kv_cache.decode_with_cache, ref, ctx)


def _uncached_work(student, reference, ctx):
    wrong = _wrong_outputs(student, reference, "decode_without_cache")
    yield from wrong
    for name, value in ([] if wrong else _counts(student)):
        projection = name.split(" ", 1)[0]
        if projection == "q_proj":  # recomputing only the last query is allowed without a cache
            continue
        batch, n = _shape_of(name)
        if " rows for " in name and value != batch * n * (n + 1) // 2:
            yield (f"decode_without_cache on a batch of {batch} sequences of {n} tokens sent {value} token rows "
                   f"through {projection}; recomputing the prefix at every step takes "
                   f"{batch} * ({n} + {n - 1} + ... + 1) = {batch * n * (n + 1) // 2} rows")
        if " largest positions " in name and value != n:
            yield (f"decode_without_cache passed at most {value} positions to {projection} in one call "
                   f"(n {n}); the last step projects the whole prefix of {n} tokens")


@check("kv_cache_decode", weight=1, compare_reference=False, verify=_uncached_work,
       description="without the cache the keys and values of the whole prefix are recomputed at every step")
def uncached_work(impl, ref, ctx):
    return _count_rows(impl.kv_cache.decode_without_cache, ref, ctx)


def _versioned_outputs(decode, ref, ctx, name):
    outputs = {}
    for batch, n, dim, heads in VERSIONED_SHAPES:
        layer, tokens = _layer_and_tokens(ref, ctx, batch, n, dim, heads)
        _versioned(layer, tokens, ctx)
        with torch.no_grad():
            outputs[f"{name} on tokens of shape {(batch, n, dim)}, heads {heads}"] = decode(layer, tokens.clone())
    return outputs


def _same_as_reference(explanation):
    """A verifier comparing every output with the reference's (float32), explaining a difference in words."""

    def verify(student, reference, ctx):
        from autograder.judge.compare import TOLERANCES, compare_value

        for name, expected in reference.items():
            if name not in student or compare_value(name, expected, student[name], TOLERANCES["float32"]):
                yield f"{name}: {explanation}"
                return

    return verify


@check("kv_cache_decode", weight=3, compare_reference=False,
       verify=_same_as_reference("differs from a decoder that computes each token's key and "
                                 "value once, at its own step, and reuses them from the cache at every later step "
                                 "(are earlier keys or values computed again?)"),
       description="decode_with_cache computes each token's key and value once, at its own step, and reuses them "
                   "from the cache (keys or values computed again later show, whatever computes them)")
def cached_keys_computed_once(impl, ref, ctx):
    return _versioned_outputs(impl.kv_cache.decode_with_cache, ref, ctx, "decode_with_cache")


@check("kv_cache_decode", weight=1, compare_reference=False,
       verify=_same_as_reference("differs from a decoder that recomputes the keys and values "
                                 "of the whole prefix at every step (does it reuse earlier keys or values?)"),
       description="decode_without_cache recomputes the keys and values of the whole prefix at every step (keys or "
                   "values reused from earlier steps show)")
def uncached_recomputes_prefix(impl, ref, ctx):
    return _versioned_outputs(impl.kv_cache.decode_without_cache, ref, ctx, "decode_without_cache")


# State kept between calls: a cache on the layer that is never reset is right once and wrong on the next call. The
# layer goes from eval to train mode and back (as a training loop with evaluations does): a cache kept "for
# generation", reset in train mode only, is wrong on the last call (and told apart from one never reset).
AGAIN_DIM, AGAIN_HEADS = 24, 3


def _decoded_twice(decode, name, ref, ctx):
    def fresh_layer():
        ctx.seed_torch()
        return ctx.init_module(ref.attention.MultiHeadAttention(AGAIN_DIM, AGAIN_HEADS))

    def call(layer, case):
        tokens, training = case
        return decode(layer.train(training), tokens.clone())

    first, other = ctx.randn(2, 7, AGAIN_DIM, scale=2.0), ctx.randn(2, 5, AGAIN_DIM, scale=2.0)
    inputs = {"tokens (2, 7, 24), the layer in eval mode": (first, False),
              "other tokens (2, 5, 24), the layer in train mode": (other, True),
              "the first tokens (2, 7, 24) again, the layer in eval mode": (first, False)}
    return called_twice(fresh_layer, call, inputs,
                        what=f"{name}(MultiHeadAttention({AGAIN_DIM}, {AGAIN_HEADS}), tokens)")


@check("kv_cache_decode", weight=2, compare_reference=False, verify=same_as_fresh("decode_with_cache"),
       description="decode_with_cache called again on the same layer (other tokens with the layer in train mode, "
                   "then the first ones in eval mode) gives what it gives on a fresh layer: no cache survives from "
                   "one call to the next, in either mode")
def cached_called_again(impl, ref, ctx):
    return _decoded_twice(impl.kv_cache.decode_with_cache, "decode_with_cache", ref, ctx)


@check("kv_cache_decode", weight=1, compare_reference=False, verify=same_as_fresh("decode_without_cache"),
       description="decode_without_cache called again on the same layer (in eval, train, then eval mode) gives what "
                   "it gives on a fresh layer")
def uncached_called_again(impl, ref, ctx):
    return _decoded_twice(impl.kv_cache.decode_without_cache, "decode_without_cache", ref, ctx)
