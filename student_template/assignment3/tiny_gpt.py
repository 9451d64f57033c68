"""A tiny GPT that learns to continue arithmetic progressions modulo 10."""

import torch
from torch import nn
from torch.nn import functional as F

from .attention import TransformerBlock
from .positions import sinusoidal_positions

VOCAB = 10
MAX_LENGTH = 64
LEARNING_RATE = 3e-3
BATCH_SIZE = 64


def progression_batch(
    batch: int, length: int = 12, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Sample arithmetic progressions modulo 10.

    Row b is (start_b + step_b * p) mod 10 for p = 0 .. length - 1, with
    start_b and step_b drawn uniformly from 0..9.

    Args:
        batch: Number of sequences.
        length: Tokens per sequence.
        generator: Optional random generator for reproducible batches.

    Returns:
        A long tensor of shape (batch, length) with values in 0..9.
    """
    # YOUR CODE HERE
    raise NotImplementedError()


class TinyGPT(nn.Module):
    """A decoder-only transformer over the digits 0..9.

    Attributes:
        tokens: nn.Embedding(vocab, dim) for the token ids.
        positions: Buffer sinusoidal_positions(64, dim) of shape (64, dim).
        blocks: nn.ModuleList of depth TransformerBlock(dim, heads).
        norm: Final nn.LayerNorm(dim).
        head: nn.Linear(dim, vocab) producing the next-token logits.
    """

    def __init__(self, vocab: int = VOCAB, dim: int = 64, heads: int = 4, depth: int = 2) -> None:
        """Create the embeddings, blocks, final norm and output head.

        Args:
            vocab: Number of token ids.
            dim: Model width.
            heads: Attention heads per block; must divide dim.
            depth: Number of transformer blocks.
        """
        super().__init__()
        # YOUR CODE HERE
        raise NotImplementedError()

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """Add position vectors to token embeddings.

        Args:
            ids: Long tensor of shape (batch, n) with n <= 64.

        Returns:
            Tensor of shape (batch, n, dim).

        Raises:
            ValueError: If n exceeds 64.
        """
        # YOUR CODE HERE
        raise NotImplementedError()

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Compute next-token logits with causal blocks.

        Args:
            ids: Long tensor of shape (batch, n) with n <= 64.

        Returns:
            Logits of shape (batch, n, vocab); row t predicts token t + 1.

        Raises:
            ValueError: If n exceeds 64.
        """
        # YOUR CODE HERE
        raise NotImplementedError()

    def attention_maps(self, ids: torch.Tensor) -> list[torch.Tensor]:
        """Collect the causal attention weights of every block.

        Args:
            ids: Long tensor of shape (batch, n) with n <= 64.

        Returns:
            One tensor of shape (batch, heads, n, n) per block, in order.

        Raises:
            ValueError: If n exceeds 64.
        """
        # YOUR CODE HERE
        raise NotImplementedError()


def next_token_loss(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of each position's prediction of the next token.

    Args:
        logits: Tensor of shape (batch, n, vocab).
        ids: Long tensor of shape (batch, n).

    Returns:
        A scalar tensor: cross-entropy of logits[:, :-1] against ids[:, 1:].
    """
    # YOUR CODE HERE
    raise NotImplementedError()


def predictable_accuracy(model: nn.Module, ids: torch.Tensor) -> float:
    """Share of correct greedy predictions from the third token on.

    The first two tokens fix a progression, so the predictions made at
    positions 1 .. n - 2 (of tokens 2 .. n - 1) are the predictable ones.

    Args:
        model: A model mapping (batch, n) ids to (batch, n, vocab) logits.
        ids: Long tensor of shape (batch, n) with n >= 3.

    Returns:
        The accuracy as a Python float in [0, 1].
    """
    # YOUR CODE HERE
    raise NotImplementedError()


def generate(model: nn.Module, prefix: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """Greedily extend a prefix one token at a time.

    Args:
        model: A model mapping (batch, n) ids to (batch, n, vocab) logits.
        prefix: Long tensor of shape (n,) or (batch, n).
        new_tokens: Number of tokens to append.

    Returns:
        The prefix followed by the new tokens, shape (n + new_tokens,) or
        (batch, n + new_tokens) to match the prefix.
    """
    # YOUR CODE HERE
    raise NotImplementedError()


def train(steps: int = 1500, seed: int = 0) -> tuple[TinyGPT, list[float]]:
    """Train a TinyGPT on fresh progression batches with AdamW.

    Args:
        steps: Number of optimisation steps (one batch each).
        seed: Seeds both the initial weights and the batch generator.

    Returns:
        A pair (model, losses): the trained model in eval mode and the
        training loss of every step as Python floats.
    """
    # YOUR CODE HERE
    raise NotImplementedError()
