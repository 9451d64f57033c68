"""Benchmark ``grader show``: wall time and peak memory of drawing an assignment's figures from a submission.

Run from the repository root::

    python benchmarks/bench_show.py                       # assignment3 on the reference, 3 runs
    python benchmarks/bench_show.py --assignment assignment2 --path student_template/assignment2 --repeat 1
    python benchmarks/bench_show.py --change kv_cache.kv_cache_bytes    # also: a re-run after one function changed

Each run is a fresh ``grader show`` process (as a student runs it: interpreter start, imports, the sandboxed
workers' start, every probe including the short training run, drawing and the page). Reported per run: wall
seconds, CPU seconds of every process of the tree (user + system, sampled every 50 ms: the work itself, whatever
the machine's load; a process shorter than a sample is missed), the peak RSS of the largest single process (the
grader or a worker: ``getrusage``), and the peak of the whole process tree's RSS summed (sampled every 50 ms); then
the medians, against the targets (20 s, and 4 s cold). Each run writes a fresh folder, so its figure cache
(``<out>/.cache/``) is empty: every run is cold.

With ``--change module.function`` each run copies the work, draws it cold, then inserts one statement into that
function (a change of its syntax tree, the outputs unchanged) and draws it again into the same folder: the re-run
finds the other figures in the cache and runs only the probes that reach the function (target 1.5 s). Beside it is
printed the re-run's floor: a fresh interpreter that does only what any design drawing in a fresh process must do
(load the figure files, which import torch; digest the student's code to find what changed; import matplotlib;
decode the changed probes' kept results and draw their figures; exit), with no sandbox, no probe and no page
(``--redraw-floor``, run as its own process and timed from its start to its exit like the re-run). The load
average is printed with every figure: the machine is shared, and a busy one is slower.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_warm import Kernel, timed_saves  # noqa: E402
from figures import figure, load_now  # noqa: E402

TARGET_SECONDS = 20.0  # the first target of grader show
COLD_TARGET_SECONDS = 4.0  # the reference, cold, on two cores: start-ups overlapped
CHANGED_TARGET_SECONDS = 1.5  # a re-run after one function changed: only the figures that depend on it
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _tree(root: int) -> dict[int, tuple[int, float]]:
    """``root`` and every process descended from it (read from /proc): pid to (resident bytes, own CPU seconds)."""
    parents: dict[int, int] = {}
    usage: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        usage[int(entry)] = (int(fields[21]) * PAGE_SIZE, (int(fields[11]) + int(fields[12])) / CLOCK_TICKS)
    found = {}
    for pid, value in usage.items():
        ancestor = pid
        while ancestor not in (0, 1, root) and ancestor in parents:
            ancestor = parents[ancestor]
        if ancestor == root:
            found[pid] = value
    return found


def run_once(assignment: str, path: Path, out: Path) -> dict[str, float | str]:
    """One fresh ``grader show`` process; its wall time, memory and the summary line it printed."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "autograder.cli", "show", assignment, str(path), "--out", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.monotonic()
    process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak_tree = 0
    cpu: dict[int, float] = {}  # per process, the most CPU time seen (workers are killed, never reaped with usage)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak_tree
        while not done.is_set():
            tree = _tree(process.pid)
            peak_tree = max(peak_tree, sum(rss for rss, _ in tree.values()))
            for pid, (_, seconds) in tree.items():
                cpu[pid] = max(cpu.get(pid, 0.0), seconds)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    wall = time.monotonic() - started
    done.set()
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"grader show failed ({process.returncode}): {stderr.strip()[-400:]}")
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB; the largest process waited for so far
    return {"wall": wall, "cpu": sum(cpu.values()), "largest_mb": max(largest, before) / 1024,
            "tree_mb": peak_tree / 2**20,
            "summary": stdout.strip().splitlines()[0] if stdout.strip() else ""}


def change_function(package: Path, qualified: str, index: int) -> None:
    """Insert ``_changed = <index>`` as the first statement of ``module.function``'s body (after its docstring)."""
    module, name = qualified.split(".", 1)
    path = package / f"{module}.py"
    lines = path.read_text().splitlines(keepends=True)
    node = next((n for n in ast.parse("".join(lines)).body if getattr(n, "name", None) == name), None)
    if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        raise SystemExit(f"--change: no function {name} in {path}")
    first = node.body[1] if ast.get_docstring(node) is not None and len(node.body) > 1 else node.body[0]
    indent = lines[first.lineno - 1][: first.col_offset]
    lines.insert(first.lineno - 1, f"{indent}_changed = {index}\n")
    path.write_text("".join(lines))


