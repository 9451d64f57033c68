"""Benchmark batch grading: one submission end to end, `grade-all` against naive per-process grading, overhead, memory.

Run from the repository root::

    python benchmarks/bench_batch.py --submissions 50 --jobs 2

It generates a mixed class (correct copies of the reference, the reference with one known mistake applied,
broken ones: a syntax error, the untouched template), then measures

* one submission end to end (a fresh ``grader grade`` process, ``--repeat`` times, the median reported): wall
  seconds and peak RSS, for the reference and for the untouched template;
* ``grader grade-all --jobs N`` on the class against a naive baseline that runs ``grader grade`` in a fresh
  process per submission, one after another and two at a time;
* the grader's overhead: the batch's grading wall time divided by the hidden checks' own seconds, wall-clock
  and CPU time;
* the peak RSS of each grading worker (the worker process plus its zygote, from the gradebook);
* the **batch floor**: the floor of each submission of the same class (benchmarks/bench_single.py's floor: each
  task's probes on the submission with the reference standing in for what the task uses, as grading runs them,
  and on the reference, compared, no sandbox), all in one fresh process, divided over the workers, plus that
  process's one start-up (interpreter, torch, reference and checks loaded); and grade-all's wall time against it
  (target <= 1.1x), with the CPU time of both (cpuacct cgroups: grade-all's whole process tree, the floor's one
  process), the figure a shared machine disturbs least.

``--scaling 10,200`` does only this: grades a class of each size (the same mix) and prints the per-submission wall,
CPU and grading seconds of each, and the largest class's against the smallest's (target: flat within 10 %). Each
class is judged by the load before it, after waiting (``--settle``, 90 s) for the previous class's own load to fall:
two workers keep the load at about 2 by themselves.

``--floor-of CLASS`` runs the floors of a class's submissions in this process and prints them (used by the
benchmark as a fresh process).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_single import Groups  # noqa: E402
from figures import LOADED, figure, load_now, settled_load  # noqa: E402

from autograder.spec.assignment import Assignment, load_assignment  # noqa: E402
from autograder.spec.mutation import apply_mutation, load_mutations  # noqa: E402

SOLUTION = re.compile(r"^([ \t]*)### BEGIN SOLUTION\n.*?^[ \t]*### END SOLUTION\n", re.MULTILINE | re.DOTALL)
TARGETS = {"one submission wall (s)": 10.0, "batch speed-up vs naive x2": 2.0, "overhead": 1.3,
           "overhead (CPU time)": 1.3, "peak RSS per worker (MB)": 600.0, "grade-all / batch floor": 1.1,
           "per-submission cost, largest / smallest class": 1.1}


# -- generating a class ---------------------------------------------------------------------------------------

def stub_template(assignment: Assignment, destination: Path) -> Path:
    """The untouched student template: student_template/ if present, else the reference with solutions cut out."""
    if assignment.template.is_dir():
        shutil.copytree(assignment.template, destination)
        return destination
    shutil.copytree(assignment.reference, destination, ignore=shutil.ignore_patterns("__pycache__"))
    for file in destination.rglob("*.py"):
        file.write_text(SOLUTION.sub(lambda m: f"{m.group(1)}raise NotImplementedError()\n", file.read_text()))
    return destination


def make_class(assignment: Assignment, count: int, folder: Path) -> dict[str, str]:
    """Write ``count`` submissions: 40 % correct, 40 % one known mistake, 10 % syntax error, 10 % template.

    Returns:
        Student id to its kind.
    """
    mistakes = load_mutations(assignment, "mistakes")
    kinds: dict[str, str] = {}
    for index in range(count):
        student = f"student{index:03d}"
        package = folder / student / assignment.package
        slot = index % 10
        if slot in (0, 2, 5, 7) or (slot in (1, 3, 6, 8) and not mistakes):
            shutil.copytree(assignment.reference, package, ignore=shutil.ignore_patterns("__pycache__"))
            kinds[student] = "correct"
        elif slot in (1, 3, 6, 8):
            mistake = mistakes[index % len(mistakes)]
            apply_mutation(assignment.reference, mistake, package)
            kinds[student] = f"mistake:{mistake.id}"
        elif slot == 4:
            shutil.copytree(assignment.reference, package, ignore=shutil.ignore_patterns("__pycache__"))
            first = package / f"{assignment.modules[0]}.py"
            first.write_text(first.read_text() + "\ndef broken(:\n")
            kinds[student] = "syntax error"
        else:
            stub_template(assignment, package)
            kinds[student] = "template"
    return kinds


# -- measuring processes --------------------------------------------------------------------------------------

@dataclass
class Run:
    """A measured process: wall seconds, the largest single process's peak RSS, the tree's peak total RSS, and the
    CPU seconds and peak memory of the whole tree as cgroups count them (None where none can be made)."""

    wall: float
    peak_rss_mb: float
    tree_rss_mb: float
    returncode: int
    stdout: str
    cpu: float | None = None
    cgroup_mb: float | None = None


def _read_proc(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ""


def _children(pid: int) -> list[int]:
    """Children of a process from /proc/PID/task/*/children: reads a few files, not all of /proc, so sampling
    every 0.1 s costs the measured run almost nothing."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    return [int(c) for t in threads for c in _read_proc(f"/proc/{pid}/task/{t}/children").split()]


def _tree_rss_mb(pid: int) -> float:
    total, frontier, seen = 0, [pid], set()
    while frontier:
        seen.update(frontier)
        for process in frontier:
            stat = _read_proc(f"/proc/{process}/stat")
            total += int(stat.rsplit(")", 1)[1].split()[21]) if stat else 0
        frontier = [c for p in frontier for c in _children(p) if c not in seen]
    return total * os.sysconf("SC_PAGE_SIZE") / 2**20


GROUPS = Groups()


def measure(command: list[str], env: dict[str, str]) -> Run:
    """Run a command in a fresh cpuacct cgroup (where one can be made), sampling its process tree's memory; return
    its wall time, peak memory and CPU time (zygotes and jobs included, which ``wait4`` misses)."""
    made = GROUPS.make()

    def enter() -> None:  # in the child, before exec: everything it starts is counted
        for group in made.values():
            (group / "cgroup.procs").write_text(str(os.getpid()))

    started = time.monotonic()
    try:
        run = _sampled(command, env, enter if made else None, started)
        if "cpuacct" in made:
            run.cpu = int((made["cpuacct"] / "cpuacct.usage").read_text()) / 1e9
        if "memory" in made:
            run.cgroup_mb = int((made["memory"] / "memory.max_usage_in_bytes").read_text()) / 2**20
        return run
    finally:
        Groups.remove(made)


def _sampled(command: list[str], env: dict[str, str], enter: Any, started: float) -> Run:
    """Run a command to its end, sampling its process tree's RSS every 0.1 s."""
    # No other thread runs yet (the sampler starts below), so preexec_fn is safe here.
    process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, preexec_fn=enter)  # noqa: PLW1509
    peak_tree = 0.0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak_tree
        while not stop.is_set():
            peak_tree = max(peak_tree, _tree_rss_mb(process.pid))
            stop.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    stop.set()
    sampler.join()
    return Run(wall, usage.ru_maxrss / 1024, peak_tree, process.returncode, stdout)


def grader_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "autograder.cli", *args]


def grade_one(assignment: str, submission: Path, output: Path, env: dict[str, str]) -> Run:
    """``grader grade`` in a fresh process (what a naive batch script would do)."""
    return measure(grader_command("grade", assignment, str(submission), "--format", "json", "-o", str(output)), env)


def naive(assignment: str, students: list[Path], out: Path, env: dict[str, str], parallel: int) -> float:
    """Wall seconds to grade every submission with one fresh ``grader grade`` process each, ``parallel`` at a time."""
    started = time.monotonic()
    with ThreadPoolExecutor(parallel) as pool:
        runs = list(pool.map(lambda s: grade_one(assignment, s, out / f"{s.name}.json", env), students))
    failed = [s.name for s, r in zip(students, runs, strict=True) if r.returncode != 0]
    if failed:
        print(f"  warning: naive grading failed for {failed}", file=sys.stderr)
    return time.monotonic() - started


def floors_of(assignment: str, folder: Path, per_task: bool = False) -> dict[str, object]:
    """Every submission's floor, in this one process (see bench_single.Floor); with ``per_task``, each task in a
    process forked from this one (``Floor.run_forked``), after the warm-up the zygote template does too."""
    from bench_single import Floor

    floor = Floor(assignment)
    if per_task:
        floor.warm_up()
    run = floor.run_forked if per_task else floor.run
    return {"submissions": {s.name: run(s) for s in sorted(folder.iterdir()) if s.is_dir()}}


@dataclass
class BatchFloor:
    """The batch floor of a class and what it is made of (seconds).

    Attributes:
        floor: One start-up plus the submissions' floors divided over the workers.
        startup: The floor process's start-up (its wall time less its submissions' floors).
        summed: The sum of the submissions' floors.
        cpu: The floor process's CPU seconds (one start-up and every submission; None: not measured).
    """

    floor: float
    startup: float
    summed: float
    cpu: float | None


def batch_floor(assignment: str, folder: Path, jobs: int, env: dict[str, str], per_task: bool = False) -> BatchFloor:
    """The batch floor of a class: one start-up plus the submissions' floors divided over ``jobs`` workers; with
    ``per_task``, the floors of one process per task (see floors_of)."""
    command = [sys.executable, str(Path(__file__).resolve()), "--assignment", assignment, "--floor-of", str(folder)]
    command += ["--per-task"] if per_task else []
    run = measure(command, env)
    if run.returncode != 0:
        sys.exit(f"the batch floor failed (exit code {run.returncode}); run it alone: python "
                 f"benchmarks/bench_batch.py --floor-of {folder}{' --per-task' if per_task else ''}")
    seconds = sum(s["seconds"] for s in json.loads(run.stdout)["submissions"].values())
    startup = run.wall - seconds
    return BatchFloor(startup + seconds / jobs, startup, seconds, run.cpu)


def grade_all_command(assignment: str, folder: Path, jobs: int, db: Path) -> list[str]:
    return grader_command("grade-all", assignment, str(folder), "--jobs", str(jobs), "--gradebook", str(db))


def scaling(assignment: Assignment, sizes: list[int], jobs: int, work: Path, env: dict[str, str],
            settle: float = 90.0) -> None:
    """Grade a class of each size (the same mix) and print the per-submission wall, CPU and grading seconds of each,
    and the largest class's against the smallest's beside the target (flat within 10 %); before each class, wait
    up to ``settle`` seconds for the load the previous one left to fall."""
    per: dict[int, dict[str, float]] = {}
    loads: list[float] = []
    for size in sizes:
        make_class(assignment, size, work / f"class-{size}")
        db = work / f"scaling-{size}.db"
        load = settled_load(settle)  # the machine's other work: not the previous class's own tail
        run = measure(grade_all_command(assignment.name, work / f"class-{size}", jobs, db), env)
        loads.append(load)
        stats = batch_figures(db)
        figures = {"wall": run.wall / size, "grading": stats["grading seconds"] / size}
        if run.cpu is not None:
            figures["CPU"] = run.cpu / size
        per[size] = figures
        cpu = f", {figures['CPU']:.2f} CPU s" if "CPU" in figures else ""
        print(f"class of {size}: grade-all --jobs {jobs} {run.wall:.1f} s wall{f', {run.cpu:.1f} CPU s' if run.cpu else ''}"
              f" ({stats['graded']:.0f} graded, {stats['errors']:.0f} errors); per submission {figures['wall']:.2f} s "
              f"wall{cpu} (one start-up included), {figures['grading']:.2f} s grading (the worker's own seconds per "
              f"submission: no start-up); load {load:.1f}")
        halves = first_and_last_quarter(db)
        if halves is not None:
            print(f"  grading seconds per submission, median of the first and the last quarter recorded: "
                  f"{halves[0]:.2f} s and {halves[1]:.2f} s")
    small, large = min(sizes), max(sizes)  # wall and CPU include one start-up, which a larger class spreads
    for name in ("wall", "CPU", "grading"):  # thinner; the grading seconds have none to hide a growth behind
        if name in per[small] and name in per[large]:
            print(figure(f"per-submission {name} seconds, class of {large} / class of {small}",
                         per[large][name] / per[small][name], "x", TARGETS["per-submission cost, largest / smallest class"],
                         max(loads)))


def first_and_last_quarter(db: Path) -> tuple[float, float] | None:
    """The median grading seconds of the first and the last quarter of the graded submissions, in recording order
    (None for a class under 8): whether the cost per submission drifts within one batch."""
    with sqlite3.connect(db) as connection:
        seconds = [r[0] for r in connection.execute("SELECT seconds FROM submissions WHERE status = 'graded' "
                                                    "ORDER BY id")]
    if len(seconds) < 8:
        return None
    quarter = len(seconds) // 4
    return statistics.median(seconds[:quarter]), statistics.median(seconds[-quarter:])


def parse_sizes(text: str) -> list[int]:
    """``10,200`` as sizes: at least two, each a whole number of at least 1.

    Raises:
        ValueError: With the reason.
    """
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        raise ValueError(f"--scaling takes class sizes such as 10,200, not {text!r}") from None
    if len(sizes) < 2 or min(sizes) < 1:
        raise ValueError(f"--scaling takes at least two class sizes of at least 1, such as 10,200, not {text!r}")
    return sizes


# -- the benchmark --------------------------------------------------------------------------------------------

def load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def batch_figures(db: Path) -> dict[str, float]:
    """Per-submission seconds, check seconds and worker memory recorded by grade-all."""
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT seconds, check_seconds, worker_rss_mb, status, report_json "
                                  "FROM submissions").fetchall()
    graded = [r for r in rows if r[3] == "graded"]
    cpu = sum(c.get("cpu_seconds", 0.0) for r in graded for t in json.loads(r[4] or "{}").get("tasks", [])
              for c in t.get("checks", []))
    return {
        "check cpu seconds": cpu,
        "graded": len(graded),
        "errors": len(rows) - len(graded),
        "grading seconds": sum(r[0] for r in graded),
        "check seconds": sum(r[1] for r in graded),
        "worker rss": max((r[2] or 0.0) for r in rows) if rows else 0.0,
        "median ratio": statistics.median(r[0] / r[1] for r in graded if r[1]) if any(r[1] for r in graded) else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", default="assignment3")
    parser.add_argument("--submissions", type=int, default=50, help="class size (default 50)")
    parser.add_argument("--jobs", type=int, default=2, help="grade-all workers (default 2)")
    parser.add_argument("--skip-sequential", action="store_true", help="skip the one-after-another baseline")
    parser.add_argument("--skip-naive", action="store_true", help="skip both naive baselines")
    parser.add_argument("--repeat", type=int, default=3,
                        help="end-to-end runs of one submission; the median is reported (default 3)")
    parser.add_argument("--keep", type=Path, help="keep the generated class and outputs in this folder")
    parser.add_argument("--floor-of", type=Path, metavar="CLASS", help="print the floors of CLASS's submissions")
    parser.add_argument("--per-task", action="store_true",
                        help="with --floor-of: each task in a process of its own, forked (one process per task)")
    parser.add_argument("--scaling", metavar="N,M", help="only grade a class of each size (the same mix) and print "
                        "the per-submission wall, CPU and grading seconds of each and their ratio (e.g. 10,200)")
    parser.add_argument("--settle", type=float, default=90.0, metavar="SECONDS",
                        help="with --scaling: wait up to this long before each class for the load to fall to 2 "
                             "(the previous class's own load is not the machine's; default 90)")
    args = parser.parse_args()
    if args.floor_of:
        print(json.dumps(floors_of(args.assignment, args.floor_of, args.per_task)))
        return
    try:
        sizes = parse_sizes(args.scaling) if args.scaling is not None else None
    except ValueError as exc:
        parser.exit(2, f"error: {exc}\n")

    assignment = load_assignment(args.assignment)
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-batch-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    figures: dict[str, float] = {}
    print(f"# bench_batch: {args.assignment}, {args.scaling or args.submissions} submissions, --jobs {args.jobs}, "
          f"{os.cpu_count()} CPUs, python {sys.version.split()[0]}")
    try:
        print(f"load average before: {load_average()}")
        if sizes is not None:
            scaling(assignment, sizes, args.jobs, work, env, args.settle)
            print(f"load average after: {load_average()}")
            return
        template = stub_template(assignment, work / "template" / assignment.package)
        for label, path in (("reference", assignment.reference), ("template", template.parent)):
            walls = []
            for _ in range(max(1, args.repeat)):
                run = grade_one(args.assignment, path, work / f"one-{label}.json", env)
                report = json.loads((work / f"one-{label}.json").read_text()) if run.returncode == 0 else {}
                print(f"one submission ({label}): {run.wall:.1f} s wall (graded in {report.get('seconds', '?')} s), "
                      f"score {report.get('score', '?')}/{report.get('max_score', '?')}, peak RSS "
                      f"{run.peak_rss_mb:.0f} MB (largest process), {run.tree_rss_mb:.0f} MB (whole process tree)")
                walls.append(run.wall)
            print(f"one submission ({label}): median {statistics.median(walls):.1f} s wall of {len(walls)} runs "
                  f"({min(walls):.1f}-{max(walls):.1f} s)")
            figures.setdefault("one submission wall (s)", statistics.median(walls))

        kinds = make_class(assignment, args.submissions, work / "class")
        students = sorted((work / "class").iterdir())
        mix = Counter(kind.split(":")[0] for kind in kinds.values())
        print(f"class: {dict(mix)}")

        db = work / "gradebook.db"
        db.unlink(missing_ok=True)
        print(f"load average before grade-all: {load_average()}")
        batch_load = load_now()
        batch = measure(grade_all_command(args.assignment, work / "class", args.jobs, db), env)
        stats = batch_figures(db)
        cpu = f", {batch.cpu:.1f} CPU s (whole process tree)" if batch.cpu is not None else ""
        print(f"grade-all --jobs {args.jobs}: {batch.wall:.1f} s wall{cpu} ({batch.wall / args.submissions:.2f} s per "
              f"submission), {stats['graded']:.0f} graded, {stats['errors']:.0f} errors, whole tree peak RSS "
              f"{batch.tree_rss_mb:.0f} MB, peak RSS per worker (worker + zygote) {stats['worker rss']:.0f} MB")
        figures["peak RSS per worker (MB)"] = stats["worker rss"]
        overhead = stats["grading seconds"] / stats["check seconds"] if stats["check seconds"] else float("nan")
        batch_overhead = batch.wall * args.jobs / stats["check seconds"] if stats["check seconds"] else float("nan")
        print(f"overhead: grading seconds {stats['grading seconds']:.1f} / check seconds {stats['check seconds']:.1f} "
              f"= {overhead:.2f}x over all submissions (median per submission {stats['median ratio']:.2f}x: a warm "
              f"worker); whole batch (wall x jobs / check seconds) {batch_overhead:.2f}x")
        cpu_overhead = stats["grading seconds"] / stats["check cpu seconds"] if stats["check cpu seconds"] else 0.0
        print(f"overhead against the checks' CPU time: grading seconds {stats['grading seconds']:.1f} / check CPU "
              f"seconds {stats['check cpu seconds']:.1f} = {cpu_overhead:.2f}x")
        figures["overhead"] = overhead
        figures["overhead (CPU time)"] = cpu_overhead
        load = load_now()
        floor = batch_floor(args.assignment, work / "class", args.jobs, env)
        load = max(load, load_now())
        print(f"batch floor: start-up {floor.startup:.1f} s + {floor.summed:.1f} s of submission floors / {args.jobs} "
              f"workers = {floor.floor:.1f} s (load {load:.1f})")
        print(figure(f"grade-all --jobs {args.jobs} / batch floor", batch.wall / floor.floor, "x",
                     TARGETS["grade-all / batch floor"], max(load, batch_load)))
        figures["grade-all / batch floor"] = batch.wall / floor.floor
        if batch.cpu is not None and floor.cpu is not None:  # the load-robust view: work done, not time waited
            print(f"CPU time: grade-all {batch.cpu:.1f} s (parent, workers, zygotes, jobs) / the floor's process "
                  f"{floor.cpu:.1f} s (one start-up and every submission) = {batch.cpu / floor.cpu:.2f}x")
        isolated = batch_floor(args.assignment, work / "class", args.jobs, env, per_task=True)
        load = max(load, load_now())
        print(f"batch floor with one process per task (principle 1's isolation, no sandbox): start-up "
              f"{isolated.startup:.1f} s + {isolated.summed:.1f} s / {args.jobs} workers = {isolated.floor:.1f} s; a "
              f"process per task costs the submissions {isolated.summed / floor.summed:.2f}x their floors")
        print(figure(f"grade-all --jobs {args.jobs} / batch floor with one process per task", batch.wall
                     / isolated.floor, "x", None, load))  # no target: how much of the gap isolation itself is

        if not args.skip_naive:
            print(f"load average before naive x2: {load_average()}")
            two = naive(args.assignment, students, work / "naive2", env, parallel=2)
            print(f"naive, two at a time: {two:.1f} s wall; grade-all is {two / batch.wall:.2f}x faster")
            figures["batch speed-up vs naive x2"] = two / batch.wall
            if not args.skip_sequential:
                print(f"load average before naive x1: {load_average()}")
                one = naive(args.assignment, students, work / "naive1", env, parallel=1)
                print(f"naive, one after another: {one:.1f} s wall; grade-all is {one / batch.wall:.2f}x faster")
        print(f"load average after: {load_average()}")
        print()
        if max(batch_load, load_now()) > LOADED:
            print(f"(measured under a load average above {LOADED:g}: these figures are not targets met)")
        print("| figure | measured | target |")
        print("| --- | ---: | ---: |")
        for name, target in TARGETS.items():
            value = figures.get(name)
            shown = "not measured" if value is None else f"{value:.2f}"
            relation = ">=" if "speed-up" in name else "<="
            print(f"| {name} | {shown} | {relation} {target:g} |")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
