"""Fast tests of the hidden checks of sinusoidal_positions, kv_cache_decode, kv_cache_bytes, tiny_gpt and
tiny_gpt_training: probes run on the reference in-process, verifiers accept the reference and reject known
mistakes, the trained-weights asset loads, and every mutation still applies. No training beyond a few steps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from autograder.errors import CheckFailed
from autograder.judge.transport import encode_outputs
from autograder.judge.verdict import LazyOutputs
from autograder.probe import Context, collect_checks, load_checks_file, pin_torch_state, state_dict_outputs
from autograder.spec.assignment import Assignment
from autograder.spec.mutation import apply_mutation, load_mutations
from autograder.spec.reference import load_package

TASKS = ("sinusoidal_positions", "kv_cache_decode", "kv_cache_bytes", "tiny_gpt", "tiny_gpt_training")
MISTAKES_FILE = "positions_kv_gpt.toml"


@pytest.fixture(scope="module")
def reference(assignment3: Assignment) -> Any:
    return load_package(assignment3.reference, "_test_hidden_pkg_reference", assignment3.modules)


@pytest.fixture(scope="module")
def assets(assignment3: Assignment) -> dict[str, bytes]:
    folder = assignment3.root / "hidden" / "assets"
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def _checks(assignment3: Assignment, task: str) -> dict[str, Any]:
    path = assignment3.root / "hidden" / "checks" / f"{task}.py"
    namespace = load_checks_file(path, f"_test_checks_{task}")
    return {c.name.split(".", 1)[1]: c for c in collect_checks(namespace)}


def _run(check: Any, impl: Any, reference: Any, assets: dict[str, bytes], seed: int = 1234) -> dict[str, Any]:
    """Run a probe like the parent does and return its flattened plain outputs."""
    pin_torch_state(seed)
    values, tensors = encode_outputs(check.probe(impl, reference, Context(seed, assets)))
    return {k: tensors[v["ref"]] if v["kind"] == "tensor" else v.get("value") for k, v in values.items()}


def _verify(check: Any, outputs: dict[str, Any], reference: Any, assets: dict[str, bytes]) -> list[str]:
    # the reference's outputs, computed on first use, as the grader's verifiers get them
    expected = LazyOutputs(lambda: _run(check, reference, reference, assets)) if reference is not None else None
    try:
        return list(check.verify(outputs, expected, Context(1234, assets, reference=reference)))
    except CheckFailed as exc:
        return [str(exc)]


def _mutant(assignment3: Assignment, mistake_id: str, tmp_path: Path) -> Any:
    mistake = next(m for m in load_mutations(assignment3, "mistakes") if m.id == mistake_id)
    folder = apply_mutation(assignment3.reference, mistake, tmp_path / mistake_id)
    return load_package(folder, f"_test_hidden_mutant_{mistake_id}", assignment3.modules)


def test_every_task_has_weighted_checks(assignment3: Assignment) -> None:
    for task in TASKS:
        checks = _checks(assignment3, task)
        assert len(checks) >= 3, task
        assert all(c.task == task and c.weight > 0 and c.description for c in checks.values())


def test_mutations_apply_and_cover_the_tasks(assignment3: Assignment, tmp_path: Path) -> None:
    root = assignment3.root / "hidden"
    mine = [m for m in load_mutations(assignment3, "mistakes") if m.task in TASKS]
    assert len(mine) >= 18
    assert {m.task for m in mine} == set(TASKS)
    assert all(m.hint and m.description for m in mine)
    variants = [m for m in load_mutations(assignment3, "variants")
                if m.id in (root / "variants" / MISTAKES_FILE).read_text()]
    assert len(variants) >= 5
    for mutation in mine + variants:
        folder = apply_mutation(assignment3.reference, mutation, tmp_path / mutation.id)  # raises if stale
        for path in folder.glob("*.py"):
            compile(path.read_text(), f"{mutation.id}/{path.name}", "exec")  # an edit must not break the syntax


def test_trained_asset_loads_and_predicts_every_progression(reference: Any, assets: dict[str, bytes]) -> None:
    from safetensors.torch import load

    model = reference.tiny_gpt.TinyGPT()
    model.load_state_dict(load(assets["tiny_gpt_trained.safetensors"]))
    ids = reference.tiny_gpt.progression_batch(256, generator=torch.Generator().manual_seed(3))
    assert reference.tiny_gpt.predictable_accuracy(model, ids) == 1.0


@pytest.mark.parametrize("task", ["sinusoidal_positions", "kv_cache_decode", "kv_cache_bytes", "tiny_gpt"])
def test_reference_passes_its_own_verifiers(assignment3: Assignment, reference: Any, assets: dict[str, bytes],
                                            task: str) -> None:
    for check in _checks(assignment3, task).values():
        outputs = _run(check, reference, reference, assets)
        if check.verify:
            assert _verify(check, outputs, reference, assets) == [], check.name


def test_progression_verifier(assignment3: Assignment, reference: Any, assets: dict[str, bytes],
                              tmp_path: Path) -> None:
    check = _checks(assignment3, "tiny_gpt_training")["progression_batch"]
    assert _verify(check, _run(check, reference, reference, assets), reference, assets) == []
    for mistake in ("progression_constant_step", "progression_ignores_generator"):
        outputs = _run(check, _mutant(assignment3, mistake, tmp_path), reference, assets)
        assert _verify(check, outputs, reference, assets), mistake


def test_kv_work_verifiers_reject_the_work_mistakes(assignment3: Assignment, reference: Any,
                                                    assets: dict[str, bytes], tmp_path: Path) -> None:
    checks = _checks(assignment3, "kv_cache_decode")
    cached = _run(checks["cached_work"], _mutant(assignment3, "kv_cache_recomputes_prefix", tmp_path),
                  reference, assets)
    assert any("projected again" in m for m in _verify(checks["cached_work"], cached, reference, assets))
    uncached = _run(checks["uncached_work"], _mutant(assignment3, "kv_uncached_uses_cache", tmp_path),
                    reference, assets)
    assert _verify(checks["uncached_work"], uncached, reference, assets)


def test_training_verifier_evaluates_the_weights_not_the_reported_losses(
        assignment3: Assignment, reference: Any, assets: dict[str, bytes]) -> None:
    from safetensors.torch import load

    check = _checks(assignment3, "tiny_gpt_training")["train_learns"]
    trained = reference.tiny_gpt.TinyGPT()
    trained.load_state_dict(load(assets["tiny_gpt_trained.safetensors"]))
    steps = check.probe.__globals__["TRAIN_STEPS"]
    outputs = {**state_dict_outputs(trained), "heads": 4}
    assert _verify(check, outputs, reference, assets) == []
    torch.manual_seed(0)
    untrained = {**outputs, **state_dict_outputs(reference.tiny_gpt.TinyGPT())}
    messages = _verify(check, untrained, reference, assets)
    assert messages and "loss" in messages[0]
    assert _verify(check, outputs, None, assets), "without the reference package the verifier must not pass"
    assert f"train(steps={steps}," in messages[0]


def test_train_contract_sees_unseeded_weights_and_batches(assignment3: Assignment, reference: Any,
                                                          assets: dict[str, bytes], tmp_path: Path) -> None:
    check = _checks(assignment3, "tiny_gpt_training")["train_contract"]
    for mistake, words in (("train_weights_ignore_seed", "initial weights"),
                           ("train_batches_ignore_seed", "batch generator")):
        outputs = _run(check, _mutant(assignment3, mistake, tmp_path), reference, assets)
        assert any(words in message for message in _verify(check, outputs, reference, assets)), mistake


def test_train_contract_on_the_reference(assignment3: Assignment, reference: Any, assets: dict[str, bytes]) -> None:
    check = _checks(assignment3, "tiny_gpt_training")["train_contract"]
    assert _verify(check, _run(check, reference, reference, assets), reference, assets) == []



def test_the_size_type_is_judged_on_the_decoded_value_not_on_a_reported_name(assignment3: Assignment) -> None:
    from autograder.judge.transport import Foreign

    check = _checks(assignment3, "kv_cache_bytes")["returns_int"]
    sizes = {"kv_cache_bytes(3, 5, 7, 11, 13, 17)": 2 * 3 * 5 * 7 * 11 * 13 * 17,
             "kv_cache_bytes(32, 8, 128, 4096, 1, 2)": 2 * 32 * 8 * 128 * 4096 * 2}
    numbers = {f"values: {name} as a number": size for name, size in sizes.items()}
    reference = {**sizes, **numbers}
    messages = list(check.verify({"kv_cache_bytes(3, 5, 7, 11, 13, 17)": Foreign("assignment3.kv_cache.int"),
                                  "kv_cache_bytes(32, 8, 128, 4096, 1, 2)": 4.0, **numbers}, reference, Context(1)))
    assert messages == ["kv_cache_bytes(3, 5, 7, 11, 13, 17) must return a Python int, got assignment3.kv_cache.int",
                        "kv_cache_bytes(32, 8, 128, 4096, 1, 2) must return a Python int, got float"]
    assert list(check.verify(reference, reference, Context(1))) == []
    constant = {name: 0 for name in reference}  # ints, but not the sizes
    assert list(check.verify(constant, reference, Context(1))), "a constant int earned the type check"
