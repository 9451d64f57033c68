"""Snapshot and restore the process-wide state that student code can change at import (torch, NumPy, random)."""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch


@dataclass
class GlobalState:
    """Process-wide settings and random states that outlive the code that changed them.

    Attributes:
        values: Setting name to its value (restored through ``_SETTERS``).
        print_options: A copy of torch's print options.
        torch_rng: torch's global generator state.
        numpy_rng: NumPy's legacy global generator state.
        python_rng: Python's ``random`` state.
        function_modes: Depth of torch's function-mode stack (a mode pushed at import, e.g. a default device).
        dispatch_modes: Depth of torch's dispatch-mode stack.
    """

    values: dict[str, Any]
    print_options: Any
    torch_rng: torch.Tensor
    numpy_rng: Any
    python_rng: Any
    function_modes: int
    dispatch_modes: int


_GETTERS = {
    "default_dtype": torch.get_default_dtype,
    "grad_enabled": torch.is_grad_enabled,
    "num_threads": torch.get_num_threads,
    "deterministic": torch.are_deterministic_algorithms_enabled,
    "deterministic_warn_only": torch.is_deterministic_algorithms_warn_only_enabled,
    "anomaly": torch.is_anomaly_enabled,
    "anomaly_check_nan": torch.is_anomaly_check_nan_enabled,
    "matmul_precision": torch.get_float32_matmul_precision,
    "mkldnn": torch._C._get_mkldnn_enabled,
    "warn_always": torch.is_warn_always_enabled,
    "numpy_errors": np.geterr,
    "numpy_print": np.get_printoptions,
}


def _set_deterministic(values: dict[str, Any]) -> None:
    wanted = (values["deterministic"], values["deterministic_warn_only"])
    if (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()) != wanted:
        # only when it changed: the call costs ~2 s of lazy imports the first time, in every job
        torch.use_deterministic_algorithms(wanted[0], warn_only=wanted[1])


def _set_anomaly(values: dict[str, Any]) -> None:
    torch.autograd.set_detect_anomaly(values["anomaly"], check_nan=values["anomaly_check_nan"])


_SETTERS = [
    lambda v: torch.set_default_dtype(v["default_dtype"]),
    lambda v: torch.set_grad_enabled(v["grad_enabled"]),
    lambda v: torch.get_num_threads() == v["num_threads"] or torch.set_num_threads(v["num_threads"]),
    _set_deterministic,
    _set_anomaly,
    lambda v: torch.set_float32_matmul_precision(v["matmul_precision"]),
    lambda v: torch._C._set_mkldnn_enabled(v["mkldnn"]),
    lambda v: torch.set_warn_always(v["warn_always"]),
    lambda v: np.seterr(**v["numpy_errors"]),
    lambda v: np.set_printoptions(**v["numpy_print"]),
]


# Namespaces whose public functions probes compare with (torch.equal, torch.allclose, numpy.allclose, Tensor.__eq__,
# ...): a student module that rebinds one at import must not change what another task's probe concludes.
_LIBRARY_NAMESPACES = (torch, torch.nn.functional, torch.linalg, torch.testing, np, np.linalg, np.testing)


def _library_snapshot() -> list[tuple[Any, dict[str, Any]]]:
    """The public attributes of the guarded namespaces, and every attribute of torch.Tensor, as they are now."""
    snapshot = [(namespace, {name: value for name, value in vars(namespace).items() if not name.startswith("_")})
                for namespace in _LIBRARY_NAMESPACES]
    return snapshot + [(torch.Tensor, dict(vars(torch.Tensor)))]


_PRISTINE_LIBRARY = _library_snapshot()  # taken when the zygote imports this module, before any student code


def restore_library() -> None:
    """Undo rebound library functions: every guarded attribute back to its value in the zygote, and methods a
    student added to torch.Tensor over its C implementation (``Tensor.__eq__ = ...``) removed."""
    for namespace, pristine in _PRISTINE_LIBRARY:
        current = vars(namespace)
        for name, value in pristine.items():
            if current.get(name, _MISSING) is not value:
                setattr(namespace, name, value)
    pristine_tensor = _PRISTINE_LIBRARY[-1][1]
    for name in [n for n in vars(torch.Tensor) if n not in pristine_tensor and hasattr(torch._C.TensorBase, n)]:
        delattr(torch.Tensor, name)


_MISSING = object()


def _mode_depths() -> tuple[int, int]:
    from torch.utils import _python_dispatch

    return (len(torch.overrides._get_current_function_mode_stack()),
            len(_python_dispatch._get_current_dispatch_mode_stack()))


def capture() -> GlobalState:
    """The current process-wide state."""
    functions, dispatch = _mode_depths()
    return GlobalState(
        values={name: getter() for name, getter in _GETTERS.items()},
        print_options=copy.copy(torch._tensor_str.PRINT_OPTS),
        torch_rng=torch.random.get_rng_state(),
        numpy_rng=np.random.get_state(),
        python_rng=random.getstate(),
        function_modes=functions,
        dispatch_modes=dispatch,
    )


def restore(state: GlobalState) -> None:
    """Put back a captured state: settings, print options, random states, and pop modes pushed since; and the
    library's public functions as they were before any student code (:func:`restore_library`)."""
    restore_library()
    functions, dispatch = _mode_depths()
    for _ in range(functions - state.function_modes):
        torch._C._pop_torch_function_stack()
    for _ in range(dispatch - state.dispatch_modes):
        torch._C._pop_torch_dispatch_stack()
    for setter in _SETTERS:
        setter(state.values)
    vars(torch._tensor_str.PRINT_OPTS).update(vars(state.print_options))
    torch.random.set_rng_state(state.torch_rng)
    np.random.set_state(state.numpy_rng)
    random.setstate(state.python_rng)
