"""The ready-made verifiers pass right outputs and name what is wrong in the others."""

from __future__ import annotations

import pytest
import torch

from autograder.probe import (
    Context,
    all_of,
    close_to,
    dtype_is,
    exact_values,
    future_unchanged,
    kind_is,
    rows_sum_to_one,
    select,
    tensor_is,
    unchanged,
)

CTX = Context(seed=7)


def messages(verifier, outputs):
    return list(verifier(outputs, None, CTX))


def test_select_takes_names_and_prefixes_and_refuses_to_select_nothing():
    outputs = {"weights a": 1, "weights b": 2, "out": 3}
    assert select(outputs, ["weights*"]) == [("weights a", 1), ("weights b", 2)]
    assert select(outputs, ["out"]) == [("out", 3)]
    with pytest.raises(KeyError):
        select(outputs, ["missing*"])


def test_rows_sum_to_one():
    good = torch.softmax(torch.randn(2, 3, 5, 7), dim=-1)
    assert messages(rows_sum_to_one("w*"), {"w1": good, "w2": good.double()}) == []
    assert "sum to 1" in messages(rows_sum_to_one("w"), {"w": good * 1.1})[0]
    # a softmax's rows too, not only attention's: NaN there is as often an overflow as a fully masked row
    assert messages(rows_sum_to_one("w"), {"w": torch.full((2, 3), float("nan"))}) == [
        "w: the weights contain NaN or infinite values (an exp that overflowed, or a row with every entry masked?)"]
    assert messages(rows_sum_to_one("w"), {"w": good * 1.1})[0].startswith(
        "w: each row must sum to 1 over the last dimension, found sums from")
    negative = torch.tensor([[1.5, -0.5]])
    assert "negative" in messages(rows_sum_to_one("w"), {"w": negative})[0]
    assert "torch.Tensor" in messages(rows_sum_to_one("w"), {"w": [0.5, 0.5]})[0]


def test_future_unchanged():
    a = torch.randn(2, 6, 4)
    b = a.clone()
    b[:, -1] += 1.0
    causal = future_unchanged("a", "b", last_changes_by=1e-3, when="with causal=True")
    assert messages(causal, {"a": a, "b": b}) == []
    leaky = b.clone()
    leaky[:, 0] += 0.01
    assert messages(causal, {"a": a, "b": leaky}) == [
        "with causal=True, changing the last token changed the outputs of earlier tokens"]
    assert "still see" in messages(causal, {"a": a, "b": a.clone()})[0]
    assert messages(future_unchanged("a", "b"), {"a": a, "b": a.clone()}) == []  # the last change not required
    assert "shape" in messages(causal, {"a": a, "b": a[:, :3]})[0]
    ranked = future_unchanged("forward", "b", shape="(batch, n, dim)")
    assert messages(ranked, {"forward": a[0], "b": a[0]}) == ["forward must return shape (batch, n, dim), got (6, 4)"]
    nan = a.clone()
    nan[0, 0, 0] = float("nan")
    assert "NaN" in messages(causal, {"a": nan, "b": nan})[0]


def test_kind_and_dtype():
    assert messages(kind_is("n", int, "a Python int"), {"n": 3}) == []
    assert "a Python int" in messages(kind_is("n", int, "a Python int"), {"n": True})[0]
    assert "a Python int" in messages(kind_is("n", int, "a Python int"), {"n": 3.0})[0]
    assert messages(dtype_is("m", dtype=torch.bool), {"m": torch.ones(2, dtype=torch.bool)}) == []
    assert "torch.bool" in messages(dtype_is("m", dtype=torch.bool), {"m": torch.ones(2)})[0]


def test_unchanged_and_exact_values_and_all_of():
    x = torch.arange(6.0)
    assert messages(unchanged({"after": "before"}), {"after": x, "before": x.clone()}) == []
    assert "in-place" in messages(unchanged({"after": "before"}), {"after": x + 1, "before": x})[0]
    assert messages(exact_values({"rows": 10}), {"rows": torch.tensor(10)}) == []
    assert "expected 10, got 55" in messages(exact_values({"rows": 10}), {"rows": 55})[0]
    assert "expected 1" in messages(exact_values({"rows": 1}), {"rows": True})[0]
    both = all_of(exact_values({"rows": 10}), kind_is("rows", int, "a Python int"))
    assert len(messages(both, {"rows": 9.0})) == 2


def test_tensor_is_judges_kind_then_dtype_then_shape():
    verifier = tensor_is({"mask(2)": (2, 2), "mask(3)": (3, 3), "any": None}, dtype=torch.bool)
    right = {"mask(2)": torch.ones(2, 2, dtype=torch.bool), "mask(3)": torch.ones(3, 3, dtype=torch.bool),
             "any": torch.ones(5, dtype=torch.bool)}
    assert messages(verifier, right) == []
    wrong = {"mask(2)": [[True]], "mask(3)": torch.ones(3, 3), "any": torch.ones(5, dtype=torch.int64)}
    assert messages(verifier, wrong) == ["mask(2) must be a torch.Tensor, got list",
                                         "mask(3) must be a bool tensor, got a floating-point dtype (torch.float32)",
                                         "any must be a bool tensor, got an integer dtype (torch.int64)"]
    shaped = {**right, "mask(3)": torch.ones(3, 2, dtype=torch.bool)}
    assert messages(verifier, shaped) == ["mask(3) must have shape (3, 3), got (3, 2)"]
    assert messages(tensor_is({"x": (2,)}), {"x": torch.zeros(2, dtype=torch.int8)}) == []  # no dtype asked


def test_close_to_compares_two_outputs_of_the_probe():
    outputs = {"cached": torch.tensor([1.0, 2.0]), "recomputed": torch.tensor([1.0, 2.00001]),
               "off": torch.tensor([1.0, 2.5])}
    assert messages(close_to("cached", "recomputed"), outputs) == []
    [message] = messages(close_to("off", "recomputed", what="decoding with a cache"), outputs)
    assert message.startswith("decoding with a cache: off (against recomputed): ")
    assert messages(close_to("off", "recomputed", atol=0.6), outputs) == []
    assert messages(close_to("cached", "recomputed", rtol=0.0, atol=0.0), outputs) != []
