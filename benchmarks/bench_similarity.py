"""Benchmark the similarity review: how long grouping a class's normalised code takes, by class size.

Run from the repository root::

    python benchmarks/bench_similarity.py --students 50 100 200

Each student's files are the assignment3 reference with its identifiers renamed and, for most students, a few
statements dropped or duplicated at random (so most pairs are near but not identical); the figure is the wall
time of ``similar_groups`` over every task, and the number of groups found.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.reports.classreport import template_sources  # noqa: E402
from autograder.reports.similarity import similar_groups  # noqa: E402
from autograder.spec.assignment import load_assignment  # noqa: E402


def _variant(text: str, rng: random.Random) -> str:
    lines = text.splitlines()
    for _ in range(rng.randint(0, 6)):
        index = rng.randrange(len(lines))
        if lines[index].strip().startswith(("return", "x = ", "out")) and rng.random() < 0.5:
            lines.insert(index, lines[index])
        elif lines[index].strip() and not lines[index].lstrip().startswith(("def ", "class ", "@")):
            lines[index] = re.sub(r"\b([a-z])\b", lambda m: m.group(1) * 2, lines[index])
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, nargs="+", default=[50, 100])
    args = parser.parse_args()
    spec = load_assignment("assignment3")
    reference = {f"{m}.py": (spec.reference / f"{m}.py").read_text() for m in spec.modules}
    tasks = {t.id: t.functions for t in spec.tasks}
    template = template_sources(spec)
    for count in args.students:
        rng = random.Random(count)
        sources = {f"s{i:04d}": {name: _variant(text, rng) for name, text in reference.items()} for i in range(count)}
        started = time.perf_counter()
        groups = similar_groups(sources, tasks, template)
        seconds = time.perf_counter() - started
        pairs = count * (count - 1) // 2 * len(tasks)
        print(f"{count:5d} students, {len(tasks)} tasks: {seconds:7.2f} s ({pairs} pairs, "
              f"{seconds / pairs * 1e6:.1f} us per pair), {len(groups)} groups")


if __name__ == "__main__":
    main()
