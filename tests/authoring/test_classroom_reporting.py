"""GitHub Classroom: the workflow reports points the way Classroom's reporter reads them, fails on failing tests,
and its job summary never cuts a message mid-word."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.authoring.release import fill, template_values
from autograder.spec.assignment import Assignment

yaml = pytest.importorskip("yaml")

SCRIPT = Path(__file__).resolve().parents[2] / "autograder" / "templates" / "grade_summary.py"
REPORT = {"assignment": "assignment3", "score": 14.5, "max_score": 100, "notes": [],
          "tasks": [{"id": "causal_mask", "title": "Causal mask", "score": 4, "max_score": 4, "status": "passed",
                     "feedback": "all 3 checks passed"},
                    {"id": "attention", "title": "Attention", "score": 10.5, "max_score": 10, "status": "failed",
                     "feedback": ("The scores are not scaled by the square root of the key dimension. " * 3 +
                                  "Divide by sqrt(d_k) before the softmax; " + "then mask " * 40).strip()},
                    {"id": "gpt", "title": "GPT", "score": 0, "max_score": 20, "status": "timeout",
                     "feedback": "x" * 400}]}


def _run(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> str:
    (tmp_path / "grade.json").write_text(json.dumps(REPORT))
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=True,
                          cwd=tmp_path, env=env).stdout


def _decode(output: str) -> dict:
    assert output.startswith("result=") and output.endswith("\n") and output.count("\n") == 1
    return json.loads(base64.b64decode(output[len("result="):]))


def test_classroom_result_is_what_the_reporter_reads(tmp_path: Path) -> None:
    result = _decode(_run(tmp_path, "grade.json", "--classroom"))
    assert result["version"] == 1 and result["max_score"] == 100 and result["status"] == "error"
    assert [(t["name"], t["status"], t["score"]) for t in result["tests"]] == [
        ("causal_mask: Causal mask", "pass", 4), ("attention: Attention", "fail", 10.5), ("gpt: GPT", "error", 0)]
    assert sum(t["score"] for t in result["tests"]) == 14.5  # the reporter adds the tests' scores
    assert _decode(_run(tmp_path, "--check", "1"))["status"] == "fail"
    assert _decode(_run(tmp_path, "--check", "0"))["tests"][0]["status"] == "pass"
    assert _decode(_run(tmp_path, "--check", "0"))["max_score"] == 0


def test_summary_shortens_whole_sentences_and_links_the_full_report(tmp_path: Path) -> None:
    env = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "course/alice", "GITHUB_RUN_ID": "42",
           "PATH": "/usr/bin:/bin"}
    text = _run(tmp_path, "grade.json", env=env)
    row = next(line for line in text.splitlines() if line.startswith("| Attention"))
    feedback = row.split(" | ")[3].removesuffix(" |")
    assert feedback.endswith("softmax; …") and feedback.startswith("The scores are not scaled")
    assert len(feedback) <= 300
    long_word = next(line for line in text.splitlines() if line.startswith("| GPT")).split(" | ")[3]
    assert long_word.endswith(" … |") or long_word.endswith(" …")
    assert "(https://github.com/course/alice/actions/runs/42)" in text and "Some feedback is shortened" in text


@pytest.mark.parametrize("limit", [20, 37, 60, 300])
def test_shorten_never_cuts_a_word(limit: int) -> None:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from grade_summary import shorten
    finally:
        sys.path.remove(str(SCRIPT.parent))
    text = "Attention weights must sum to one over the keys. Check the softmax axis; it is the last one. " * 5
    short = shorten(text, limit)
    assert len(short) <= limit
    words = set(text.split())
    assert all(word in words for word in short.removesuffix(" …").split())


def test_shorten_keeps_the_first_problem_when_the_first_sentence_is_only_a_count() -> None:
    """A task's feedback starts with a short count ("0 of 3 checks passed;") and then one long sentence: keeping
    whole sentences only would show the count alone, so the words of the next one fill at least half the cell."""
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from grade_summary import shorten
    finally:
        sys.path.remove(str(SCRIPT.parent))
    text = ("0 of 3 checks passed; first problem: exact size with every argument given (batch and bytes_per_value "
            "not the defaults): kv_cache_bytes(3, 5, 7, 11, 13, 17): expected 510510, got 255255 (and 4 more "
            "problems) Hint: Your size is half the expected one: the cache stores a key and a value per layer, "
            "head and token, hence a factor 2 " + "and more " * 20)
    short = shorten(text)
    assert short.startswith("0 of 3 checks passed; first problem: exact size") and short.endswith(" …")
    assert 150 <= len(short) <= 300 and all(word in text.split() for word in short.removesuffix(" …").split())


def test_workflow_reports_to_classroom_and_fails_on_failing_tests(assignment3: Assignment) -> None:
    text = fill("grade.yml", template_values(assignment3))
    workflow = yaml.safe_load(text)
    assert workflow["permissions"] == {"checks": "write", "actions": "read", "contents": "read"}
    job = workflow["jobs"]["grade"]
    assert job["name"] == "Autograding Tests"  # the check run the reporter updates with the points
    steps = {step.get("id") or step.get("name") or step["uses"]: step for step in job["steps"]}
    grade = steps["grader"]["run"]
    assert 'grade_summary.py" grade.json --classroom >> "$GITHUB_OUTPUT"' in grade
    assert 'exit "$status"' in grade and "-gt 1" not in grade
    reporter = steps["Report to GitHub Classroom"]
    assert reporter["uses"].startswith("classroom-resources/autograding-grading-reporter@")
    assert reporter["with"] == {"runners": "grader"}
    assert reporter["env"] == {"GRADER_RESULTS": "${{ steps.grader.outputs.result }}"}  # <RUNNER>_RESULTS
    assert reporter["if"].startswith("always()")
    embedded = re.search(r"<<'PYTHON'\n(.*?)\nPYTHON\n", grade, flags=re.S).group(1)
    assert embedded == SCRIPT.read_text().rstrip("\n")
