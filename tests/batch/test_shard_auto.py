"""`--shard auto`: the shard from Kubernetes, Slurm or $GRADER_SHARD, and one-line errors when none is found."""

from __future__ import annotations

import subprocess
import sys

import pytest

from autograder.batch.shard import resolve_shard
from autograder.errors import GraderError


@pytest.mark.parametrize(("environ", "count", "expected"), [
    ({"JOB_COMPLETION_INDEX": "0"}, 4, (1, 4)),
    ({"JOB_COMPLETION_INDEX": "3", "GRADER_SHARD_COUNT": "4"}, None, (4, 4)),
    ({"JOB_COMPLETION_INDEX": "1", "GRADER_SHARD_COUNT": "9"}, 2, (2, 2)),  # the option wins
    ({"SLURM_ARRAY_TASK_ID": "1", "GRADER_SHARD_COUNT": "4"}, None, (1, 4)),
    ({"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4"}, 4, (4, 4)),
    # a re-submitted task (sbatch --array=2): the array of one says nothing about the class's split
    ({"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "2", "SLURM_ARRAY_TASK_COUNT": "1",
      "GRADER_SHARD_COUNT": "4"}, None, (2, 4)),
    ({"GRADER_SHARD": "2/3", "JOB_COMPLETION_INDEX": "0"}, None, (2, 3)),  # explicit beats the scheduler
])
def test_auto_takes_the_shard_from_the_scheduler(environ, count, expected):
    assert resolve_shard("auto", count, environ) == expected


def test_every_student_lands_in_exactly_one_task_of_an_array():
    shards = {resolve_shard("auto", None, {"SLURM_ARRAY_TASK_ID": str(t), "GRADER_SHARD_COUNT": "5"})
              for t in range(1, 6)}
    assert shards == {(k, 5) for k in range(1, 6)}
    indexed = {resolve_shard("auto", 5, {"JOB_COMPLETION_INDEX": str(i)}) for i in range(5)}
    assert indexed == shards


@pytest.mark.parametrize(("environ", "count", "message"), [
    ({}, None, "found no scheduler"),
    ({"JOB_COMPLETION_INDEX": "2"}, None, "pass --shard-count N"),
    ({"JOB_COMPLETION_INDEX": "4"}, 4, "between 1 and N"),
    ({"JOB_COMPLETION_INDEX": "two"}, 4, "whole number"),
    ({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4"}, None,
     "no declared number of shards"),
    ({"SLURM_ARRAY_TASK_ID": "0", "GRADER_SHARD_COUNT": "4"}, None, r"--array=1-4"),
    ({"SLURM_ARRAY_TASK_ID": "5", "GRADER_SHARD_COUNT": "4"}, None, "between 1 and N"),
    ({"SLURM_ARRAY_TASK_ID": "1", "GRADER_SHARD_COUNT": "four"}, None, "whole number"),
    ({"GRADER_SHARD": "5/4"}, None, "between 1 and N"),
])
def test_auto_explains_what_it_did_not_find(environ, count, message):
    with pytest.raises(GraderError, match=message):
        resolve_shard("auto", count, environ)


def test_a_count_beside_k_of_n_is_refused():
    assert resolve_shard("2/4", None, {}) == (2, 4)
    with pytest.raises(GraderError, match="goes with --shard auto"):
        resolve_shard("2/4", 4, {})


@pytest.mark.parametrize("args", [["--shard", "auto"], ["--shard-count", "3"]])
def test_the_cli_error_is_one_line_and_exit_2(tmp_path, args):
    env = {"PATH": "/usr/bin:/bin", "GRADER_CACHE_DIR": "off"}
    import os

    env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    result = subprocess.run([sys.executable, "-m", "autograder.cli", "grade-all", "assignment3", str(tmp_path),
                             "--gradebook", str(tmp_path / "g.db"), *args], capture_output=True, text=True,
                            env=env, timeout=300)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "shard" in lines[0]
