"""Context.init_module: seeded weights that agree between the student's and the reference's modules."""

from __future__ import annotations

from collections import OrderedDict

import torch
from torch import nn

from autograder.probe import Context, canonical_parameters


def _mlp(named: bool) -> nn.Sequential:
    layers = (nn.Linear(6, 12), nn.GELU(), nn.Linear(12, 6))
    return nn.Sequential(OrderedDict(zip(("fc1", "act", "fc2"), layers))) if named else nn.Sequential(*layers)


def test_sequential_children_get_the_same_weights_whatever_their_labels():
    indexed, named = _mlp(named=False), _mlp(named=True)
    Context(7).init_module(indexed)
    Context(7).init_module(named)
    x = torch.randn(3, 5, 6)
    assert torch.equal(indexed(x), named(x))


def test_other_modules_are_still_seeded_by_attribute_name():
    class Pair(nn.Module):
        def __init__(self, first: str, second: str) -> None:
            super().__init__()
            self.add_module(first, nn.Linear(4, 4))
            self.add_module(second, nn.Linear(4, 4))

    a, b = Context(3).init_module(Pair("q", "k")), Context(3).init_module(Pair("k", "q"))
    assert torch.equal(a.q.weight, b.q.weight) and not torch.equal(a.q.weight, a.k.weight)


def test_canonical_names_follow_named_parameters_and_list_shared_weights_once():
    model = nn.Sequential(OrderedDict(embed=nn.Embedding(10, 4), blocks=nn.ModuleList([nn.Linear(4, 4)])))
    model.head = nn.Linear(4, 10, bias=False)
    model.head.weight = model.embed.weight
    names = [name for name, _ in canonical_parameters(model)]
    assert names == ["0.weight", "1.0.weight", "1.0.bias"]
    assert [p for _, p in canonical_parameters(model)] == list(model.parameters())
