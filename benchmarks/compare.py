"""Compare two commits on this machine: A B A B runs of the same commands, medians and the ratio B / A.

Run from the repository root::

    python benchmarks/compare.py A B [--repeat 2] [--only grade-solved,check]

Each commit is exported (``git archive``, the working tree is untouched) and run from its own folder (its commands
start there, so ``python -c`` imports that folder's package: ``Commit.check_own_code``) with its own reference
store, after one untimed ``grade`` that fills the store (as the Gradescope image does at build time).
The commands, alternated per repeat so that a drifting load falls on both commits alike:

* ``grade-solved``: ``grader grade`` on the commit's reference solution;
* ``grade-stub``: ``grader grade`` on the untouched template (every function raising);
* ``grade-all``: ``grader grade-all --jobs 2`` on 10 submissions (6 solved or with one known mistake, 4 broken
  or stubs: benchmarks/bench_batch.py's mix);
* ``check``: ``grader check`` on the reference solution;
* ``show``: ``grader show`` on the reference solution.

Printed per command: each commit's median wall seconds and CPU seconds of the whole process tree (a cpuacct
cgroup where one can be made; CPU time is the figure a shared machine disturbs least), the ratios B / A, and the
highest load average before a run, each run first waiting (``--settle``, 90 s at most) for the previous run's own
load to fall to 2; a ratio measured under a load above 2, the machine's other work, is marked
(benchmarks/figures.py). Each ratio is also printed as a figure (the CPU ratio beside its regression threshold,
1.1), so ``GRADER_BENCH_RECORD=FILE`` records them for the README's table like every benchmark's figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_batch import make_class, stub_template  # noqa: E402
from bench_single import Groups, Run, timed  # noqa: E402
from figures import LOADED, figure, load_now, median, settled_load  # noqa: E402

from autograder.spec.assignment import load_assignment  # noqa: E402

COMMANDS = ("grade-solved", "grade-stub", "grade-all", "check", "show")
REGRESSION = 1.1  # B / A CPU time above this is a regression to explain, not noise (A B A B medians)
CLASS_SIZE = 10


def export(commit: str, folder: Path) -> Path:
    """The commit's tree in ``folder`` (``git archive``: no worktree, no change to the repository)."""
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", commit], capture_output=True)
    if archive.returncode != 0:
        print(f"error: no commit {commit!r} to export ({archive.stderr.decode(errors='replace').strip()})",
              file=sys.stderr)
        sys.exit(2)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


class Commit:
    """One exported commit: its folder, environment and the inputs its commands grade."""

    def __init__(self, label: str, commit: str, work: Path, assignment: str) -> None:
        self.label, self.commit = label, commit
        self.tree = export(commit, work / label / "tree")
        self.out = work / label / "out"
        self.out.mkdir()
        self.env = {**os.environ, "PYTHONPATH": str(self.tree), "GRADER_CACHE_DIR": str(work / label / "store")}
        self.env.pop("GRADER_ASSIGNMENTS", None)
        spec = load_assignment(assignment, self.tree / "assignments")
        self.assignment = assignment
        self.reference = self.tree / "reference_solutions" / assignment
        self.stub = stub_template(spec, work / label / "stub" / spec.package).parent
        self.klass = work / label / "class"
        make_class(spec, CLASS_SIZE, self.klass)
        self.check_own_code()

    def check_own_code(self) -> None:
        """Exit in one line unless this commit's commands import its own exported tree.

        Each command is ``python -c``, which puts its working folder first on ``sys.path``: run from the
        repository, both commits ran the working tree's package (every comparison before 2026-12-02 13:00 UTC
        compared the working tree with itself). They run from the commit's own tree, and this says so.
        """
        found = subprocess.run([sys.executable, "-c", "import autograder; print(autograder.__file__)"],
                               env=self.env, cwd=self.tree, capture_output=True, text=True)
        path = Path(found.stdout.strip() or "?").resolve()
        if found.returncode != 0 or not path.is_relative_to(self.tree.resolve()):
            print(f"error: commit {self.commit} ({self.label}) would run {path}, not its own tree {self.tree}",
                  file=sys.stderr)
            sys.exit(2)

    def grader(self, *args: str) -> list[str]:
        return [sys.executable, "-c", "from autograder.cli import run; run()", *args]

    def command(self, name: str, run: int) -> list[str]:
        report = str(self.out / f"{name}-{run}.json")
        return {
            "grade-solved": lambda: self.grader("grade", self.assignment, str(self.reference), "--format", "json",
                                                "-o", report),
            "grade-stub": lambda: self.grader("grade", self.assignment, str(self.stub), "--format", "json",
                                              "-o", report),
            "grade-all": lambda: self.grader("grade-all", self.assignment, str(self.klass), "--jobs", "2",
                                             "--gradebook", str(self.out / f"gradebook-{run}.db")),
            "check": lambda: self.grader("check", self.assignment, str(self.reference)),
            "show": lambda: self.grader("show", self.assignment, str(self.reference), "--out",
                                        str(self.out / f"show-{run}")),
        }[name]()


