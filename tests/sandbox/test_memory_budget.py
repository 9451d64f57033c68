"""Memory within the real budget: limits read from cgroups, jobs sized to fit, a hog costs its own task only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autograder.sandbox.memory import (
    GRADER_RESERVE,
    MIB,
    MIN_JOB,
    ZYGOTE_RESERVE,
    cgroup_limits,
    plan_memory,
    set_oom_score_adj,
)

CONTAINER_BYTES = 768 * MIB

HOG = '''
    _hog = [torch.ones(64 * 1024 * 1024) for _ in range(12)]  # 3 GiB, touched
'''


def test_cgroup_limits_are_read_from_v1_and_v2_and_their_ancestors(tmp_path):
    v1 = tmp_path / "memory" / "outer" / "inner"
    v1.mkdir(parents=True)
    (v1 / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # v1's "unlimited"
    (v1.parent / "memory.limit_in_bytes").write_text(f"{CONTAINER_BYTES}\n")
    v2 = tmp_path / "app"
    v2.mkdir()
    (v2 / "memory.max").write_text("1073741824\n")
    (tmp_path / "memory.max").write_text("max\n")
    found = cgroup_limits("4:memory:/outer/inner\n0::/app\n3:cpu:/elsewhere\n", root=tmp_path)
    assert sorted(value for value, _ in found) == [CONTAINER_BYTES, 1 << 30]
    assert cgroup_limits("garbage\n", root=tmp_path) == []


def test_jobs_and_workers_fit_the_budget():
    roomy = plan_memory(2048, 2, budget=16 << 30)
    assert (roomy.workers, roomy.job_bytes) == (2, 2048 * MIB)
    tight = plan_memory(2048, 2, budget=CONTAINER_BYTES)
    assert tight.workers == 1 and MIN_JOB <= tight.job_bytes
    assert GRADER_RESERVE + ZYGOTE_RESERVE + tight.job_bytes <= CONTAINER_BYTES
    middling = plan_memory(2048, 4, budget=2048 * MIB)
    assert GRADER_RESERVE + middling.workers * (ZYGOTE_RESERVE + middling.job_bytes) <= 2048 * MIB
    capped = plan_memory(2048, 1, budget=None, address_space=3 << 30, own_address_space=2 << 30)
    assert capped.job_bytes == 1 << 30  # RLIMIT_AS caps what a job can add to its zygote's address space


def test_a_process_can_ask_to_be_the_oom_killers_first_choice():
    child = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import sys; sys.path.insert(0, sys.argv[1])
        from autograder.sandbox.memory import set_oom_score_adj
        assert set_oom_score_adj(1000)
        print(open('/proc/self/oom_score_adj').read().strip())
    """), str(Path(__file__).resolve().parents[2])], capture_output=True, text=True, check=True)
    assert child.stdout.strip() == "1000"
    assert set_oom_score_adj(0, pid="0") is False  # no such process: refused, not raised


def _memory_cgroup(tmp_name: str) -> Path:
    """A new cgroup v1 memory cgroup below this process's own, limited to CONTAINER_BYTES (skips if impossible)."""
    own = next((line.split(":", 2)[2] for line in Path("/proc/self/cgroup").read_text().splitlines()
                if "memory" in line.split(":", 2)[1].split(",")), None)
    base = Path("/sys/fs/cgroup/memory")
    if own is None or not base.is_dir():
        pytest.skip("no cgroup v1 memory controller here (cgroup v2 needs delegation this test does not set up)")
    group = base / own.lstrip("/") / tmp_name
    try:
        group.mkdir()
        (group / "memory.limit_in_bytes").write_text(str(CONTAINER_BYTES))
    except OSError as exc:
        pytest.skip(f"memory cgroups are not writable here ({exc})")
    return group


GRADE_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from autograder.grading.grader import Grader
from autograder.spec.assignment import load_assignment
assignment = load_assignment("assignment3")
with Grader(assignment, workers=2) as grader:
    report = grader.grade(sys.argv[2], only={t.id for t in assignment.tasks})
    print(json.dumps({"scores": {t.id: [t.score, t.max_score] for t in report.tasks},
                      "workers": grader.memory.workers, "job_bytes": grader.memory.job_bytes}))
"""


@pytest.mark.slow
def test_a_memory_hog_under_a_768_mb_container_costs_its_own_task_only(assignment3, tmp_path, repo):
    package = tmp_path / "assignment3"
    shutil.copytree(assignment3.reference, package, ignore=shutil.ignore_patterns("__pycache__"))
    attention = package / "attention.py"
    source = attention.read_text()
    marker = "    n, m = q.shape[-2], k.shape[-2]\n"
    attention.write_text(source.replace(marker, HOG.lstrip("\n") + marker, 1))
    group = _memory_cgroup(f"grader-test-{os.getpid()}")
    runs = []
    try:
        for _ in range(5):
            child = subprocess.run(
                [sys.executable, "-c", GRADE_SCRIPT, str(repo), str(package)], capture_output=True, text=True,
                timeout=900, preexec_fn=lambda: (group / "cgroup.procs").write_text(str(os.getpid())))
            assert child.returncode == 0, child.stderr[-2000:]
            runs.append(json.loads(child.stdout.strip().splitlines()[-1]))
    finally:
        group.rmdir()
    for run in runs:
        lost = {task: score for task, score in run["scores"].items() if task != "attention" and score[0] < score[1]}
        assert not lost, run
        assert run["scores"]["attention"][0] < run["scores"]["attention"][1]
    assert all(run == runs[0] for run in runs), runs
