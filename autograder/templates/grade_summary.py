"""Render a `grader grade --format json` report for GitHub: the job summary (Markdown) or, with --classroom, the
base64 result GitHub Classroom's autograding reporter reads (arguments: the report path, then the option;
or --check STATUS for the result of `grader check` alone)."""

import base64
import json
import os
import re
import sys

CELL_LIMIT = 300  # characters of one table cell; longer text keeps its whole first sentences


def shorten(text, limit=CELL_LIMIT):
    """Text that fits ``limit``: whole sentences while they fit, else whole words; never cut mid-word."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    kept = ""
    for sentence in re.split(r"(?<=[.!?;])\s+", text):
        if len(kept) + len(sentence) + 1 > limit - 2:
            break
        kept = f"{kept} {sentence}".strip()
    # Whole sentences that fill less than half the cell (often just "0 of 3 checks passed;"): whole words instead,
    # so the first problem shows.
    if len(kept) < limit // 2:
        kept = text[: limit - 2].rsplit(" ", 1)[0] if " " in text[: limit - 2] else text[: limit - 2]
    return kept + " …"


def cell(text):
    """One Markdown table cell: a single line with pipes escaped, shortened to whole sentences."""
    return shorten(text).replace("|", "\\|")


def report_link():
    """The link to this run (its artifacts hold the full report), when running in GitHub Actions."""
    server, repository, run = (os.environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    return f"{server}/{repository}/actions/runs/{run}" if server and repository and run else ""


def summary(report):
    """The summary's Markdown: the score, then one row per task, then a link to the full report."""
    lines = [f"## {report['assignment']}: {report['score']:g} / {report['max_score']:g}", "",
             "| task | score | status | feedback |", "| --- | ---: | --- | --- |"]
    shortened = False
    for task in report["tasks"]:
        feedback = cell(task["feedback"])
        shortened = shortened or feedback.endswith(" …")
        lines.append(f"| {cell(task['title'])} | {task['score']:g} / {task['max_score']:g} | {cell(task['status'])} "
                     f"| {feedback} |")
    if report.get("notes"):
        lines += ["", "Notes:"] + [f"- {cell(note)}" for note in report["notes"]]
    link = report_link()
    where = f"the `grade-report` artifact of [this run]({link})" if link else "the `grade-report` artifact"
    lines += ["", ("Some feedback is shortened (…); the" if shortened else "The") +
              f" full report, with every check and hint, is {where} (grade.json)."]
    return "\n".join(lines) + "\n"


_CLASSROOM_STATUS = {"passed": "pass", "error": "error", "timeout": "error"}


def classroom_result(report):
    """The result of one runner as GitHub Classroom's autograding reporter reads it (version 1)."""
    tests = [{"name": f"{task.get('id', task['title'])}: {task['title']}",
              "status": _CLASSROOM_STATUS.get(task["status"], "fail"),
              "score": task["score"],
              "message": shorten(task["feedback"]),
              "test_code": "",
              "filename": "",
              "line_no": 0,
              "execution_time": ""} for task in report["tasks"]]
    status = "pass" if all(t["status"] == "pass" for t in tests) else (
        "error" if any(t["status"] == "error" for t in tests) else "fail")
    return {"version": 1, "status": status, "max_score": report["max_score"], "tests": tests}


def encoded(result):
    """The result as the reporter's ``<RUNNER>_RESULTS`` variable holds it: base64 of its JSON."""
    return base64.b64encode(json.dumps(result).encode("utf-8")).decode("ascii")


def check_result(status):
    """The reporter's result for `grader check` alone (public tests, no points) from its exit status."""
    outcome = "pass" if status == 0 else ("fail" if status == 1 else "error")
    message = {"pass": "the public tests pass", "fail": "some public tests fail; see the job summary",
               "error": f"the public tests could not run (exit status {status}); see the job log"}[outcome]
    return {"version": 1, "status": outcome, "max_score": 0,
            "tests": [{"name": "public tests", "status": outcome, "score": 0, "message": message}]}


if __name__ == "__main__":
    if sys.argv[1] == "--check":
        sys.stdout.write(f"result={encoded(check_result(int(sys.argv[2])))}\n")
        sys.exit(0)
    with open(sys.argv[1], encoding="utf-8") as handle:
        data = json.load(handle)
    if sys.argv[2:] == ["--classroom"]:
        sys.stdout.write(f"result={encoded(classroom_result(data))}\n")
    else:
        sys.stdout.write(summary(data))
