"""Benchmark ``grader check``: the reference, a submission with an endless loop, and unzip-to-first-result.

Run from the repository root::

    python benchmarks/bench_check.py --repeat 5 [--release release/assignment3-student.zip]

It prints, for a fresh ``grader check`` process each time:

* the reference of ASSIGNMENT (default assignment3): every run's wall seconds and the median
  (target: median <= 3 s on two cores);
* the CPU seconds of each run's process tree (load-independent; wall >= CPU / 2 on two cores);
* the reference with ``while True: pass`` at the top of ``kv_cache_bytes``: wall seconds, and whether every
  other task was reported (target: <= 15 s, all other tasks reported);
* the reference with ``while True: pass`` at the top of ``scaled_dot_product_attention``, which the later tasks
  use: wall seconds, the longest time with no line printed (a pipe: no status line), and how many tasks were
  reported as held back by it ("not checked: it uses attention, which hung");
* with ``--release ZIP``: seconds from unzipping the student release to the first ``check`` result (pip not
  included; target: under a minute).

The load average and the CPUs this process may use are printed first: on a busy machine the figures say so.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from figures import figure, load_now  # noqa: E402

BEGIN = "### BEGIN SOLUTION"


CPU_SECONDS: list[float] = []  # CPU seconds (user + system) of each run's process tree, whatever the load


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_check(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    """A fresh ``grader check`` process; its wall seconds and result (its CPU seconds go to CPU_SECONDS)."""
    seconds, result, _ = run_check_timed(args, cwd, env)
    return seconds, result


def run_check_timed(args: list[str], cwd: Path,
                    env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess, float]:
    """``run_check``, also timing the longest silence: the most seconds between two lines of its standard output
    (the start and the exit count as lines)."""
    cpu, started = _children_cpu(), time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "autograder.cli", "check", *args], cwd=cwd, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines, last, silence = [], started, 0.0
    for line in process.stdout:  # a pipe: the check prints whole lines, flushed as each task ends
        now = time.perf_counter()
        silence, last = max(silence, now - last), now
        lines.append(line)
    stderr = process.stderr.read()
    process.wait(timeout=900)
    ended = time.perf_counter()
    CPU_SECONDS.append(_children_cpu() - cpu)
    result = subprocess.CompletedProcess(process.args, process.returncode, "".join(lines), stderr)
    return ended - started, result, max(silence, ended - last)


def task_lines(output: str) -> dict[str, str]:
    """Task id -> its line in a check's output."""
    return {m.group(1): m.group(0) for m in re.finditer(r"^([a-z_0-9]+) +(?:\s?\d+/\d+|-/-).*$", output, re.M)}


def with_endless_loop(reference: Path, tmp: Path, module: str = "kv_cache", function: str = "kv_cache_bytes") -> Path:
    """A copy of the reference whose ``module.function`` never returns."""
    package = tmp / "loop" / reference.name
    shutil.copytree(reference, package, ignore=shutil.ignore_patterns("__pycache__"))
    path = package / f"{module}.py"
    text = path.read_text()
    begin = text.index(BEGIN, text.index(f"def {function}("))
    line_end = text.index("\n", begin) + 1
    path.write_text(text[:line_end] + "    while True:\n        pass\n" + text[line_end:])
    return package


def bench_reference(assignment: str, repeat: int, env: dict[str, str]) -> None:
    reference = ROOT / "reference_solutions" / assignment
    times, loads = [], []
    for _ in range(repeat):
        loads.append(load_now())
        seconds, result = run_check([assignment, str(reference)], ROOT, env)
        if result.returncode != 0:
            sys.exit(f"the reference failed its public tests:\n{result.stdout}{result.stderr}")
        times.append(seconds)
    print(f"reference: {', '.join(f'{t:.2f}' for t in times)} s; CPU seconds of the process tree: median "
          f"{statistics.median(CPU_SECONDS[-repeat:]):.2f}")
    print(figure("reference, median wall on two cores", statistics.median(times), " s", 3.0, max(loads)))


def bench_loop(assignment: str, env: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        package = with_endless_loop(ROOT / "reference_solutions" / assignment, Path(tmp))
        load = load_now()
        seconds, result = run_check([assignment, str(package)], ROOT, env)
    lines = task_lines(result.stdout)
    others = {task: line for task, line in lines.items() if task != "kv_cache_bytes"}
    reported = all(line.rstrip().endswith("passed") for line in others.values())
    timed_out = "an endless loop?" in lines.get("kv_cache_bytes", "") or "an endless loop?" in result.stdout
    print(figure("endless loop in kv_cache_bytes", seconds, " s", 15.0, load) + f"; CPU {CPU_SECONDS[-1]:.2f} s; "
          f"{len(others)} other tasks "
          f"reported{' and passed' if reported else ' -- NOT all passed'}; the loop "
          f"{'reported as a timeout' if timed_out else 'NOT reported'}")


def bench_loop_upstream(assignment: str, env: dict[str, str]) -> None:
    """The endless loop in a function later tasks use: their tests are not waited for, and the check keeps talking."""
    with tempfile.TemporaryDirectory() as tmp:
        package = with_endless_loop(ROOT / "reference_solutions" / assignment, Path(tmp), "attention",
                                    "scaled_dot_product_attention")
        load = load_now()
        seconds, result, silence = run_check_timed([assignment, str(package)], ROOT, env)
    held = [task for task, line in task_lines(result.stdout).items() if "not checked: it uses" in line]
    print(figure("endless loop in scaled_dot_product_attention", seconds, " s", None, load)
          + f"; CPU {CPU_SECONDS[-1]:.2f} s; {len(held)} tasks held back by it ({', '.join(held) or 'none'})")
    print(figure("endless loop in scaled_dot_product_attention, longest time with no line printed", silence, " s",
                 None, load))


def bench_release(archive: Path, assignment: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("GRADER_ASSIGNMENTS", "PYTHONPATH")}
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(tmp)
        folder = next(Path(tmp).iterdir())
        env.update(PYTHONPATH=str(folder))
        _, result = run_check([assignment], folder, env)
        seconds = time.perf_counter() - started
    first = next((line for line in result.stdout.splitlines() if task_lines(line)), "no task line")
    print(f"unzip to first check result: {seconds:.2f} s (target < 60 s plus pip); first line: {first.strip()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", default="assignment3")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--release", type=Path, help="the student release zip, to time unzip -> first result")
    args = parser.parse_args()
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    print(f"{cpus} CPUs; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    bench_reference(args.assignment, args.repeat, env)
    bench_loop(args.assignment, env)
    if args.assignment == "assignment3":  # the function and its module are assignment3's
        bench_loop_upstream(args.assignment, env)
    if args.release:
        bench_release(args.release, args.assignment)


if __name__ == "__main__":
    main()
