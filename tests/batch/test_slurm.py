"""deploy/slurm on a real single-node Slurm: submit.sh from a course folder, a cancelled task re-run, the merge.

The commands are docs/BATCH.md's ("Beyond one machine"), run as written there.
"""

from __future__ import annotations

import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.batch.discover import discover
from autograder.batch.shard import select_shard
from slurm_cluster import SlurmCluster, missing_binaries  # beside these tests

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "slurm"
FIXTURES = ROOT / "tests" / "fixtures"
SHARDS = 3
# module-level sleep: the student graded in flight when its task is cancelled (a fixed score, unlike a timeout)
SLOW = "import time\ntime.sleep(3)\n"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
    if not sys.platform.startswith("linux"):
        pytest.skip("Slurm runs on Linux only")
    missing = missing_binaries()
    if missing:  # never a silent skip where Slurm can be installed
        pytest.fail(f"Slurm is not installed ({', '.join(missing)} missing): apt-get install slurmctld slurmd munge "
                    f"slurm-client (.ci/run does)")
    root = Path(tempfile.mkdtemp(prefix="grader-slurm-"))
    root.chmod(0o755)  # munged wants every folder above its socket traversable by all
    slurm = SlurmCluster(root)
    try:
        slurm.start()
        yield slurm
    finally:
        slurm.stop()
        shutil.rmtree(root, ignore_errors=True)


def _course(folder: Path) -> tuple[Path, dict[str, str]]:
    """A course folder with six ``mini`` submissions and a stand-in venv whose grader imports this checkout."""
    reference = FIXTURES / "reference_solutions" / "mini"
    for student in ("ada", "bob", "cy", "dee", "eve", "fay"):
        package = folder / "submissions" / student / "mini"
        package.mkdir(parents=True)
        for file in reference.glob("*.py"):
            package.joinpath(file.name).write_text(file.read_text())
    stub = (reference / "ops.py").read_text()
    stub = re.sub(r"### BEGIN SOLUTION.*?### END SOLUTION", "raise NotImplementedError", stub, flags=re.S)
    for student in ("bob", "eve"):
        (folder / "submissions" / student / "mini" / "ops.py").write_text(stub)
    venv = folder.parent / "venv"
    grader = venv / "bin" / "grader"
    grader.parent.mkdir(parents=True)
    grader.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m autograder.cli \"$@\"\n")
    grader.chmod(0o755)
    # PATH holds no grader: the jobs must use the one submit.sh found through GRADER_VENV
    return folder, {"GRADER_VENV": str(venv), "GRADER_ASSIGNMENTS": str(FIXTURES / "assignments")}


def _documented(needle: str, values: dict[str, str]) -> tuple[dict[str, str], list[list[str]]]:
    """The commands of docs/BATCH.md's Slurm block holding ``needle``, placeholders filled in from ``values``.

    Returns:
        The ``VAR=value`` prefixes of the commands and each command's words (``cd`` lines left out).
    """
    section = (ROOT / "docs" / "BATCH.md").read_text().split("### Slurm", 1)[1].split("\n### ", 1)[0]
    block = next(b for b in re.findall(r"```bash\n(.*?)```", section, re.S) if needle in b)
    env, commands = {}, []
    for line in block.splitlines():
        for placeholder, value in values.items():
            line = line.replace(placeholder, value)
        words = shlex.split(line, comments=True)
        while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
            env.update([words.pop(0).split("=", 1)])
        if words and words[0] != "cd":
            commands.append(words)
    return env, commands


def _graded(book: Path) -> set[str]:
    with sqlite3.connect(f"file:{book}?mode=ro", uri=True) as connection:
        return {row[0] for row in connection.execute("SELECT student FROM current")}


def _submitted(output: str) -> str:
    return re.search(r"Submitted batch job (\d+)", output).group(1)


def _log_until(path: Path, pattern: str, timeout: float, cluster: SlurmCluster) -> None:
    cluster.until(lambda: path.exists() and re.search(pattern, path.read_text()) is not None, timeout,
                  f"{path.name} to show {pattern!r}")


