"""How many of an assignment's known mistakes its ``grader show`` figures make visible (a ✗ note or a placeholder).

Run from the repository root::

    python benchmarks/figures_vs_mistakes.py [ASSIGNMENT] [--tasks causal_mask,attention]

Each known mistake (``hidden/mistakes/*.toml``) is applied to the reference and its figures are drawn with two
shared sandboxed workers (about 10 s per mistake, more the first time a figure's known mistakes are run for the
diagnosis). A mistake counts as flagged when some figure has a ✗ note or could not be drawn, and as named when a
figure's diagnosis (the judge's, from the known mistakes) is given; "own" when it is the mistake's own hint. The
figures are not tests: they use the course's small fixed examples, so mistakes that only show at large
magnitudes, in error handling or in parts no figure draws (the block's residuals) stay unflagged, and the hidden
tests catch those. Prints one line per mistake, then the count per task.
"""

from __future__ import annotations

import argparse
import collections
import shutil
import tempfile
import time
from pathlib import Path

from autograder.show.panel import DRAWN
from autograder.show.render import render_figures
from autograder.show.run import start_workers, stop_workers
from autograder.spec.assignment import load_assignment
from autograder.spec.mutation import apply_mutation, load_mutations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("assignment", nargs="?", default="assignment3")
    parser.add_argument("--tasks", help="comma-separated task ids (default: every task)")
    args = parser.parse_args()
    spec = load_assignment(args.assignment)
    tasks = set(args.tasks.split(",")) if args.tasks else None
    mistakes = [m for m in load_mutations(spec, "mistakes") if tasks is None or m.task in tasks]
    counts: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0, 0])  # flagged, total, named, own
    zygotes = start_workers(spec, 2)
    try:
        for mistake in mistakes:
            work = Path(tempfile.mkdtemp(prefix="figures-vs-mistakes-"))
            try:
                started = time.monotonic()
                package = apply_mutation(spec.reference, mistake, work / spec.package)
                rendered = render_figures(spec, package, work / "figures", expected=False, zygotes=zygotes)
                shown = [f"{p.figure.name}: {text}" for p in rendered.panels for kind, text in p.notes if kind == "bad"]
                shown += [f"{p.figure.name}: not drawn ({p.reason[:60]})" for p in rendered.panels if p.status != DRAWN]
                named = {p.diagnosis for p in rendered.panels if p.diagnosis}
                counts[mistake.task][0] += bool(shown)
                counts[mistake.task][1] += 1
                counts[mistake.task][2] += bool(named)
                counts[mistake.task][3] += named == {mistake.hint}
                label = "own" if named == {mistake.hint} else "other" if named else "none"
                print(f"{'flagged' if shown else 'unseen '}  {mistake.task:22} {mistake.id:42} "
                      f"{time.monotonic() - started:5.1f} s  named: {label:5}  {shown[0][:80] if shown else ''}",
                      flush=True)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    finally:
        stop_workers(zygotes)
    print(f"{'task':22} flagged  named (own hint)")
    for task, (flagged, total, named, own) in sorted(counts.items()):
        print(f"{task:22} {flagged}/{total}    {named} ({own})")
    totals = [sum(c[i] for c in counts.values()) for i in range(4)]
    print(f"{'total':22} {totals[0]}/{totals[1]}    {totals[2]} ({totals[3]})")


if __name__ == "__main__":
    main()
