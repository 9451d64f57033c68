"""Submission times and deadlines per student: nbgrader, Gradescope, GitHub Classroom, CSV files and extensions."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from autograder.batch.discover import read_gradescope_export
from autograder.errors import GraderError
from autograder.spec.late import parse_when
from autograder.util.safety import printable

NBGRADER_TIMESTAMP = "timestamp.txt"
GRADESCOPE_SUBMISSION_METADATA = "submission_metadata.json"
GIT_TIMEOUT = 10.0

# A time as nbgrader, Gradescope (Ruby's YAML) and ISO 8601 write it: date, time, any fraction, a zone name or offset.
_LOOSE_TIME = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:[.,](\d+))?\s*"
                         r"(Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?\s*$", re.IGNORECASE)


def parse_loose_time(text: str) -> datetime:
    """A timezone-aware time from the forms batch sources write; a time without a zone is UTC.

    Accepts e.g. ``2026-11-30 23:59:01.123456 UTC`` (nbgrader), ``2026-11-30 22:10:01.937640000 Z`` (Gradescope's
    YAML) and ``2026-11-30T23:59:01+01:00`` (ISO 8601).

    Raises:
        ValueError: If the text is not such a time.
    """
    match = _LOOSE_TIME.match(text)
    if not match:
        raise ValueError(f"{text.strip()[:60]!r} is not a time like 2026-11-30 23:59:01 UTC")
    day, clock, fraction, zone = match.groups()
    clock = clock if clock.count(":") == 2 else clock + ":00"
    micro = (fraction or "0")[:6].ljust(6, "0")
    moment = datetime.fromisoformat(f"{day}T{clock}.{micro}")
    if zone is None or zone.upper() in ("Z", "UTC", "GMT"):
        return moment.replace(tzinfo=timezone.utc)
    sign = 1 if zone[0] == "+" else -1
    digits = zone[1:].replace(":", "")
    offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
    return moment.replace(tzinfo=timezone(sign * offset))


def read_nbgrader_timestamp(path: Path) -> datetime | None:
    """The submission time nbgrader wrote into ``submitted/<student>/<assignment>/timestamp.txt``.

    Args:
        path: The ``timestamp.txt`` file, or the submission folder holding it.

    Returns:
        The time (timezone-aware; nbgrader writes UTC), or None when there is no such file or it is empty.

    Raises:
        GraderError: If the file holds something that is not a time.
    """
    path = Path(path)
    if path.is_dir():
        path = path / NBGRADER_TIMESTAMP
    if not path.is_file() or path.is_symlink():
        return None
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError as exc:
        raise GraderError(f"cannot read {path.name}: {exc.strerror or exc}") from None
    if not text:
        return None
    try:
        return parse_loose_time(text.splitlines()[0])
    except ValueError as exc:
        raise GraderError(f"{path.name}: {exc}") from None


def read_gradescope_submission_metadata(path: Path) -> tuple[datetime | None, datetime | None]:
    """``(submitted_at, due)`` from the autograder's ``/autograder/submission_metadata.json``.

    The due date is the latest of the assignment's ``due_date`` and any submitter's own
    ``users[].assignment.due_date`` (Gradescope's per-student extension).

    Raises:
        GraderError: If the file is not JSON or a time in it cannot be read.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GraderError(f"cannot read {Path(path).name} ({exc})") from None
    if not isinstance(data, dict):
        raise GraderError(f"{Path(path).name} is not a JSON object")
    submitted = _optional_time(data.get("created_at"), "created_at")
    dues = [_optional_time((data.get("assignment") or {}).get("due_date"), "assignment.due_date")]
    for user in data.get("users") or []:
        if isinstance(user, dict) and isinstance(user.get("assignment"), dict):
            dues.append(_optional_time(user["assignment"].get("due_date"), "users[].assignment.due_date"))
    known = [d for d in dues if d is not None]
    return submitted, max(known) if known else None


def _optional_time(value: Any, what: str) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        return parse_loose_time(str(value))
    except ValueError as exc:
        raise GraderError(f"submission metadata {what}: {exc}") from None


def read_gradescope_export_times(path: Path) -> dict[str, datetime]:
    """Each submission folder's ``:created_at:`` from a Gradescope export's ``submission_metadata.yml``.

    Raises:
        GraderError: If the file cannot be read or is not YAML.
    """
    times: dict[str, datetime] = {}
    for folder, entry in read_gradescope_export(Path(path)).items():
        try:
            times[folder] = parse_loose_time(entry.created_at)
        except ValueError:
            continue  # a folder without a readable time gets "no time recorded", like one without a time
    return times


def git_commit_time(folder: Path) -> datetime | None:
    """The committer time of a repository's last commit (a GitHub Classroom clone), or None without git history.

    Git runs with no system or global configuration, hooks disabled and no fsmonitor, so a student's repository
    configuration cannot make it run a program. The commit time is whatever the student's git recorded: a
    student can set it, so compare it with the push time GitHub shows when it matters.

    Raises:
        GraderError: If git is missing or fails on an existing repository.
    """
    folder = Path(folder)
    if not folder.is_dir() or not (folder / ".git").exists():
        return None
    with tempfile.TemporaryDirectory(prefix="grader-git-home-") as home:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
        command = ["git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=" + os.devnull, "-c",
                   "safe.directory=*", "--no-pager", "-C", str(folder), "log", "-1", "--format=%cI"]
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=GIT_TIMEOUT,
                                  stdin=subprocess.DEVNULL, check=False)
        except FileNotFoundError:
            raise GraderError("git is needed to read commit times of GitHub Classroom repositories") from None
        except subprocess.TimeoutExpired:
            raise GraderError(f"git took longer than {GIT_TIMEOUT:g} s to read {folder.name}'s last commit") from None
    if done.returncode != 0:
        if "does not have any commits" in done.stderr:
            return None
        raise GraderError(f"git cannot read {folder.name}'s last commit ({printable(done.stderr.strip())[:200]})")
    text = done.stdout.strip()
    return parse_when(text, "the last commit time") if text else None


