"""Benchmark the student's loop on a kept runtime: a re-check in the terminal (``--watch``) and in a notebook's kernel.

Run from the repository root::

    python benchmarks/bench_warm.py --repeat 5 [--task causal_mask]

* terminal: ``grader check ASSIGNMENT COPY --watch --task TASK`` on a copy of the reference; each save changes
  the task's function (a literal ``1`` and ``+1`` in turn, so its syntax tree changes and its tests still pass).
  Printed: the re-check (from the ``saved: re-running`` line to the ``Next:`` line, as the student sees them)
  and save-to-result (the file polling included);
* notebook: a real Jupyter kernel runs the reference's module as a cell, then ``check_notebook(ASSIGNMENT,
  task=TASK)`` ``--repeat`` + 1 times, each timed inside the kernel: the first call starts the kernel's runtime,
  the others reuse it.

Beside each re-check's wall time, its CPU seconds: those of the ``--watch`` process's (or the kernel's) whole
process tree across the re-check (/proc, the sessions and jobs reaped included), which a shared machine's load
does not inflate the way it inflates wall time.

Each figure is printed beside its target (a re-check of a task without training: <= 0.3 s) and the load average;
under a load above 2 a figure is marked and not counted as a target met (benchmarks/figures.py).
"""

from __future__ import annotations

import argparse
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from figures import figure, load_now, median  # noqa: E402

from autograder.spec.assignment import Assignment, load_assignment  # noqa: E402

TARGET_SECONDS = 0.3


def function_source(assignment: Assignment, package: Path, task: str) -> tuple[Path, str]:
    """The file and the source text of the task's first function (a top-level ``def`` or ``class``)."""
    module, name = assignment.task(task).functions[0].split(".")
    path = package / f"{module}.py"
    text = path.read_text()
    match = re.search(rf"^(def|class) {name}\b.*?(?=^\S)", text, re.S | re.M)
    if match is None:
        sys.exit(f"no top-level {name} in {path}")
    return path, match.group(0)


def toggled(source: str) -> str:
    """The same function with a different syntax tree and the same behaviour: the first ``1`` literal as ``+1``."""
    if "=+1" in source:
        return source.replace("=+1", "=1", 1)
    changed = re.sub(r"=1\b", "=+1", source, count=1)
    if changed == source:
        sys.exit("the task's function has no '=1' to toggle; pick another --task")
    return changed


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process tree: the process, the children it reaped and its live children (Linux /proc).

    A session zygote the template reaped counts in the template's (and its jobs in it), so the difference across a
    re-check is that re-check's CPU time wherever it ran, whatever else the machine was doing: the load-robust
    figure beside the wall time.
    """
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0.0
    ticks = sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime
    return ticks / os.sysconf("SC_CLK_TCK") + sum(tree_cpu(int(child)) for child in children)


class Lines:
    """A process's output lines, read by a thread, each stamped with the time it arrived."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        assert process.stdout is not None
        stream = process.stdout
        threading.Thread(target=lambda: [self.lines.put((time.perf_counter(), line)) for line in stream],
                         daemon=True).start()

    last = ""  # the line the last ``until`` matched

    def until(self, pattern: str, seconds: float = 300.0) -> float:
        """When the first line matching ``pattern`` arrived (the line itself is kept in ``last``)."""
        while True:
            try:
                stamp, line = self.lines.get(timeout=seconds)
            except queue.Empty:
                sys.exit(f"no line matching {pattern!r} within {seconds:g} s")
            if re.search(pattern, line):
                self.last = line
                return stamp


@dataclass
class Saves:
    """What a ``--watch`` process did after each save: the answer (from its first line to its last), save to
    answer (the file polling included), the process tree's CPU seconds across it, the load, and a line of it."""

    answers: list[float] = field(default_factory=list)
    totals: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)
    said: list[str] = field(default_factory=list)


