"""The reference's outputs persisted by fingerprint: round trip, damaged entries recomputed, folder rules."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

from autograder.judge import refcache
from autograder.judge.refcache import ReferenceStore, cache_root
from autograder.judge.verdict import Judge
from autograder.probe.checks import collect_checks, load_checks_file
from autograder.probe.context import derive_seed
from autograder.sandbox.host import default_protected
from autograder.spec.fingerprint import assignment_fingerprint
from autograder.spec.reference import load_package


class CountingJudge(Judge):
    """A Judge that counts the probes it runs on trusted code."""

    probes = 0

    def _encoded_probe(self, check, seed, implementation):
        CountingJudge.probes += 1
        return super()._encoded_probe(check, seed, implementation)


@pytest.fixture()
def store_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(refcache.CACHE_VARIABLE, str(folder))
    return folder


def _judge(assignment3, tmp_path) -> CountingJudge:
    reference = load_package(assignment3.reference, "_reference_store_test", assignment3.modules)
    store = ReferenceStore.for_assignment(assignment_fingerprint(assignment3))
    return CountingJudge(assignment3, reference, {}, [], tmp_path / "mistakes", store)


def _attention_checks(assignment3):
    task = next(t for t in assignment3.tasks if t.id == "attention")
    namespace = load_checks_file(task.checks, "_reference_store_checks")
    return [c for c in collect_checks(namespace) if c.task == task.id and c.compare_reference]


def _same(first: dict, second: dict) -> bool:
    if first.keys() != second.keys():
        return False
    for key, value in first.items():
        other = second[key]
        if isinstance(value, torch.Tensor):
            if not (type(other) is torch.Tensor and value.dtype == other.dtype and torch.equal(value, other)):
                return False
        elif type(value) is not type(other) or value != other:
            return False
    return True


def test_a_fresh_judge_reads_what_an_earlier_one_computed(assignment3, tmp_path, store_dir):
    checks = _attention_checks(assignment3)
    first = _judge(assignment3, tmp_path)
    CountingJudge.probes = 0
    computed = {c.name: first.expected_outputs(c, derive_seed(assignment3.seed, c.name)) for c in checks}
    assert CountingJudge.probes == len(checks)
    assert first.store.misses == len(checks) and first.store.hits == 0

    second = _judge(assignment3, tmp_path)
    CountingJudge.probes = 0
    stored = {c.name: second.expected_outputs(c, derive_seed(assignment3.seed, c.name)) for c in checks}
    assert CountingJudge.probes == 0
    assert second.store.hits == len(checks)
    assert all(_same(computed[name], stored[name]) for name in computed)
    assert any(isinstance(v, torch.Tensor) for outputs in stored.values() for v in outputs.values())


@pytest.mark.parametrize("damage", ["truncated json", "other key", "tensors changed", "tensors missing",
                                    "values not decodable"])
def test_a_damaged_entry_is_recomputed_and_rewritten(assignment3, tmp_path, store_dir, damage):
    check = next(c for c in _attention_checks(assignment3) if True)
    seed = derive_seed(assignment3.seed, check.name)
    expected = _judge(assignment3, tmp_path).expected_outputs(check, seed)
    folder = next(store_dir.glob("reference-*"))
    meta_path = next(folder.glob("*.json"))
    tensor_path = meta_path.with_suffix(".safetensors")
    meta = json.loads(meta_path.read_text())
    if damage == "truncated json":
        meta_path.write_text(meta_path.read_text()[:40])
    elif damage == "other key":
        meta_path.write_text(json.dumps(dict(meta, key="0" * 64)))
    elif damage == "tensors changed":
        data = bytearray(tensor_path.read_bytes())
        data[-1] ^= 0xFF
        tensor_path.write_bytes(bytes(data))
    elif damage == "tensors missing":
        tensor_path.unlink()
    else:
        first = next(iter(meta["values"]))
        meta["values"][first] = {"kind": "tensor", "ref": "nowhere"}
        meta_path.write_text(json.dumps(meta))

    judge = _judge(assignment3, tmp_path)
    CountingJudge.probes = 0
    again = judge.expected_outputs(check, seed)
    assert CountingJudge.probes == 1
    assert _same(expected, again)
    fresh = _judge(assignment3, tmp_path)
    CountingJudge.probes = 0
    assert _same(expected, fresh.expected_outputs(check, seed)) and CountingJudge.probes == 0


def test_another_assignment_version_does_not_share_entries(assignment3, tmp_path, store_dir):
    one = ReferenceStore.for_assignment(assignment_fingerprint(assignment3))
    other = ReferenceStore.for_assignment("another fingerprint")
    assert one.folder != other.folder
    one.put("x:1", {"a": {"kind": "json", "type": "int", "value": 1}}, None)
    assert one.get("x:1") == ({"a": {"kind": "json", "type": "int", "value": 1}}, None)
    assert other.get("x:1") is None


def test_the_store_can_be_turned_off(monkeypatch):
    monkeypatch.setenv(refcache.CACHE_VARIABLE, "off")
    assert cache_root() is None
    assert ReferenceStore.for_assignment("anything") is None


def test_the_default_folder_follows_xdg_and_is_private(tmp_path, monkeypatch):
    monkeypatch.delenv(refcache.CACHE_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = cache_root()
    assert root == (tmp_path / "xdg" / "transformer-autograder").resolve()
    assert root.stat().st_mode & 0o777 == 0o700


def test_the_default_folder_is_the_platforms_cache_folder(tmp_path, monkeypatch):
    """The platform's own cache folder, as platformdirs names it (``~/Library/Caches/...`` on macOS), not a Linux
    path written out by hand."""
    import platformdirs

    monkeypatch.delenv(refcache.CACHE_VARIABLE, raising=False)
    asked = []
    monkeypatch.setattr(platformdirs, "user_cache_dir",
                        lambda name, *args, **kwargs: asked.append(name) or str(tmp_path / "Caches" / name))
    assert cache_root() == (tmp_path / "Caches" / "transformer-autograder").resolve()
    assert asked == ["transformer-autograder"]


def test_a_folder_of_another_user_or_a_symlink_is_not_used(tmp_path, monkeypatch):
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target)
    monkeypatch.setenv(refcache.CACHE_VARIABLE, str(link))
    assert cache_root() is None
    if os.geteuid() == 0:
        foreign = tmp_path / "foreign"
        foreign.mkdir()
        os.chown(foreign, 12345, 12345)
        monkeypatch.setenv(refcache.CACHE_VARIABLE, str(foreign))
        assert cache_root() is None


def test_jobs_never_see_the_store(store_dir):
    assert cache_root() in default_protected()
