"""Public tests for cached decoding and the KV cache size formula."""

import pytest
import torch
from assignment3.attention import MultiHeadAttention
from assignment3.kv_cache import decode_with_cache, decode_without_cache, kv_cache_bytes

RTOL, ATOL = 1e-5, 1e-5
GIB = 2**30


def make_layer_and_tokens(generator: torch.Generator) -> tuple[MultiHeadAttention, torch.Tensor]:
    """A small attention layer (4 heads of 8) and a batch of 3 sequences of 7 tokens."""
    layer = MultiHeadAttention(32, 4)
    tokens = torch.randn(3, 7, 32, generator=generator)
    return layer, tokens


@pytest.mark.task("kv_cache_decode")
def test_cached_decoding_matches_causal_attention(generator):
    layer, tokens = make_layer_and_tokens(generator)
    with torch.no_grad():
        expected = layer(tokens, causal=True)
        cached = decode_with_cache(layer, tokens)
    assert cached.shape == (3, 7, 32)
    torch.testing.assert_close(cached, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.task("kv_cache_decode")
def test_uncached_decoding_matches_causal_attention(generator):
    layer, tokens = make_layer_and_tokens(generator)
    with torch.no_grad():
        expected = layer(tokens, causal=True)
        uncached = decode_without_cache(layer, tokens)
    assert uncached.shape == (3, 7, 32)
    torch.testing.assert_close(uncached, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.task("kv_cache_bytes")
def test_cache_of_a_7b_style_model_is_two_gib():
    size = kv_cache_bytes(layers=32, kv_heads=32, head_dim=128, seq_len=4096)
    assert isinstance(size, int)
    assert size == 2 * GIB


@pytest.mark.task("kv_cache_bytes")
def test_fewer_kv_heads_shrink_the_cache():
    full = kv_cache_bytes(32, 32, 128, 4096)
    assert kv_cache_bytes(32, 8, 128, 4096) * 4 == full
    assert kv_cache_bytes(32, 32, 128, 4096, batch=2, bytes_per_value=4) == 4 * full
