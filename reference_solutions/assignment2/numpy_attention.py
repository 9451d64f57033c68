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
    ### BEGIN SOLUTION
    x = np.asarray(x)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exps = np.exp(shifted)
    return exps / np.sum(exps, axis=axis, keepdims=True)
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    query, encoder_states = np.asarray(query), np.asarray(encoder_states)
    if query.ndim != 1 or encoder_states.ndim != 2 or encoder_states.shape[1] != query.shape[0]:
        raise ValueError(f"expected a query of shape (d,) and encoder_states of shape (n, d), got "
                         f"{query.shape} and {encoder_states.shape}")
    scores = encoder_states @ query
    weights = softmax(scores)
    return weights @ encoder_states, weights
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    X = np.asarray(X)
    if X.ndim < 2:
        raise ValueError(f"expected X of shape (n, d) or (batch, n, d), got shape {X.shape}")
    scores = X @ np.swapaxes(X, -1, -2)
    weights = softmax(scores, axis=-1)
    return weights @ X, weights
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    X = np.asarray(X)
    if X.ndim < 2:
        raise ValueError(f"expected X of shape (n, d_in) or (batch, n, d_in), got shape {X.shape}")
    d_in = X.shape[-1]
    if any(np.ndim(W) != 2 or np.shape(W)[0] != d_in for W in (W_q, W_k, W_v)):
        raise ValueError(f"expected W_q, W_k, W_v of shape (d_in={d_in}, ...), got {np.shape(W_q)}, "
                         f"{np.shape(W_k)}, {np.shape(W_v)}")
    if np.shape(W_q)[1] != np.shape(W_k)[1]:
        raise ValueError(f"W_q and W_k must have the same width d_k, got {np.shape(W_q)} and {np.shape(W_k)}")
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(K.shape[-1])
    if causal:
        n = X.shape[-2]
        future = np.triu(np.ones((n, n), dtype=bool), k=1)
        scores = np.where(future, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
    ### END SOLUTION
