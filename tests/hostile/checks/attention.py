"""Hostile suite: scaled_dot_product_attention compared with the reference, plus one verify-only check and one
whose probe compares in the job (as tiny_gpt_training's does: two trained models told apart with torch.equal)."""

import numpy
import torch

from autograder.probe import check


def _inputs(ctx, n, m):
    return ctx.randn(2, 3, n, 4), ctx.randn(2, 3, m, 4), ctx.randn(2, 3, m, 5)


@check("attention", weight=2, description="values and weights on random inputs (n != m)")
def random_values(impl, ref, ctx):
    out, weights = impl.attention.scaled_dot_product_attention(*_inputs(ctx, 3, 6))
    return {"out": out, "weights": weights}


@check("attention", weight=1, description="causal=True on square inputs")
def causal_values(impl, ref, ctx):
    out, weights = impl.attention.scaled_dot_product_attention(*_inputs(ctx, 5, 5), causal=True)
    return {"causal out": out, "causal weights": weights}


def _rows_sum_to_one(student, reference, ctx):
    for name, weights in student.items():
        total = weights.double().sum(-1)
        if (total - 1).abs().max() > 1e-4:
            yield f"{name}: rows must sum to 1"


@check("attention", weight=1, verify=_rows_sum_to_one, compare_reference=False,
       description="each row of the weights sums to 1")
def rows_sum_to_one(impl, ref, ctx):
    _, weights = impl.attention.scaled_dot_product_attention(*_inputs(ctx, 4, 7))
    return {"weights": weights}


@check("attention", weight=1, description="outputs on different inputs differ (compared inside the job)")
def compared_in_the_job(impl, ref, ctx):
    first, _ = impl.attention.scaled_dot_product_attention(*_inputs(ctx, 3, 6))
    second, _ = impl.attention.scaled_dot_product_attention(*_inputs(ctx, 3, 6))
    return {"out": first, "torch.equal": torch.equal(first, second), "torch.allclose": torch.allclose(first, second),
            "torch.isclose everywhere": bool(torch.isclose(first, second).all()),
            "== everywhere": bool((first == second).all()), "!= anywhere": bool((first != second).any()),
            "numpy.allclose": bool(numpy.allclose(first.numpy(), second.numpy())),
            "numpy.array_equal": bool(numpy.array_equal(first.numpy(), second.numpy()))}
