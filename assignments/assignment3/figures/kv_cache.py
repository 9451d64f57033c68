"""assignment3's KV-cache figures: rows through the key projection while decoding, and the cache's size."""

import torch
from _drawing import difference

from autograder.probe import rows_counter
from autograder.show.figures import Unusable, figure, probe

MAX_TOKENS, DIM, HEADS = 12, 16, 2
KV_HEADS = (32, 8, 1)
SEQ_LENS = tuple(2**e for e in range(16))  # 1 … 32768 tokens
GIB = 2**30


@probe(timeout=15, tasks=("kv_cache_decode",))
def decoding_rows(impl, ctx):
    """decode_with_cache and decode_without_cache for n = 1 … 12 tokens, counting rows through layer.k_proj."""
    outputs = {"with cache": [], "without cache": []}
    for n in range(1, MAX_TOKENS + 1):
        tokens = ctx.randn(1, n, DIM)
        for name, decode in (("with cache", impl.kv_cache.decode_with_cache),
                             ("without cache", impl.kv_cache.decode_without_cache)):
            ctx.seed_torch(n)
            layer = impl.attention.MultiHeadAttention(DIM, HEADS)
            counts = rows_counter(layer.k_proj)
            with torch.no_grad():
                decode(layer, tokens)
            outputs[name].append(counts["rows"])
    with torch.no_grad():  # the public property: both decoders equal the layer's causal forward
        tokens = ctx.randn(1, MAX_TOKENS, DIM)
        expected = layer(tokens, causal=True)
        for name, decode in (("with cache", impl.kv_cache.decode_with_cache),
                             ("without cache", impl.kv_cache.decode_without_cache)):
            outputs[f"{name}: output"] = decode(layer, tokens)
        outputs["layer(tokens, causal=True)"] = expected
    return {key: torch.tensor(value) if isinstance(value, list) else value for key, value in outputs.items()}


@figure(decoding_rows, "Rows sent through the key projection while generating n tokens", caption="""
    Decoding token by token without a cache projects the whole prefix again at every step: 1 + 2 + … + n =
    n(n+1)/2 rows go through k_proj. With a key/value cache only the new token is projected: n rows. The dashed
    lines are these two formulas; your counts are the dots.""")
def projection_rows(data, fig, notes):
    n = torch.arange(1, MAX_TOKENS + 1, dtype=torch.float64)
    cached = data.tensor("with cache", shape=(MAX_TOKENS,))
    uncached = data.tensor("without cache", shape=(MAX_TOKENS,))
    ax = fig.add_subplot()
    ax.plot(n, n * (n + 1) / 2, "--", color="#d62728", alpha=0.5, label="n(n+1)/2")
    ax.plot(n, n, "--", color="#1f77b4", alpha=0.5, label="n")
    ax.plot(n, uncached, "o", color="#d62728", label="decode_without_cache (counted)")
    ax.plot(n, cached, "s", color="#1f77b4", label="decode_with_cache (counted)")
    ax.set_xlabel("tokens generated n")
    ax.set_ylabel("rows through k_proj")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    notes.check(torch.equal(cached, n), f"with the cache: n rows ({MAX_TOKENS} for {MAX_TOKENS} tokens)",
                f"with the cache: {int(cached[-1])} rows for {MAX_TOKENS} tokens, not {MAX_TOKENS}")
    notes.check(torch.equal(uncached, n * (n + 1) / 2),
                f"without the cache: n(n+1)/2 rows ({MAX_TOKENS * (MAX_TOKENS + 1) // 2} for {MAX_TOKENS} tokens)",
                f"without the cache: {int(uncached[-1])} rows for {MAX_TOKENS} tokens, not "
                f"{MAX_TOKENS * (MAX_TOKENS + 1) // 2}")
    expected = data.tensor("layer(tokens, causal=True)")
    for name in ("with cache", "without cache"):
        try:
            out = data.tensor(f"{name}: output", shape=tuple(expected.shape))
        except Unusable as exc:
            notes.bad(f"decode_{name.replace(' ', '_')} of 12 tokens: {exc}")
            continue
        differs = difference(out, expected, 1e-4)
        notes.check(not differs, f"decode_{name.replace(' ', '_')} equals layer(tokens, causal=True)",
                    f"decode_{name.replace(' ', '_')} differs from layer(tokens, causal=True){differs}")


