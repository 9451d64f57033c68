"""Blind submissions: the template with each task's functions answering without understanding."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch import nn

from autograder.authoring import blind_runtime as rt
from autograder.authoring.audit import BlindRow, render_blind, run_blind
from autograder.authoring.blind import BLIND_KINDS, blind_module_source, write_blind_package
from autograder.spec.assignment import available_assignments, load_assignment


def attend(q, k, v, causal=False):
    if causal and q.shape[-2] != k.shape[-2]:
        raise ValueError("causal needs n == m")
    weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    return weights @ v, weights


class Layer(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError("heads must divide dim")
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(x)

    def weights(self, x):
        return [self.proj(x), x.sum()]


def test_constant_kinds_keep_the_references_shapes_and_types_but_not_its_values():
    q = torch.randn(2, 3, 4)
    for kind, value in (("zeros", 0.0), ("ones", 1.0)):
        out, weights = rt._blind_function(attend, kind)(q, q, q)
        assert out.shape == (2, 3, 4) and weights.shape == (2, 3, 3)
        assert torch.all(out == value) and torch.all(weights == value)
    out, _ = rt._blind_function(attend, "random")(q, q, q)
    assert out.shape == (2, 3, 4) and not torch.allclose(out, attend(q, q, q)[0])
    assert rt._blind_constant("zeros", torch.ones(3, dtype=torch.bool)).dtype == torch.bool
    assert rt._blind_constant("ones", [1.5, 7, np.arange(3)])[:2] == [1.0, 1]


def test_echo_convert_and_raise():
    q = torch.randn(2, 3, 4)
    assert rt._blind_function(attend, "echo")(q, q, q) is q
    converted = rt._blind_function(attend, "convert")(q, q, q)
    assert converted.dtype == torch.float64 and torch.equal(converted.float(), q)
    assert rt._blind_function(lambda n: n, "convert")(5) == 5.0
    with pytest.raises(RuntimeError, match="blind"):
        rt._blind_function(attend, "raise")(q, q, q)


def test_a_blind_function_validates_nothing_and_leaves_its_arguments_alone():
    q = torch.randn(1, 2, 4)
    assert rt._blind_function(attend, "zeros")(q, torch.randn(1, 3, 4), torch.randn(1, 3, 4), causal=True) is None
    calls = []
    layer = Layer(4, 2)
    layer.register_forward_hook(lambda *args: calls.append(1))
    before = layer.proj.weight.clone()
    answer = rt._blind_function(lambda m, x: m(x), "zeros")(layer, q)
    assert torch.all(answer == 0) and not calls and torch.equal(layer.proj.weight, before)


def test_a_blind_class_takes_the_references_arguments_and_has_no_weights():
    blind = rt._blind_class(Layer, "ones")(4, 2)
    assert list(blind.parameters()) == [] and list(blind.children()) == []
    x = torch.randn(2, 5, 4)
    assert torch.all(blind(x) == 1) and blind(x).shape == (2, 5, 4)
    assert blind.weights(x)[0].shape == (2, 5, 4) and blind.weights(x)[1] == 1
    assert rt._blind_class(Layer, "echo")(4, 2)(x) is x
    assert rt._blind_class(Layer, "zeros")(4, 3)(x) is None  # the reference refused: no shape, no validation
    blind.double()
    assert blind(x.double()).dtype == torch.float64  # conversions reach the shape oracle


def test_blind_module_source_refuses_unknown_kinds():
    with pytest.raises(ValueError, match="unknown blind kind"):
        blind_module_source("", "m", [], "", "sideways", "pkg")


@pytest.mark.parametrize("name", available_assignments())
def test_every_task_function_of_a_blind_package_is_replaced(name, tmp_path):
    assignment = load_assignment(name)
    package = write_blind_package(assignment, "zeros", tmp_path / assignment.package)
    names = [q for task in assignment.tasks for q in task.functions]
    script = (f"import importlib, json, sys; sys.path.insert(0, {str(tmp_path)!r}); "
              f"get = lambda q: getattr(importlib.import_module({assignment.package!r} + '.' + q.split('.')[0]), "
              f"q.split('.')[1]); code = lambda o: (o.__init__ if isinstance(o, type) else o).__code__; "
              f"print(json.dumps({{q: code(get(q)).co_qualname for q in {names!r}}}))")
    found = json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                      check=True, cwd=tmp_path).stdout)
    assert package.is_dir() and set(found) == set(names)
    assert {q: f for q, f in found.items() if f not in ("_blind_function.<locals>.blind",
                                                        "_blind_class.<locals>.__init__")} == {}


def test_the_blind_table_names_what_paid():
    rows = [BlindRow(kind, {"attention": (0.0, 10.0), "mask": (0.8 if kind == "zeros" else 0.0, 4.0)},
                     {"mask": ["mask.dtype"]} if kind == "zeros" else {}) for kind in BLIND_KINDS]
    table = render_blind(rows)
    assert "PAID mask x zeros: mask.dtype" in table and "11 / 12" in table
    assert not rows[1].ok and rows[0].ok


@pytest.mark.slow
@pytest.mark.parametrize("name", available_assignments())
def test_every_blind_submission_scores_zero_on_every_task(name):
    rows = run_blind(load_assignment(name), jobs=2)
    table = render_blind(rows)
    print(table)
    assert [row.kind for row in rows] == list(BLIND_KINDS)
    assert all(row.ok for row in rows), table
