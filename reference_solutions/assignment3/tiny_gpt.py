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
    ### BEGIN SOLUTION
    start = torch.randint(0, VOCAB, (batch, 1), generator=generator)
    step = torch.randint(0, VOCAB, (batch, 1), generator=generator)
    return (start + step * torch.arange(length)) % VOCAB
    ### END SOLUTION


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
        ### BEGIN SOLUTION
        self.tokens = nn.Embedding(vocab, dim)
        self.register_buffer("positions", sinusoidal_positions(MAX_LENGTH, dim))
        self.blocks = nn.ModuleList(TransformerBlock(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)
        ### END SOLUTION

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """Add position vectors to token embeddings.

        Args:
            ids: Long tensor of shape (batch, n) with n <= 64.

        Returns:
            Tensor of shape (batch, n, dim).

        Raises:
            ValueError: If n exceeds 64.
        """
        ### BEGIN SOLUTION
        n, max_length = ids.shape[1], self.positions.shape[0]
        if n > max_length:
            raise ValueError(f"sequences may have at most {max_length} tokens, found {n}")
        return self.tokens(ids) + self.positions[:n]
        ### END SOLUTION

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Compute next-token logits with causal blocks.

        Args:
            ids: Long tensor of shape (batch, n) with n <= 64.

        Returns:
            Logits of shape (batch, n, vocab); row t predicts token t + 1.

        Raises:
            ValueError: If n exceeds 64.
        """
        ### BEGIN SOLUTION
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x, causal=True)
        return self.head(self.norm(x))
        ### END SOLUTION

    def attention_maps(self, ids: torch.Tensor) -> list[torch.Tensor]:
        """Collect the causal attention weights of every block.

        Args:
            ids: Long tensor of shape (batch, n) with n <= 64.

        Returns:
            One tensor of shape (batch, heads, n, n) per block, in order.

        Raises:
            ValueError: If n exceeds 64.
        """
        ### BEGIN SOLUTION
        x = self.embed(ids)
        maps = []
        for block in self.blocks:
            maps.append(block.attn.attention_weights(block.norm1(x), causal=True))
            x = block(x, causal=True)
        return maps
        ### END SOLUTION


def next_token_loss(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of each position's prediction of the next token.

    Args:
        logits: Tensor of shape (batch, n, vocab).
        ids: Long tensor of shape (batch, n).

    Returns:
        A scalar tensor: cross-entropy of logits[:, :-1] against ids[:, 1:].
    """
    ### BEGIN SOLUTION
    vocab = logits.shape[-1]
    return F.cross_entropy(logits[:, :-1].reshape(-1, vocab), ids[:, 1:].reshape(-1))
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    model.eval()
    with torch.no_grad():
        predictions = model(ids)[:, 1:-1].argmax(dim=-1)
    return (predictions == ids[:, 2:]).float().mean().item()
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    ids = prefix.unsqueeze(0) if prefix.dim() == 1 else prefix
    model.eval()
    with torch.no_grad():
        for _ in range(new_tokens):
            next_id = model(ids)[:, -1].argmax(dim=-1, keepdim=True)
            ids = torch.cat([ids, next_id], dim=1)
    return ids.squeeze(0) if prefix.dim() == 1 else ids
    ### END SOLUTION


def train(steps: int = 1500, seed: int = 0) -> tuple[TinyGPT, list[float]]:
    """Train a TinyGPT on fresh progression batches with AdamW.

    Args:
        steps: Number of optimisation steps (one batch each).
        seed: Seeds both the initial weights and the batch generator.

    Returns:
        A pair (model, losses): the trained model in eval mode and the
        training loss of every step as Python floats.
    """
    ### BEGIN SOLUTION
    torch.manual_seed(seed)
    model = TinyGPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    generator = torch.Generator().manual_seed(seed)
    losses = []
    model.train()
    for _ in range(steps):
        ids = progression_batch(BATCH_SIZE, generator=generator)
        loss = next_token_loss(model(ids), ids)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model.eval(), losses
    ### END SOLUTION
