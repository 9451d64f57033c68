"""Scaled dot-product attention, multi-head attention and a pre-norm transformer block."""

import math

import torch
from torch import nn


def causal_mask(n: int) -> torch.Tensor:
    """Build the causal mask for a sequence of n tokens.

    Entry (i, j) is True when key j lies in the future of query i (j > i),
    i.e. exactly the positions a query must not attend to.

    Args:
        n: Sequence length.

    Returns:
        A bool tensor of shape (n, n), True strictly above the diagonal.
    """
    ### BEGIN SOLUTION
    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    ### END SOLUTION


def scaled_dot_product_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attend queries over keys and mix the values with the attention weights.

    weights = softmax(q k^T / sqrt(d_k)) over the keys; out = weights v.
    Any number of leading dimensions is allowed; the shapes below show the
    usual (batch, heads, ...) layout.

    Args:
        q: Queries of shape (batch, heads, n, d_k).
        k: Keys of shape (batch, heads, m, d_k).
        v: Values of shape (batch, heads, m, d_v).
        causal: If True, query i may only attend to keys 0..i (requires n == m).

    Returns:
        A pair (out, weights): out of shape (batch, heads, n, d_v) and
        weights of shape (batch, heads, n, m), each row summing to 1.

    Raises:
        ValueError: If causal is True and the number of queries differs from
            the number of keys.
    """
    ### BEGIN SOLUTION
    n, m = q.shape[-2], k.shape[-2]
    if causal and n != m:
        raise ValueError(
            f"causal attention needs as many queries as keys, found n={n} queries and m={m} keys"
        )
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        scores = scores.masked_fill(causal_mask(n).to(scores.device), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
    ### END SOLUTION


def split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """Split the feature dimension into heads.

    Args:
        x: Tensor of shape (batch, n, dim).
        heads: Number of heads; must divide dim.

    Returns:
        Tensor of shape (batch, heads, n, dim // heads), where head h holds
        features h * d .. (h + 1) * d - 1 of every token (d = dim // heads).

    Raises:
        ValueError: If heads does not divide dim.
    """
    ### BEGIN SOLUTION
    batch, n, dim = x.shape
    if dim % heads != 0:
        raise ValueError(f"heads={heads} must divide dim={dim}")
    return x.reshape(batch, n, heads, dim // heads).transpose(1, 2)
    ### END SOLUTION


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Undo split_heads: concatenate the heads back into one feature dimension.

    Args:
        x: Tensor of shape (batch, heads, n, d).

    Returns:
        Tensor of shape (batch, n, heads * d).
    """
    ### BEGIN SOLUTION
    batch, heads, n, d = x.shape
    return x.transpose(1, 2).reshape(batch, n, heads * d)
    ### END SOLUTION


class MultiHeadAttention(nn.Module):
    """Multi-head (self- or cross-) attention with learned projections.

    Attributes:
        heads: Number of heads.
        q_proj: nn.Linear(dim, dim) producing the queries.
        k_proj: nn.Linear(dim, dim) producing the keys.
        v_proj: nn.Linear(dim, dim) producing the values.
        out_proj: nn.Linear(dim, dim) mixing the merged heads.
    """

    def __init__(self, dim: int, heads: int) -> None:
        """Create the four projections.

        Args:
            dim: Model width (features per token).
            heads: Number of heads; must divide dim.

        Raises:
            ValueError: If heads does not divide dim.
        """
        super().__init__()
        ### BEGIN SOLUTION
        if dim % heads != 0:
            raise ValueError(f"heads={heads} must divide dim={dim}")
        self.heads = heads
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)
        ### END SOLUTION

    def split(self, x: torch.Tensor) -> torch.Tensor:
        """Split projected features into this layer's heads.

        Args:
            x: Tensor of shape (batch, n, dim).

        Returns:
            Tensor of shape (batch, heads, n, dim // heads).
        """
        ### BEGIN SOLUTION
        return split_heads(x, self.heads)
        ### END SOLUTION

    def forward(
        self, x: torch.Tensor, context: torch.Tensor | None = None, causal: bool = False
    ) -> torch.Tensor:
        """Attend from x to itself, or to context for cross-attention.

        Args:
            x: Query tokens of shape (batch, n, dim).
            context: Optional key/value tokens of shape (batch, m, dim).
            causal: Whether query i may only see keys 0..i.

        Returns:
            Tensor of shape (batch, n, dim).
        """
        ### BEGIN SOLUTION
        source = x if context is None else context
        q = self.split(self.q_proj(x))
        k = self.split(self.k_proj(source))
        v = self.split(self.v_proj(source))
        out, _ = scaled_dot_product_attention(q, k, v, causal=causal)
        return self.out_proj(merge_heads(out))
        ### END SOLUTION

    def attention_weights(
        self, x: torch.Tensor, context: torch.Tensor | None = None, causal: bool = False
    ) -> torch.Tensor:
        """Return the attention weights forward would use.

        Args:
            x: Query tokens of shape (batch, n, dim).
            context: Optional key/value tokens of shape (batch, m, dim).
            causal: Whether query i may only see keys 0..i.

        Returns:
            Tensor of shape (batch, heads, n, m) whose rows sum to 1.
        """
        ### BEGIN SOLUTION
        source = x if context is None else context
        q = self.split(self.q_proj(x))
        k = self.split(self.k_proj(source))
        v = self.split(self.v_proj(source))
        _, weights = scaled_dot_product_attention(q, k, v, causal=causal)
        return weights
        ### END SOLUTION


class TransformerBlock(nn.Module):
    """Pre-norm transformer block: attention then MLP, each with a residual.

    Attributes:
        norm1: nn.LayerNorm(dim) applied before attention.
        attn: MultiHeadAttention(dim, heads).
        norm2: nn.LayerNorm(dim) applied before the MLP.
        mlp: Linear(dim, mlp_ratio * dim), GELU, Linear(mlp_ratio * dim, dim).
    """

    def __init__(self, dim: int, heads: int, mlp_ratio: int = 4) -> None:
        """Create the norms, the attention layer and the MLP.

        Args:
            dim: Model width.
            heads: Number of attention heads; must divide dim.
            mlp_ratio: Hidden width of the MLP as a multiple of dim.

        Raises:
            ValueError: If heads does not divide dim.
        """
        super().__init__()
        ### BEGIN SOLUTION
        self.norm1 = nn.LayerNorm(dim)
        self.attn = MultiHeadAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, mlp_ratio * dim),
            nn.GELU(),
            nn.Linear(mlp_ratio * dim, dim),
        )
        ### END SOLUTION

    def forward(self, x: torch.Tensor, causal: bool = False) -> torch.Tensor:
        """Apply x + attn(norm1(x)), then x + mlp(norm2(x)).

        Args:
            x: Tokens of shape (batch, n, dim).
            causal: Whether the attention is causal.

        Returns:
            Tensor of shape (batch, n, dim).
        """
        ### BEGIN SOLUTION
        x = x + self.attn(self.norm1(x), causal=causal)
        return x + self.mlp(self.norm2(x))
        ### END SOLUTION