def measure(commit: Commit, name: str, run: int, groups: Groups, settle: float) -> tuple[Run, float]:
    """One run of a command on a commit, and the load average just before it, once the previous run's own load
    has fallen to 2 (waiting up to ``settle`` seconds): ``grade-all --jobs 2`` keeps both CPUs busy and raises the
    load to about 2 by itself, which says nothing of what else runs on the machine."""
    load = settled_load(settle)
    try:
        return timed(commit.command(name, run), commit.env, None, groups, cwd=commit.tree), load
    except RuntimeError as exc:
        if name == "check":  # check exits 1 when a test fails; the reference passes them all, so 1 is a failure too
            raise
        raise RuntimeError(f"{commit.label} ({commit.commit}) {name}: {exc}") from None


def ratio_line(name: str, runs: dict[str, list[tuple[Run, float]]]) -> str:
    """A table row: medians of A and B, the ratios B / A, the load, and whether the load allows a comparison.

    The ratios are also printed as figures (recorded for the README's table, benchmarks/figures.py): the CPU
    ratio beside REGRESSION, the load-robust figure a change must not exceed unnoticed."""
    def med(label: str, pick: Callable[[Run], float | None]) -> float | None:
        values = [v for v in (pick(run) for run, _ in runs[label]) if v is not None]
        return median(values) if values else None

    wall_a, wall_b = med("A", lambda r: r.wall), med("B", lambda r: r.wall)
    cpu_a, cpu_b = med("A", lambda r: r.cpu), med("B", lambda r: r.cpu)
    load = max(load for label in runs for _, load in runs[label])
    cpu = f"{cpu_a:.2f} | {cpu_b:.2f} | {cpu_b / cpu_a:.2f}x" if cpu_a and cpu_b else "? | ? | ?"
    note = f"load {load:.1f}" + (f" > {LOADED:g}: not comparable with a target" if load > LOADED else "")
    assert wall_a is not None and wall_b is not None
    print(figure(f"{name}: B / A, wall time", wall_b / wall_a, "x", None, load))
    if cpu_a and cpu_b:
        print(figure(f"{name}: B / A, CPU time of the process tree", cpu_b / cpu_a, "x", REGRESSION, load))
    return f"| {name} | {wall_a:.2f} | {wall_b:.2f} | {wall_b / wall_a:.2f}x | {cpu} | {note} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", metavar="A", help="the commit to compare against (e.g. main)")
    parser.add_argument("b", metavar="B", help="the commit to measure (e.g. HEAD)")
    parser.add_argument("--assignment", default="assignment3")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each command per commit (default 2)")
    parser.add_argument("--only", default=",".join(COMMANDS), help=f"commands, comma-separated ({','.join(COMMANDS)})")
    parser.add_argument("--settle", type=float, default=90.0,
                        help="before each run, wait up to this long for the load to fall to 2 (default 90)")
    args = parser.parse_args()
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in COMMANDS]
    if unknown:
        print(f"error: no command {unknown[0]!r} to compare; commands: {', '.join(COMMANDS)}", file=sys.stderr)
        sys.exit(2)
    work = Path(tempfile.mkdtemp(prefix="bench-compare-"))
    try:
        commits = {"A": Commit("A", args.a, work, args.assignment), "B": Commit("B", args.b, work, args.assignment)}
        groups = Groups()
        print(f"# compare: A = {args.a}, B = {args.b}, {args.assignment}, --repeat {args.repeat}, "
              f"{len(os.sched_getaffinity(0))} usable CPUs, load {load_now():.1f}")
        for commit in commits.values():  # fill each commit's reference store, untimed
            timed(commit.command("grade-solved", -1), commit.env, None, groups, cwd=commit.tree)
        rows = []
        for name in names:
            runs: dict[str, list[tuple[Run, float]]] = {"A": [], "B": []}
            for run in range(args.repeat):
                for label, commit in commits.items():
                    runs[label].append(measure(commit, name, run, groups, args.settle))
            rows.append(ratio_line(name, runs))
            print(f"{name}: " + "; ".join(f"{label} {', '.join(f'{r.wall:.2f}' for r, _ in runs[label])} s"
                                          for label in runs))
        if "cpuacct" in groups.skipped:
            print(f"CPU time not measured: {groups.skipped['cpuacct']}")
        print()
        print("| command | A wall s | B wall s | B / A wall | A CPU s | B CPU s | B / A CPU | load |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        print("\n".join(rows))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
