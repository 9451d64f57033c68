"""Benchmark the sandbox's cost per job (fork, sandbox, loading checks and reference, exit) beside the checks' own time.

Run from the repository root::

    python benchmarks/bench_jobs.py --repeat 3 --trivial 30 --grades 3

Three measurements, each printed with the load average beside it:

* **trivial jobs**: one zygote runs ``--trivial`` jobs of one check that returns nothing; the cost of a job is then
  all overhead. Wall time is the host's (``Zygote.run``: payload, fork, sandbox, exit, reading back); CPU time is
  the zygote's tree (the zygote's own and its reaped jobs', from ``/proc/<zygote>/stat``) and, separately, the
  host's (this process, ``os.times``).
* **real jobs**: a ``Grader`` on one zygote grades the reference ``--repeat`` times; per job, the same figures minus
  the checks' own time (their ``seconds`` and ``cpu_seconds`` as the job records them).
* **grader grade**: ``--grades`` runs of the whole command in fresh cpuacct cgroups (``bench_single.timed``): wall
  and CPU seconds of the whole process tree.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_single import Groups, grade_command, timed  # noqa: E402
from figures import figure, load_now  # noqa: E402

TRIVIAL_CHECKS = '''
from autograder.probe import check


@check("trivial", description="returns nothing")
def nothing(impl, ref, ctx):
    return {}
'''


def tree_cpu(pid: int) -> tuple[float, float, int]:
    """CPU seconds of a process itself (utime + stime) and of the children it has reaped (cutime + cstime), and
    the minor page faults of both (minflt + cminflt: copied pages, a figure the machine's load does not change)."""
    with open(f"/proc/{pid}/stat") as handle:
        minflt, cminflt, _, _, utime, stime, cutime, cstime = map(int, handle.read().rsplit(")", 1)[1].split()[7:15])
    tick = os.sysconf("SC_CLK_TCK")
    return (utime + stime) / tick, (cutime + cstime) / tick, minflt + cminflt


def cpu_since(pid: int, before: tuple[float, float, int]) -> tuple[float, float, int]:
    """The zygote's own CPU seconds, its jobs' and their page faults since ``before`` (a :func:`tree_cpu` reading)."""
    now = tree_cpu(pid)
    return now[0] - before[0], now[1] - before[1], now[2] - before[2]


def zygote_pid(zygote: Any) -> int:
    """The zygote's own process: the boot process's only child when it entered a PID namespace, else itself."""
    from autograder.sandbox.procfs import children_of

    boot = zygote.process.pid
    children = children_of(boot)
    return children[0] if children else boot


def zygote_memory(pid: int) -> str:
    """The zygote's resident memory, how much of it is anonymous and how much of that is in huge pages."""
    fields = {}
    with open(f"/proc/{pid}/smaps_rollup") as handle:
        for line in handle:
            name, _, rest = line.partition(":")
            if name in ("Rss", "Anonymous", "AnonHugePages"):
                fields[name] = int(rest.split()[0]) / 1024
    return ", ".join(f"{name} {value:.0f} MB" for name, value in fields.items())


def host_cpu() -> float:
    """CPU seconds of this process alone (its reaped children excluded)."""
    times = os.times()
    return times.user + times.system


class Recorder:
    """Wraps a zygote's ``run`` to keep every job's result (for the checks' own time)."""

    def __init__(self, zygote: Any) -> None:
        self.results: list[Any] = []
        self._run = zygote.run
        zygote.run = self.run

    def run(self, *args: Any, **kwargs: Any) -> Any:
        result = self._run(*args, **kwargs)
        self.results.append(result)
        return result


def checks_time(result: Any) -> tuple[float, float]:
    """The wall and CPU seconds the job's checks recorded themselves."""
    wall = sum(float(r.get("seconds", 0.0)) for r in result.records if "check" in r)
    cpu = sum(float(r.get("cpu_seconds", 0.0)) for r in result.records if "check" in r)
    return wall, cpu


def per_job(label: str, results: list[Any], zygote_cpu: tuple[float, float, int], host: float,
            load: float) -> list[str]:
    """Print one measurement's per-job figures; return them as figure lines."""
    jobs = len(results)
    own, children, faults = zygote_cpu
    zygote_cpu = own + children
    wall = statistics.mean(r.seconds for r in results)
    setup = statistics.mean(r.setup_seconds for r in results)
    check_wall = sum(checks_time(r)[0] for r in results) / jobs
    check_cpu = sum(checks_time(r)[1] for r in results) / jobs
    zygote = zygote_cpu / jobs
    print(f"  {label}: {jobs} jobs; per job {wall * 1000:.1f} ms wall (median "
          f"{statistics.median(r.seconds for r in results) * 1000:.1f}), of which sandbox set-up {setup * 1000:.1f} ms "
          f"and the checks {check_wall * 1000:.1f} ms; zygote tree {zygote * 1000:.1f} CPU ms, of which the checks "
          f"{check_cpu * 1000:.1f} (the zygote itself {own / jobs * 1000:.1f}, the jobs {children / jobs * 1000:.1f}); "
          f"{faults / jobs:.0f} page faults; host {host / jobs * 1000:.1f} CPU ms; load {load:.2f}")
    return [figure(f"{label}: wall per job beyond the checks", (wall - check_wall) * 1000, " ms", None, load),
            figure(f"{label}: zygote-tree CPU per job beyond the checks", (zygote - check_cpu) * 1000, " ms", None,
                   load),
            figure(f"{label}: host CPU per job", host / jobs * 1000, " ms", None, load)]


def trivial_jobs(grader: Any, prepared: Any, count: int) -> list[str]:
    """Run ``count`` one-check jobs whose check does nothing on the grader's zygote; print per-job figures."""
    from autograder.grading.jobs import CheckBatch

    zygote = grader.zygotes[0]
    recorder = Recorder(zygote)
    batch = CheckBatch(label="trivial", timeout=30.0, checks_source=TRIVIAL_CHECKS)
    checks = [(_trivial_check(), 1)]
    pid = zygote_pid(zygote)

    def read(check: Any, seed: int, record: dict, result: Any, base: Any, cell_map: Any = None) -> Any:
        return base

    grader.jobs.run_checks(batch, checks, prepared, {}, [], read, zygote)  # once untimed: first-job effects
    recorder.results.clear()
    load = load_now()
    cpu_before, host_before = tree_cpu(pid), host_cpu()
    for _ in range(count):
        grader.jobs.run_checks(batch, checks, prepared, {}, [], read, zygote)
    lines = per_job("trivial job", recorder.results, cpu_since(pid, cpu_before), host_cpu() - host_before,
                    max(load, load_now()))
    zygote.run = recorder._run
    return lines


def _trivial_check() -> Any:
    from autograder.probe.checks import collect_checks

    namespace: dict[str, Any] = {"__name__": "_bench_trivial"}
    exec(TRIVIAL_CHECKS, namespace)  # noqa: S102 - this file's own constant
    return collect_checks(namespace)[0]


def real_jobs(grader: Any, submission: Path, repeat: int) -> list[str]:
    """Grade ``submission`` ``repeat`` times on the grader's one zygote; print per-job figures."""
    zygote = grader.zygotes[0]
    grader.grade(submission)  # once untimed: the reference outputs are stored, first-job effects paid
    recorder = Recorder(zygote)
    pid = zygote_pid(zygote)
    load = load_now()
    cpu_before, host_before = tree_cpu(pid), host_cpu()
    for _ in range(repeat):
        report = grader.grade(submission)
    zygote_cpu, host = cpu_since(pid, cpu_before), host_cpu() - host_before
    print(f"  score {report.score} / {report.max_score}")
    lines = per_job(f"graded job ({submission.name})", recorder.results, zygote_cpu, host, max(load, load_now()))
    zygote.run = recorder._run
    return lines


def whole_grades(assignment: str, submission: Path, count: int) -> list[str]:
    """``count`` runs of ``grader grade`` in fresh cgroups; print wall and CPU of the whole process tree."""
    work = Path(tempfile.mkdtemp(prefix="bench-jobs-"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    groups = Groups()
    runs, loads = [], []
    try:
        for _ in range(count):
            loads.append(load_now())
            runs.append(timed(grade_command(assignment, submission, work / "report.json"), env, None, groups))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    walls = [r.wall for r in runs]
    cpus = [r.cpu for r in runs if r.cpu is not None]
    print(f"  grader grade: wall {', '.join(f'{w:.2f}' for w in walls)} s; "
          + (f"CPU of the process tree {', '.join(f'{c:.2f}' for c in cpus)} s" if cpus
             else f"CPU not measured ({groups.skipped.get('cpuacct')})")
          + f"; load before each {', '.join(f'{x:.2f}' for x in loads)}")
    lines = [figure("grader grade wall (median)", statistics.median(walls), " s", None, max(loads))]
    if cpus:
        lines.append(figure("grader grade CPU of the process tree (median)", statistics.median(cpus), " s", None,
                            max(loads)))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", default="assignment3")
    parser.add_argument("--trivial", type=int, default=30, help="trivial jobs to time (0 skips)")
    parser.add_argument("--repeat", type=int, default=3, help="gradings of the reference on one zygote (0 skips)")
    parser.add_argument("--grades", type=int, default=3, help="runs of `grader grade` (0 skips)")
    parser.add_argument("--no-warm-up", action="store_true",
                        help="a zygote as `grader grade` and `grader show` start it (no warm-up), not as grade-all "
                             "does")
    args = parser.parse_args()

    from autograder.grading.grader import Grader
    from autograder.sandbox.host import new_scratch, start_zygotes
    from autograder.spec.assignment import load_assignment
    from autograder.submission.intake import prepare_submission

    assignment = load_assignment(args.assignment)
    print(f"# bench_jobs: {args.assignment}, python {sys.version.split()[0]}, "
          f"{'no warm-up' if args.no_warm_up else 'warmed-up zygote'}, load {load_now():.2f}")
    lines: list[str] = []
    if args.trivial or args.repeat:
        scratch = new_scratch(prefix="bench-jobs-")
        zygotes = start_zygotes(1, scratch, protect=assignment.private_folders, warm_up=not args.no_warm_up)
        with Grader(assignment, scratch=scratch, zygotes=zygotes) as grader:
            zygote = grader.zygotes[0]
            isolation = zygote.isolation  # waits until it is ready
            started = sum(tree_cpu(zygote_pid(zygote))[:2])
            print(f"isolation: {isolation['tier']} ({', '.join(isolation['features'])}); "
                  f"zygote memory: {zygote_memory(zygote_pid(zygote))}; its start-up took {started:.2f} CPU s")
            if args.trivial:
                copies = Path(tempfile.mkdtemp(prefix="bench-jobs-"))
                try:
                    prepared = prepare_submission(assignment.reference, assignment, copies)
                    lines += trivial_jobs(grader, prepared, args.trivial)
                finally:
                    shutil.rmtree(copies, ignore_errors=True)
            if args.repeat:
                started = time.monotonic()
                lines += real_jobs(grader, assignment.reference, args.repeat)
                print(f"  {args.repeat} gradings in {time.monotonic() - started:.1f} s")
    if args.grades:
        lines += whole_grades(args.assignment, assignment.reference, args.grades)
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
