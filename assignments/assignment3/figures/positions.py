"""assignment3's position figures: the sinusoidal table of 50 positions × 64 features, and four of its columns."""

import math

import torch

from autograder.show.figures import figure, probe

LENGTH, DIM = 50, 64
COLUMNS = (0, 1, 16, 48)


@probe(timeout=10, tasks=("sinusoidal_positions",))
def table(impl, ctx):
    """sinusoidal_positions(50, 64)."""
    return {"sinusoidal_positions(50, 64)": impl.positions.sinusoidal_positions(LENGTH, DIM)}


def _table(data):
    return data.tensor("sinusoidal_positions(50, 64)", shape=(LENGTH, DIM))


@figure(table, "The sinusoidal position table: 50 positions × 64 features", caption="""
    Entry (p, 2i) is sin(p / 10000^(2i/64)) and entry (p, 2i + 1) is cos(p / 10000^(2i/64)), positions from 0.
    The first columns turn fast, so the left of the picture is fine stripes; the frequencies fall geometrically
    from left to right, so the right is slow gradients (the last columns barely change over 50 positions). Row 0
    alternates 0 and 1 (sin 0 and cos 0).""")
def position_table(data, fig, notes):
    values = _table(data)
    ax = fig.add_subplot()
    image = ax.imshow(values.numpy(), cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
    ax.set_xlabel("feature")
    ax.set_ylabel("position p")
    fig.colorbar(image, ax=ax)
    raw = data["sinusoidal_positions(50, 64)"]
    notes.check(raw.dtype == torch.float32, "dtype float32", f"dtype {raw.dtype}, not float32")
    finite = values[values.isfinite()]  # NaN and inf are reported once, by data.tensor: no ✓ for what is not there
    if finite.numel():
        notes.check(bool((finite.abs() <= 1 + 1e-6).all()), "every finite value lies in [-1, 1]"
                    if finite.numel() < values.numel() else "every value lies in [-1, 1]",
                    f"values reach {float(finite.abs().max()):.3g}, outside [-1, 1]")
    first = torch.tensor([0.0, 1.0] * (DIM // 2), dtype=torch.float64)
    notes.check(bool(torch.allclose(values[0], first, atol=1e-6)), "row 0 is (0, 1, 0, 1, …): positions start at 0",
                f"row 0 is ({', '.join(f'{x:.2g}' for x in values[0, :4].tolist())}, …), not (0, 1, 0, 1, …)")
    p = torch.arange(LENGTH, dtype=torch.float64)[:, None]
    angles = p / 10000 ** (torch.arange(0, DIM, 2, dtype=torch.float64) / DIM)
    formula = torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(LENGTH, DIM)
    worst = float((values - formula).abs().nan_to_num(nan=math.inf).max())
    notes.check(worst < 1e-5, "sines in the even columns, cosines in the odd ones, as the formula says",
                f"differs from the formula of the docstring by up to {worst:.3g}" if math.isfinite(worst) else
                "NaN or infinite values where the formula of the docstring gives numbers")


@figure(table, "Four columns of the table as curves", caption=f"""
    Columns {COLUMNS[0]} and {COLUMNS[1]} are sin p and cos p: a full turn every 2π ≈ 6.3 positions. Column
    {COLUMNS[2]} turns 10000^(16/64) = 10 times slower and column {COLUMNS[3]} 10000^(48/64) = 1000 times slower,
    so over 50 positions it barely rises from 0. Each position gets a unique pattern of fast and slow waves.""")
def position_curves(data, fig, notes):
    values = _table(data)
    ax = fig.add_subplot()
    for column in COLUMNS:
        ax.plot(values[:, column].numpy(), marker=".", markersize=3, label=f"column {column}")
    ax.set_xlabel("position p")
    ax.set_ylabel("value")
    ax.set_ylim(-1.15, 1.15)
    ax.legend(loc="lower left", fontsize=8, ncols=4)
    ax.grid(alpha=0.3)
    column = values[:, COLUMNS[3]]
    if bool(column.isfinite().all()):  # a range of NaNs would read as "within ±0"
        slow = float(column.abs().max())
        notes.info(f"column {COLUMNS[3]} stays within ±{slow:.2g} over 50 positions (a slow wave)")
