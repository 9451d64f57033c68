"""Drawing and probing helpers shared by assignment3's figure files (imported as ``from _drawing import ...``)."""

import traceback
from pathlib import Path

import torch

from autograder.show.figures import Unusable


def heatmap(ax, values, title, vmin=None, vmax=None, cmap="Blues", annotate=False, labels=None):
    """Draw a matrix with a colour bar; with ``annotate``, write each value in its cell (small matrices)."""
    image = ax.imshow(values.numpy(), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest")
    ax.set_title(title, fontsize=10)
    if annotate:
        for (i, j), value in _cells(values):
            shade = "white" if vmax is not None and value > 0.6 * vmax else "black"
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7, color=shade)
    if labels is not None:
        ax.set_xticks(range(len(labels)), labels, fontsize=8)
        ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.figure.colorbar(image, ax=ax, shrink=0.8)
    return image


def _cells(values):
    rows, cols = values.shape
    for i in range(rows):
        for j in range(cols):
            yield (i, j), float(values[i, j])


def nan_rows(weights):
    """How many rows of ``weights`` (..., n, m) hold a NaN, and how many rows there are."""
    return int(weights.isnan().any(-1).sum()), weights[..., 0].numel()


def rows_sum_to_one(notes, weights, what, tolerance=1e-4):
    """Note whether every row of ``weights`` (..., n, m) sums to 1. NaN rows are counted, and the sums quoted are
    those of the other rows: a NaN would hide them (the min and max of a tensor with a NaN are NaN)."""
    sums = weights.sum(-1)
    nan, rows = nan_rows(weights)
    sums = sums[~sums.isnan()]
    right = bool(len(sums)) and float((sums - 1).abs().max()) <= tolerance
    spread = f"{float(sums.min()):.3g} … {float(sums.max()):.3g}, not 1" if len(sums) else ""
    if not nan:
        return notes.check(right, f"{what}: every row sums to 1", f"{what}: rows sum to {spread}")
    if nan == rows:
        notes.bad(f"{what}: no row sums to 1, all {rows} are NaN")
        return False
    others = "the others sum to 1" if right else f"the others sum to {spread}"
    notes.bad(f"{what}: {nan} of {rows} rows are NaN, {others}")
    return False


def nothing_above_diagonal(notes, weights, what):
    """Note whether the weights above the diagonal (query i, key j > i) are exactly zero.

    A NaN is no weight: the largest weight above the diagonal is that of the numbers there (only a number there
    is a query seeing the future), and NaN rows are reported as what they are.
    """
    largest = float(torch.triu(weights, diagonal=1).nan_to_num(nan=0.0).abs().max())
    if largest != 0.0:
        notes.bad(f"{what}: largest weight above the diagonal {largest:.2g} — queries see the future")
        return False
    nan, rows = nan_rows(weights)
    if nan:
        others = "; the other rows are exactly zero above the diagonal" if nan < rows else ""
        notes.bad(f"{what}: {nan} of {rows} rows are NaN: a query whose keys are all masked — its own key, on "
                  f"the diagonal, must stay visible — or an overflow{others}")
        return False
    notes.ok(f"{what}: above the diagonal exactly zero — no query sees the future")
    return True


def difference(actual, expected, tolerance):
    """How ``actual`` differs from ``expected`` (one shape), as the end of a note, or "" if they agree.

    Infinities count as NaN (as ``Data.tensor`` reads them). A NaN at the same place in both is the same result,
    not a difference (``nan_to_num`` would make it one); a NaN in one of them only is counted, never given a size.
    """
    actual, expected = (torch.where(x.isinf(), torch.full_like(x, float("nan")), x) for x in (actual, expected))
    numbers = ~(actual.isnan() | expected.isnan())
    worst = float((actual - expected)[numbers].abs().max()) if bool(numbers.any()) else 0.0
    lone = int((actual.isnan() ^ expected.isnan()).sum())
    parts = [f" by up to {worst:.3g}"] if worst >= tolerance else []
    if lone:
        parts.append(f"{';' if parts else ':'} {lone} of {actual.numel()} values are NaN in one and a number in "
                     f"the other")
    return "".join(parts)


def attempt(outputs, name, call):
    """Run ``call()`` in a probe and store its result as ``outputs[name]``; if it fails, store why as
    ``outputs[name + "_error"]`` instead, so one unfinished function does not cost the figures of the others."""
    try:
        outputs[name] = call()
    except Exception as exc:  # noqa: BLE001 - the failure is the output
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" ({Path(frames[-1].filename).name}, line {frames[-1].lineno}, in {frames[-1].name})" if frames else ""
        outputs[name + "_error"] = f"{type(exc).__name__}: {str(exc)[:200]}{where}"
    return outputs


def need(data, name):
    """Raise Unusable with the reason :func:`attempt` stored for ``name``, if that call failed."""
    reason = data.get(name + "_error")
    if isinstance(reason, str):
        raise Unusable(reason)
