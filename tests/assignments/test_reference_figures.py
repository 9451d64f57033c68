"""Check that the assignment 3 reference solution reproduces every figure quoted in the course."""

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

REFERENCE = Path(__file__).resolve().parents[2] / "reference_solutions" / "assignment3"
PACKAGE = "reference_assignment3"
GIB = 2**30


def _load_reference() -> ModuleType:
    """Import reference_solutions/assignment3 under a private name so it cannot clash."""
    if PACKAGE in sys.modules:
        return sys.modules[PACKAGE]
    spec = importlib.util.spec_from_file_location(
        PACKAGE, REFERENCE / "__init__.py", submodule_search_locations=[str(REFERENCE)]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)
    return package


_load_reference()
attention = importlib.import_module(f"{PACKAGE}.attention")
positions = importlib.import_module(f"{PACKAGE}.positions")
kv_cache = importlib.import_module(f"{PACKAGE}.kv_cache")
tiny_gpt = importlib.import_module(f"{PACKAGE}.tiny_gpt")


@pytest.fixture(autouse=True)
def _seed() -> None:
    """Start every test from the same global random state."""
    torch.manual_seed(0)


# --- attention --------------------------------------------------------------


def test_hand_checkable_example():
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    out, weights = attention.scaled_dot_product_attention(x, x, x)
    expected_weights = [[0.401, 0.198, 0.401], [0.198, 0.401, 0.401], [0.248, 0.248, 0.503]]
    expected_out = [[0.802, 0.599], [0.599, 0.802], [0.752, 0.752]]
    assert [[round(w, 3) for w in row] for row in weights.tolist()] == expected_weights
    assert [[round(o, 3) for o in row] for row in out.tolist()] == expected_out


def test_weight_rows_sum_to_one_and_causal_weights_are_zero_above_the_diagonal():
    q, k, v = torch.randn(3, 3, 4, 7, 8).unbind(0)
    _, weights = attention.scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 4, 7), rtol=1e-5, atol=1e-6)
    _, causal = attention.scaled_dot_product_attention(q, k, v, causal=True)
    torch.testing.assert_close(causal.sum(-1), torch.ones(3, 4, 7), rtol=1e-5, atol=1e-6)
    assert torch.all(causal[..., attention.causal_mask(7)] == 0)
    cross = torch.randn(3, 4, 10, 8)
    _, rectangular = attention.scaled_dot_product_attention(q, cross, cross)
    assert rectangular.shape == (3, 4, 7, 10)
    torch.testing.assert_close(rectangular.sum(-1), torch.ones(3, 4, 7), rtol=1e-5, atol=1e-6)


def test_permuting_inputs_permutes_outputs_without_positions():
    layer = attention.MultiHeadAttention(32, 4)
    x = torch.randn(3, 7, 32)
    permutation = torch.randperm(7)
    with torch.no_grad():
        torch.testing.assert_close(
            layer(x[:, permutation]), layer(x)[:, permutation], rtol=1e-5, atol=1e-5
        )


