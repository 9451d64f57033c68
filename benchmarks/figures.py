"""What every benchmark prints: a figure beside its target, with the load it was measured under.

A figure measured while the load average (one minute) was above LOADED is marked as such and never counted as a
target met: on a shared machine it says how the machine was, not how fast the grader is.

With ``GRADER_BENCH_RECORD=FILE`` in the environment, every figure printed is also recorded in the JSON file FILE
(``benchmarks/figures.json`` is the one the README's table is rendered from: ``benchmarks/readme_table.py``).
A run's figures replace those an earlier run of the same command recorded; other commands' stay.
"""

from __future__ import annotations

import json
import os
import shlex
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

LOADED = 2.0
RECORD_VARIABLE = "GRADER_BENCH_RECORD"
ROOT = Path(__file__).resolve().parents[1]
MET, MISSED, NOT_COMPARABLE = "met", "missed", "not comparable"


def load_now() -> float:
    """The one-minute load average."""
    return os.getloadavg()[0]


def settled_load(patience: float = 90.0) -> float:
    """The one-minute load average once it has fallen to LOADED or below (waiting up to ``patience`` seconds).

    A benchmark that keeps both CPUs busy raises the load to about 2 by itself, so the load right after one of its
    runs is that run's own, not the machine's: waiting before the next run lets its figure be judged by what else
    runs."""
    deadline = time.monotonic() + patience
    while load_now() > LOADED and time.monotonic() < deadline:
        time.sleep(5)
    return load_now()


def judgement(value: float, target: float | None, load: float, higher_is_better: bool = False) -> str:
    """MET, MISSED, NOT_COMPARABLE (measured under a load above LOADED), or "" without a target."""
    if target is None:
        return ""
    if load > LOADED:
        return NOT_COMPARABLE
    met = value >= target if higher_is_better else value <= target
    return MET if met else MISSED


def verdict(value: float, target: float | None, load: float, higher_is_better: bool = False) -> str:
    """``target met``, ``target missed``, or why the figure cannot say (no target, or measured under load)."""
    said = judgement(value, target, load, higher_is_better)
    if said == NOT_COMPARABLE:
        return f"not comparable with the target: measured under load {load:.1f} > {LOADED:g}"
    return {MET: "target met", MISSED: "target MISSED"}.get(said, "")


def figure(name: str, value: float, unit: str, target: float | None, load: float,
           higher_is_better: bool = False) -> str:
    """One line: the figure, its target and the verdict, with the load it was measured under."""
    sign = ">=" if higher_is_better else "<="
    aim = f" (target {sign} {target:g}{unit})" if target is not None else ""
    said = verdict(value, target, load, higher_is_better)
    record_file = os.environ.get(RECORD_VARIABLE)
    if record_file:
        record(Path(record_file), {
            "name": name, "value": value, "unit": unit, "target": target, "higher_is_better": higher_is_better,
            "load": round(load, 2), "verdict": judgement(value, target, load, higher_is_better),
            "utc": datetime.now(timezone.utc).isoformat(timespec="seconds")})
    return f"{name}: {value:.3g}{unit}{aim}, load {load:.1f}{'; ' + said if said else ''}"


def this_command() -> str:
    """The command line that runs this process, its script relative to the repository (as the README shows it)."""
    script = Path(sys.argv[0]).resolve()
    shown = script.relative_to(ROOT).as_posix() if script.is_relative_to(ROOT) else sys.argv[0]
    return shlex.join(["python", shown, *sys.argv[1:]])


_RECORDED: set[Path] = set()  # the files this process has already started its run in


def record(path: Path, entry: dict) -> None:
    """Add one figure to this process's run in the record file.

    The first figure of a process replaces the run an earlier process of the same command recorded; the file is
    rewritten whole through a temporary file, so a run cut short leaves a readable record.
    """
    runs = read_record(path)
    command = this_command()
    if path not in _RECORDED:
        runs = [run for run in runs if run["command"] != command]
        runs.append({"command": command, "figures": []})
        _RECORDED.add(path)
    run = next(run for run in runs if run["command"] == command)
    run["figures"].append(entry)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps({"runs": runs}, indent=1) + "\n", encoding="utf-8")
    temporary.replace(path)


def read_record(path: Path) -> list[dict]:
    """The runs recorded in a record file (none if it does not exist yet)."""
    if not path.exists():
        return []
    return json.loads(path.read_text(encoding="utf-8"))["runs"]


def median(values: list[float]) -> float:
    """The median (a benchmark's figure of several runs)."""
    return statistics.median(values)
