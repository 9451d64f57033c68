"""Jobs use the grader's CPU kernels: inputs made in a job are bit for bit those the grader makes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import torch

from autograder.judge.transport import decode_outputs
from autograder.probe import Context
from autograder.sandbox.host import Zygote, new_scratch
from autograder.sandbox.limits import Limits

CHECKS = '''
import os
import torch
from autograder.probe import check


@check("t", weight=1)
def kernels(impl, ref, ctx):
    os.environ["ATEN_CPU_CAPABILITY"] = "default"  # too late: the zygote fixed the kernels before forking
    return {"capability": torch.backends.cpu.get_cpu_capability(), "x": ctx.randn(3, 7, 32)}
'''


@pytest.fixture(scope="module")
def lazy_zygote():
    scratch = new_scratch()
    worker = Zygote(scratch / "zygote", warm_up=False)  # as `grader grade` starts it: no op run before a job
    worker.start()
    yield worker, scratch
    worker.close()


def test_a_job_draws_the_same_random_inputs_as_the_grader(lazy_zygote):
    worker, scratch = lazy_zygote
    work = scratch / "work"
    (work / "pkg").mkdir(parents=True)
    (work / "pkg" / "__init__.py").write_text("")
    job_dir = scratch / f"job-{time.monotonic_ns()}"
    job_dir.mkdir()
    spec = {"package": "pkg", "workdir": str(work), "checks_source": CHECKS,
            "checks": [{"name": "t.kernels", "seed": 7}]}
    result = worker.run(spec, Limits(wall_seconds=60, cpu_seconds=60), job_dir, 4096)
    record = result.records[0]
    assert record["status"] == "ok", record
    assert record["values"]["capability"]["value"] == torch.backends.cpu.get_cpu_capability()
    tensors = (Path(job_dir) / record["tensors"]).read_bytes()
    x = decode_outputs(record["values"], tensors)["x"]
    assert torch.equal(x, Context(7).randn(3, 7, 32))


def test_a_zygote_that_chose_other_kernels_is_started_again_on_the_graders(monkeypatch: pytest.MonkeyPatch) -> None:
    mine = torch.backends.cpu.get_cpu_capability().lower()
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")  # told the scalar kernels; this process runs its own
    scratch = new_scratch()
    worker = Zygote(scratch / "zygote", warm_up=False)
    try:
        worker.start()
        assert worker.isolation  # the handshake: a zygote on other kernels than this process's is replaced
        assert worker.capability == (None if mine == "default" else mine)
        assert worker.alive()
    finally:
        worker.close()
