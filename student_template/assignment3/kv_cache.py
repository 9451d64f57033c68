"""Token-by-token causal decoding with and without a key/value cache."""

import torch

from .attention import MultiHeadAttention, merge_heads, scaled_dot_product_attention


def decode_with_cache(layer: MultiHeadAttention, tokens: torch.Tensor) -> torch.Tensor:
    """Run causal self-attention one token at a time, caching keys and values.

    At step t only token t goes through q_proj, k_proj and v_proj (input of
    shape (batch, 1, dim)); its key and value are appended to the cache and
    its single query attends over every cached key. No mask is needed: the
    cache holds only the past and the present. Each token's key and value
    are computed once, at its own step, and read back from the cache at
    every later step (never computed again, by any means). Call the layer's
    modules (layer.q_proj(...), ...) rather than using their weights.

    Args:
        layer: The attention layer whose projections are used.
        tokens: Input of shape (batch, n, dim).

    Returns:
        Tensor of shape (batch, n, dim), equal to layer(tokens, causal=True).
    """
    # YOUR CODE HERE
    raise NotImplementedError()


def decode_without_cache(layer: MultiHeadAttention, tokens: torch.Tensor) -> torch.Tensor:
    """Run causal self-attention one token at a time, recomputing the prefix.

    At step t the whole prefix tokens[:, :t + 1] is projected again (its
    keys and values recomputed through k_proj and v_proj, nothing reused
    from earlier steps) and attended causally; only the last row is kept.

    Args:
        layer: The attention layer whose projections are used.
        tokens: Input of shape (batch, n, dim).

    Returns:
        Tensor of shape (batch, n, dim), equal to layer(tokens, causal=True).
    """
    # YOUR CODE HERE
    raise NotImplementedError()


def kv_cache_bytes(
    layers: int,
    kv_heads: int,
    head_dim: int,
    seq_len: int,
    batch: int = 1,
    bytes_per_value: int = 2,
) -> int:
    """Memory a KV cache needs: one key and one value per layer, head and token.

    Args:
        layers: Number of transformer layers.
        kv_heads: Number of key/value heads per layer.
        head_dim: Features per head.
        seq_len: Number of cached tokens.
        batch: Number of sequences decoded together.
        bytes_per_value: Bytes per stored number (2 for 16-bit floats).

    Returns:
        The cache size in bytes.
    """
    # YOUR CODE HERE
    raise NotImplementedError()
