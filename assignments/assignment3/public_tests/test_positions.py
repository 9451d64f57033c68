"""Public tests for sinusoidal_positions."""

import math

import pytest
import torch
from assignment3.positions import sinusoidal_positions

RTOL, ATOL = 1e-5, 1e-6


@pytest.mark.task("sinusoidal_positions")
def test_positions_shape_and_dtype():
    table = sinusoidal_positions(10, 8)
    assert table.shape == (10, 8)
    assert table.dtype == torch.float32


@pytest.mark.task("sinusoidal_positions")
def test_position_zero_alternates_zero_and_one():
    table = sinusoidal_positions(10, 8)
    expected = torch.tensor([0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0])
    torch.testing.assert_close(table[0], expected, rtol=RTOL, atol=ATOL)


@pytest.mark.task("sinusoidal_positions")
def test_literal_entries_for_dim_eight():
    table = sinusoidal_positions(10, 8)
    # Column 2 is pair i = 1: angle 3 / 10000^(2/8) = 3 / 10 = 0.3 at position 3.
    assert table[3, 2].item() == pytest.approx(math.sin(0.3), rel=RTOL, abs=ATOL)
    assert table[3, 3].item() == pytest.approx(math.cos(0.3), rel=RTOL, abs=ATOL)
    assert table[5, 0].item() == pytest.approx(math.sin(5.0), rel=RTOL, abs=ATOL)


@pytest.mark.task("sinusoidal_positions")
def test_odd_dim_is_rejected():
    with pytest.raises(ValueError):
        sinusoidal_positions(10, 7)
