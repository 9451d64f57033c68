"""Hidden checks of sinusoidal_positions: values near and far from position 0, dtype and shape, odd widths.

The dtype-and-shape and odd-width checks are gated on the values (probe.gated): a table of zeros of the right
shape, or a function that always raises, earns nothing.
"""

import torch

from autograder.probe import check, gate_values, gated, kind_of

SHORT = [(10, 8), (7, 12), (1, 6), (33, 2), (5, 64)]  # odd lengths, dim != length, a single position
LONG = [(200, 48), (64, 64), (129, 10)]  # positions far from 0: float32 roundoff of the angle grows with p


def _as_float32(table):
    """Compare values in float32 (the dtype itself is graded by its own check, so it costs once)."""
    return table.to(torch.float32) if isinstance(table, torch.Tensor) else table


def _tables(impl, sizes):
    return {f"sinusoidal_positions({length}, {dim})": _as_float32(impl.positions.sinusoidal_positions(length, dim))
            for length, dim in sizes}


@check("sinusoidal_positions", weight=2,
       description="values of short tables (odd lengths, a single position, length != dim, dim 2)")
def short_tables(impl, ref, ctx):
    return _tables(impl, SHORT)


@check("sinusoidal_positions", weight=2, tolerance="deep",
       description="values far from position 0 (up to position 199) and for wide tables")
def long_tables(impl, ref, ctx):
    return _tables(impl, LONG)


TYPED = [(10, 8), (3, 16)]


def _table_types(student, reference, ctx):
    for length, dim in TYPED:  # judged on the decoded values in the grader's process
        label = f"sinusoidal_positions({length}, {dim})"
        table = student.get(label)
        if type(table) is not torch.Tensor:
            yield f"{label} must return a torch.Tensor, got {kind_of(table)}"
        elif table.dtype != torch.float32:
            yield f"{label} must have dtype torch.float32, got {table.dtype}"
        elif tuple(table.shape) != (length, dim):
            yield f"{label} must have shape ({length}, {dim}), got {tuple(table.shape)}"


WHAT = "sinusoidal_positions"


@check("sinusoidal_positions", weight=1, verify=gated(_table_types, what=WHAT), compare_reference=False,
       description="the table is a float32 tensor of shape (length, dim)")
def dtype_and_shape(impl, ref, ctx):
    tables = {f"sinusoidal_positions({length}, {dim})": impl.positions.sinusoidal_positions(length, dim)
              for length, dim in TYPED}
    return {**tables, **gate_values({f"{name} in float32": _as_float32(table) for name, table in tables.items()})}


@check("sinusoidal_positions", weight=1, verify=gated(what=WHAT), compare_reference=False,
       description="an odd dim raises ValueError")
def odd_dim_rejected(impl, ref, ctx):
    outputs = {}
    for length, dim in [(10, 7), (4, 1), (6, 13)]:
        try:
            impl.positions.sinusoidal_positions(length, dim)
            raised = False
        except NotImplementedError:
            raise
        except Exception as exc:  # noqa: BLE001 - any other exception is the wrong one
            raised = isinstance(exc, ValueError)
        outputs[f"sinusoidal_positions({length}, {dim}) raised ValueError"] = raised
    outputs.update(gate_values(_tables(impl, [(6, 4)])))
    return outputs