def timed_saves(command: list[str], save: Callable[[int], None], begins: str, ends: str, repeat: int,
                kept: str | None = None) -> Saves:
    """Start a ``--watch`` command, wait for its ``watching`` line, then ``repeat`` times call ``save(index)`` and
    time the answer: from the line matching ``begins`` to the one matching ``ends`` (``kept``: a line between
    them to keep in ``said``)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT,
                               env=dict(os.environ, PYTHONPATH=str(ROOT)))
    done = Saves()
    try:
        lines = Lines(process)
        lines.until(r"^watching ")
        for index in range(repeat):
            done.loads.append(load_now())
            cpu = tree_cpu(process.pid)
            saved = time.perf_counter()
            save(index)
            started = lines.until(begins)
            if kept is not None:
                lines.until(kept)
                done.said.append(lines.last.strip())
            answered = lines.until(ends)
            done.cpus.append(tree_cpu(process.pid) - cpu)
            done.answers.append(answered - started)
            done.totals.append(answered - saved)
    finally:
        process.terminate()
        process.wait()
    return done


def bench_terminal(assignment: Assignment, task: str, repeat: int, work: Path) -> list[str]:
    package = work / "terminal" / assignment.package
    shutil.copytree(assignment.reference, package, ignore=shutil.ignore_patterns("__pycache__"))

    def save(_: int) -> None:
        path, source = function_source(assignment, package, task)
        path.write_text(path.read_text().replace(source, toggled(source), 1))

    done = timed_saves([sys.executable, "-m", "autograder.cli", "check", assignment.name, str(package), "--watch",
                        "--task", task], save, r" saved: re-running ", r"^Next: ", repeat)
    print(f"terminal (--watch), re-check of {task}: {', '.join(f'{s:.3f}' for s in done.answers)} s; CPU "
          f"{', '.join(f'{s:.2f}' for s in done.cpus)} s (the process tree, file polling included)")
    return [figure(f"terminal re-check of {task} (median of {repeat})", median(done.answers), " s", TARGET_SECONDS,
                   max(done.loads)),
            figure("terminal re-check, CPU seconds of the process tree (load-robust; wall >= CPU)",
                   median(done.cpus), " s", None, max(done.loads)),
            figure("terminal save to result, file polling included", median(done.totals), " s", None,
                   max(done.loads))]


NOTEBOOK_CALL = """
import time as _time
_started = _time.perf_counter()
check_notebook({assignment!r}, task={task!r})
print(f"SECONDS {{_time.perf_counter() - _started:.4f}}")
"""


class Kernel:
    """A real Jupyter kernel with this checkout on its path: code run in it, its process tree's CPU seconds."""

    def __init__(self) -> None:
        from jupyter_client.manager import start_new_kernel

        self.manager, self.client = start_new_kernel(kernel_name="python3",
                                                     env={**os.environ, "PYTHONPATH": str(ROOT)})
        process = self.manager.provisioner.process if self.manager.provisioner else None
        self.pid = process.pid if process else None

    def run(self, code: str) -> str:
        """Run ``code`` as a cell; what it printed (and any traceback)."""
        out: list[str] = []

        def hook(message: dict) -> None:
            if message["msg_type"] == "stream":
                out.append(message["content"]["text"])
            elif message["msg_type"] == "error":
                out.append("\n".join(message["content"]["traceback"]))

        self.client.execute_interactive(code, timeout=600, output_hook=hook)
        return "".join(out)

    def cpu(self) -> float:
        """CPU seconds of the kernel's process tree so far (NaN if its process is unknown)."""
        return tree_cpu(self.pid) if self.pid else float("nan")

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def bench_notebook(assignment: Assignment, task: str, repeat: int) -> list[str]:
    module = assignment.task(task).functions[0].split(".")[0]
    kernel = Kernel()
    seconds, cpus, loads = [], [], []
    try:
        kernel.run((assignment.reference / f"{module}.py").read_text())
        kernel.run("from autograder.public.notebook import check_notebook")
        for _ in range(repeat + 1):
            loads.append(load_now())
            cpu = kernel.cpu()
            text = kernel.run(NOTEBOOK_CALL.format(assignment=assignment.name, task=task))
            cpus.append(kernel.cpu() - cpu)
            found = re.search(r"SECONDS ([0-9.]+)", text)
            if found is None or not re.search(rf"^{task} +\d+/\d+  passed$", text, re.M):
                sys.exit(f"check_notebook did not pass {task} in the kernel:\n{text}")
            seconds.append(float(found.group(1)))
    finally:
        kernel.close()
    print(f"notebook (check_notebook in a kernel), {task}: first {seconds[0]:.3f} s (starts the runtime), then "
          f"{', '.join(f'{s:.3f}' for s in seconds[1:])} s; CPU {', '.join(f'{s:.2f}' for s in cpus[1:])} s")
    return [figure(f"notebook re-check of {task} (median of {repeat})", median(seconds[1:]), " s", TARGET_SECONDS,
                   max(loads[1:])),
            figure("notebook re-check, CPU seconds of the kernel's process tree (load-robust; wall >= CPU)",
                   median(cpus[1:]), " s", None, max(loads[1:])),
            figure("notebook first check (starts the kernel's runtime)", seconds[0], " s", None, loads[0])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", default="assignment3")
    parser.add_argument("--task", default="causal_mask", help="a task without training (default causal_mask)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-notebook", action="store_true", help="the terminal only (no Jupyter kernel)")
    args = parser.parse_args()
    assignment = load_assignment(args.assignment)
    print(f"# bench_warm: {args.assignment}, task {args.task}, --repeat {args.repeat}, load {load_now():.1f}")
    work = Path(tempfile.mkdtemp(prefix="bench-warm-"))
    try:
        figures = bench_terminal(assignment, args.task, args.repeat, work)
        if not args.skip_notebook:
            figures += bench_notebook(assignment, args.task, args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    print("\n".join(figures))


if __name__ == "__main__":
    main()