def changed_runs(assignment: str, path: Path, qualified: str, repeat: int, scratch: Path) -> None:
    """Per repeat: a cold run on a copy of the work, then one function changed, a re-run into the same folder, and
    the re-run's floor (``redraw_floor``) on what the re-run kept."""
    cold, warm, floors, loads = [], [], [], []
    for index in range(repeat):
        work = scratch / f"changed-{index}" / path.name
        shutil.copytree(path, work)
        out = scratch / f"changed-{index}" / "figures"
        loads.append(load_now())
        cold.append(run_once(assignment, work, out))
        change_function(work, qualified, index)
        loads.append(load_now())
        since = time.time()
        warm.append(run_once(assignment, work, out))
        loads.append(load_now())
        floors.append(floor_once(assignment, work, out, scratch / f"changed-{index}" / "floor", since))
        print(f"  run {index + 1}: cold {cold[-1]['wall']:.1f} s [{cold[-1]['summary']}]; after {qualified} changed "
              f"{warm[-1]['wall']:.1f} s wall, {warm[-1]['cpu']:.1f} s CPU [{warm[-1]['summary']}]; its floor "
              f"{floors[-1]['wall']:.2f} s [{floors[-1]['summary']}]")
    print(figure("median wall, cold", statistics.median(r["wall"] for r in cold), " s", COLD_TARGET_SECONDS,
                 max(loads)))
    rerun = statistics.median(r["wall"] for r in warm)
    floor = statistics.median(r["wall"] for r in floors)
    print(figure(f"median wall after {qualified} changed", rerun, " s", CHANGED_TARGET_SECONDS, max(loads)))
    print(figure(f"re-run floor after {qualified} changed (a fresh interpreter: figure files and torch, digests, "
                 "matplotlib, the changed figures drawn; median)", floor, " s", None, max(loads)))
    print(figure("re-run / its floor", rerun / floor, "x", None, max(loads)))


def floor_once(assignment: str, work: Path, out: Path, drawn: Path, since: float) -> dict[str, float | str]:
    """``redraw_floor`` in a process of its own, timed from its start to its exit as ``run_once`` times a show."""
    drawn.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, str(Path(__file__).resolve()), "--assignment", assignment, "--path", str(work),
               "--redraw-floor", str(out), str(drawn), f"{since:.6f}"]
    started = time.monotonic()
    done = subprocess.run(command, env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT, capture_output=True,
                          text=True)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"the re-run floor failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return {"wall": wall, "summary": done.stdout.strip()}


def redraw_floor(assignment: str, work: Path, out: Path, drawn: Path, since: float) -> None:
    """The floor of a fresh re-run: draw into ``drawn`` the figures the re-run of the page in ``out`` drew (those
    kept in ``out/.cache`` since ``since``, the re-run's start), from the results it kept; then exit as ``grader
    show`` does, without teardown.

    The figure files, the digests, the decoder and the drawing are the grader's own (``show/catalog.py``,
    ``show/cache.py``, ``show/draw.py``): only the sandbox, the probes and the page are left out.
    """
    from autograder.show.cache import FigureCache
    from autograder.show.catalog import load_catalog
    from autograder.spec.assignment import load_assignment

    spec = load_assignment(assignment)
    catalog = load_catalog(spec)
    cache = FigureCache.beside(out, spec, catalog, work)
    from autograder.show.draw import draw_panel

    names = []
    for figure_ in catalog.figures:
        kept = cache.folder / f"{cache.key(figure_.probe, {})}.{figure_.name}.png"
        if kept.is_file() and kept.stat().st_mtime >= since:
            draw_panel(figure_, cache.lookup(figure_.probe, {}), drawn)
            names.append(figure_.name)
    print(f"drew {', '.join(names) or 'nothing'}", flush=True)
    os._exit(0 if names else 1)  # as grader show ends: no interpreter teardown


def watch_runs(assignment: str, path: Path, qualified: str, repeat: int, scratch: Path) -> None:
    """``grader show --watch`` on a copy of the work: per repeat, one change of ``qualified`` and the redraw it
    causes, timed from the ``saved: redrawing`` line to the ``page:`` line (and from the save, polling included),
    with the CPU seconds of the whole process tree across it."""
    work = scratch / "watched" / path.name
    shutil.copytree(path, work, ignore=shutil.ignore_patterns("__pycache__"))
    done = timed_saves([sys.executable, "-m", "autograder.cli", "show", assignment, str(work), "--watch", "--out",
                        str(scratch / "watched" / "figures")], lambda index: change_function(work, qualified, 100 + index),
                       r" saved: redrawing", r"^page: ", repeat, kept=r"^redrawn: ")
    print(f"  --watch, after {qualified} changed: {', '.join(f'{s:.2f}' for s in done.answers)} s; CPU "
          f"{', '.join(f'{s:.2f}' for s in done.cpus)} s [{done.said[-1]}]")
    print(figure(f"--watch redraw after {qualified} changed (median of {repeat})", statistics.median(done.answers),
                 " s", CHANGED_TARGET_SECONDS, max(done.loads)))
    print(figure("--watch redraw, CPU seconds of the process tree (load-robust; wall >= CPU)",
                 statistics.median(done.cpus), " s", None, max(done.loads)))
    print(figure("--watch save to page, file polling included", statistics.median(done.totals), " s", None,
                 max(done.loads)))


NOTEBOOK_SHOW = """
import time as _time
_started = _time.perf_counter()
_shown = show({assignment!r}, {path!r}, out={out!r})
print(f"SECONDS {{_time.perf_counter() - _started:.4f}} REDRAWN {{len(_shown.rendered.redrawn)}}")
"""


