"""Every command of ``grader --help`` (and of ``grader gradebook``) answers bad input with one line and exit 2
(or a result), never a traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from autograder.cli import main

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "reference_solutions" / "assignment3"


def listed_commands(args: list[str]) -> list[str]:
    """The command names a group's ``--help`` lists."""
    text = CliRunner().invoke(main, [*args, "--help"]).output
    section = text.split("Commands:", 1)[1]
    return re.findall(r"^  ([a-z][a-z-]*)\s", section, flags=re.M)


def every_command() -> list[str]:
    """Every command of ``grader --help``, the ``gradebook`` subcommands spelt ``gradebook merge`` and so on."""
    return [c for c in listed_commands([]) if c != "gradebook"] + [f"gradebook {c}"
                                                                  for c in listed_commands(["gradebook"])]


def bad_inputs(tmp_path: Path) -> dict[str, list[list[str]]]:
    """For each command: invocations with an unknown assignment, a missing path, a file where a folder belongs,
    an empty folder, unknown or repeated tasks and impossible options."""
    missing, empty, file = tmp_path / "missing", tmp_path / "empty", tmp_path / "file.txt"
    empty.mkdir()
    file.write_text("not a gradebook\n")
    gradebook_out = str(tmp_path / "merged.db")
    return {
        "check": [["nope", str(REFERENCE)], ["assignment3", str(missing)], ["assignment3", str(file)],
                  ["assignment3", str(empty)], ["assignment3", str(REFERENCE), "--task", "nope"]],
        "grade": [["nope", str(REFERENCE)], ["assignment3", str(missing)], ["assignment3", str(file)],
                  ["assignment3", str(empty)], ["assignment3", str(REFERENCE), "--task", "nope"],
                  ["assignment3", str(REFERENCE), "-o", str(empty)]],
        "grade-all": [["nope", str(empty)], ["assignment3", str(missing)], ["assignment3", str(file)],
                      ["assignment3", str(empty), "--shard", "3/2"], ["assignment3", str(empty), "--shard", "x"],
                      ["assignment3", str(empty), "--gradebook", str(empty)]],
        "report": [[str(missing)], [str(file)], [str(empty)]],
        "gradebook merge": [[gradebook_out, str(missing)], [gradebook_out, str(file)], [gradebook_out, str(empty)]],
        "gradebook export": [[str(missing), "--csv", str(tmp_path / "x.csv")], [str(file), "--csv",
                                                                                  str(tmp_path / "y.csv")],
                             [str(empty), "--csv", str(tmp_path / "z.csv")], [str(file)]],
        "gradebook diff": [[str(missing), str(missing)], [str(file), str(file)], [str(empty), str(empty)]],
        "show": [["nope", str(REFERENCE)], ["assignment3", str(missing)], ["assignment3", str(file)],
                 ["assignment3", str(empty)], ["assignment3", str(REFERENCE), "--reference"]],
        "template": [["nope"]],
        "verify": [["nope"]],
        "release": [["nope"], ["assignment3", "--out", str(file), "--no-verify"]],
        "audit": [["nope"], ["assignment3", "--jobs", "0"]],
        "new": [["2fast"], ["assignment3"]],
    }


def assert_clean(result: Result, args: list[str]) -> None:
    """Exit 2 with one line, or a result; never an uncaught exception."""
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    assert not crashed, f"{args}: {result.exception!r}"
    assert "Traceback" not in result.output, args
    assert result.exit_code in (0, 1, 2), (args, result.exit_code, result.output)
    if result.exit_code == 2:
        lines = [line for line in result.output.strip().splitlines() if line.strip()]
        assert lines and (lines[-1].startswith("error: ") or lines[-1].startswith("Error: ")), (args, result.output)


def test_every_listed_command_has_bad_inputs_and_none_gives_a_traceback(tmp_path: Path) -> None:
    cases = bad_inputs(tmp_path)
    assert sorted(cases) == sorted(every_command()), "a command without bad-input cases: add it to bad_inputs"
    for command, invocations in cases.items():
        for extra in invocations:
            args = [*command.split(), *extra]
            result = CliRunner().invoke(main, args)
            assert_clean(result, args)
            assert result.exit_code == 2, (args, result.output)


@pytest.mark.slow
@pytest.mark.parametrize("extra", [["--task", "quiz"], ["--task", "kv_cache_bytes", "--task", "kv_cache_bytes"]])
def test_grade_with_only_the_quiz_or_a_task_twice_gives_a_result(extra: list[str], tmp_path: Path) -> None:
    report = tmp_path / "missing" / "folder" / "report.json"  # -o creates the folders it needs
    args = ["grade", "assignment3", str(REFERENCE), "--format", "json", "-o", str(report), *extra]
    result = CliRunner().invoke(main, args)
    assert_clean(result, args)
    assert result.exit_code == 0, result.output
    assert f"report written to {report}" in result.output
    graded = re.findall(r'"id": "([a-z_]+)"', report.read_text())
    assert graded.count(extra[1]) == 1, result.output
