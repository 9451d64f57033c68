"""Blind submissions: the template with each task's functions answering without understanding."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from autograder.authoring import blind_runtime as rt
from autograder.authoring.audit import BlindRow, render_blind, run_blind
from autograder.authoring.blind import BLIND_KINDS, blind_module_source, write_blind_package
from autograder.spec.assignment import available_assignments, load_assignment

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "assignments"


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


def test_the_uniform_kind_spreads_one_over_the_last_dimension():
    q = torch.randn(2, 3, 4)
    out, weights = rt._blind_function(attend, "uniform")(q, q, q)
    assert out.shape == (2, 3, 4) and torch.all(out == 0.25) and torch.all(weights == 1 / 3)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 3))  # what an ungated rows-sum-to-one check pays
    assert rt._blind_constant("uniform", torch.tensor(2.5)) == 1.0 and rt._blind_constant("uniform", 2.5) == 1.0
    assert torch.equal(rt._blind_constant("uniform", torch.arange(3)), torch.ones(3, dtype=torch.long))
    assert rt._blind_constant("uniform", torch.zeros(2, dtype=torch.bool)).all()
    array = rt._blind_constant("uniform", np.zeros((2, 5), dtype=np.float32))
    assert array.dtype == np.float32 and np.all(array == np.float32(0.2))
    assert rt._blind_constant("uniform", torch.zeros(3, 0)).shape == (3, 0)


def test_a_uniform_model_attends_uniformly_and_predicts_every_token_alike():
    """A returned model with every parameter 1/(its last dimension): a pre-norm block's queries and keys agree
    at every position, so each row of the attention is uniform, and the output layer gives equal logits."""
    torch.manual_seed(0)
    embed, block, head = nn.Embedding(10, 8), nn.TransformerEncoderLayer(8, 2, 16, batch_first=True,
                                                                       norm_first=True), nn.Linear(8, 10)
    model = rt._blind_constant("uniform", nn.ModuleList([embed, block, head]).eval())  # no dropout
    assert torch.all(embed.weight == 1 / 8) and torch.all(head.weight == 1 / 8) and torch.all(head.bias == 0.1)
    x = block.norm1(embed(torch.randint(0, 10, (2, 5))) + torch.randn(5, 8))
    _, weights = block.self_attn(x, x, x, average_attn_weights=False)
    assert model is not None and torch.allclose(weights, torch.full_like(weights, 1 / 5))
    logits = head(block(x))
    assert torch.allclose(logits, logits[..., :1].expand_as(logits))


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
    cells = 2 * len(BLIND_KINDS)
    assert "PAID mask x zeros: mask.dtype" in table and f"{cells - 1} / {cells}" in table
    assert not rows[1].ok and rows[0].ok


@pytest.mark.slow
@pytest.mark.parametrize("name", available_assignments())
def test_every_blind_submission_scores_zero_on_every_task(name):
    rows = run_blind(load_assignment(name), jobs=2)
    table = render_blind(rows)
    print(table)
    assert [row.kind for row in rows] == list(BLIND_KINDS)
    assert all(row.ok for row in rows), table


@pytest.mark.slow
def test_the_audit_catches_an_ungated_check_that_pays_a_uniform_answer():
    """A rows-sum-to-one check without a gate (tests/fixtures/assignments/uniform_rows) pays 1/n in every cell,
    and only that: without the uniform kind, this audit would pass."""
    rows = run_blind(load_assignment("uniform_rows", root=FIXTURES), jobs=2)
    table = render_blind(rows)
    assert [row.kind for row in rows if not row.ok] == ["uniform"], table
    assert "PAID softmax x uniform: softmax.softmax_rows_sum_to_one" in table
