"""Hidden checks of causal_mask: literal values, dtype and shape for several lengths."""

from autograder.probe import check


@check("causal_mask", weight=2, description="causal_mask(n) for n = 1, 2, 5, 11 (values, dtype bool, shape (n, n))",
       tolerance="exact")
def mask_values(impl, ref, ctx):
    return {f"causal_mask({n})": impl.attention.causal_mask(n) for n in (1, 2, 5, 11)}


@check("causal_mask", weight=1, description="causal_mask(64): True exactly above the diagonal", tolerance="exact")
def mask_large(impl, ref, ctx):
    return {"causal_mask(64)": impl.attention.causal_mask(64)}
