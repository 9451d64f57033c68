"""Self-attention, causal self-attention and multi-head causal attention as PyTorch modules.

Every module takes a batch of token vectors x of shape (batch, n, d_in) and returns context vectors of shape
(batch, n, d_out). The names of the attributes below are part of the contract: the grader looks them up.
"""

import math

import torch
from torch import nn


class SelfAttention(nn.Module):
    """Single-head self-attention with trainable query, key and value projections, no mask, no dropout.

    weights = softmax(Q K^T / sqrt(d_out)) over the keys, out = weights V, where Q = W_q(x), K = W_k(x),
    V = W_v(x).

    Attributes:
        W_q: nn.Linear(d_in, d_out, bias=bias), the query projection.
        W_k: nn.Linear(d_in, d_out, bias=bias), the key projection.
        W_v: nn.Linear(d_in, d_out, bias=bias), the value projection.
    """

    def __init__(self, d_in: int, d_out: int, bias: bool = False) -> None:
        """Create the three projections.

        Args:
            d_in: Features per input token.
            d_out: Features per query, key, value and output vector.
            bias: Whether the three projections have a bias.
        """
        super().__init__()
        ### BEGIN SOLUTION
        self.W_q = nn.Linear(d_in, d_out, bias=bias)
        self.W_k = nn.Linear(d_in, d_out, bias=bias)
        self.W_v = nn.Linear(d_in, d_out, bias=bias)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Attend every token to every token.

        Args:
            x: Tokens of shape (batch, n, d_in), or (n, d_in) (any number of leading dimensions).

        Returns:
            Context vectors of shape (batch, n, d_out) (the leading dimensions of x, then d_out).
        """
        ### BEGIN SOLUTION
        queries, keys, values = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = queries @ keys.transpose(-2, -1) / math.sqrt(keys.shape[-1])
        weights = torch.softmax(scores, dim=-1)
        return weights @ values
        ### END SOLUTION


class CausalSelfAttention(nn.Module):
    """Single-head causal self-attention with dropout on the attention weights.

    In order: scores = Q K^T, scaled by 1 / sqrt(d_out); future keys (j > i) masked with -inf; softmax over
    the keys; dropout on the weights; out = weights V. In eval mode (module.eval()) dropout does nothing and
    the output is deterministic.

    Attributes:
        W_q: nn.Linear(d_in, d_out, bias=bias), the query projection.
        W_k: nn.Linear(d_in, d_out, bias=bias), the key projection.
        W_v: nn.Linear(d_in, d_out, bias=bias), the value projection.
        dropout: nn.Dropout(dropout), applied to the attention weights.
        mask: Registered buffer (not a parameter), a bool tensor of shape (context_length, context_length),
            True strictly above the diagonal (where key j lies in the future of query i). Being a buffer, it
            follows module.to(device) and is saved in the state dict; being bool, module.to(torch.float64)
            leaves it bool.
    """

    def __init__(self, d_in: int, d_out: int, context_length: int, dropout: float = 0.1,
                 bias: bool = False) -> None:
        """Create the projections, the dropout and the causal mask buffer.

        Args:
            d_in: Features per input token.
            d_out: Features per query, key, value and output vector.
            context_length: The longest sequence the module accepts (the mask's size).
            dropout: Probability of zeroing each attention weight in training mode.
            bias: Whether the three projections have a bias.
        """
        super().__init__()
        ### BEGIN SOLUTION
        self.W_q = nn.Linear(d_in, d_out, bias=bias)
        self.W_k = nn.Linear(d_in, d_out, bias=bias)
        self.W_v = nn.Linear(d_in, d_out, bias=bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        )
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Attend every token to itself and the tokens before it.

        Args:
            x: Tokens of shape (batch, n, d_in) with n <= context_length.

        Returns:
            Context vectors of shape (batch, n, d_out).

        Raises:
            ValueError: If n is larger than context_length.
        """
        ### BEGIN SOLUTION
        batch, n, _ = x.shape
        if n > self.mask.shape[0]:
            raise ValueError(f"sequence of {n} tokens is longer than context_length={self.mask.shape[0]}")
        queries, keys, values = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = queries @ keys.transpose(1, 2) / math.sqrt(keys.shape[-1])
        scores = scores.masked_fill(self.mask[:n, :n], float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        weights = self.dropout(weights)
        return weights @ values
        ### END SOLUTION


class MultiHeadCausalAttentionStacked(nn.Module):
    """Multi-head causal attention as a list of single-head layers whose outputs are concatenated.

    Head h is a CausalSelfAttention(d_in, d_out // n_heads, context_length, dropout, bias); the heads'
    outputs are concatenated along the features in head order (head 0 first), then mixed by out_proj.

    Attributes:
        heads: nn.ModuleList of n_heads CausalSelfAttention layers of width d_out // n_heads.
        out_proj: nn.Linear(d_out, d_out) (with a bias), applied to the concatenated heads.
    """

    def __init__(self, d_in: int, d_out: int, context_length: int, n_heads: int, dropout: float = 0.1,
                 bias: bool = False) -> None:
        """Create the heads and the output projection.

        Args:
            d_in: Features per input token.
            d_out: Features of the output (all heads together); n_heads must divide it.
            context_length: The longest sequence the layer accepts.
            n_heads: Number of heads.
            dropout: Dropout probability on every head's attention weights.
            bias: Whether the heads' query, key and value projections have a bias.

        Raises:
            ValueError: If n_heads does not divide d_out.
        """
        super().__init__()
        ### BEGIN SOLUTION
        if d_out % n_heads != 0:
            raise ValueError(f"n_heads={n_heads} must divide d_out={d_out}")
        self.heads = nn.ModuleList(
            [CausalSelfAttention(d_in, d_out // n_heads, context_length, dropout, bias) for _ in range(n_heads)]
        )
        self.out_proj = nn.Linear(d_out, d_out)
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Run every head on x, concatenate their outputs, and project.

        Args:
            x: Tokens of shape (batch, n, d_in) with n <= context_length.

        Returns:
            Tensor of shape (batch, n, d_out).
        """
        ### BEGIN SOLUTION
        return self.out_proj(torch.cat([head(x) for head in self.heads], dim=-1))
        ### END SOLUTION


class MultiHeadCausalAttention(nn.Module):
    """Multi-head causal attention with one wide projection per role, split into heads.

    Q = W_q(x) (batch, n, d_out) is split into n_heads heads of head_dim = d_out // n_heads features
    (head h gets features h * head_dim .. (h + 1) * head_dim - 1), giving (batch, n_heads, n, head_dim);
    likewise K and V. All heads attend at once: scores scaled by 1 / sqrt(head_dim), future keys masked with
    -inf, softmax over the keys, dropout on the weights, times V. The heads are merged back to
    (batch, n, d_out) (head 0's features first) and mixed by out_proj. With the weights copied across
    (copy_stacked_to_split) it computes the same function as MultiHeadCausalAttentionStacked.

    Attributes:
        n_heads: Number of heads.
        head_dim: Features per head, d_out // n_heads.
        W_q: nn.Linear(d_in, d_out, bias=bias), the queries of all heads.
        W_k: nn.Linear(d_in, d_out, bias=bias), the keys of all heads.
        W_v: nn.Linear(d_in, d_out, bias=bias), the values of all heads.
        out_proj: nn.Linear(d_out, d_out) (with a bias), applied to the merged heads.
        dropout: nn.Dropout(dropout), applied to the attention weights.
        mask: Registered bool buffer of shape (context_length, context_length), True strictly above the
            diagonal (as in CausalSelfAttention).
    """

    def __init__(self, d_in: int, d_out: int, context_length: int, n_heads: int, dropout: float = 0.1,
                 bias: bool = False) -> None:
        """Create the projections, the dropout and the causal mask buffer.

        Args:
            d_in: Features per input token.
            d_out: Features of the output (all heads together); n_heads must divide it.
            context_length: The longest sequence the layer accepts.
            n_heads: Number of heads.
            dropout: Dropout probability on the attention weights.
            bias: Whether W_q, W_k and W_v have a bias.

        Raises:
            ValueError: If n_heads does not divide d_out.
        """
        super().__init__()
        ### BEGIN SOLUTION
        if d_out % n_heads != 0:
            raise ValueError(f"n_heads={n_heads} must divide d_out={d_out}")
        self.n_heads = n_heads
        self.head_dim = d_out // n_heads
        self.W_q = nn.Linear(d_in, d_out, bias=bias)
        self.W_k = nn.Linear(d_in, d_out, bias=bias)
        self.W_v = nn.Linear(d_in, d_out, bias=bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        )
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Attend with all heads at once.

        Args:
            x: Tokens of shape (batch, n, d_in) with n <= context_length.

        Returns:
            Tensor of shape (batch, n, d_out).

        Raises:
            ValueError: If n is larger than context_length.
        """
        ### BEGIN SOLUTION
        batch, n, _ = x.shape
        if n > self.mask.shape[0]:
            raise ValueError(f"sequence of {n} tokens is longer than context_length={self.mask.shape[0]}")

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(batch, n, self.n_heads, self.head_dim).transpose(1, 2)

        queries, keys, values = split(self.W_q(x)), split(self.W_k(x)), split(self.W_v(x))
        scores = queries @ keys.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:n, :n], float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        context = (weights @ values).transpose(1, 2).reshape(batch, n, self.n_heads * self.head_dim)
        return self.out_proj(context)
        ### END SOLUTION


def copy_stacked_to_split(stacked: "MultiHeadCausalAttentionStacked", split: "MultiHeadCausalAttention") -> None:
    """Copy a stacked layer's weights into a split one, so that both compute the same function.

    Head h's W_q weight (head_dim rows) becomes rows h * head_dim .. (h + 1) * head_dim - 1 of split.W_q's
    weight, and likewise for W_k and W_v (and their biases, when the layers have them); out_proj's weight
    and bias are copied unchanged. ``split`` is modified in place (without recording gradients);
    ``stacked`` is left unchanged.

    Args:
        stacked: The source layer.
        split: The destination layer, built with the same d_in, d_out, n_heads and bias.

    Raises:
        ValueError: If the layers have different numbers of heads, or a weight or bias of one has no
            counterpart of the same shape in the other.
    """
    ### BEGIN SOLUTION
    if len(stacked.heads) != split.n_heads:
        raise ValueError(f"the stacked layer has {len(stacked.heads)} heads, the split layer {split.n_heads}")
    pairs = [(stacked.out_proj.weight, split.out_proj.weight), (stacked.out_proj.bias, split.out_proj.bias)]
    for name in ("W_q", "W_k", "W_v"):
        target = getattr(split, name)
        sources = [getattr(head, name) for head in stacked.heads]
        pairs.append((torch.cat([source.weight for source in sources], dim=0), target.weight))
        biases = [source.bias for source in sources]
        if (target.bias is None) != (biases[0] is None):
            raise ValueError(f"{name}: one layer has biases and the other has none")
        if target.bias is not None:
            pairs.append((torch.cat(biases, dim=0), target.bias))
    for source, target in pairs:
        if source.shape != target.shape:
            raise ValueError(f"cannot copy a weight of shape {tuple(source.shape)} into one of shape "
                             f"{tuple(target.shape)}")
    with torch.no_grad():
        for source, target in pairs:
            target.copy_(source)
    ### END SOLUTION
