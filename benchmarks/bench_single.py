"""Benchmark one submission graded alone: `grader grade` against the floor, on two cores and on one, and its memory.

Run from the repository root::

    python benchmarks/bench_single.py --repeat 3

The *floor* is the least work grading one submission can do: one process that imports torch and runs every
hidden check's probe on the submission and on the reference and compares them (the checks' verifiers
included), with no sandbox, no second process, no report. The benchmark runs the floor and ``grader grade``
alternately (A B A B ...) so that a drifting machine load cancels out, for the reference and for the untouched
template, on every CPU this process may use and pinned to one (``taskset -c 0``, as a one-vCPU container gives),
and prints each median, the ratio ``grade / floor`` and the load average beside each figure.

The peak memory of ``grader grade`` is measured as a container counts it: the command runs in a fresh cgroup v1
memory group and ``memory.max_usage_in_bytes`` (resident memory and page cache charged to the group) is read
after it ends. Page cache that another process already loaded (torch's libraries, read by earlier runs) stays
charged to that other group, so the figure is a lower bound of a cold container's; the benchmark also prints
the process tree's peak RSS. Where no memory cgroup can be created the figure is skipped with the reason.

``--floor SUBMISSION`` runs the floor itself (used by the benchmark as a fresh process).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from figures import figure, load_now  # noqa: E402

CGROUP_MEMORY = Path("/sys/fs/cgroup/memory")
CGROUP_CPUACCT = Path("/sys/fs/cgroup/cpuacct")
TARGETS = {"2 cores": 1.0, "1 core": 1.2}
MEMORY_TARGET_MB = 600.0


# -- the floor (runs in its own fresh process) -----------------------------------------------------------------

_PACKAGES = itertools.count(1)  # a fresh private name for each student package any floor of this process loads


class Floor:
    """The least work grading can do, in this process: torch, the reference and the checks loaded once (no sandbox).

    Args:
        assignment_name: The assignment.
    """

    def __init__(self, assignment_name: str) -> None:
        import torch  # noqa: F401 - the floor pays torch's import like every grader does

        from autograder.grading.grader import _load_assets
        from autograder.judge.verdict import Judge
        from autograder.probe.checks import collect_checks, load_checks_file
        from autograder.spec.assignment import load_assignment
        from autograder.spec.reference import load_package

        self.assignment = load_assignment(assignment_name)
        self.reference = load_package(self.assignment.reference, f"_floor_reference_{self.assignment.name}",
                                      self.assignment.modules)  # one per assignment: several floors may share a process
        assets = _load_assets(self.assignment.root / "hidden" / "assets")
        self.judge = Judge(self.assignment, self.reference, assets, [], Path(tempfile.gettempdir()))
        self.checks = {}
        for task in self.assignment.tasks:
            namespace = load_checks_file(task.checks, f"_floor_checks_{self.assignment.name}_{task.id}")
            self.checks[task.id] = [c for c in collect_checks(namespace) if c.task == task.id]

    def warm_up(self) -> None:
        """Before forking a process per task, do what the zygote template and a zygote do before they fork: the
        template's own warm-up (torch's lazy import of the first optimizer step, which each fork would pay again;
        its memory backed by huge pages, fewer page-table entries per fork), then the zygote's ``gc.freeze()`` (no
        fork's collection writes to its objects)."""
        import gc

        from autograder.sandbox.template import warm_up

        warm_up()
        gc.freeze()

    def run_forked(self, submission: Path) -> dict[str, float]:
        """As :meth:`run`, with grading's processes and no sandbox: one forked process imports every module (the
        import probe), then each task runs in a process of its own forked from this one, importing only what it
        touches: the least that grading with one process per task (principle 1) can do. Call :meth:`warm_up`
        first, as the zygote template does before it forks."""
        started = time.perf_counter()
        loaded = self._forked(lambda: self._import(submission))
        if loaded is None:
            return {"passed": 0, "checks": 0, "seconds": time.perf_counter() - started}
        broken = loaded["broken"]
        passed = ran = 0
        for task in self._tasks(None, broken):
            done = self._forked(lambda: self._task_in_package(submission, task, broken))
            if done is not None:
                passed, ran = passed + done["passed"], ran + done["checks"]
        return {"passed": passed, "checks": ran, "seconds": time.perf_counter() - started}

    def run(self, submission: Path, only: set[str] | None = None) -> dict[str, float]:
        """Import the submission's modules (each on its own: a broken one costs its own tasks), then run each task's
        probes on it with the reference standing in for what the task ``uses`` (and for a broken module's objects),
        as grading does, and on the reference; compare.

        Args:
            submission: A folder holding the package, or the package itself.
            only: Run just these tasks (all by default).

        Returns:
            Checks passed, checks run and the seconds of this submission (its import and its checks).
        """
        started = time.perf_counter()
        loaded = self._import(submission)
        if loaded is None:
            return {"passed": 0, "checks": 0, "seconds": time.perf_counter() - started}
        passed = ran = 0
        for task in self._tasks(only, loaded["broken"]):
            task_passed, task_ran = self._run_task(task, loaded["name"], loaded["broken"])
            passed, ran = passed + task_passed, ran + task_ran
        return {"passed": passed, "checks": ran, "seconds": time.perf_counter() - started}

    def _tasks(self, only: set[str] | None, broken: dict[str, str]) -> list[Any]:
        """The tasks to run: grading runs no probe of a task whose own module is broken."""
        return [t for t in self.assignment.tasks if (only is None or t.id in only)
                and not any(module in broken for module in t.modules)]

    def _package(self, submission: Path) -> tuple[str, Path]:
        """A fresh private name for the submission's package, and its folder."""
        assignment = self.assignment
        package = submission / assignment.package if (submission / assignment.package).is_dir() else submission
        return f"_floor_student{next(_PACKAGES)}", package

    def _import(self, submission: Path) -> dict[str, Any] | None:
        """Import every module of the submission, as grading's import probe; a broken one gets the fallback
        grading gives it. None: the package itself cannot be imported."""
        import importlib

        from autograder.errors import AssignmentError
        from autograder.sandbox.job import _fallback_module
        from autograder.spec.reference import load_package

        name, package = self._package(submission)
        try:
            load_package(package, name, ())
        except AssignmentError:
            return None
        broken: dict[str, str] = {}
        for module in self.assignment.modules:
            try:
                importlib.import_module(f"{name}.{module}")
            except Exception as exc:  # noqa: BLE001 - a broken module: its own tasks score 0, as in grading
                broken[module] = f"{type(exc).__name__}: {exc}"
                sys.modules[f"{name}.{module}"] = _fallback_module(f"{name}.{module}", module, broken[module],
                                                                   self.reference)
        return {"name": name, "broken": broken}

    def _task_in_package(self, submission: Path, task: Any, broken: dict[str, str]) -> dict[str, int]:
        """One task on the package imported lazily (what the task touches), as a grading job does."""
        from autograder.spec.reference import load_package

        name, package = self._package(submission)
        load_package(package, name, ())
        passed, ran = self._run_task(task, name, broken)
        return {"passed": passed, "checks": ran}

    @staticmethod
    def _forked(work: Any) -> Any:
        """``work()`` in a process forked from this one, its JSON answer read back (None if it failed)."""
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            try:
                view = memoryview(json.dumps(work()).encode())
                while view:
                    view = view[os.write(write, view):]
            finally:
                os._exit(0)  # no teardown: a grading job ends the same way
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            text = pipe.read()
        os.waitpid(pid, 0)
        return json.loads(text) if text else None

    def _run_task(self, task: Any, name: str, broken: dict[str, str]) -> tuple[int, int]:
        """One task's probes on the student's package with the reference substituted for what the task uses (the
        sandbox's own ``StudentPackage``), the package's namespaces put back afterwards; checks passed and run."""
        from autograder.probe.context import derive_seed
        from autograder.reports.results import ERROR, CheckResult
        from autograder.sandbox.job import StudentPackage

        modules = [m for key, m in sys.modules.items() if key.startswith(name + ".")]
        saved = [(vars(m), dict(vars(m))) for m in modules]
        substitutions = {q: _attribute(self.reference, q) for q in task.uses}
        impl = StudentPackage(name, substitutions, broken, self.reference)
        passed = ran = 0
        try:
            for check in self.checks[task.id]:
                seed = derive_seed(self.assignment.seed, check.name)
                ran += 1
                try:  # pinned state, probe, and the outputs through the transport, as a worker sends them
                    actual = self.judge.run_reference_probe(check, seed, impl)
                except Exception:  # noqa: BLE001 - an unsolved function: nothing to compare
                    continue
                result = self.judge.judge(check, seed, actual,
                                          CheckResult(check.name, "", check.weight, ERROR, seed=seed))
                passed += result.status == "passed"
                if result.status != "passed" and os.environ.get("FLOOR_DEBUG"):
                    print(check.name, result.message, file=sys.stderr)
        finally:
            for namespace, before in saved:
                namespace.clear()
                namespace.update(before)
        return passed, ran


