"""Carry a probe's outputs from the worker to the parent as JSON plus safetensors (never pickle).

The worker side (:func:`encode_outputs`) turns named outputs into plain JSON and a tensor dict; the parent
side (:func:`decode_outputs`) treats both as untrusted bytes: it checks sizes, structure and types before
anything reaches the comparison.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import torch
from safetensors.torch import load as load_safetensors

from autograder.errors import TransportError

MAX_KEYS = 4096
MAX_STRING = 2000
MAX_ELEMENTS = 8_000_000  # numbers in one check's tensors: real outputs hold thousands; bounds the parent's work
MAX_NAME = 1000  # an output's name; the student's code can choose nested names (dict outputs)
_JSON_TYPES = {bool: "bool", int: "int", float: "float", str: "str", type(None): "none"}


@dataclass(frozen=True)
class Foreign:
    """An output that is not plain data (e.g. a tensor subclass, an object array, an arbitrary object)."""

    type_name: str
    detail: str = ""

    def describe(self) -> str:
        """A short phrase such as ``numpy.ndarray (float32, shape (3, 4))``."""
        return f"{self.type_name} ({self.detail})" if self.detail else self.type_name


def _type_name(value: Any) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _flatten(prefix: str, value: Any, out: dict[str, Any], depth: int = 0) -> None:
    if type(value) in (list, tuple) and depth < 3:
        for index, item in enumerate(value):
            _flatten(f"{prefix}[{index}]", item, out, depth + 1)
        if not value:
            out[prefix] = value
    elif type(value) is dict and depth < 3:
        for key, item in value.items():
            _flatten(f"{prefix}.{key}", item, out, depth + 1)
    else:
        out[prefix] = value


def encode_outputs(outputs: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """Describe outputs as JSON-safe values and a dict of plain tensors (worker side).

    Args:
        outputs: Named outputs returned by a probe; lists, tuples and dicts are flattened into
            ``name[i]`` and ``name.key``.

    Returns:
        ``(values, tensors)``: per output name a JSON description, and the tensors it refers to.
    """
    flat: dict[str, Any] = {}
    for key, value in outputs.items():
        _flatten(str(key), value, flat)
    values: dict[str, Any] = {}
    tensors: dict[str, torch.Tensor] = {}
    for key, value in list(flat.items())[:MAX_KEYS]:
        kind = type(value)
        if kind is torch.Tensor or kind is torch.nn.Parameter:
            unsendable = _unsendable_tensor(value)
            if unsendable:
                values[key] = {"kind": "foreign", "type": "torch.Tensor", "detail": unsendable}
                continue
            ref = f"t{len(tensors)}"
            tensors[ref] = torch.Tensor.detach(value).cpu().contiguous().clone()
            values[key] = {"kind": "tensor", "ref": ref}
        elif kind is np.ndarray and value.dtype.kind in "biuf":
            ref = f"t{len(tensors)}"
            tensors[ref] = torch.from_numpy(np.ascontiguousarray(value).copy())
            values[key] = {"kind": "ndarray", "ref": ref}
        elif isinstance(value, torch.Tensor):
            values[key] = {"kind": "foreign", "type": _type_name(value), "detail": "a subclass of torch.Tensor"}
        elif kind is int and abs(value).bit_length() > 128:
            values[key] = {"kind": "foreign", "type": "int", "detail": f"{abs(value).bit_length()} bits long"}
        elif kind in _JSON_TYPES:
            if kind is str:
                value = value[:MAX_STRING]
            values[key] = {"kind": "json", "type": _JSON_TYPES[kind], "value": value}
        elif kind in (list, tuple):
            values[key] = {"kind": "json", "type": "list", "value": []}
        else:
            values[key] = {"kind": "foreign", "type": _type_name(value), "detail": _foreign_detail(value)}
    return values, tensors


_SENDABLE_DTYPES = {torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.bool, torch.uint8, torch.int8,
                    torch.int16, torch.int32, torch.int64}


def _unsendable_tensor(tensor: torch.Tensor) -> str:
    """Why a plain tensor cannot travel as safetensors (a sparse, quantized, meta or complex one), or ``""``."""
    try:
        if tensor.is_meta:
            return "a meta tensor, which holds no values"
        if tensor.layout != torch.strided:
            return f"a {str(tensor.layout).removeprefix('torch.')} tensor; return a dense one"
        if tensor.dtype not in _SENDABLE_DTYPES:
            return f"dtype {tensor.dtype}"
    except Exception as exc:  # noqa: BLE001 - a tensor this odd is described, not sent
        return f"a tensor that cannot be read ({type(exc).__name__})"
    return ""


def _foreign_detail(value: Any) -> str:
    dtype, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
    if type(dtype).__module__.startswith("numpy") and type(shape) is tuple:
        return f"{dtype}, shape {tuple(int(s) for s in shape)}"
    return ""


def decode_outputs(values: Any, tensor_bytes: bytes | None) -> dict[str, Any]:
    """Rebuild outputs from a worker's JSON description and safetensors bytes (parent side, untrusted input).

    Args:
        values: The decoded JSON object the worker wrote for one check.
        tensor_bytes: The safetensors file the worker wrote for it, or None if it wrote none.

    Returns:
        Output name to a plain ``torch.Tensor``, a numeric ``numpy.ndarray``, a ``bool``/``int``/``float``/
        ``str``/``None``, an empty list, or a :class:`Foreign`.

    Raises:
        TransportError: If the description or the tensor file is malformed.
    """
    if not isinstance(values, dict) or len(values) > MAX_KEYS:
        raise TransportError("outputs are not a mapping of bounded size")
    try:
        tensors = load_safetensors(tensor_bytes) if tensor_bytes else {}
    except Exception as exc:  # safetensors raises its own error types on malformed input
        raise TransportError(f"unreadable tensor file: {exc}") from None
    elements = sum(t.numel() for t in tensors.values())
    if elements > MAX_ELEMENTS:
        raise TransportError(f"the outputs hold {elements:,} numbers; a check's outputs may hold at most "
                             f"{MAX_ELEMENTS:,}")
    decoded: dict[str, Any] = {}
    for key, item in values.items():
        if not isinstance(key, str) or not isinstance(item, dict):
            raise TransportError("malformed output entry")
        if len(key) > MAX_NAME:
            raise TransportError(f"an output name is longer than {MAX_NAME} characters")
        decoded[key] = _decode_item(item, tensors)
    return decoded


def _decode_item(item: dict, tensors: dict[str, torch.Tensor]) -> Any:
    kind = item.get("kind")
    if kind == "tensor":
        tensor = tensors.get(item.get("ref"))
        if type(tensor) is not torch.Tensor:
            raise TransportError("missing tensor")
        return tensor
    if kind == "ndarray":
        tensor = tensors.get(item.get("ref"))
        if type(tensor) is not torch.Tensor:
            raise TransportError("missing array")
        return tensor.numpy()
    if kind == "json":
        expected = {"bool": bool, "int": int, "float": float, "str": str, "none": type(None), "list": list}
        value, declared = item.get("value"), expected.get(item.get("type"))
        if declared is None or type(value) is not declared:
            raise TransportError("value does not match its declared type")
        if declared is list and value:
            raise TransportError("lists are flattened")
        return value
    if kind == "foreign":
        return Foreign(str(item.get("type", "?"))[:200], str(item.get("detail", ""))[:200])
    raise TransportError(f"unknown output kind {kind!r}")


def dumps_record(record: Mapping[str, Any]) -> str:
    """Serialise one result record as a single JSON line."""
    return json.dumps(record, separators=(",", ":"))
