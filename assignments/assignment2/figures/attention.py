"""assignment2's figures: soft attention on the notes' example, weight-free self-attention, dropout on the
attention weights in train and eval mode, and stacked against split heads."""

import numpy as np
import torch

from autograder.show.figures import figure, probe

QUERY = np.array([0.9, 0.1, 0.8])
STATES = np.array([[0.8, 0.1, 0.0], [0.2, 0.9, 0.1], [0.7, 0.0, 0.9]])
NOTES_WEIGHTS = (0.2823, 0.1930, 0.5247)  # the notes' (and the public tests') weights for h1, h2, h3
TOKENS, FEATURES = 5, 3
DROPOUT, CONTEXT = 0.5, 6


def _annotated(ax, values, title, vmax=None):
    image = ax.imshow(values, cmap="Blues", vmin=0, vmax=vmax, interpolation="nearest")
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize=7,
                    color="white" if vmax and values[i, j] > 0.6 * vmax else "black")
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("key j")
    ax.set_ylabel("query i")
    ax.figure.colorbar(image, ax=ax, shrink=0.8)


def _rows_sum_to_one(notes, weights, what):
    worst = float((weights.sum(-1) - 1).abs().nan_to_num(nan=float("inf")).max())
    notes.check(worst < 1e-6, f"{what}: every row sums to 1", f"{what}: rows are off 1 by up to {worst:.3g}")


@probe(timeout=10, tasks=("soft_attention",))
def notes_example(impl, ctx):
    """soft_attention on the notes' example q = (0.9, 0.1, 0.8) and h1, h2, h3."""
    context, weights = impl.numpy_attention.soft_attention(QUERY.copy(), STATES.copy())
    return {"context": context, "weights": weights}


@figure(notes_example, "Soft attention on the notes' example", caption="""
    The query q = (0.9, 0.1, 0.8) scores the encoder states h1 = (0.8, 0.1, 0), h2 = (0.2, 0.9, 0.1) and
    h3 = (0.7, 0, 0.9) by dot products: 0.73, 0.35 and 1.35. After the softmax h3 gets the most weight, about 0.52,
    but every state contributes: the context (right) is the weighted average of the three states, pulled towards
    h3. That is what "soft" means.""")
def soft_attention_weights(data, fig, notes):
    weights = data.tensor("weights", shape=(3,))
    context = data.tensor("context", shape=(3,))
    left, right = fig.subplots(1, 2)
    bars = left.bar(["h1", "h2", "h3"], weights.numpy(), color=["#9ecae1", "#9ecae1", "#3182bd"])
    left.bar_label(bars, fmt="%.3f", fontsize=8)
    left.set_ylim(0, 1)
    left.set_title("attention weights", fontsize=10)
    states = torch.from_numpy(STATES)
    positions = np.arange(3)
    for index, name in enumerate(["h1", "h2", "h3"]):
        right.bar(positions + 0.2 * index - 0.3, states[index].numpy(), width=0.2, alpha=0.45, label=name)
    right.bar(positions + 0.3, context.numpy(), width=0.2, color="black", label="context (computed)")
    right.set_xticks(positions, ["feature 0", "feature 1", "feature 2"])
    right.set_title("states and the context", fontsize=10)
    right.set_ylim(0, 1.15)
    right.legend(fontsize=7, ncols=4, loc="upper center")
    _rows_sum_to_one(notes, weights, "weights")
    expected = torch.tensor(NOTES_WEIGHTS, dtype=torch.float64)
    notes.check(bool(torch.allclose(weights, expected, atol=5e-4)),
                f"weights {', '.join(f'{w:.3f}' for w in weights.tolist())}: h3 the largest, about 0.52, as in "
                f"the notes",
                f"weights {', '.join(f'{w:.3g}' for w in weights.tolist())}, the notes give 0.282, 0.193, 0.525")
    average = weights @ states
    notes.check(bool(torch.allclose(context, average, atol=1e-6)), "the context is Σ weight_i h_i",
                "the context is not the weighted average Σ weight_i h_i of the states")


