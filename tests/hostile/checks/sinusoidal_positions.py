"""Hostile suite: one value check of sinusoidal_positions (a task in a module of its own)."""

from autograder.probe import check


@check("sinusoidal_positions", weight=1, description="sinusoidal_positions(9, 6)")
def table(impl, ref, ctx):
    return {"sinusoidal_positions(9, 6)": impl.positions.sinusoidal_positions(9, 6)}
