"""Shared by the dropout checks of the single-head and multi-head causal attention layers: a value projection
that makes attention weights readable in the output, one-hot tokens, and the verdict on where dropout went.
"""

import torch


def readable_value_weight(d_in, blocks, n):
    """A W_v weight giving one-hot token i the value [e_i, 1] (width n + 1) in each of ``blocks`` heads."""
    width = n + 1
    weight = torch.zeros(blocks * width, d_in)
    for block in range(blocks):
        weight[block * width: block * width + n, :n] = torch.eye(n)
        weight[block * width + n, :n] = 1.0
    return weight


def one_hot_tokens(batch, n, d_in):
    """Token i of every sequence is the unit vector e_i."""
    return torch.eye(n, d_in).expand(batch, n, d_in).clone()


def dropout_verdict(student, blocks, n, p):
    """Failure messages for the readable-values dropout probe (outputs "eval" and "train")."""
    eval_out, train_out = student["eval"], student["train"]
    width = n + 1
    if eval_out.shape != train_out.shape or eval_out.dim() != 3 or eval_out.shape[1:] != (n, blocks * width):
        yield f"expected outputs of shape (batch, {n}, {blocks * width}), got {tuple(eval_out.shape)}"
        return
    if not (torch.isfinite(eval_out).all() and torch.isfinite(train_out).all()):
        yield "the output contains NaN or infinite values (does some token see no key at all?)"
        return
    future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    visible = ~future
    dropped = visible_total = 0
    unchanged = True
    for block in range(blocks):
        features = slice(block * width, (block + 1) * width)
        weights, row_sums = eval_out[..., features][..., :n].double(), eval_out[..., features][..., n].double()
        drop, drop_sums = train_out[..., features][..., :n].double(), train_out[..., features][..., n].double()
        if (row_sums - 1).abs().max() > 1e-4:
            yield ("in eval mode each row of attention weights must sum to 1 (dropout must do nothing in eval "
                   "mode, and the mask must come before the softmax)")
            return
        if drop[..., future].abs().max() > 1e-6:
            yield "in train mode the weights of future keys must stay exactly 0"
            return
        is_dropped = drop.abs() <= 1e-6
        is_kept = (drop - weights / (1 - p)).abs() <= 1e-5 + 1e-4 * (weights / (1 - p)).abs()
        unchanged = unchanged and bool(((drop - weights).abs() <= 1e-5)[..., visible].all())
        if not unchanged and not (is_dropped | is_kept)[..., visible].all():
            yield (f"in train mode with dropout={p} each attention weight must be either dropped (0) or kept and "
                   f"scaled by 1 / (1 - p) = {1 / (1 - p):g}; some weights were neither (is dropout applied to the "
                   f"scores before the softmax, or without rescaling?)")
            return
        if (drop_sums - drop.sum(-1)).abs().max() > 1e-4:
            yield ("in train mode the output must be the dropped-out attention weights times the values: apply "
                   "dropout to the weights (after the softmax), not to the values or to the output")
            return
        dropped += int(is_dropped[..., visible].sum())
        visible_total += int(visible.sum()) * eval_out.shape[0]
    if unchanged:
        yield (f"in train mode with dropout={p} no attention weight was dropped: apply dropout to the weights "
               f"after the softmax (an nn.Dropout is active in train mode)")
        return
    share = dropped / visible_total
    if not 0.3 <= share <= 0.7:
        yield (f"in train mode with dropout={p} about half of the attention weights must be dropped, found "
               f"{share:.0%}")
