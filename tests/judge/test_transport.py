"""Outputs crossing from the worker: encoding, and decoding of untrusted bytes in the parent."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from safetensors.torch import save

from autograder.errors import TransportError
from autograder.judge.transport import Foreign, decode_outputs, encode_outputs


def roundtrip(outputs):
    values, tensors = encode_outputs(outputs)
    return decode_outputs(values, save(tensors) if tensors else None)


def test_tensors_scalars_and_nested_lists_roundtrip():
    decoded = roundtrip({"out": torch.arange(6.0).view(2, 3), "n": 3, "ok": True, "maps": [torch.ones(2), torch.zeros(1)],
                         "name": "x", "none": None, "loss": 0.25})
    assert torch.equal(decoded["out"], torch.arange(6.0).view(2, 3))
    assert decoded["n"] == 3 and type(decoded["n"]) is int
    assert decoded["ok"] is True and decoded["loss"] == 0.25 and decoded["none"] is None
    assert torch.equal(decoded["maps[1]"], torch.zeros(1))


def test_numeric_numpy_arrays_arrive_as_numpy_arrays():
    decoded = roundtrip({"out": np.arange(12, dtype=np.float64).reshape(3, 4)})
    assert type(decoded["out"]) is np.ndarray and decoded["out"].dtype == np.float64
    assert np.array_equal(decoded["out"], np.arange(12).reshape(3, 4))


def test_object_arrays_arrive_as_foreign_with_dtype_and_shape():
    decoded = roundtrip({"out": np.array([None, 1], dtype=object)})
    assert decoded["out"] == Foreign("numpy.ndarray", "object, shape (2,)")


def test_tensor_subclasses_arrive_as_foreign():
    class Lying(torch.Tensor):
        def __eq__(self, other):
            return True

    value = torch.zeros(2).as_subclass(Lying)
    decoded = roundtrip({"out": value})
    assert isinstance(decoded["out"], Foreign) and "subclass" in decoded["out"].detail


def test_arbitrary_objects_arrive_as_foreign():
    class AlwaysEqual:
        def __eq__(self, other):
            return True

    assert isinstance(roundtrip({"out": AlwaysEqual()})["out"], Foreign)


@pytest.mark.parametrize("values", [
    [],
    {"x": "not a dict"},
    {"x": {"kind": "tensor", "ref": "t9"}},
    {"x": {"kind": "json", "type": "int", "value": "3"}},
    {"x": {"kind": "json", "type": "bool", "value": 1}},
    {"x": {"kind": "mystery"}},
])
def test_malformed_descriptions_are_rejected(values):
    with pytest.raises(TransportError):
        decode_outputs(values, None)


def test_garbage_tensor_bytes_are_rejected():
    with pytest.raises(TransportError, match="unreadable tensor file"):
        decode_outputs({"x": {"kind": "tensor", "ref": "t0"}}, b"\xff" * 64)


def test_pickle_bytes_are_not_a_tensor_file():
    import io
    import pickle

    buffer = io.BytesIO()
    pickle.dump({"t0": torch.zeros(2)}, buffer)
    with pytest.raises(TransportError):
        decode_outputs({"x": {"kind": "tensor", "ref": "t0"}}, buffer.getvalue())


def test_tensors_safetensors_cannot_hold_and_huge_ints_arrive_as_foreign():
    outputs = {"meta": torch.empty(3, device="meta"), "sparse": torch.eye(3).to_sparse(),
               "complex": torch.zeros(2, dtype=torch.complex64), "huge": 10**5000, "fine": torch.ones(2)}
    decoded = roundtrip(outputs)
    assert decoded["meta"].describe() == "torch.Tensor (a meta tensor, which holds no values)"
    assert "sparse_coo" in decoded["sparse"].describe() and "complex64" in decoded["complex"].describe()
    assert decoded["huge"] == Foreign("int", "16610 bits long")
    assert torch.equal(decoded["fine"], torch.ones(2))


def test_outputs_too_many_numbers_or_too_long_names_are_rejected():
    values, tensors = encode_outputs({"big": torch.zeros(8_000_001, dtype=torch.uint8)})
    with pytest.raises(TransportError, match="at most 8,000,000"):
        decode_outputs(values, save(tensors))
    values, _ = encode_outputs({"x" * 1001: 1})
    with pytest.raises(TransportError, match="longer than 1000"):
        decode_outputs(values, None)
