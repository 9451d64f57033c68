"""Fixed sinusoidal position vectors."""

import torch


def sinusoidal_positions(length: int, dim: int) -> torch.Tensor:
    """Build the sinusoidal position table of the original transformer.

    Entry (p, 2i) is sin(p / 10000^(2i / dim)) and entry (p, 2i + 1) is
    cos(p / 10000^(2i / dim)); positions start at p = 0.

    Args:
        length: Number of positions.
        dim: Width of each position vector; must be even.

    Returns:
        A float32 tensor of shape (length, dim).

    Raises:
        ValueError: If dim is odd.
    """
    # YOUR CODE HERE
    raise NotImplementedError()
