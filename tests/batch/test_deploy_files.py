"""The shipped Kubernetes and Slurm files parse, agree with each other and call `grade-all --shard auto`."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from autograder.batch.shard import resolve_shard

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _manifests(name: str) -> list[dict]:
    yaml = pytest.importorskip("yaml", reason="PyYAML comes with the instructor extra (nbgrader needs it)")
    return [doc for doc in yaml.safe_load_all((DEPLOY / "kubernetes" / name).read_text()) if doc]


def _container(job: dict) -> dict:
    containers = job["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def _shell(container: dict) -> str:
    assert container["command"] == ["sh", "-c"]
    return " ".join(container["args"])


def test_the_grading_job_is_indexed_and_its_count_matches():
    (job,) = _manifests("grade-job.yaml")
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    assert spec["template"]["spec"]["restartPolicy"] == "Never"
    container = _container(job)
    env = {e["name"]: e["value"] for e in container["env"]}
    assert int(env["GRADER_SHARD_COUNT"]) == spec["completions"]
    command = _shell(container)
    assert "grader grade-all" in command and "--shard auto" in command
    assert "$JOB_COMPLETION_INDEX" in command  # one gradebook per shard
    shards = {resolve_shard("auto", None, {"JOB_COMPLETION_INDEX": str(i), **env}) for i in range(spec["completions"])}
    assert shards == {(k, spec["completions"]) for k in range(1, spec["completions"] + 1)}
    context = container["securityContext"]
    assert "SYS_ADMIN" in context["capabilities"]["add"] and context["seccompProfile"]["type"] == "Unconfined"
    mounts = {m["name"] for m in container["volumeMounts"]}
    assert mounts <= {v["name"] for v in job["spec"]["template"]["spec"]["volumes"]}


def test_the_merge_job_reads_the_shards_gradebooks():
    (grade,) = _manifests("grade-job.yaml")
    (merge,) = _manifests("merge-job.yaml")
    assert merge["kind"] == "Job" and merge["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    command = _shell(_container(merge))
    written = re.search(r"--gradebook (\S+)\$JOB_COMPLETION_INDEX\.db", _shell(_container(grade))).group(1)
    assert f"grader gradebook merge /data/class.db {written}*.db" in command
    claim = {v["persistentVolumeClaim"]["claimName"] for v in merge["spec"]["template"]["spec"]["volumes"]}
    assert claim == {v["persistentVolumeClaim"]["claimName"] for v in grade["spec"]["template"]["spec"]["volumes"]
                     if "persistentVolumeClaim" in v}


@pytest.mark.parametrize("script", ["grade-array.sh", "merge.sh", "submit.sh"])
def test_the_slurm_scripts_are_valid_bash_and_executable(script):
    path = DEPLOY / "slurm" / script
    assert path.stat().st_mode & stat.S_IXUSR
    subprocess.run(["bash", "-n", str(path)], check=True)


def _fake_bin(tmp_path: Path, name: str, body: str) -> None:
    tool = tmp_path / "bin" / name
    tool.parent.mkdir(exist_ok=True)
    tool.write_text(f"#!/usr/bin/env bash\n{body}\n")
    tool.chmod(0o755)


def test_an_array_task_grades_its_own_shard_into_its_own_gradebook(tmp_path):
    _fake_bin(tmp_path, "grader", f'printf "%s\\n" "$@" > {tmp_path}/args')
    array = re.search(r"^#SBATCH --array=(\d+)-(\d+)$", (DEPLOY / "slurm" / "grade-array.sh").read_text(), re.M)
    first, last = int(array.group(1)), int(array.group(2))
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "SLURM_ARRAY_TASK_ID": str(last),
           "SLURM_ARRAY_TASK_MIN": str(first), "SLURM_ARRAY_TASK_COUNT": str(last - first + 1),
           "SLURM_CPUS_PER_TASK": "2", "GRADEBOOKS": str(tmp_path / "books")}
    subprocess.run(["bash", str(DEPLOY / "slurm" / "grade-array.sh")], check=True, env=env, cwd=tmp_path)
    args = (tmp_path / "args").read_text().split("\n")
    assert args[:2] == ["grade-all", "assignment3"]
    assert args[args.index("--shard") + 1] == "auto" and args[args.index("--jobs") + 1] == "2"
    assert args[args.index("--gradebook") + 1] == str(tmp_path / "books" / f"gradebook-{last}.db")
    assert resolve_shard("auto", None, env) == (last - first + 1, last - first + 1)


def test_submit_queues_the_merge_after_the_whole_array(tmp_path):
    _fake_bin(tmp_path, "sbatch", f'echo "$@" >> {tmp_path}/calls; '
                                  'if [[ "$*" == *grade-array.sh* ]]; then echo "4242;cluster"; else echo 4243; fi')
    copy = tmp_path / "slurm"
    copy.mkdir()
    for script in (DEPLOY / "slurm").iterdir():
        (copy / script.name).write_text(script.read_text())
        os.chmod(copy / script.name, 0o755)
    result = subprocess.run(["bash", str(copy / "submit.sh")], check=True, capture_output=True, text=True,
                            env={"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin"})
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls == ["--parsable grade-array.sh", "--parsable --dependency=afterok:4242 merge.sh"]
    assert "4243" in result.stdout
