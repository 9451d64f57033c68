"""How many zygotes one submission gets: usable CPUs and the cgroup memory limit."""

from __future__ import annotations

import pytest

from autograder.sandbox import capacity


@pytest.mark.parametrize(("text", "expected"), [("max", None), ("805306368", 805306368),
                                                ("9223372036854771712", None), ("garbage", None)])
def test_the_memory_limit_is_read_from_v1_and_v2_files(tmp_path, monkeypatch, text, expected):
    monkeypatch.setattr(capacity, "_own_cgroup_files", lambda: [])
    limit = tmp_path / "memory.max"
    limit.write_text(text + "\n")
    assert capacity.memory_limit_bytes((str(tmp_path / "absent"), str(limit))) == expected


@pytest.mark.parametrize(("cpus", "limit", "zygotes"), [(1, None, 1), (2, None, 2), (2, 768 << 20, 1),
                                                         (4, 2 << 30, 2), (1, 2 << 30, 1)])
def test_one_zygote_on_one_cpu_or_in_a_small_container(monkeypatch, cpus, limit, zygotes):
    monkeypatch.setattr(capacity, "usable_cpus", lambda: cpus)
    monkeypatch.setattr(capacity, "memory_limit_bytes", lambda: limit)
    assert capacity.zygotes_for_one_submission() == zygotes


def test_usable_cpus_follow_the_affinity_mask():
    import os

    assert capacity.usable_cpus() == len(os.sched_getaffinity(0))
