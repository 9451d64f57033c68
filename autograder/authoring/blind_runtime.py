"""Code appended to a blind submission's modules: answers of the right shape that know nothing of the task.

This file is never imported by the grader in a job: ``autograder.authoring.blind`` appends its text to the
student template's modules (the sandbox refuses imports of ``autograder.authoring``), so it imports only what a
student's module could. Every name is private (``_blind_``) so it cannot shadow a template's own name. The shape
oracle is a private copy of the reference module, executed inside the blind package: a student who has the
reference (or a shape formula) and returns a constant of its shape is a legitimate adversary.
"""

import copy as _blind_copy
import random as _blind_random
import sys as _blind_sys
import types as _blind_types

import numpy as _blind_np
import torch as _blind_torch


def _blind_oracle_module(package, module, source):
    """Execute the reference's source of ``module`` as a private module of the blind package.

    Registered under the package, so the grader's substitution of a task's ``uses`` reaches it like any module.
    """
    name = f"{package}._blind_oracle_{module}"
    oracle = _blind_types.ModuleType(name)
    oracle.__package__ = package
    oracle.__file__ = f"<blind oracle {module}>"
    _blind_sys.modules[name] = oracle
    exec(compile(source, oracle.__file__, "exec"), oracle.__dict__)
    return oracle


def _blind_inputs(args, kwargs):
    return list(args) + list(kwargs.values())


def _blind_first_array(inputs):
    return next((x for x in inputs if isinstance(x, (_blind_torch.Tensor, _blind_np.ndarray))), None)


def _blind_echo(inputs):
    """The first tensor or array input, else the first input (an int size, a model), else None."""
    found = _blind_first_array(inputs)
    if found is not None:
        return found
    return inputs[0] if inputs else None


def _blind_convert(inputs):
    """A copy of the first tensor or array input in another dtype (float64 for float32, float32 otherwise)."""
    found = _blind_first_array(inputs)
    if isinstance(found, _blind_torch.Tensor):
        wanted = _blind_torch.float64 if found.dtype == _blind_torch.float32 else _blind_torch.float32
        return found.detach().to(wanted)
    if isinstance(found, _blind_np.ndarray):
        return found.astype(_blind_np.float64 if found.dtype == _blind_np.float32 else _blind_np.float32)
    first = inputs[0] if inputs else None
    if isinstance(first, int) and not isinstance(first, bool):
        return float(first)
    return first


def _blind_uniform_fill(shape):
    """1/(size of the last dimension): a uniform distribution along it (each row of attention weights, each
    position's probabilities over a vocabulary). A 0-d value, one outcome with no dimension, is 1.0; an empty
    last dimension has no element to fill."""
    return 1.0 / max(1, shape[-1]) if len(shape) else 1.0


def _blind_tensor(kind, value):
    if value.dtype == _blind_torch.bool:
        if kind == "random":
            return _blind_torch.rand(value.shape) < 0.5
        return _blind_torch.full(value.shape, kind in ("ones", "uniform"), dtype=_blind_torch.bool)
    if value.dtype.is_floating_point or value.dtype.is_complex:
        if kind == "uniform":
            return _blind_torch.full_like(value.detach(), _blind_uniform_fill(value.shape))
        maker = {"zeros": _blind_torch.zeros_like, "ones": _blind_torch.ones_like, "random": _blind_torch.randn_like}
        return maker[kind](value.detach())
    if kind == "random":
        high = max(2, int(value.max()) + 1) if value.numel() else 2
        return _blind_torch.randint(0, high, value.shape, dtype=value.dtype)
    return _blind_torch.full(value.shape, int(kind in ("ones", "uniform")), dtype=value.dtype)


def _blind_array(kind, value):
    if kind == "random":
        generator = _blind_np.random.default_rng(_blind_random.getrandbits(32))
        if value.dtype == _blind_np.bool_:
            return generator.random(value.shape) < 0.5
        if _blind_np.issubdtype(value.dtype, _blind_np.integer):
            return generator.integers(0, max(2, int(value.max()) + 1) if value.size else 2, value.shape)
        return generator.standard_normal(value.shape).astype(value.dtype)
    if kind == "uniform" and _blind_np.issubdtype(value.dtype, _blind_np.inexact):
        return _blind_np.full_like(value, _blind_uniform_fill(value.shape))
    return (_blind_np.ones_like if kind in ("ones", "uniform") else _blind_np.zeros_like)(value)


def _blind_module(kind, value):
    """Overwrite a returned model's parameters (a ``train`` that returns an untrained or constant model)."""
    with _blind_torch.no_grad():
        for param in value.parameters():
            if kind == "random":
                param.normal_()
            elif kind == "uniform":
                # Each parameter the uniform tensor of its shape: one constant per parameter, 1/(its last
                # dimension), so a Linear outputs the mean of its input in every unit and every row of a weight
                # matrix is the same. Then every token embeds alike, each position's sum after a LayerNorm is
                # the same (the normalised values sum to 0), so queries and keys agree at every position and the
                # attention is uniform; the output layer's equal rows give equal logits, a uniform prediction
                # over the vocabulary. 1/n rather than 1.0 keeps the activations at the scale of the input
                # through the layers instead of growing by the width at each one.
                param.fill_(_blind_uniform_fill(param.shape))
            else:
                param.fill_(float(kind == "ones"))
    return value


