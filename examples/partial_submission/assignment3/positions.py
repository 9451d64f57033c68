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
    if dim % 2 != 0:
        raise ValueError(f"dim must be even to pair sines with cosines, found dim={dim}")
    positions = torch.arange(length, dtype=torch.float64).unsqueeze(1)
    frequencies = 10000.0 ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    angles = positions * frequencies
    table = torch.zeros(length, dim, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table.to(torch.float32)