def _attribute(package: Any, qualified: str) -> Any:
    """``module.name`` of a package."""
    module, attribute = qualified.split(".", 1)
    return getattr(getattr(package, module), attribute)


def run_floor(assignment_name: str, submission: Path) -> dict[str, float]:
    """Import torch, run every hidden check's probe on the submission and the reference, compare; no sandbox.

    Returns:
        Checks passed, checks run and the seconds of the submission alone (its import and its checks).
    """
    return Floor(assignment_name).run(submission)


# -- measuring ------------------------------------------------------------------------------------------------

def load_average() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


@dataclass
class Run:
    """One measured command: wall seconds, CPU seconds of its whole tree and peak memory (None: not measured)."""

    wall: float
    cpu: float | None
    peak_mb: float | None


class Groups:
    """A fresh cgroup v1 memory group and cpuacct group per run (where this machine lets us create them)."""

    def __init__(self) -> None:
        self.skipped: dict[str, str] = {}
        self.index = 0
        self.limit_mb: int | None = None  # a container's memory limit for the next groups (None: unlimited)

    def make(self) -> dict[str, Path]:
        self.index += 1
        made = {}
        for controller, root in (("memory", CGROUP_MEMORY), ("cpuacct", CGROUP_CPUACCT)):
            group = root / f"grader-bench-{os.getpid()}-{self.index}"
            try:
                group.mkdir()
                made[controller] = group
                if controller == "memory" and self.limit_mb:
                    (group / "memory.limit_in_bytes").write_text(str(self.limit_mb * 2**20))
            except OSError as exc:
                reason = exc.strerror or str(exc)
                self.skipped[controller] = f"no {controller} cgroup could be created under {root} ({reason})"
        return made

    @staticmethod
    def remove(groups: dict[str, Path]) -> None:
        for group in groups.values():
            for _ in range(50):
                try:
                    group.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)


