"""Render a `grader grade --format json` report as a Markdown job summary (argument: the report path)."""

import json
import sys


def cell(text):
    """One Markdown table cell: a single line with pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")[:300]


def summary(report):
    """The summary's Markdown: the score, then one row per task."""
    lines = [f"## {report['assignment']}: {report['score']:g} / {report['max_score']:g}", "",
             "| task | score | status | feedback |", "| --- | ---: | --- | --- |"]
    for task in report["tasks"]:
        lines.append(f"| {cell(task['title'])} | {task['score']:g} / {task['max_score']:g} | {cell(task['status'])} "
                     f"| {cell(task['feedback'])} |")
    if report.get("notes"):
        lines += ["", "Notes:"] + [f"- {cell(note)}" for note in report["notes"]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as handle:
        sys.stdout.write(summary(json.load(handle)))