@probe(timeout=10, tasks=("self_attention",))
def five_tokens(impl, ctx):
    """self_attention on 5 tokens of 3 features."""
    X = ctx.randn(TOKENS, FEATURES).double().numpy()
    Z, weights = impl.numpy_attention.self_attention(X.copy())
    return {"X": X, "Z": Z, "weights": weights}


@figure(five_tokens, "Weight-free self-attention of five tokens", caption="""
    Z = softmax(X Xᵀ) X: every token's own vector is its query, key and value, with no trainable weights and no
    scaling. Row i of the weights is how token i spreads its attention over all five tokens; every row sums to 1.
    The scores X Xᵀ are symmetric, but the weights are not: each row is normalised on its own.""")
def self_attention_weights(data, fig, notes):
    X = data.tensor("X", shape=(TOKENS, FEATURES))
    weights = data.tensor("weights", shape=(TOKENS, TOKENS))
    Z = data.tensor("Z", shape=(TOKENS, FEATURES))
    left, right = fig.subplots(1, 2, width_ratios=[1.3, 1])
    _annotated(left, weights.numpy(), "weights = softmax(X Xᵀ)", vmax=1)
    image = right.imshow(torch.cat([X, Z], dim=1).numpy(), cmap="RdBu_r", vmin=-2.5, vmax=2.5, aspect="auto")
    right.axvline(FEATURES - 0.5, color="black", lw=1)
    right.set_xticks(range(2 * FEATURES), [f"X{j}" for j in range(FEATURES)] + [f"Z{j}" for j in range(FEATURES)])
    right.set_ylabel("token")
    right.set_title("X (left) and Z (right)", fontsize=10)
    fig.colorbar(image, ax=right, shrink=0.8)
    _rows_sum_to_one(notes, weights, "weights")
    scores = X @ X.T
    formula = torch.softmax(scores, dim=-1)
    worst = float((weights - formula).abs().nan_to_num(nan=float("inf")).max())
    notes.check(worst < 1e-6, "the weights are softmax(X Xᵀ) over the last axis (no scaling)",
                f"the weights differ from softmax(X Xᵀ) over the last axis by up to {worst:.3g}")
    notes.check(bool(torch.allclose(Z, weights @ X, atol=1e-6)), "Z = weights · X",
                "Z is not weights · X")


@probe(timeout=10, tasks=("causal_self_attention",))
def train_and_eval(impl, ctx):
    """CausalSelfAttention(6, 6, context_length=6, dropout=0.5) whose values are the identity, in train and eval."""
    ctx.seed_torch()
    layer = impl.modules.CausalSelfAttention(CONTEXT, CONTEXT, CONTEXT, dropout=DROPOUT)
    ctx.init_module(layer)
    with torch.no_grad():
        layer.W_v.weight.copy_(torch.eye(CONTEXT))  # V = x = I, so the output is the attention weights themselves
    x = torch.eye(CONTEXT).unsqueeze(0)
    outputs = {}
    with torch.no_grad():
        layer.train()
        ctx.seed_torch(1)
        outputs["train"] = layer(x)
        layer.eval()
        outputs["eval"] = layer(x)
        outputs["eval again"] = layer(x)
    return outputs


@figure(train_and_eval, "Dropout on the attention weights: train against eval mode", caption="""
    A causal layer with dropout 0.5 whose value projection is the identity, fed the identity: its output is its
    attention weights. In eval mode dropout does nothing: the usual causal weights, rows summing to 1, zero above
    the diagonal, the same every time. In training mode each weight is dropped with probability 0.5 and the
    survivors are doubled (scaled by 1 / (1 − p)), so a row no longer sums to 1 — on average it still does.""")