def _blind_constant(kind, value):
    """The reference's answer with every leaf replaced by a zero, one, uniform or random value of its type."""
    if isinstance(value, _blind_torch.Tensor):
        return _blind_tensor(kind, value)
    if isinstance(value, _blind_np.ndarray):
        return _blind_array(kind, value)
    if isinstance(value, _blind_torch.nn.Module):
        return _blind_module(kind, value)
    if isinstance(value, (bool, _blind_np.bool_)):
        return _blind_random.random() < 0.5 if kind == "random" else kind in ("ones", "uniform")
    if isinstance(value, (int, _blind_np.integer)):
        if kind == "random":
            return _blind_random.randint(2, 2 * abs(int(value)) + 10)
        return int(kind in ("ones", "uniform"))
    if isinstance(value, (float, _blind_np.floating)):  # a scalar has no last dimension: uniform is 1.0
        return _blind_random.random() if kind == "random" else float(kind in ("ones", "uniform"))
    if isinstance(value, (list, tuple)):
        mapped = [_blind_constant(kind, item) for item in value]
        return mapped if isinstance(value, list) else tuple(mapped)
    if isinstance(value, dict):
        return {key: _blind_constant(kind, item) for key, item in value.items()}
    return None


def _blind_private_copy(value):
    """A deep copy for the oracle, without forward hooks: the oracle's work and side effects stay invisible."""
    copied = _blind_copy.deepcopy(value)
    for item in copied if isinstance(copied, (list, tuple)) else [copied]:
        if isinstance(item, _blind_torch.nn.Module):
            for sub in item.modules():
                sub._forward_hooks.clear()
                sub._forward_pre_hooks.clear()
    return copied


def _blind_answer(kind, oracle, args, kwargs):
    """What a blind function of ``kind`` returns for these arguments."""
    if kind == "raise":
        raise RuntimeError("blind submission: this function always raises")
    inputs = _blind_inputs(args, kwargs)
    if kind == "echo":
        return _blind_echo(inputs)
    if kind == "convert":
        return _blind_convert(inputs)
    try:
        answer = oracle(*_blind_private_copy(list(args)), **_blind_private_copy(dict(kwargs)))
    except Exception:  # a blind function validates nothing: the reference's refusal is not passed on
        return None
    return _blind_constant(kind, answer)


def _blind_function(oracle, kind):
    """A function with the reference's name and signature that answers blindly."""

    def blind(*args, **kwargs):
        return _blind_answer(kind, oracle, args, kwargs)

    blind.__name__ = blind.__qualname__ = oracle.__name__
    blind.__doc__ = oracle.__doc__
    return blind


def _blind_methods(oracle_class):
    """Public methods the reference class defines (its own and its bases' below nn.Module), ``forward`` first."""
    names = ["forward"] if hasattr(oracle_class, "forward") else []
    for klass in oracle_class.__mro__:
        if klass in (_blind_torch.nn.Module, object):
            break
        names += [n for n, v in vars(klass).items() if callable(v) and not n.startswith("_") and n not in names]
    return names


def _blind_class(oracle_class, kind):
    """A class whose constructor accepts the reference's arguments and whose methods answer blindly.

    It builds no layer of its own: the reference instance it asks for shapes is kept out of its parameters and
    submodules (a check cannot find the reference's structure or weights through it).
    """
    base = _blind_torch.nn.Module if issubclass(oracle_class, _blind_torch.nn.Module) else object

    def __init__(self, *args, **kwargs):
        base.__init__(self)
        try:
            oracle = oracle_class(*args, **kwargs)
        except Exception:  # a blind class validates nothing: the reference's refusal is not passed on
            oracle = None
        object.__setattr__(self, "_blind_oracle", oracle)

    def _apply(self, fn, *args, **kwargs):
        if self._blind_oracle is not None:
            self._blind_oracle._apply(fn, *args, **kwargs)
        return base._apply(self, fn, *args, **kwargs)

    def train(self, mode=True):
        if self._blind_oracle is not None:
            self._blind_oracle.train(mode)
        return base.train(self, mode)

    namespace = {"__init__": __init__, "__doc__": oracle_class.__doc__, "__module__": oracle_class.__module__}
    if base is not object:
        namespace.update(_apply=_apply, train=train)
    for name in _blind_methods(oracle_class):
        namespace[name] = _blind_method(name, kind)
    return type(oracle_class.__name__, (base,), namespace)


def _blind_method(name, kind):
    def method(self, *args, **kwargs):
        if kind in ("echo", "convert", "raise"):
            return _blind_answer(kind, None, args, kwargs)
        if self._blind_oracle is None:
            return None
        try:
            answer = getattr(self._blind_oracle, name)(*args, **kwargs)
        except Exception:  # as in _blind_answer: no validation borrowed from the reference
            return None
        return _blind_constant(kind, answer)

    method.__name__ = name
    return method