@probe(timeout=10, tasks=("kv_cache_bytes",))
def cache_sizes(impl, ctx):
    """kv_cache_bytes(layers=32, kv_heads, head_dim=128, seq_len) for 32, 8 and 1 key-value heads."""
    returned = [[impl.kv_cache.kv_cache_bytes(32, heads, 128, seq_len) for seq_len in SEQ_LENS] for heads in KV_HEADS]
    sizes = [[_number(value, heads, seq_len) for value, seq_len in zip(row, SEQ_LENS)]
             for row, heads in zip(returned, KV_HEADS)]
    return {"kv_cache_bytes": torch.tensor(sizes, dtype=torch.float64),
            "types": " and ".join(sorted({type(value).__name__ for row in returned for value in row}))}


def _number(value, heads, seq_len):
    """A size in bytes as a float, or a TypeError saying what came back instead (the placeholder shows it)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not (number or isinstance(value, torch.Tensor) and value.numel() == 1):
        raise TypeError(f"kv_cache_bytes(32, {heads}, 128, {seq_len}) returned {value!r:.60} "
                        f"({type(value).__name__}); expected a number of bytes (an int)")
    return float(value)


@figure(cache_sizes, "KV-cache size against tokens, for 32, 8 and 1 key-value heads", caption="""
    A 32-layer model with heads of 128 features stores one key and one value per layer, key-value head and token,
    2 bytes each. The size grows in proportion to the tokens: straight lines of slope 1 on log-log axes. Grouped
    queries with 8 key-value heads need 4 times less, multi-query attention with 1 head 32 times less: the lines
    are parallel, a factor 4 and 32 apart. 4096 tokens with 32 heads take 2 GiB.""")
def cache_size(data, fig, notes):
    sizes = data.tensor("kv_cache_bytes", shape=(len(KV_HEADS), len(SEQ_LENS)))
    ax = fig.add_subplot()
    tokens = torch.tensor(SEQ_LENS, dtype=torch.float64)
    for row, heads in zip(sizes, KV_HEADS):
        ax.loglog(tokens, row / GIB, marker="o", markersize=3, label=f"{heads} key-value heads")
    ax.axhline(2, color="grey", lw=0.6, ls=":")
    ax.set_xlabel("tokens in the cache")
    ax.set_ylabel("cache size (GiB)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    types = data.get("types") if isinstance(data.get("types"), str) else "something else"
    notes.check(types == "int", "a Python int, as the signature says (-> int)",
                f"returns {types}, not int as the signature says (-> int)")
    at_4096 = float(sizes[0, SEQ_LENS.index(4096)])
    notes.check(at_4096 == 2 * GIB, "4096 tokens with 32 key-value heads: 2 GiB",
                f"4096 tokens with 32 key-value heads: {at_4096 / GIB:.3g} GiB, not 2")
    for heads, factor in ((8, 4), (1, 32)):
        ratio = sizes[0] / sizes[KV_HEADS.index(heads)]
        notes.check(bool(torch.allclose(ratio, torch.full_like(ratio, factor))),
                    f"{heads} key-value head{'s' if heads > 1 else ''}: {factor} times smaller at every length",
                    f"{heads} key-value head{'s' if heads > 1 else ''}: {float(ratio.nan_to_num(nan=0).mean()):.3g} "
                    f"times smaller on average, not {factor}")
    doubling = sizes[:, 1:] / sizes[:, :-1]
    notes.check(bool(torch.allclose(doubling, torch.full_like(doubling, 2.0))),
                "twice the tokens, twice the size: proportional to the sequence length",
                "the size is not proportional to the number of tokens")
