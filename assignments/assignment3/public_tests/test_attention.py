"""Public tests for causal_mask, attention, head splitting, multi-head attention and the block."""

import pytest
import torch
from assignment3.attention import (
    MultiHeadAttention,
    TransformerBlock,
    causal_mask,
    merge_heads,
    scaled_dot_product_attention,
    split_heads,
)
from torch import nn

RTOL, ATOL = 1e-5, 1e-6
BATCH, HEADS, N_QUERIES, N_KEYS, D_HEAD = 3, 4, 7, 10, 8
DIM = HEADS * D_HEAD


@pytest.mark.task("causal_mask")
def test_causal_mask_literal_values_for_four_tokens():
    expected = torch.tensor(
        [
            [False, True, True, True],
            [False, False, True, True],
            [False, False, False, True],
            [False, False, False, False],
        ]
    )
    mask = causal_mask(4)
    assert mask.dtype == torch.bool
    assert torch.equal(mask, expected)


@pytest.mark.task("causal_mask")
def test_causal_mask_single_token_sees_itself():
    assert torch.equal(causal_mask(1), torch.tensor([[False]]))


@pytest.mark.task("attention")
def test_attention_shapes_for_non_square_inputs(generator):
    q = torch.randn(BATCH, HEADS, N_QUERIES, D_HEAD, generator=generator)
    k = torch.randn(BATCH, HEADS, N_KEYS, D_HEAD, generator=generator)
    v = torch.randn(BATCH, HEADS, N_KEYS, 5, generator=generator)
    out, weights = scaled_dot_product_attention(q, k, v)
    assert out.shape == (BATCH, HEADS, N_QUERIES, 5)
    assert weights.shape == (BATCH, HEADS, N_QUERIES, N_KEYS)
    assert out.dtype == weights.dtype == torch.float32


@pytest.mark.task("attention")
def test_attention_worked_example():
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    out, weights = scaled_dot_product_attention(x[None, None], x[None, None], x[None, None])
    expected_weights = torch.tensor(
        [[0.401, 0.198, 0.401], [0.198, 0.401, 0.401], [0.248, 0.248, 0.503]]
    )
    expected_out = torch.tensor([[0.802, 0.599], [0.599, 0.802], [0.752, 0.752]])
    torch.testing.assert_close(weights[0, 0], expected_weights, rtol=0, atol=5e-4)
    torch.testing.assert_close(out[0, 0], expected_out, rtol=0, atol=5e-4)


@pytest.mark.task("attention")
def test_attention_rows_sum_to_one(generator):
    q = torch.randn(BATCH, HEADS, N_QUERIES, D_HEAD, generator=generator)
    k = torch.randn(BATCH, HEADS, N_KEYS, D_HEAD, generator=generator)
    v = torch.randn(BATCH, HEADS, N_KEYS, D_HEAD, generator=generator)
    _, weights = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(
        weights.sum(dim=-1), torch.ones(BATCH, HEADS, N_QUERIES), rtol=RTOL, atol=ATOL
    )


@pytest.mark.task("attention")
def test_causal_attention_is_zero_above_the_diagonal(generator):
    q, k, v = torch.randn(3, BATCH, HEADS, N_QUERIES, D_HEAD, generator=generator)
    out, weights = scaled_dot_product_attention(q, k, v, causal=True)
    future = torch.triu(torch.ones(N_QUERIES, N_QUERIES, dtype=torch.bool), diagonal=1)
    assert torch.all(weights[..., future] == 0)
    torch.testing.assert_close(
        weights.sum(dim=-1), torch.ones(BATCH, HEADS, N_QUERIES), rtol=RTOL, atol=ATOL
    )
    # The first query can only see the first key, so it copies the first value.
    torch.testing.assert_close(out[..., 0, :], v[..., 0, :], rtol=RTOL, atol=ATOL)


@pytest.mark.task("attention")
def test_causal_attention_rejects_different_query_and_key_counts(generator):
    q = torch.randn(BATCH, HEADS, N_QUERIES, D_HEAD, generator=generator)
    k = torch.randn(BATCH, HEADS, N_KEYS, D_HEAD, generator=generator)
    with pytest.raises(ValueError):
        scaled_dot_product_attention(q, k, k, causal=True)


