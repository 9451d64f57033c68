"""Hostile suite: a small exact check of causal_mask (the suite's own, independent of the hidden checks)."""

from autograder.probe import check


@check("causal_mask", weight=1, tolerance="exact", description="causal_mask(n) for n = 1, 5, 11")
def mask_values(impl, ref, ctx):
    return {f"causal_mask({n})": impl.attention.causal_mask(n) for n in (1, 5, 11)}
