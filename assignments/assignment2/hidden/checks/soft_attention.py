"""Hidden checks of numpy_attention.soft_attention: the notes' example, random values, properties, errors.

The student's function runs with the reference softmax. Shapes include a single encoder state, n != d and
a wide query, so a transposed product or a sum over the wrong axis cannot pass by accident. Large scores (in the
thousands) catch a softmax written inline without subtracting the maximum. The properties and the ValueError
check are gated on the values (probe.gated): a function that computes nothing cannot earn them.
"""

import numpy as np
from _numpy_inputs import numpy_array, quiet

from autograder.probe import check, gate_values, gate_values_of, gated, raised

SHAPES = [(5, 4), (1, 3), (9, 16), (7, 7), (3, 11)]  # (n encoder states, d features)


WHAT = "soft_attention"


def _ordinary_call(impl, ctx):
    query, states = numpy_array(ctx, 4, scale=1.5), numpy_array(ctx, 6, 4)
    context, weights = impl.numpy_attention.soft_attention(query, states)
    return {"context for query (4,), encoder_states (6, 4)": context,
            "weights for query (4,), encoder_states (6, 4)": weights}


def _gate(impl, ctx):
    """The gate values of one ordinary call (autograder.probe.gating); an exception there fails the check."""
    return gate_values_of(lambda: _ordinary_call(impl, ctx))


@check("soft_attention", weight=1, description="the notes' example: q = (0.9, 0.1, 0.8) over h1, h2, h3 "
                                               "(scores 0.73, 0.35, 1.35): context and weights")
def notes_example(impl, ref, ctx):
    query = np.array([0.9, 0.1, 0.8])
    states = np.array([[0.8, 0.1, 0.0], [0.2, 0.9, 0.1], [0.7, 0.0, 0.9]])
    context, weights = impl.numpy_attention.soft_attention(query, states)
    return {"context for the notes' example": context, "weights for the notes' example": weights}


@check("soft_attention", weight=3, description="context and weights for random queries and encoder states of "
                                               "several shapes (a single state, n != d, n == d)")
def random_values(impl, ref, ctx):
    outputs = {}
    for n, d in SHAPES:
        query, states = numpy_array(ctx, d, scale=1.5), numpy_array(ctx, n, d)
        context, weights = impl.numpy_attention.soft_attention(query, states)
        outputs[f"context for query ({d},), encoder_states ({n}, {d})"] = context
        outputs[f"weights for query ({d},), encoder_states ({n}, {d})"] = weights
    return outputs


def _weighted_average(student, reference, ctx):
    states = student["encoder_states"]
    context, weights = student["context"], student["weights"]
    if not isinstance(weights, np.ndarray) or weights.shape != (states.shape[0],):
        yield f"weights must have shape (n,) = ({states.shape[0]},)"
    elif not isinstance(context, np.ndarray) or context.shape != (states.shape[1],):
        yield f"context must have shape (d,) = ({states.shape[1]},)"
    elif weights.min() < 0 or abs(weights.sum() - 1) > 1e-6:
        yield "the weights must be non-negative and sum to 1"
    elif np.abs(context - weights @ states).max() > 1e-6:
        yield "context must be the weighted average of the encoder states: sum_i weights_i * h_i"
    elif weights.max() > 1 - 1e-6:
        yield "soft attention spreads weight over all states; one state got all of it (is this hard attention?)"


@check("soft_attention", weight=1, verify=gated(_weighted_average, what=WHAT), compare_reference=False,
       description="the weights are non-negative and sum to 1, and context is the weights' average of the states")
def weighted_average(impl, ref, ctx):
    query, states = numpy_array(ctx, 6), numpy_array(ctx, 8, 6)
    context, weights = impl.numpy_attention.soft_attention(query, states)
    return {"encoder_states": states, "context": context, "weights": weights,
            **gate_values({"context for query (6,), encoder_states (8, 6)": context,
                           "weights for query (6,), encoder_states (8, 6)": weights})}


@check("soft_attention", weight=1, verify=gated(what=WHAT), compare_reference=False,
       description="raises ValueError for encoder states that are not 2-D, a 2-D query, or widths that differ")
def errors(impl, ref, ctx):
    soft_attention = impl.numpy_attention.soft_attention
    return {
        **_gate(impl, ctx),
        "exception for query (3,), encoder_states (2, 4, 3)": raised(
            lambda: soft_attention(numpy_array(ctx, 3), numpy_array(ctx, 2, 4, 3))),
        "exception for query (2, 3), encoder_states (4, 3)": raised(
            lambda: soft_attention(numpy_array(ctx, 2, 3), numpy_array(ctx, 4, 3))),
        "exception for query (4,), encoder_states (5, 3)": raised(
            lambda: soft_attention(numpy_array(ctx, 4), numpy_array(ctx, 5, 3))),
    }


LARGE_SHAPES = [(5, 4), (9, 16), (3, 11)]  # (n encoder states, d features)


@check("soft_attention", weight=2,
       description="large scores (query and encoder states of large magnitude, scores in the thousands): finite, "
                   "correct context and weights")
@quiet
def large_scores(impl, ref, ctx):
    outputs = {}
    for n, d in LARGE_SHAPES:
        query, states = numpy_array(ctx, d, scale=30.0), numpy_array(ctx, n, d, scale=30.0)
        context, weights = impl.numpy_attention.soft_attention(query, states)
        outputs[f"context for large query ({d},), encoder_states ({n}, {d})"] = context
        outputs[f"weights for large query ({d},), encoder_states ({n}, {d})"] = weights
    return outputs
