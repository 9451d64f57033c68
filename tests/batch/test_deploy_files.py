"""The shipped Kubernetes and Slurm files: valid, agreeing with each other and with docs/BATCH.md (Slurm for real:
test_slurm.py)."""

from __future__ import annotations

import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from autograder.batch.shard import resolve_shard

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
BATCH = (ROOT / "docs" / "BATCH.md").read_text()
OLDEST_KUBERNETES = "1.30"  # the first with securityContext.appArmorProfile; docs/BATCH.md says so


def _manifests(name: str) -> list[dict]:
    import yaml  # PyYAML: the instructor extra (nbgrader) and kubernetes-validate (dev) need it

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
    (namespace,) = _manifests("namespace.yaml")  # only "privileged" admits SYS_ADMIN and Unconfined
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    assert job["metadata"]["namespace"] == namespace["metadata"]["name"]
    assert "Pod Security level **privileged**" in BATCH


def test_the_manifests_validate_for_every_kubernetes_version_the_docs_claim():
    import kubernetes_validate
    from kubernetes_validate.utils import all_versions, major_minor

    versions = sorted({major_minor(v) for v in all_versions()}, key=lambda v: tuple(map(int, v.split("."))))
    newest, claimed = versions[-1], versions[versions.index(OLDEST_KUBERNETES):]
    assert f"for Kubernetes {OLDEST_KUBERNETES} to {newest}, the newest the validator knows" in " ".join(BATCH.split())
    for name in ("namespace.yaml", "grade-job.yaml", "merge-job.yaml"):
        for manifest in _manifests(name):
            for version in claimed:
                kubernetes_validate.validate(manifest, version, strict=True)
    older = versions[versions.index(OLDEST_KUBERNETES) - 1]  # the floor is real: the version before refuses
    with pytest.raises(kubernetes_validate.ValidationError, match="appArmorProfile"):
        kubernetes_validate.validate(_manifests("grade-job.yaml")[0], older, strict=True)


def test_a_grading_pod_has_room_above_the_measured_peak():
    (job,) = _manifests("grade-job.yaml")
    container = _container(job)
    resources = container["resources"]
    assert resources["requests"] == resources["limits"]
    limit_mb = int(resources["limits"]["memory"].removesuffix("Gi")) * 1024 ** 3 / 1e6
    row = next(line for line in BATCH.splitlines() if line.startswith("| `grade-all` whole process tree, peak"))
    peak_mb = max(int(figure) for figure in re.findall(r"(\d+) MB", row))
    jobs = int(re.search(r"--jobs (\d+)", _shell(container)).group(1))
    assert jobs == 2 and limit_mb >= 1.4 * peak_mb  # the peak was measured with --jobs 2
    assert f"peaks at {peak_mb / 1000:.2f} GB" in " ".join(BATCH.split())


def test_the_containerfile_builds_the_image_the_manifests_name():
    text = (DEPLOY / "kubernetes" / "Containerfile").read_text()
    images = {_container(job)["image"] for name in ("grade-job.yaml", "merge-job.yaml") for job in _manifests(name)}
    (image,) = images
    build = f"docker build -f deploy/kubernetes/Containerfile -t {image} ."
    assert build in text and build in BATCH
    for line in re.findall(r"^COPY (.+)$", text, re.M):  # built from the repository root
        *sources, _ = line.split()
        assert sources and all((ROOT / source).exists() for source in sources), line
    constraints = "autograder/templates/constraints.txt"  # the one file naming the build grades are computed with
    torch = f"RUN pip install -c {constraints} torch --index-url https://download.pytorch.org/whl/cpu\n"
    assert f"COPY {constraints} {constraints}\n" in text and torch in text and "torch==" not in text
    assert text.index(torch) < text.index(f'RUN pip install -c {constraints} -e ".[postgres]"')  # the CPU wheel first


def test_the_image_holds_every_folder_the_gradescope_autograder_grades_with(tmp_path):
    """The image grades as the Gradescope bundle does: the student template too (without it the intake cannot tell
    a filled notebook from the untouched stubs beside it, and the class report groups untouched tasks as similar)."""
    from autograder.authoring.release import build_gradescope_source
    from autograder.spec.assignment import load_assignment

    source = build_gradescope_source(load_assignment("assignment3"), tmp_path / "source")
    folders = {entry.name for entry in source.iterdir() if entry.is_dir()}
    copied = {Path(s).parts[0] for line in re.findall(r"^COPY (.+)$", (DEPLOY / "kubernetes" / "Containerfile")
                                                       .read_text(), re.M) for s in line.split()[:-1]}
    assert folders and folders <= copied, folders - copied


def test_the_merge_is_applied_only_after_a_successful_wait():
    texts = {"docs/BATCH.md": BATCH, **{f"deploy/kubernetes/{p.name}": p.read_text()
                                        for p in (DEPLOY / "kubernetes").glob("*.yaml")}}
    chained = 0
    for origin, text in texts.items():
        for line in text.splitlines():
            if re.search(r"kubectl apply -f \S*merge-job\.yaml", line):
                assert re.search(r"kubectl wait --for=condition=complete job/grade-assignment3 .*&& kubectl apply "
                                 r"-f \S*merge-job\.yaml", line), f"{origin}: {line}"
                chained += 1
    assert chained >= 3


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


