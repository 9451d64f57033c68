"""Public tests for the PyTorch part: SelfAttention, CausalSelfAttention and the two multi-head layers."""

import math

import pytest
import torch
from assignment2.modules import (
    CausalSelfAttention,
    MultiHeadCausalAttention,
    MultiHeadCausalAttentionStacked,
    SelfAttention,
    copy_stacked_to_split,
)
from torch import nn

RTOL, ATOL = 1e-5, 1e-6


@pytest.mark.task("self_attention_module")
def test_self_attention_projections_and_shape(generator):
    layer = SelfAttention(4, 6)
    for name in ("W_q", "W_k", "W_v"):
        proj = getattr(layer, name)
        assert isinstance(proj, nn.Linear)
        assert (proj.in_features, proj.out_features) == (4, 6)
        assert proj.bias is None
    assert layer(torch.randn(2, 5, 4, generator=generator)).shape == (2, 5, 6)


@pytest.mark.task("self_attention_module")
def test_self_attention_matches_the_formula(generator):
    layer = SelfAttention(3, 2)
    x = torch.randn(4, 3, generator=generator)
    q, k, v = layer.W_q(x), layer.W_k(x), layer.W_v(x)
    expected = torch.softmax(q @ k.T / math.sqrt(2), dim=-1) @ v
    torch.testing.assert_close(layer(x), expected, rtol=RTOL, atol=ATOL)


@pytest.mark.task("causal_self_attention")
def test_causal_mask_is_a_bool_buffer():
    layer = CausalSelfAttention(4, 3, context_length=5)
    buffers = dict(layer.named_buffers())
    assert "mask" in buffers and "mask" not in dict(layer.named_parameters())
    assert buffers["mask"].dtype == torch.bool
    assert torch.equal(buffers["mask"], torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1))


@pytest.mark.task("causal_self_attention")
def test_causal_self_attention_in_eval_mode(generator):
    layer = CausalSelfAttention(4, 3, context_length=6, dropout=0.5).eval()
    x = torch.randn(2, 6, 4, generator=generator)
    out = layer(x)
    assert out.shape == (2, 6, 3)
    torch.testing.assert_close(layer(x), out, rtol=0, atol=0)  # no dropout in eval mode
    # The first token sees only itself, so it returns its own value vector.
    torch.testing.assert_close(out[:, 0], layer.W_v(x[:, 0]), rtol=RTOL, atol=ATOL)


@pytest.mark.task("causal_self_attention")
def test_causal_self_attention_accepts_shorter_sequences(generator):
    layer = CausalSelfAttention(4, 3, context_length=8, dropout=0.0)
    assert layer(torch.randn(3, 5, 4, generator=generator)).shape == (3, 5, 3)


@pytest.mark.task("multi_head_stacked")
def test_stacked_heads_structure_and_shape(generator):
    layer = MultiHeadCausalAttentionStacked(4, 6, context_length=5, n_heads=3, dropout=0.0)
    assert len(layer.heads) == 3
    assert all(isinstance(head, CausalSelfAttention) for head in layer.heads)
    assert layer.heads[0].W_q.out_features == 2
    assert (layer.out_proj.in_features, layer.out_proj.out_features) == (6, 6)
    assert layer(torch.randn(2, 5, 4, generator=generator)).shape == (2, 5, 6)


@pytest.mark.task("multi_head_stacked")
def test_stacked_heads_reject_heads_that_do_not_divide_d_out():
    with pytest.raises(ValueError):
        MultiHeadCausalAttentionStacked(4, 10, context_length=5, n_heads=4)


@pytest.mark.task("multi_head_split")
def test_split_heads_structure_and_shape(generator):
    layer = MultiHeadCausalAttention(4, 6, context_length=5, n_heads=3, dropout=0.0)
    assert (layer.n_heads, layer.head_dim) == (3, 2)
    assert (layer.W_q.in_features, layer.W_q.out_features) == (4, 6)
    assert dict(layer.named_buffers())["mask"].dtype == torch.bool
    assert layer(torch.randn(2, 5, 4, generator=generator)).shape == (2, 5, 6)


@pytest.mark.task("multi_head_split")
def test_split_heads_reject_heads_that_do_not_divide_d_out():
    with pytest.raises(ValueError):
        MultiHeadCausalAttention(4, 10, context_length=5, n_heads=4)


@pytest.mark.task("weight_copy")
def test_copied_weights_give_the_same_output(generator):
    stacked = MultiHeadCausalAttentionStacked(4, 6, context_length=5, n_heads=3).eval()
    split = MultiHeadCausalAttention(4, 6, context_length=5, n_heads=3).eval()
    copy_stacked_to_split(stacked, split)
    torch.testing.assert_close(split.W_q.weight[2:4], stacked.heads[1].W_q.weight, rtol=0, atol=0)
    x = torch.randn(2, 5, 4, generator=generator)
    with torch.no_grad():
        torch.testing.assert_close(split(x), stacked(x), rtol=1e-5, atol=1e-6)
