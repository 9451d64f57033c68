"""Seeded inputs for probes: each check's seed, the Context that builds inputs from it, torch's pinned state."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

import numpy as np
import torch


def derive_seed(base_seed: int, check_name: str) -> int:
    """Derive a check's seed from the assignment's base seed and the check's name (stable across runs)."""
    digest = hashlib.sha256(f"{base_seed}:{check_name}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


@dataclass
class Context:
    """Seeded input factory and assets handed to a probe; identical in the worker and in the parent.

    Attributes:
        seed: The check's seed.
        assets: Named binary assets of the assignment (e.g. trained weights), read-only bytes.
        reference: The full reference package, set only in the trusted parent when a verifier runs (so a
            verifier can evaluate weights a student's code produced); None in the worker.
    """

    seed: int
    assets: Mapping[str, bytes] = field(default_factory=dict)
    reference: Any = None

    def __post_init__(self) -> None:
        self.generator = torch.Generator().manual_seed(self.seed)

    def randn(self, *shape: int, scale: float = 1.0) -> torch.Tensor:
        """A float32 tensor of standard normal values (times ``scale``) from the check's generator."""
        return torch.randn(*shape, generator=self.generator, dtype=torch.float32) * scale

    def randint(self, low: int, high: int, shape: tuple[int, ...]) -> torch.Tensor:
        """A long tensor of integers in ``[low, high)`` from the check's generator."""
        return torch.randint(low, high, shape, generator=self.generator, dtype=torch.long)

    def seed_torch(self, offset: int = 0) -> None:
        """Seed torch's global generator (for code under test that draws from it, e.g. nn.Linear init)."""
        torch.manual_seed(self.seed + offset)

    def init_module(self, module: torch.nn.Module, scale: float = 0.5) -> torch.nn.Module:
        """Overwrite every parameter of ``module`` with seeded, distinct, non-trivial values.

        LayerNorm weights become ``1 + noise`` and biases noise, so a reused or missing norm cannot hide
        behind the default weight 1 and bias 0. Each parameter's values are drawn from its own name's seed, so
        the student's and the reference's modules agree wherever their parameter names and shapes agree; the
        children of an ``nn.Sequential`` are named by position (its order is its meaning), so
        ``Sequential(OrderedDict(fc1=..., act=..., fc2=...))`` gets the same weights as ``Sequential(a, b, c)``.
        """
        with torch.no_grad():
            for name, param in canonical_parameters(module):
                generator = torch.Generator().manual_seed(derive_seed(self.seed, name))
                noise = torch.randn(*param.shape, generator=generator, dtype=torch.float32) * scale
                is_norm_weight = name.endswith("weight") and param.dim() == 1
                param.copy_(1.0 + noise if is_norm_weight else noise)
        return module


def canonical_parameters(module: torch.nn.Module, prefix: str = "",
                         seen: set[int] | None = None) -> Iterator[tuple[str, torch.nn.Parameter]]:
    """``module.named_parameters()`` (same order, shared parameters once) with each child of an ``nn.Sequential``
    named by its position instead of its label."""
    seen = set() if seen is None else seen
    for name, param in module.named_parameters(recurse=False):
        if id(param) not in seen:
            seen.add(id(param))
            yield prefix + name, param
    for index, (name, child) in enumerate(module.named_children()):
        label = str(index) if isinstance(module, torch.nn.Sequential) else name
        yield from canonical_parameters(child, f"{prefix}{label}.", seen)


def pin_torch_state(seed: int) -> None:
    """Pin torch's (and NumPy's) global state before a probe runs; the worker and the parent both call this, so
    the student's code and the reference see the same default dtype, grad mode, thread count, algorithm flags,
    print options and seeds."""
    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)
    if torch.are_deterministic_algorithms_enabled():  # the call itself costs ~2 s of lazy imports the first time
        torch.use_deterministic_algorithms(False)
    torch.autograd.set_detect_anomaly(False)
    torch.set_float32_matmul_precision("highest")
    torch._C._set_mkldnn_enabled(True)
    torch.set_flush_denormal(False)
    torch.set_printoptions(profile="default")
    np.seterr(divide="warn", over="warn", under="ignore", invalid="warn")
    np.random.seed(seed % 2**32)
    random.seed(seed)
    torch.manual_seed(seed)