@pytest.mark.task("head_split")
def test_split_heads_shape_and_layout(generator):
    x = torch.randn(BATCH, N_QUERIES, DIM, generator=generator)
    heads = split_heads(x, HEADS)
    assert heads.shape == (BATCH, HEADS, N_QUERIES, D_HEAD)
    # Head 1 holds features 8..15 of every token.
    torch.testing.assert_close(heads[:, 1], x[..., D_HEAD : 2 * D_HEAD], rtol=0, atol=0)


@pytest.mark.task("head_split")
def test_merge_heads_undoes_split_heads(generator):
    x = torch.randn(BATCH, N_QUERIES, DIM, generator=generator)
    merged = merge_heads(split_heads(x, HEADS))
    assert merged.shape == (BATCH, N_QUERIES, DIM)
    torch.testing.assert_close(merged, x, rtol=0, atol=0)


@pytest.mark.task("head_split")
def test_split_heads_rejects_heads_that_do_not_divide_dim(generator):
    x = torch.randn(BATCH, N_QUERIES, 30, generator=generator)
    with pytest.raises(ValueError):
        split_heads(x, 4)


@pytest.mark.task("multi_head_attention")
def test_multi_head_attention_projections():
    layer = MultiHeadAttention(DIM, HEADS)
    assert layer.heads == HEADS
    for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
        proj = getattr(layer, name)
        assert isinstance(proj, nn.Linear)
        assert (proj.in_features, proj.out_features) == (DIM, DIM)
        assert proj.bias is not None


@pytest.mark.task("multi_head_attention")
def test_multi_head_self_attention_shapes(generator):
    layer = MultiHeadAttention(DIM, HEADS)
    x = torch.randn(BATCH, N_QUERIES, DIM, generator=generator)
    assert layer(x).shape == (BATCH, N_QUERIES, DIM)
    assert layer(x, causal=True).shape == (BATCH, N_QUERIES, DIM)
    weights = layer.attention_weights(x)
    assert weights.shape == (BATCH, HEADS, N_QUERIES, N_QUERIES)


@pytest.mark.task("multi_head_attention")
def test_multi_head_causal_weights_hide_the_future(generator):
    # Fails too while causal_mask fails: fix that first.
    layer = MultiHeadAttention(DIM, HEADS)
    x = torch.randn(BATCH, N_QUERIES, DIM, generator=generator)
    weights = layer.attention_weights(x, causal=True)
    future = torch.triu(torch.ones(N_QUERIES, N_QUERIES, dtype=torch.bool), diagonal=1)
    assert torch.all(weights[..., future] == 0)


@pytest.mark.task("multi_head_attention")
def test_multi_head_cross_attention_shapes(generator):
    layer = MultiHeadAttention(DIM, HEADS)
    x = torch.randn(BATCH, N_QUERIES, DIM, generator=generator)
    context = torch.randn(BATCH, N_KEYS, DIM, generator=generator)
    assert layer(x, context=context).shape == (BATCH, N_QUERIES, DIM)
    weights = layer.attention_weights(x, context=context)
    assert weights.shape == (BATCH, HEADS, N_QUERIES, N_KEYS)
    torch.testing.assert_close(
        weights.sum(dim=-1), torch.ones(BATCH, HEADS, N_QUERIES), rtol=RTOL, atol=ATOL
    )


@pytest.mark.task("multi_head_attention")
def test_multi_head_attention_rejects_heads_that_do_not_divide_dim():
    with pytest.raises(ValueError):
        MultiHeadAttention(30, 4)


@pytest.mark.task("transformer_block")
def test_transformer_block_parts():
    block = TransformerBlock(DIM, HEADS)
    assert isinstance(block.norm1, nn.LayerNorm) and isinstance(block.norm2, nn.LayerNorm)
    assert isinstance(block.attn, MultiHeadAttention)
    first, activation, last = block.mlp
    assert (first.in_features, first.out_features) == (DIM, 4 * DIM)
    assert isinstance(activation, nn.GELU)
    assert (last.in_features, last.out_features) == (4 * DIM, DIM)


@pytest.mark.task("transformer_block")
def test_transformer_block_output_shape(generator):
    block = TransformerBlock(DIM, HEADS, mlp_ratio=2)
    x = torch.randn(BATCH, N_QUERIES, DIM, generator=generator)
    assert block(x).shape == (BATCH, N_QUERIES, DIM)
    assert block(x, causal=True).shape == (BATCH, N_QUERIES, DIM)