def dropout_weights(data, fig, notes):
    shape = (1, CONTEXT, CONTEXT)
    evaluated, trained = data.tensor("eval", shape=shape)[0], data.tensor("train", shape=shape)[0]
    left, right = fig.subplots(1, 2)
    _annotated(left, evaluated.numpy(), "eval mode", vmax=2)
    _annotated(right, trained.numpy(), "train mode (dropout 0.5)", vmax=2)
    _rows_sum_to_one(notes, evaluated, "eval")
    # a NaN row (a query whose keys are all masked) is said as such, never read as a weight above the diagonal
    nan_rows = int(evaluated.isnan().any(-1).sum())
    above = float(torch.triu(evaluated, diagonal=1).nan_to_num(nan=0).abs().max())
    problems = ([f"{nan_rows} of {CONTEXT} rows are NaN (a query whose keys are all masked — its own key, on the "
                 f"diagonal, must stay visible — or an overflow)"] if nan_rows else []) + (
                [f"weights above the diagonal up to {above:.2g}"] if above else [])
    notes.check(not problems, "eval: zero above the diagonal", "eval: " + "; ".join(problems))
    notes.check(torch.equal(evaluated, data.tensor("eval again", shape=shape)[0]), "eval mode is deterministic",
                "eval mode gives different outputs twice in a row")
    visible = torch.tril(torch.ones(CONTEXT, CONTEXT, dtype=torch.bool)) & (evaluated > 0)
    kept = visible & (trained != 0)
    scaled = torch.allclose(trained[kept], evaluated[kept] / (1 - DROPOUT), atol=1e-5)
    dropped = int(visible.sum() - kept.sum())
    notes.check(bool(scaled) and 0 < dropped < int(visible.sum()),
                f"train: {dropped} of {int(visible.sum())} weights dropped, the others doubled",
                f"train: {dropped} of {int(visible.sum())} weights dropped" + ("" if scaled else
                ", and the others are not their eval values doubled"))


@probe(timeout=10, tasks=("multi_head_stacked", "multi_head_split", "weight_copy"))
def two_layouts(impl, ctx):
    """MultiHeadCausalAttentionStacked(8, 8, 6, 2 heads) copied into MultiHeadCausalAttention, both in eval mode."""
    ctx.seed_torch()
    stacked = impl.modules.MultiHeadCausalAttentionStacked(8, 8, CONTEXT, 2, dropout=0.0)
    split = impl.modules.MultiHeadCausalAttention(8, 8, CONTEXT, 2, dropout=0.0)
    ctx.init_module(stacked)
    impl.modules.copy_stacked_to_split(stacked, split)
    x = ctx.randn(1, CONTEXT, 8)
    stacked.eval()
    split.eval()
    with torch.no_grad():
        return {"stacked": stacked(x), "split": split(x), "split.W_q.weight": split.W_q.weight.detach(),
                "heads W_q": torch.cat([head.W_q.weight.detach() for head in stacked.heads])}


@figure(two_layouts, "Stacked heads against one split projection", size=(9.0, 3.4), caption="""
    Two heads as a list of single-head layers (stacked) and as one wide projection split into heads compute the
    same function once copy_stacked_to_split has copied the weights: head h's W_q becomes rows 4h … 4h + 3 of the
    split layer's W_q (likewise W_k and W_v). The two outputs below must look identical, and their difference be
    zero up to rounding.""")
def stacked_and_split(data, fig, notes):
    stacked = data.tensor("stacked", shape=(1, CONTEXT, 8))[0]
    split = data.tensor("split", shape=(1, CONTEXT, 8))[0]
    axes = fig.subplots(1, 3)
    limit = float(torch.cat([stacked, split]).abs().nan_to_num(nan=0).max()) or 1.0
    for ax, values, title in ((axes[0], stacked, "stacked"), (axes[1], split, "split")):
        ax.imshow(values.numpy(), cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("feature")
        ax.set_ylabel("token")
    difference = (stacked - split).abs()
    worst = float(difference.nan_to_num(nan=float("inf")).max())
    top = max(float(difference.nan_to_num(nan=0).max()), 1e-3)  # all zeros stay white, not the colour map's middle
    image = axes[2].imshow(difference.numpy(), cmap="Reds", vmin=0, vmax=top, aspect="auto")
    axes[2].set_title("|stacked − split|", fontsize=10)
    fig.colorbar(image, ax=axes[2], shrink=0.8)
    notes.check(worst < 1e-5, f"same output (largest difference {worst:.1g})",
                f"the outputs differ by up to {worst:.3g}")
    rows = torch.equal(data.tensor("split.W_q.weight", shape=(8, 8)), data.tensor("heads W_q", shape=(8, 8)))
    notes.check(rows, "split.W_q rows 4h … 4h + 3 are head h's W_q",
                "split.W_q's rows are not the heads' W_q weights in head order")