def timed(command: list[str], env: dict[str, str], cpus: str | None, groups: Groups, cwd: Path = ROOT) -> Run:
    """Run a command (pinned to ``cpus`` with taskset when given) in fresh cgroups, from ``cwd``; raises if it
    fails. ``python -c`` puts ``cwd`` first on ``sys.path``: the code run is the one found there."""
    full = (["taskset", "-c", cpus] if cpus else []) + command
    made = groups.make()

    def enter() -> None:  # in the child, before exec: everything it starts is counted
        for group in made.values():
            (group / "cgroup.procs").write_text(str(os.getpid()))

    try:
        started = time.monotonic()
        completed = subprocess.run(full, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, preexec_fn=enter if made else None)
        wall = time.monotonic() - started
        if completed.returncode != 0:
            raise RuntimeError(f"{' '.join(full)} failed ({completed.returncode}): {completed.stderr[-500:]}")
        cpu = int((made["cpuacct"] / "cpuacct.usage").read_text()) / 1e9 if "cpuacct" in made else None
        peak = int((made["memory"] / "memory.max_usage_in_bytes").read_text()) / 2**20 if "memory" in made else None
        return Run(wall, cpu, peak)
    finally:
        groups.remove(made)


def floor_command(assignment: str, submission: Path) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--assignment", assignment, "--floor", str(submission)]


