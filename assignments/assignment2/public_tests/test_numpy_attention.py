"""Public tests for the NumPy part: softmax, soft attention, weight-free self-attention and attention."""

import numpy as np
import pytest
from assignment2.numpy_attention import attention, self_attention, soft_attention, softmax

# The notes' toy example: one decoder query and three encoder states.
QUERY = np.array([0.9, 0.1, 0.8])
STATES = np.array([[0.8, 0.1, 0.0], [0.2, 0.9, 0.1], [0.7, 0.0, 0.9]])
SCORES = np.array([0.73, 0.35, 1.35])


@pytest.mark.task("softmax")
def test_softmax_of_a_small_vector():
    result = softmax(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(result, [0.09003057, 0.24472847, 0.66524096], rtol=1e-6)
    assert result.dtype == np.float64


@pytest.mark.task("softmax")
def test_softmax_is_stable_for_large_inputs():
    result = softmax(np.array([1000.0, 1001.0, 1002.0]))
    assert np.all(np.isfinite(result))
    np.testing.assert_allclose(result, [0.09003057, 0.24472847, 0.66524096], rtol=1e-6)


@pytest.mark.task("softmax")
def test_softmax_normalises_along_the_requested_axis(rng):
    x = rng.normal(size=(4, 6))
    np.testing.assert_allclose(softmax(x).sum(axis=-1), np.ones(4), rtol=1e-12)
    np.testing.assert_allclose(softmax(x, axis=0).sum(axis=0), np.ones(6), rtol=1e-12)


@pytest.mark.task("soft_attention")
def test_soft_attention_on_the_notes_example():
    np.testing.assert_allclose(STATES @ QUERY, SCORES, atol=1e-12)  # the dot-product scores of the notes
    context, weights = soft_attention(QUERY, STATES)
    assert weights.shape == (3,) and context.shape == (3,)
    expected_weights = np.exp(SCORES) / np.exp(SCORES).sum()
    np.testing.assert_allclose(weights, expected_weights, rtol=1e-6)
    np.testing.assert_allclose(weights, [0.2823, 0.1930, 0.5247], atol=5e-4)
    assert np.argmax(weights) == 2  # most weight on h3
    np.testing.assert_allclose(context, expected_weights @ STATES, rtol=1e-6)
    np.testing.assert_allclose(context, [0.6317, 0.2020, 0.4915], atol=5e-4)


@pytest.mark.task("soft_attention")
def test_soft_attention_weights_recover_the_score_differences():
    _, weights = soft_attention(QUERY, STATES)
    # log(w_i / w_j) = score_i - score_j: 1.35 - 0.73 = 0.62 and 0.73 - 0.35 = 0.38.
    np.testing.assert_allclose(np.log(weights[2] / weights[0]), 0.62, atol=1e-9)
    np.testing.assert_allclose(np.log(weights[0] / weights[1]), 0.38, atol=1e-9)


@pytest.mark.task("self_attention")
def test_self_attention_shapes_and_rows(rng):
    X = rng.normal(size=(5, 3))
    Z, weights = self_attention(X)
    assert Z.shape == (5, 3) and weights.shape == (5, 5)
    np.testing.assert_allclose(weights.sum(axis=-1), np.ones(5), rtol=1e-12)
    expected = np.exp(X @ X.T) / np.exp(X @ X.T).sum(axis=-1, keepdims=True)  # no scaling
    np.testing.assert_allclose(weights, expected, rtol=1e-9)
    np.testing.assert_allclose(Z, expected @ X, rtol=1e-9)


@pytest.mark.task("self_attention")
def test_self_attention_works_on_batches(rng):
    X = rng.normal(size=(2, 4, 3))
    Z, weights = self_attention(X)
    assert Z.shape == (2, 4, 3) and weights.shape == (2, 4, 4)
    np.testing.assert_allclose(Z[1], self_attention(X[1])[0], rtol=1e-12)


@pytest.mark.task("attention")
def test_attention_shapes_and_scaling(rng):
    X = rng.normal(size=(6, 4))
    W_q, W_k, W_v = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 5))
    Z, weights = attention(X, W_q, W_k, W_v)
    assert Z.shape == (6, 5) and weights.shape == (6, 6)
    scores = (X @ W_q) @ (X @ W_k).T / np.sqrt(3)
    expected = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(weights, expected, rtol=1e-9)
    np.testing.assert_allclose(Z, expected @ (X @ W_v), rtol=1e-9)


@pytest.mark.task("attention")
def test_causal_attention_never_looks_ahead(rng):
    X = rng.normal(size=(6, 4))
    W_q, W_k, W_v = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 5))
    Z, weights = attention(X, W_q, W_k, W_v, causal=True)
    assert np.all(weights[np.triu_indices(6, k=1)] == 0)
    np.testing.assert_allclose(weights.sum(axis=-1), np.ones(6), rtol=1e-12)
    # The first token sees only itself, so it returns its own value vector.
    np.testing.assert_allclose(Z[0], X[0] @ W_v, rtol=1e-9)


@pytest.mark.task("attention")
def test_permuting_tokens_permutes_outputs_without_a_mask(rng):
    X = rng.normal(size=(5, 4))
    W_q, W_k, W_v = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    order = rng.permutation(5)
    np.testing.assert_allclose(attention(X[order], W_q, W_k, W_v)[0], attention(X, W_q, W_k, W_v)[0][order],
                               rtol=1e-9)