def _read_csv(path: Path, what: str) -> list[dict[str, str]]:
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as exc:
        raise GraderError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    except csv.Error as exc:
        raise GraderError(f"{path} is not a readable CSV file ({exc})") from None
    return [{(k or "").strip().lower(): (v or "").strip() for k, v in row.items()} for row in rows]


def read_timestamps_csv(path: Path) -> dict[str, datetime]:
    """Submission times from a CSV with the columns ``student,submitted_at`` (ISO 8601 with a UTC offset).

    Raises:
        GraderError: If a column is missing, a student repeats, or a time cannot be read (with its line number).
    """
    times: dict[str, datetime] = {}
    for line, row in enumerate(_read_csv(path, "the timestamps file"), start=2):
        if "student" not in row or "submitted_at" not in row:
            raise GraderError(f"{path}: expected the columns student,submitted_at; found {','.join(row)}")
        if not row["student"]:
            continue
        if row["student"] in times:
            raise GraderError(f"{path} line {line}: student {row['student']!r} appears twice")
        try:
            times[row["student"]] = parse_when(row["submitted_at"], f"{path} line {line}: submitted_at")
        except ValueError as exc:
            raise GraderError(str(exc)) from None
    return times


def read_extensions_csv(path: Path, due: datetime | None) -> dict[str, datetime]:
    """Per-student deadlines from a CSV with ``student,due`` (ISO 8601) or ``student,extra_days`` columns.

    Args:
        path: The CSV file.
        due: The assignment's deadline (needed for ``extra_days``).

    Raises:
        GraderError: If the columns are wrong, a value cannot be read, or extra days are given without a deadline.
    """
    extended: dict[str, datetime] = {}
    for line, row in enumerate(_read_csv(path, "the extensions file"), start=2):
        if "student" not in row or ("due" not in row and "extra_days" not in row):
            raise GraderError(f"{path}: expected the columns student,due or student,extra_days; found "
                              f"{','.join(row)}")
        student = row["student"]
        if not student:
            continue
        if student in extended:
            raise GraderError(f"{path} line {line}: student {student!r} appears twice")
        try:
            if row.get("due"):
                extended[student] = parse_when(row["due"], f"{path} line {line}: due")
            elif row.get("extra_days"):
                if due is None:
                    raise ValueError(f"{path} line {line}: extra_days needs the assignment's deadline "
                                     f"([assignment] due or --due)")
                extended[student] = due + timedelta(days=_number(row["extra_days"], path, line))
            else:
                raise ValueError(f"{path} line {line}: give a due time or a number of extra_days for {student!r}")
        except ValueError as exc:
            raise GraderError(str(exc)) from None
    return extended


def _number(text: str, path: Path, line: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{path} line {line}: extra_days {text!r} is not a number") from None
    if value < 0:
        raise ValueError(f"{path} line {line}: extra_days {text!r} is negative")
    return value


def layout_time(layout: str, path: Path, gradescope_times: dict[str, datetime]) -> datetime | None:
    """The submission time a layout records for one entry (None: no time recorded).

    Args:
        layout: The resolved layout (``plain``, ``gradescope``, ``classroom``, ``nbgrader``).
        path: The entry's folder or zip.
        gradescope_times: ``read_gradescope_export_times`` of the export (gradescope layout).

    Raises:
        GraderError: If the layout's record exists but cannot be read.
    """
    if layout == "gradescope":
        name = path.name[:-4] if path.name.lower().endswith(".zip") else path.name
        return gradescope_times.get(name)
    if layout == "classroom":
        return git_commit_time(path)
    if layout == "nbgrader" or (path.is_dir() and (path / NBGRADER_TIMESTAMP).is_file()):
        return read_nbgrader_timestamp(path)
    return None
