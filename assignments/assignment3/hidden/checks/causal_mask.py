"""Hidden checks of causal_mask: dtype and shape, the True/False pattern, exact values for long sequences.

The pattern check converts the mask to bool first, so a mask with the right pattern but the wrong dtype
loses only the dtype check (and the exact-value check), not everything. The dtype-and-shape check is gated on the
pattern (probe.gated): an all-False or all-True bool tensor of the right shape earns nothing.
"""

import torch

from autograder.probe import check, gate_values, gated, tensor_is

LENGTHS = (1, 2, 5, 11)


_mask_types = tensor_is({f"causal_mask({n})": (n, n) for n in (1, 6)}, dtype=torch.bool)


@check("causal_mask", weight=1, verify=gated(_mask_types, what="causal_mask"), compare_reference=False,
       description="causal_mask(n) returns a bool tensor of shape (n, n)")
def mask_dtype_and_shape(impl, ref, ctx):
    masks = {f"causal_mask({n})": impl.attention.causal_mask(n) for n in (1, 6)}
    return {**masks, **gate_values({f"{name} as bool": torch.as_tensor(mask).bool() for name, mask in masks.items()})}


@check("causal_mask", weight=2, tolerance="exact",
       description="causal_mask(n) for several small n is True exactly where key j lies after query i (j > i)")
def mask_pattern(impl, ref, ctx):
    return {f"causal_mask({n}) as bool": torch.as_tensor(impl.attention.causal_mask(n)).bool() for n in LENGTHS}


@check("causal_mask", weight=1, tolerance="exact",
       description="causal_mask(n) for long, odd and even n: exact values, dtype bool, shape (n, n)")
def mask_large(impl, ref, ctx):
    return {f"causal_mask({n})": impl.attention.causal_mask(n) for n in (33, 64, 65, 130)}


@check("causal_mask", weight=1, tolerance="exact",
       description="each call returns a fresh mask: changing one returned mask changes no later result")
def fresh_masks(impl, ref, ctx):
    first = impl.attention.causal_mask(7)
    if isinstance(first, torch.Tensor):
        first.fill_(False) if first.dtype == torch.bool else first.fill_(0)
    return {"causal_mask(7) after an earlier result was overwritten": impl.attention.causal_mask(7),
            "causal_mask(3) after an earlier result was overwritten": impl.attention.causal_mask(3)}