def test_a_class_graded_on_slurm_equals_one_machine_even_after_a_cancelled_task(cluster, tmp_path):
    course, env = _course(tmp_path / "course")
    entries = discover(course / "submissions", "plain", "mini")[0]
    shards = {k: sorted(e.student for e in select_shard(entries, k, SHARDS)) for k in range(1, SHARDS + 1)}
    cancelled = next(k for k, students in shards.items() if len(students) == 2)  # one graded, one in flight
    slow = shards[cancelled][-1]
    (course / "submissions" / slow / "mini" / "ops.py").write_text(
        SLOW + (course / "submissions" / slow / "mini" / "ops.py").read_text())
    deploy_before = sorted(p.name for p in DEPLOY.iterdir())

    prefix, (submit,) = _documented("submit.sh", {"~/autograder": str(ROOT), "~/venvs/grader": env["GRADER_VENV"],
                                                   "assignment3": "mini", "--shards 4": f"--shards {SHARDS}"})
    assert prefix == {"GRADER_VENV": env["GRADER_VENV"]}
    submitted = cluster.run(*submit, cwd=course, env=env)
    array, merge = re.search(r"grading array (\d+): .*; merge job (\d+) runs", submitted.stdout).groups()
    assert f"sbatch --array=K {DEPLOY}/grade-array.sh" in submitted.stdout
    assert f"scontrol update JobId={merge} Dependency=afterok:<the new job id>" in submitted.stdout

    log = course / "logs" / f"grade-{array}_{cancelled}.out"
    # one graded, one in flight: the quick one as a rule, but the two start together on two workers, so on a
    # loaded machine the slow one (which waits, needing no CPU) can come first; the cancel then catches the other
    _log_until(log, r"\[1/2\] \S+: ", 240, cluster)
    first = re.search(r"\[1/2\] (\S+): ", log.read_text()).group(1)
    in_flight = next(student for student in shards[cancelled] if student != first)
    cluster.run("scancel", f"{array}_{cancelled}")
    cluster.wait_done([array], 240)
    states = {k: cluster.job(f"{array}_{k}")["JobState"] for k in shards}
    assert states == {k: "CANCELLED" if k == cancelled else "COMPLETED" for k in shards}, cluster.logs()
    for k, students in shards.items():
        assert f"shard {k} of {SHARDS}: {len(students)} submissions" in (
            course / "logs" / f"grade-{array}_{k}.out").read_text()
    cluster.until(lambda: cluster.job(merge)["Reason"] == "DependencyNeverSatisfied", 30, "the merge to be stuck")
    book = course / "gradebooks" / f"gradebook-{cancelled}.db"
    before = _graded(book)  # on a loaded machine the other one may have finished before the cancel took effect
    assert first in before and before <= set(shards[cancelled])

    # one machine's grades, computed while the cluster recovers (one task and the merge leave CPU to spare)
    baseline = subprocess.Popen([str(tmp_path / "venv" / "bin" / "grader"), "grade-all", "mini", "submissions",
                                 "--jobs", "2", "--gradebook", str(tmp_path / "one.db"), "--csv",
                                 str(tmp_path / "one.csv")], cwd=course, env={**cluster.env, **env},
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # the documented recovery, from the course folder: re-run the task, then point the merge at the new job
        _, (resubmit, repoint) = _documented("scontrol update", {"~/autograder": str(ROOT), "--array=K":
                                                                 f"--array={cancelled}", "<merge>": merge})
        rerun = _submitted(cluster.run(*resubmit, cwd=course, env=env).stdout)
        cluster.run(*(word.replace("<new>", rerun) for word in repoint), env=env)
        cluster.wait_done([rerun, merge], 240)
        assert cluster.job(merge)["JobState"] == "COMPLETED", (course / "logs" / f"merge-{merge}.out").read_text()
        again = (course / "logs" / f"grade-{rerun}_{cancelled}.out").read_text()
        assert f"shard {cancelled} of {SHARDS}: 2 submissions (of 6 in the class)" in again
        left = len(shards[cancelled]) - len(before)
        assert (f"grading {left} of 2 submissions ({len(before)} unchanged, skipped)" if left else
                "nothing to grade: 2 submissions found (2 unchanged, skipped)") in again
        assert (f"[1/1] {in_flight}: " in again) == (left == 1) and _graded(book) == set(shards[cancelled])

        one, _ = baseline.communicate(timeout=300)
    finally:
        baseline.kill()  # a no-op once it has ended
        baseline.wait()
    assert baseline.returncode == 0, one
    merged = (course / "results" / "grades.csv").read_text()
    assert merged == (tmp_path / "one.csv").read_text() and len(merged.splitlines()) == 7
    assert (course / "results" / "class-report").is_dir() and len(list((course / "results" / "feedback").iterdir()))
    assert sorted(p.name for p in DEPLOY.iterdir()) == deploy_before  # nothing lands in the checkout
    assert sorted(p.name for p in course.iterdir()) == ["gradebooks", "grading-run.env", "logs", "results",
                                                        "submissions"]
