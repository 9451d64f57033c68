"""Hidden checks of decode_with_cache and decode_without_cache, graded with the reference attention layer.

Values: both decoders must reproduce layer(tokens, causal=True) on several shapes, including a single token,
odd lengths, a head size different from n, and 20 tokens (longer than any plausible sliding window).
Work: forward hooks count the token rows entering q_proj, k_proj and v_proj. With the cache every token is
projected exactly once and one position at a time (batch * n rows, one position per call); without it the
keys and values of the whole prefix are recomputed at every step (batch * n (n + 1) / 2 rows).
"""

import torch

from autograder.probe import check, rows_counter

SHAPES = [  # (batch, n, dim, heads)
    (2, 7, 24, 3),   # head size 8 != n
    (1, 1, 16, 4),   # a single token
    (3, 9, 20, 5),   # odd n, head size 4
    (2, 20, 12, 2),  # longer than a sliding window would keep
]
WORK_SHAPES = [(2, 20, 16, 4), (3, 1, 8, 2), (1, 13, 12, 3)]


def _layer_and_tokens(ref, ctx, batch, n, dim, heads):
    ctx.seed_torch()
    layer = ctx.init_module(ref.attention.MultiHeadAttention(dim, heads))
    return layer, ctx.randn(batch, n, dim, scale=2.0)


def _decoded(decode, ref, ctx, name):
    outputs = {}
    for batch, n, dim, heads in SHAPES:
        layer, tokens = _layer_and_tokens(ref, ctx, batch, n, dim, heads)
        with torch.no_grad():
            out = decode(layer, tokens)
        outputs[f"{name}(MultiHeadAttention({dim}, {heads}), tokens of shape {(batch, n, dim)})"] = out
    return outputs


@check("kv_cache_decode", weight=3,
       description="decode_with_cache equals layer(tokens, causal=True) (one token, odd n, 20 tokens, n != head size)")
def cached_values(impl, ref, ctx):
    return _decoded(impl.kv_cache.decode_with_cache, ref, ctx, "decode_with_cache")


@check("kv_cache_decode", weight=2,
       description="decode_without_cache equals layer(tokens, causal=True) on the same shapes")
def uncached_values(impl, ref, ctx):
    return _decoded(impl.kv_cache.decode_without_cache, ref, ctx, "decode_without_cache")


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


@check("kv_cache_decode", weight=2, compare_reference=False, verify=_cached_work,
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