def _course(tmp_path: Path, with_grader: bool = True) -> tuple[Path, dict[str, str]]:
    """A course folder with a submissions folder, and an environment whose only grader is a venv's that logs."""
    course = tmp_path / "course"
    (course / "submissions").mkdir(parents=True)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    grader = venv / "bin" / "grader"
    grader.write_text(f'#!/bin/sh\necho "$GRADER_SHARD_COUNT $*" >> {tmp_path}/grader.calls\n')
    grader.chmod(0o755)
    sbatch = tmp_path / "bin" / "sbatch"
    sbatch.parent.mkdir()
    sbatch.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/sbatch.calls; echo "$$;cluster"\n')
    sbatch.chmod(0o755)
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", **({"GRADER_VENV": str(venv)} if with_grader else {})}
    return course, env


def test_submit_declares_the_run_once_and_a_task_reads_it_from_the_course_folder(tmp_path):
    course, env = _course(tmp_path)
    result = subprocess.run([str(DEPLOY / "slurm" / "submit.sh"), "--shards", "3", "--assignment", "mini"],
                            cwd=course, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    calls = (tmp_path / "sbatch.calls").read_text().splitlines()
    assert calls[0] == f"--parsable --chdir={course} --array=1-3 {DEPLOY / 'slurm' / 'grade-array.sh'}"
    assert calls[1].startswith(f"--parsable --chdir={course} --dependency=afterok:")
    assert (course / "logs").is_dir()
    settings = (course / "grading-run.env").read_text()
    assert f"GRADER={tmp_path / 'venv' / 'bin' / 'grader'}\n" in settings and "GRADER_SHARD_COUNT=3\n" in settings
    # a task re-submitted on its own (an array of one) still grades shard 2 of 3, with the venv's grader
    task = subprocess.run(["bash", str(DEPLOY / "slurm" / "grade-array.sh")], cwd=course, capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin", "SLURM_ARRAY_TASK_ID": "2",
                                          "SLURM_ARRAY_TASK_COUNT": "1", "SLURM_CPUS_PER_TASK": "2"})
    assert task.returncode == 0, task.stderr
    assert (tmp_path / "grader.calls").read_text() == (
        f"3 grade-all mini {course / 'submissions'} --jobs 2 --shard auto --gradebook "
        f"{course / 'gradebooks' / 'gradebook-2.db'}\n")


@pytest.mark.parametrize(("args", "with_grader", "message"), [
    (["--shards", "0"], True, "--shards must be a whole number of at least 1, not '0'"),
    (["--submissions", "nowhere"], True, "submissions folder not found: "),
    (["--shard", "2"], True, "unknown option --shard"),
    (["--assignment"], True, "--assignment needs a value"),
    ([], False, "no grader on PATH: activate the grader's venv or set GRADER_VENV=/path/to/venv"),
])
def test_submit_refuses_in_one_line_before_queueing_anything(tmp_path, args, with_grader, message):
    course, env = _course(tmp_path, with_grader)
    result = subprocess.run([str(DEPLOY / "slurm" / "submit.sh"), *args], cwd=course, env=env, capture_output=True,
                            text=True)
    assert result.returncode == 2 and result.stderr.startswith(f"error: {message}"), result.stderr
    assert len(result.stderr.splitlines()) == 1 and not (tmp_path / "sbatch.calls").exists()


def test_submit_without_slurm_says_so_in_one_line_and_writes_nothing(tmp_path):
    course, env = _course(tmp_path)
    (tmp_path / "bin" / "sbatch").unlink()
    tools = tmp_path / "tools"  # what submit.sh runs, without the machine's own Slurm client
    tools.mkdir()
    for tool in ("bash", "env", "dirname", "realpath", "mkdir", "date", "sed"):
        (tools / tool).symlink_to(shutil.which(tool))
    env["PATH"] = f"{tmp_path / 'bin'}:{tools}"
    result = subprocess.run([str(DEPLOY / "slurm" / "submit.sh")], cwd=course, env=env, capture_output=True, text=True)
    assert result.returncode == 2 and result.stderr == (
        "error: sbatch not found on PATH: run submit.sh on a machine that submits Slurm jobs (a login node)\n")
    assert sorted(p.name for p in course.iterdir()) == ["submissions"]


@pytest.mark.parametrize("script", ["grade-array.sh", "merge.sh"])
def test_a_job_outside_a_course_folder_says_so(tmp_path, script):
    result = subprocess.run(["bash", str(DEPLOY / "slurm" / script)], cwd=tmp_path, capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin", "SLURM_ARRAY_TASK_ID": "1"})
    assert result.returncode == 2 and f"no grading-run.env in {tmp_path}" in result.stderr
