"""assignment3's attention figures: weights with and without the causal mask, and heads split and merged."""

import torch
from _drawing import difference, heatmap, nothing_above_diagonal, rows_sum_to_one

from autograder.show.figures import figure, probe

TOKENS, WIDTH, VALUE_WIDTH, HEADS, HEAD_INPUT_WIDTH = 6, 8, 5, 8, 64
# Three heads, not one: a scale that involves the number of heads (sqrt(heads * d_k)) equals sqrt(d_k) with one
# head, so a single head could not test the docstring's formula. Head 0 is drawn; the notes read all three.
ATTENTION_HEADS = 3


@probe(timeout=10, tasks=("attention", "causal_mask"))
def six_tokens(impl, ctx):
    """scaled_dot_product_attention on six tokens in three heads (d_k = 8, d_v = 5), without and with causal=True."""
    q, k = (ctx.randn(1, ATTENTION_HEADS, TOKENS, WIDTH) for _ in range(2))
    v = ctx.randn(1, ATTENTION_HEADS, TOKENS, VALUE_WIDTH)
    out, plain = impl.attention.scaled_dot_product_attention(q, k, v)
    causal_out, causal = impl.attention.scaled_dot_product_attention(q, k, v, causal=True)
    # The inputs come back too: the parent checks the docstring's formula on them (public, fixed examples).
    return {"weights": plain, "causal weights": causal, "out": out, "causal out": causal_out, "q": q, "k": k, "v": v}


@figure(six_tokens, "Attention weights of six tokens, without and with the causal mask", caption="""
    Row i shows how query i spreads its attention over the six keys: every row sums to 1. Without a mask any
    query may look at any key. With the causal mask, query i sees only keys 0 … i, so everything above the
    diagonal is exactly zero and the first row is (1, 0, 0, 0, 0, 0). The inputs have three heads; head 0 is
    drawn, and the notes below hold for all three.""")
def attention_weights(data, fig, notes):
    shape = (1, ATTENTION_HEADS, TOKENS, TOKENS)
    plain, causal = data.tensor("weights", shape=shape)[0], data.tensor("causal weights", shape=shape)[0]
    left, right = fig.subplots(1, 2)
    heatmap(left, plain[0], "without mask (head 0)", vmin=0, vmax=1, annotate=True)
    heatmap(right, causal[0], "causal=True (head 0)", vmin=0, vmax=1, annotate=True)
    for ax in (left, right):
        ax.set_xlabel("key j")
        ax.set_ylabel("query i")
    rows_sum_to_one(notes, plain, "without mask")
    rows_sum_to_one(notes, causal, "causal")
    nothing_above_diagonal(notes, causal, "causal")
    if float(torch.triu(plain, diagonal=1).abs().max()) == 0.0:
        notes.bad("without mask: the weights above the diagonal are zero too, although causal=False")
    if all(name in data for name in ("q", "k", "v")):
        _formula_notes(data, plain, causal, notes)


def _formula_notes(data, plain, causal, notes):
    """The docstring's formula on the probe's own inputs (three heads, so a scale involving the number of heads
    shows): weights = softmax(q kᵀ / √d_k), out = weights v. Only what differs is stated, never a guessed cause."""
    q = data.tensor("q", shape=(1, ATTENTION_HEADS, TOKENS, WIDTH))[0].double()
    k = data.tensor("k", shape=(1, ATTENTION_HEADS, TOKENS, WIDTH))[0].double()
    v = data.tensor("v", shape=(1, ATTENTION_HEADS, TOKENS, VALUE_WIDTH))[0].double()
    formula = torch.softmax(q @ k.transpose(-2, -1) / WIDTH ** 0.5, dim=-1)
    differs = difference(plain, formula, 1e-5)
    notes.check(not differs, "without mask: the weights are softmax(q kᵀ / √d_k) in each of the three heads, as "
                "the docstring says", f"without mask: the weights differ from softmax(q kᵀ / √d_k){differs}")
    expected = (1, ATTENTION_HEADS, TOKENS, VALUE_WIDTH)
    for label, name, weights in (("without mask", "out", plain), ("causal", "causal out", causal)):
        out = data.get(name)
        if isinstance(out, torch.Tensor) and tuple(out.shape) == expected:
            differs = difference(out[0].double(), weights.double() @ v, 1e-5)
            notes.check(not differs, f"{label}: out = weights v", f"{label}: out differs from weights v{differs}")
        else:
            shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
            notes.bad(f"{label}: out has shape {shape}, not {expected}, i.e. (batch, heads, n, d_v)")


@probe(timeout=10, tasks=("head_split",))
def split_and_merge(impl, ctx):
    """split_heads into 8 heads and merge_heads back, on 6 tokens of width 64 whose values name their feature."""
    features = torch.arange(HEAD_INPUT_WIDTH, dtype=torch.float32)
    x = (features + torch.arange(TOKENS, dtype=torch.float32)[:, None] / 10).unsqueeze(0)  # (1, 6, 64)
    split = impl.attention.split_heads(x.clone(), HEADS)
    merged = impl.attention.merge_heads(split.clone()) if isinstance(split, torch.Tensor) else split
    return {"x": x, "split_heads(x, 8)": split, "merge_heads(split)": merged}


@figure(split_and_merge, "Eight heads, and concatenated back to the model width", size=(9.0, 4.2), caption="""
    Six tokens of width 64 whose value in feature f is f (plus a tenth per token, so the rows differ).
    split_heads(x, 8) gives eight heads of 8 features each: head h holds features 8h … 8h + 7 of every token,
    so each small panel is a band of the colour scale. merge_heads concatenates the heads back to width 64, head 0
    first: the bottom panel must be the input again, one smooth gradient from left to right.""")
def heads(data, fig, notes):
    x = data.tensor("x", shape=(1, TOKENS, HEAD_INPUT_WIDTH))[0]
    split = data.tensor("split_heads(x, 8)", shape=(1, HEADS, TOKENS, HEAD_INPUT_WIDTH // HEADS))[0]
    merged = data.tensor("merge_heads(split)", shape=(1, TOKENS, HEAD_INPUT_WIDTH))[0]
    grid = fig.add_gridspec(2, HEADS, height_ratios=[1, 1.1])
    for h in range(HEADS):
        ax = fig.add_subplot(grid[0, h])
        ax.imshow(split[h].numpy(), cmap="viridis", vmin=0, vmax=HEAD_INPUT_WIDTH, aspect="auto")
        ax.set_title(f"head {h}", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([] if h else range(TOKENS))
    bottom = fig.add_subplot(grid[1, :])
    bottom.imshow(merged.numpy(), cmap="viridis", vmin=0, vmax=HEAD_INPUT_WIDTH, aspect="auto")
    bottom.set_title("merge_heads(split_heads(x, 8)): back to 6 tokens × 64 features", fontsize=10)
    bottom.set_xlabel("feature")
    bottom.set_ylabel("token")
    expected = x.reshape(TOKENS, HEADS, -1).transpose(0, 1)
    wrong = [h for h in range(HEADS) if not torch.equal(split[h], expected[h])]
    notes.check(not wrong, "head h holds features 8h … 8h + 7 of every token",
                f"heads {wrong[:4]} do not hold features 8h … 8h + 7 of every token" if wrong else "")
    notes.check(torch.equal(merged, x), "merge_heads(split_heads(x, 8)) gives x back exactly",
                f"merge_heads(split_heads(x, 8)) differs from x by up to {float((merged - x).abs().max()):.3g}")
