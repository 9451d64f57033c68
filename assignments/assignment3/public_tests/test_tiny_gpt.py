"""Public tests for TinyGPT, the progression data and the training helpers (no long training)."""

import math

import pytest
import torch
from assignment3.tiny_gpt import (
    VOCAB,
    TinyGPT,
    generate,
    next_token_loss,
    predictable_accuracy,
    progression_batch,
    train,
)
from torch import nn


class CountingModel(nn.Module):
    """Stub model that always predicts (current token + 1) mod 10."""

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return nn.functional.one_hot((ids + 1) % VOCAB, VOCAB).float()


@pytest.mark.task("tiny_gpt_training")
def test_progression_batch_values(generator):
    ids = progression_batch(5, length=12, generator=generator)
    assert ids.shape == (5, 12)
    assert ids.dtype == torch.long
    assert ids.min() >= 0 and ids.max() <= 9
    steps = (ids[:, 1:] - ids[:, :-1]) % 10
    assert torch.equal(steps, steps[:, :1].expand_as(steps))


@pytest.mark.task("tiny_gpt_training")
def test_progression_batch_is_reproducible():
    first = progression_batch(4, generator=torch.Generator().manual_seed(7))
    second = progression_batch(4, generator=torch.Generator().manual_seed(7))
    assert first.shape == (4, 12)
    assert torch.equal(first, second)


@pytest.mark.task("tiny_gpt")
def test_tiny_gpt_logits_shape(generator):
    model = TinyGPT(dim=32, heads=4, depth=2)
    ids = torch.randint(0, VOCAB, (3, 9), generator=generator)
    logits = model(ids)
    assert logits.shape == (3, 9, VOCAB)
    assert logits.dtype == torch.float32


@pytest.mark.task("tiny_gpt")
def test_tiny_gpt_parts_and_attention_maps(generator):
    model = TinyGPT(dim=32, heads=4, depth=2)
    assert model.positions.shape == (64, 32)
    assert "positions" in dict(model.named_buffers())
    assert len(model.blocks) == 2
    ids = torch.randint(0, VOCAB, (3, 9), generator=generator)
    maps = model.attention_maps(ids)
    assert len(maps) == 2
    assert all(m.shape == (3, 4, 9, 9) for m in maps)


@pytest.mark.task("tiny_gpt")
def test_tiny_gpt_predictions_do_not_see_later_tokens(generator):
    model = TinyGPT(dim=32, heads=4, depth=2).eval()
    ids = torch.randint(0, VOCAB, (2, 9), generator=generator)
    changed = ids.clone()
    changed[:, 6] = (changed[:, 6] + 5) % VOCAB  # another token at position 6 only
    with torch.no_grad():
        logits, changed_logits = model(ids), model(changed)
    # Row t predicts token t + 1 from tokens 0..t: rows 0..5 must not move when token 6 does.
    torch.testing.assert_close(changed_logits[:, :6], logits[:, :6], rtol=0, atol=1e-5)
    assert not torch.allclose(changed_logits[:, 6], logits[:, 6])  # the change does reach its own position


@pytest.mark.task("tiny_gpt")
def test_tiny_gpt_rejects_sequences_longer_than_64():
    model = TinyGPT(dim=32, heads=4, depth=1)
    with pytest.raises(ValueError):
        model(torch.zeros(1, 65, dtype=torch.long))


@pytest.mark.task("tiny_gpt_training")
def test_next_token_loss_literal_example():
    logits = torch.zeros(1, 3, VOCAB)
    logits[0, 0, 7] = 2.0  # position 0 favours token 7, and token 7 comes next
    logits[0, 2, 0] = 9.0  # the last position has nothing to predict: ignored
    ids = torch.tensor([[4, 7, 1]])
    # Position 0: -log(e^2 / (e^2 + 9)); position 1 (all logits 0): log 10.
    expected = (math.log(math.exp(2.0) + 9.0) - 2.0 + math.log(10.0)) / 2
    assert next_token_loss(logits, ids).item() == pytest.approx(expected, rel=1e-5, abs=1e-6)


@pytest.mark.task("tiny_gpt_training")
def test_generate_appends_greedy_tokens():
    model = CountingModel()
    one_d = generate(model, torch.tensor([3, 4]), 5)
    assert one_d.tolist() == [3, 4, 5, 6, 7, 8, 9]
    batched = generate(model, torch.tensor([[3, 4], [8, 9]]), 3)
    assert batched.shape == (2, 5)
    assert batched.tolist() == [[3, 4, 5, 6, 7], [8, 9, 0, 1, 2]]


@pytest.mark.task("tiny_gpt_training")
def test_predictable_accuracy_counts_from_the_third_token():
    model = CountingModel()
    ids = torch.tensor([[0, 1, 2, 3, 4], [5, 5, 5, 5, 5]])
    # Row 0 is all predicted right (3 of 3); row 1 all wrong (0 of 3).
    accuracy = predictable_accuracy(model, ids)
    assert isinstance(accuracy, float)
    assert accuracy == pytest.approx(0.5)


@pytest.mark.task("tiny_gpt_training")
def test_a_few_training_steps():
    model, losses = train(steps=3, seed=0)
    assert isinstance(model, TinyGPT)
    assert not model.training
    assert len(losses) == 3
    assert all(isinstance(loss, float) and math.isfinite(loss) for loss in losses)