def grade_command(assignment: str, submission: Path, output: Path) -> list[str]:
    return [sys.executable, "-c", "from autograder.cli import run; run()", "grade", assignment, str(submission),
            "--format", "json", "-o", str(output)]


def alternate(assignment: str, submission: Path, output: Path, env: dict[str, str], cpus: str | None,
              repeat: int, groups: Groups) -> tuple[list[Run], list[Run], list[str]]:
    """Floor and ``grader grade`` alternately, ``repeat`` times each; their runs and the load before each pair."""
    floors, grades, loads = [], [], []
    for _ in range(repeat):
        loads.append(load_average())
        floors.append(timed(floor_command(assignment, submission), env, cpus, groups))
        grades.append(timed(grade_command(assignment, submission, output), env, cpus, groups))
    return floors, grades, loads


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _list(values: list[float | None]) -> str:
    return ", ".join("?" if v is None else f"{v:.2f}" for v in values)


def median_line(label: str, floors: list[Run], grades: list[Run], loads: list[str]) -> tuple[float, float | None]:
    """Print the medians of one case; return the wall-time ratio and the CPU-time ratio (None: not measured)."""
    wall_ratio = _median([r.wall for r in grades]) / _median([r.wall for r in floors])
    floor_cpu, grade_cpu = _median([r.cpu for r in floors]), _median([r.cpu for r in grades])
    cpu_ratio = grade_cpu / floor_cpu if floor_cpu and grade_cpu else None
    floor_wall, grade_wall = _median([r.wall for r in floors]), _median([r.wall for r in grades])
    print(f"  {label}: floor median {floor_wall:.2f} s wall ({_list([r.wall for r in floors])}), "
          f"grade median {grade_wall:.2f} s ({_list([r.wall for r in grades])}): "
          f"ratio {wall_ratio:.2f}x; load before each pair {', '.join(loads)}")
    if cpu_ratio is not None:
        print(f"  {label}: CPU seconds of the whole process tree: floor median {floor_cpu:.2f} "
              f"({_list([r.cpu for r in floors])}), grade median {grade_cpu:.2f} ({_list([r.cpu for r in grades])}): "
              f"ratio {cpu_ratio:.2f}x")
    return wall_ratio, cpu_ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", default="assignment3")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command per case (default 3)")
    parser.add_argument("--floor", type=Path, metavar="SUBMISSION", help="run the floor on SUBMISSION and exit")
    parser.add_argument("--one-core-only", action="store_true", help="measure only pinned to one core")
    parser.add_argument("--container-mb", type=int, default=768,
                        help="also measure under this memory limit, as a container gets (default 768, "
                             "Gradescope's; 0 skips)")
    args = parser.parse_args()
    if args.floor:
        print(json.dumps(run_floor(args.assignment, args.floor)))
        return

    from bench_batch import stub_template

    from autograder.spec.assignment import load_assignment

    assignment = load_assignment(args.assignment)
    work = Path(tempfile.mkdtemp(prefix="bench-single-"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    usable = sorted(os.sched_getaffinity(0))
    print(f"# bench_single: {args.assignment}, {len(usable)} usable CPUs, python {sys.version.split()[0]}, "
          f"--repeat {args.repeat}")
    try:
        template = stub_template(assignment, work / "template" / assignment.package).parent
        cases = [("reference", assignment.reference), ("template", template)]
        settings = [("1 core", str(usable[0]))] if args.one_core_only else [
            (f"{len(usable)} cores", None), ("1 core", str(usable[0]))]
        groups = Groups()
        rows: list[tuple[str, str, str]] = []
        figures: list[str] = []  # the same figures beside their targets, recorded for the README's table
        peaks: dict[str, list[float | None]] = {label: [] for label, _ in cases}
        for setting, cpus in settings:
            print(f"{setting}{f' (taskset -c {cpus})' if cpus else ''}:")
            target = TARGETS["1 core" if cpus else "2 cores"]
            for label, submission in cases:
                floors, grades, loads = alternate(args.assignment, submission, work / "report.json", env, cpus,
                                                  args.repeat, groups)
                wall_ratio, cpu_ratio = median_line(label, floors, grades, loads)
                peaks[label] += [r.peak_mb for r in grades]
                rows.append((f"grade / floor wall, {setting}, {label}", f"{wall_ratio:.2f}x", f"<= {target:g}x"))
                worst = max(float(load.split("/")[0]) for load in loads)  # the 1-minute load before each pair
                figures.append(figure(f"grade / floor wall, {setting}, {label}", wall_ratio, "x", target, worst))
                if cpu_ratio is not None:
                    rows.append((f"grade / floor CPU time, {setting}, {label}", f"{cpu_ratio:.2f}x", "(load-robust)"))
                    figures.append(figure(f"grade / floor CPU time, {setting}, {label} (load-robust)", cpu_ratio, "x",
                                          None, worst))
        print("memory of grader grade as a container counts it (cgroup v1 memory.max_usage_in_bytes, page cache "
              "included; cache already charged elsewhere, e.g. torch's libraries, is not counted again):")
        if "memory" in groups.skipped:
            print(f"  skipped: {groups.skipped['memory']}")
        for label, values in peaks.items():
            known = [v for v in values if v is not None]
            if known:
                print(f"  {label}: peak {max(known):.0f} MB (runs: {_list(values)} MB)")
                rows.append((f"cgroup peak memory, {label}", f"{max(known):.0f} MB", f"<= {MEMORY_TARGET_MB:g} MB"))
                figures.append(figure(f"cgroup peak memory of grader grade, {label}, every usable CPU", max(known),
                                      " MB", MEMORY_TARGET_MB, load_now()))
        if "memory" not in groups.skipped and args.container_mb:
            groups.limit_mb = args.container_mb
            print(f"in a {args.container_mb} MB container (the memory group's limit; the grader reads it and "
                  f"starts one zygote below 1 GiB), every usable CPU, load {load_average()}:")
            for label, submission in cases:
                run = timed(grade_command(args.assignment, submission, work / "report.json"), env, None, groups)
                score = json.loads((work / "report.json").read_text())["score"]
                print(f"  {label}: peak {run.peak_mb:.0f} MB, {run.wall:.2f} s wall, {run.cpu or 0:.2f} CPU s, "
                      f"score {score}")
                rows.append((f"cgroup peak memory in a {args.container_mb} MB container, {label}",
                             f"{run.peak_mb:.0f} MB", f"<= {MEMORY_TARGET_MB:g} MB"))
                figures.append(figure(f"cgroup peak memory in a {args.container_mb} MB container, {label}",
                                      run.peak_mb, " MB", MEMORY_TARGET_MB, load_now()))
            groups.limit_mb = None
        if "cpuacct" in groups.skipped:
            print(f"CPU time not measured: {groups.skipped['cpuacct']}")
        print(f"load average after: {load_average()}")
        print()
        print("| figure | measured | target |")
        print("| --- | ---: | ---: |")
        for name, value, target in rows:
            print(f"| {name} | {value} | {target} |")
        print()
        print("\n".join(figures))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