def notebook_runs(assignment: str, path: Path, qualified: str, repeat: int, scratch: Path) -> None:
    """``show()`` in a real Jupyter kernel on a copy of the work: the first call (it starts the kernel's workers),
    then per repeat one change of ``qualified`` and ``show()`` again, each timed inside the kernel."""
    work = scratch / "kernel" / path.name
    shutil.copytree(path, work, ignore=shutil.ignore_patterns("__pycache__"))
    call = NOTEBOOK_SHOW.format(assignment=assignment, path=str(work), out=str(scratch / "kernel" / "figures"))
    kernel = Kernel()
    seconds, redrawn, cpus, loads = [], [], [], []
    try:
        kernel.run("from autograder.show import show\nimport IPython.display\nIPython.display.display = print")
        for index in range(repeat + 1):
            if index:
                change_function(work, qualified, 200 + index)
            loads.append(load_now())
            cpu = kernel.cpu()
            text = kernel.run(call)
            cpus.append(kernel.cpu() - cpu)
            found = re.search(r"SECONDS ([0-9.]+) REDRAWN (\d+)", text)
            if found is None:
                sys.exit(f"show() failed in the kernel:\n{text[-2000:]}")
            seconds.append(float(found.group(1)))
            redrawn.append(int(found.group(2)))
    finally:
        kernel.close()
    print(f"  notebook show(), first {seconds[0]:.2f} s (starts the kernel's workers), after {qualified} changed "
          f"{', '.join(f'{s:.2f}' for s in seconds[1:])} s ({', '.join(map(str, redrawn[1:]))} figures redrawn); "
          f"CPU {', '.join(f'{s:.2f}' for s in cpus[1:])} s")
    print(figure(f"notebook show() after {qualified} changed (median of {repeat})", statistics.median(seconds[1:]),
                 " s", CHANGED_TARGET_SECONDS, max(loads[1:])))
    print(figure("notebook show() after the change, CPU seconds of the kernel's tree (load-robust)",
                 statistics.median(cpus[1:]), " s", None, max(loads[1:])))
    print(figure("notebook first show() (starts the kernel's workers)", seconds[0], " s", None, loads[0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", default="assignment3")
    parser.add_argument("--path", type=Path, help="the work to draw (default: the assignment's reference solution)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--change", metavar="MODULE.FUNCTION",
                        help="also time a re-run after this function changed (the figure cache kept)")
    parser.add_argument("--watch", action="store_true",
                        help="with --change: also time the redraw in `grader show --watch` and in a kernel's show()")
    parser.add_argument("--only-watch", action="store_true", help="the --watch figures only (no cold runs)")
    parser.add_argument("--redraw-floor", nargs=3, metavar=("OUT", "DRAWN", "SINCE"),
                        help="internal: the re-run floor on the page in OUT for the work at --path, drawn into DRAWN: "
                             "the figures kept since SINCE (seconds since the epoch)")
    args = parser.parse_args()
    if args.redraw_floor:
        out, drawn, since = args.redraw_floor
        redraw_floor(args.assignment, args.path, Path(out), Path(drawn), float(since))
    if (args.watch or args.only_watch) and not args.change:
        parser.error("--watch needs --change MODULE.FUNCTION")
    if args.only_watch:
        path = args.path or ROOT / "reference_solutions" / args.assignment
        with tempfile.TemporaryDirectory(prefix="bench-show-") as scratch:
            watch_runs(args.assignment, path, args.change, args.repeat, Path(scratch))
            notebook_runs(args.assignment, path, args.change, args.repeat, Path(scratch))
        return
    path = args.path or ROOT / "reference_solutions" / args.assignment
    print(f"grader show {args.assignment} {path}  ({os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())})")
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-show-") as scratch:
        loads = []
        for index in range(args.repeat):
            loads.append(load_now())
            run = run_once(args.assignment, path, Path(scratch) / f"run-{index}")
            runs.append(run)
            print(f"  run {index + 1}: {run['wall']:.1f} s wall, {run['cpu']:.1f} s CPU (all processes), largest "
                  f"process {run['largest_mb']:.0f} MB, process tree {run['tree_mb']:.0f} MB  [{run['summary']}]")
        if args.change:
            changed_runs(args.assignment, path, args.change, args.repeat, Path(scratch))
        if args.watch:
            watch_runs(args.assignment, path, args.change, args.repeat, Path(scratch))
            notebook_runs(args.assignment, path, args.change, args.repeat, Path(scratch))
    wall = statistics.median(r["wall"] for r in runs)
    cpu = statistics.median(r["cpu"] for r in runs)
    tree = statistics.median(r["tree_mb"] for r in runs)
    largest = max(r["largest_mb"] for r in runs)
    print(figure("median wall", wall, " s", TARGET_SECONDS, max(loads)))
    print(figure("median wall against the cold target", wall, " s", COLD_TARGET_SECONDS, max(loads)))
    print(f"CPU {cpu:.1f} s; peak memory: largest process "
          f"{largest:.0f} MB, whole tree {tree:.0f} MB (median); load average now "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