# --- KV cache ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("batch", "n", "dim", "heads"), [(1, 1, 8, 2), (3, 7, 32, 4), (2, 20, 48, 6)]
)
def test_cached_and_uncached_decoding_agree(batch, n, dim, heads):
    layer = attention.MultiHeadAttention(dim, heads)
    tokens = torch.randn(batch, n, dim)
    with torch.no_grad():
        expected = layer(tokens, causal=True)
        cached = kv_cache.decode_with_cache(layer, tokens)
        uncached = kv_cache.decode_without_cache(layer, tokens)
    torch.testing.assert_close(cached, expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(uncached, expected, rtol=1e-5, atol=1e-5)


def _key_projection_rows(decode, n: int, dim: int = 16) -> int:
    """Count the token rows that pass through layer.k_proj while decoding n tokens."""
    layer = attention.MultiHeadAttention(dim, 2)
    rows = 0

    def hook(module, inputs, output):
        nonlocal rows
        rows += inputs[0].numel() // dim

    layer.k_proj.register_forward_hook(hook)
    with torch.no_grad():
        decode(layer, torch.randn(1, n, dim))
    return rows


@pytest.mark.parametrize("n", [1, 2, 5, 33])
def test_key_projection_work_with_and_without_cache(n):
    assert _key_projection_rows(kv_cache.decode_with_cache, n) == n
    assert _key_projection_rows(kv_cache.decode_without_cache, n) == n * (n + 1) // 2


def test_key_projection_work_for_512_tokens_is_512_versus_131328():
    assert _key_projection_rows(kv_cache.decode_with_cache, 512) == 512
    assert _key_projection_rows(kv_cache.decode_without_cache, 512) == 131_328


def test_kv_cache_sizes():
    full = kv_cache.kv_cache_bytes(
        layers=32, kv_heads=32, head_dim=128, seq_len=4096, bytes_per_value=2
    )
    assert full == 2 * GIB
    assert kv_cache.kv_cache_bytes(32, 8, 128, 4096) == full // 4
    assert kv_cache.kv_cache_bytes(32, 1, 128, 4096) == full // 32
    assert kv_cache.kv_cache_bytes(24, 16, 64, 2000) == 196_608_000


# --- positions ---------------------------------------------------------------


def test_sinusoidal_positions_formula():
    table = positions.sinusoidal_positions(50, 16)
    p = torch.arange(50, dtype=torch.float64)[:, None]
    i = torch.arange(8, dtype=torch.float64)
    angles = p / 10000 ** (2 * i / 16)
    assert table.dtype == torch.float32
    torch.testing.assert_close(table[:, 0::2], torch.sin(angles).float(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(table[:, 1::2], torch.cos(angles).float(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError):
        positions.sinusoidal_positions(4, 7)


# --- TinyGPT -----------------------------------------------------------------


def test_changing_a_later_token_never_changes_an_earlier_prediction():
    model = tiny_gpt.TinyGPT().eval()
    ids = tiny_gpt.progression_batch(4, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        logits = model(ids)
        for t in range(ids.shape[1]):
            changed = ids.clone()
            changed[:, t] = (changed[:, t] + 3) % tiny_gpt.VOCAB
            new_logits = model(changed)
            torch.testing.assert_close(new_logits[:, :t], logits[:, :t], rtol=0, atol=1e-6)
            assert not torch.allclose(new_logits[:, t], logits[:, t])


def test_training_is_deterministic():
    _, first = tiny_gpt.train(steps=5, seed=3)
    _, second = tiny_gpt.train(steps=5, seed=3)
    assert first == second


@pytest.fixture(scope="module")
def trained() -> dict[int, tuple[torch.nn.Module, list[float]]]:
    """Train TinyGPT for 300 steps, once per seed, on one thread as graders do."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return {seed: tiny_gpt.train(steps=300, seed=seed) for seed in (0, 1, 2)}
    finally:
        torch.set_num_threads(threads)


def _fresh_progressions() -> torch.Tensor:
    """256 progressions the models never trained on (their own generator seed)."""
    return tiny_gpt.progression_batch(256, generator=torch.Generator().manual_seed(1234))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tiny_gpt_learns_progressions_in_300_steps(trained, seed):
    model, losses = trained[seed]
    assert len(losses) == 300 and all(isinstance(loss, float) for loss in losses)
    assert not model.training
    assert tiny_gpt.predictable_accuracy(model, _fresh_progressions()) == 1.0
    # The first prediction is a guess (ln 10 / 11 per token); the rest become near-certain.
    assert losses[-1] < 0.3 < 2.0 < losses[0]


@pytest.mark.slow
def test_untrained_model_is_near_chance():
    torch.manual_seed(0)
    accuracy = tiny_gpt.predictable_accuracy(tiny_gpt.TinyGPT(), _fresh_progressions())
    assert accuracy < 0.3


@pytest.mark.slow
def test_greedy_continuations(trained):
    model, _ = trained[0]
    three_five = tiny_gpt.generate(model, torch.tensor([3, 5]), 8)
    assert three_five.tolist() == [3, 5, 7, 9, 1, 3, 5, 7, 9, 1]
    eight_one = tiny_gpt.generate(model, torch.tensor([8, 1]), 6)
    assert eight_one.tolist() == [8, 1, 4, 7, 0, 3, 6, 9]
    batched = tiny_gpt.generate(model, torch.tensor([[3, 5], [8, 1]]), 6)
    assert batched.tolist() == [[3, 5, 7, 9, 1, 3, 5, 7], [8, 1, 4, 7, 0, 3, 6, 9]]


@pytest.mark.slow
def test_trained_model_is_causal(trained):
    model, _ = trained[0]
    ids = _fresh_progressions()[:8]
    with torch.no_grad():
        logits = model(ids)
        changed = ids.clone()
        changed[:, 6] = (changed[:, 6] + 1) % tiny_gpt.VOCAB
        torch.testing.assert_close(model(changed)[:, :6], logits[:, :6], rtol=0, atol=1e-6)
