"""Attention from scratch in NumPy: softmax, soft attention, weight-free self-attention, and attention.

Every function takes and returns NumPy arrays (np.ndarray). Inputs are never modified in place. Floating-point
inputs keep their dtype: float64 in, float64 out.
"""

import math

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along one axis.

    softmax(x)_i = exp(x_i) / sum_j exp(x_j), computed as exp(x_i - m) / sum_j exp(x_j - m) with m the
    maximum along ``axis`` (taken separately for every slice along that axis), so that inputs such as
    1000 or -1000 give finite, correct results instead of inf / inf.

    Args:
        x: Array of any shape, e.g. (n,) or (batch, n, m).
        axis: The axis to normalise over (default: the last one).

    Returns:
        An array of the same shape and floating dtype as x whose entries are in [0, 1] and sum to 1 along
        ``axis``.
    """
    # YOUR CODE HERE
    raise NotImplementedError()


def soft_attention(query: np.ndarray, encoder_states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Soft (Bahdanau-style) attention of one query over a sequence of encoder states, with dot-product scores.

    score_i = query . h_i (no scaling), weights = softmax(scores), context = sum_i weights_i h_i.
    Example from the notes: q = (0.9, 0.1, 0.8) and h1 = (0.8, 0.1, 0), h2 = (0.2, 0.9, 0.1),
    h3 = (0.7, 0, 0.9) give scores 0.73, 0.35 and 1.35, so h3 gets the largest weight.

    Args:
        query: The decoder's query vector, shape (d,).
        encoder_states: The encoder states h_1 .. h_n as rows, shape (n, d).

    Returns:
        A pair (context, weights): context of shape (d,), the weighted average of the encoder states, and
        weights of shape (n,), non-negative and summing to 1.

    Raises:
        ValueError: If query is not 1-D, encoder_states is not 2-D, or their widths d differ.
    """
    # YOUR CODE HERE
    raise NotImplementedError()


def self_attention(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weight-free self-attention of every position at once: Z = softmax(X X^T) X.

    There are no trainable weights and no scaling: each token's own vector serves as its query, key and
    value. The softmax runs over the keys (the last axis of X X^T).

    Args:
        X: Token vectors of shape (n, d), or (batch, n, d) (any number of leading dimensions).

    Returns:
        A pair (Z, weights): Z of the same shape as X, and weights of shape (..., n, n) whose rows sum to 1
        (row i holds how token i spreads its attention over all tokens).

    Raises:
        ValueError: If X has fewer than 2 dimensions.
    """
    # YOUR CODE HERE
    raise NotImplementedError()


def attention(
    X: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray, causal: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Scaled dot-product self-attention with projection matrices and an optional causal mask.

    Q = X W_q, K = X W_k, V = X W_v; scores = Q K^T / sqrt(d_k); with causal=True the scores of future
    keys (j > i) are set to -inf *before* the softmax; weights = softmax(scores) over the keys;
    Z = weights V.

    Args:
        X: Token vectors of shape (n, d_in), or (batch, n, d_in) (any number of leading dimensions).
        W_q: Query projection of shape (d_in, d_k).
        W_k: Key projection of shape (d_in, d_k).
        W_v: Value projection of shape (d_in, d_v).
        causal: If True, token i attends only to tokens 0..i.

    Returns:
        A pair (Z, weights): Z of shape (..., n, d_v) and weights of shape (..., n, n) whose rows sum to 1
        (with causal=True, zero above the diagonal).

    Raises:
        ValueError: If the projections do not fit X (first dimension != d_in) or W_q and W_k have different
            widths.
    """
    # YOUR CODE HERE
    raise NotImplementedError()
