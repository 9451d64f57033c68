"""``grader check`` without fork, on Linux: the code path Windows takes (and macOS, where spawn is the default), forced
with ``GRADER_START_METHOD=spawn`` so that it cannot rot: the same lines as with fork, a loop stopped where it loops
(the stack taken without a signal), and no process left behind."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from test_check_robustness import copy_assignment, inject, task_block, work_from_reference  # beside these tests
from test_warm import gone

from autograder.sandbox.procfs import descendants

pytestmark = pytest.mark.slow


def run_watched(args: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess, dict[int, bytes]]:
    """Run ``grader check``; every process it started meanwhile (looked for every 0.2 s), with its command line."""
    process = subprocess.Popen([sys.executable, "-m", "autograder.cli", "check", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)
    seen: dict[int, bytes] = {}
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.2):
            for pid in descendants(process.pid):
                try:
                    command = Path(f"/proc/{pid}/cmdline").read_bytes()
                except OSError:
                    command = b""
                seen[pid] = command or seen.get(pid, b"")  # the last it ran (a fork shows its parent's first)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        stdout, stderr = process.communicate(timeout=900)
    finally:
        done.set()
        watcher.join()
        process.kill()
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr), seen


def test_check_without_fork_says_what_check_with_fork_says(tmp_path: Path) -> None:
    env = copy_assignment("assignment3", tmp_path)
    package = work_from_reference("assignment3", tmp_path)
    inject(package / "attention.py", "def causal_mask(", "return torch.tril(torch.ones(n, n, dtype=torch.bool), -1)")
    inject(package / "kv_cache.py", "def kv_cache_bytes(", "while True:\n    pass")
    result, started = run_watched(["assignment3", str(package), "--task", "causal_mask", "--task", "attention",
                                   "--task", "kv_cache_bytes", "--task", "head_split"],
                                  dict(env, GRADER_START_METHOD="spawn"))
    output = result.stdout + result.stderr
    assert result.returncode == 1 and "Traceback" not in output, output
    assert re.search(r"^causal_mask +1/2  failed$", result.stdout, re.M), output
    assert "may be caused by causal_mask, which fails: fix that first" in task_block(result.stdout, "attention")
    assert task_block(result.stdout, "head_split").rstrip().endswith("3/3  passed"), output
    loop = task_block(result.stdout, "kv_cache_bytes")
    source = (package / "kv_cache.py").read_text()
    line = source[:source.index("while True:", source.index("def kv_cache_bytes("))].count("\n") + 1
    assert "did not finish within 3 s — an endless loop?" in loop, loop
    assert re.search(rf"stopped in the loop at kv_cache\.py, line {line}, in kv_cache_bytes\n +while True:", loop), loop
    # fresh interpreters, no fork: the zygotes (booted as such) and a spare per job
    assert any(b"boot_spawned" in command for command in started.values()), started
    assert sum(b"spare_main" in command for command in started.values()) >= 4, started
    assert gone(lambda: sorted(started))
