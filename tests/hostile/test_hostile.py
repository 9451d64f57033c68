"""Hostile submissions: student code that crashes, hangs, floods, escapes or cheats never breaks the grader.

Each case in tests/hostile/cases/*.toml is the reference solution with one hostile or broken part (text edits,
appended code or extra files) and states its exact outcome: the target task's status, score and messages; every
other graded task keeps full marks. For every case the grader also returns a valid report within a time bound,
leaves no process running, and the grader's own files stay unchanged. Cases whose outcome depends on an isolation
feature (``requires``) are skipped, with the reason, where the sandbox here lacks it (see docs/SECURITY.md).

The suite grades with its own small checks (tests/hostile/checks/) and short time limits, so it takes about a
minute on two cores; the real hidden checks are exercised by the CLI tests at the end.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pytest
import tomllib
import torch

from autograder.errors import SubmissionError
from autograder.grading import jobs as grading_jobs
from autograder.grading.grader import Grader
from autograder.reports.gradescope import render_gradescope
from autograder.reports.json_report import render_json
from autograder.reports.junit import render_junit
from autograder.reports.text import render_text
from autograder.protocol import MARKER_VARIABLE
from autograder.sandbox.tiers import TIERS
from autograder.spec.assignment import load_assignment
from autograder.submission.intake import prepare_submission

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CASES = sorted((HERE / "cases").glob("*.toml"))
CANARY = "hostile-canary-" + secrets.token_hex(16)  # exists in this process's memory only
SUITE_TIMEOUT = 6.0  # seconds per check for every task of the suite
CASE_SECONDS = 45.0  # a whole case, timeouts included, on a loaded 2-core machine
GUARDED = ("reference_solutions", "assignments")


def suite_assignment(root: Path):
    """assignment3 cut down to three tasks graded by the suite's own checks, with short limits and no mistakes."""
    base = load_assignment("assignment3")
    tasks = tuple(dataclasses.replace(base.task(task_id), checks=HERE / "checks" / f"{task_id}.py",
                                      timeout=SUITE_TIMEOUT)
                  for task_id in ("causal_mask", "attention", "sinusoidal_positions"))
    return dataclasses.replace(base, tasks=tasks, root=root, memory_mb=1024)


def fingerprint() -> dict[str, str]:
    digests = {}
    for top in GUARDED:
        for path in sorted((REPO / top).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digests[str(path.relative_to(REPO))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


@pytest.fixture(scope="module")
def grader(tmp_path_factory):
    before = fingerprint()
    shared = Grader(suite_assignment(tmp_path_factory.mktemp("suite-assignment")))
    markers = []
    try:
        yield shared
    finally:
        markers = [z.marker for z in shared.zygotes]
        shared.close()
    assert not processes_with_marker(markers), "worker processes survived Grader.close()"
    after = fingerprint()
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert changed == [], f"grader files changed during the hostile suite: {changed[:5]}"


@pytest.fixture(scope="module")
def features(grader) -> set[str]:
    return set(grader.zygotes[0].isolation["features"])


@pytest.fixture(scope="module")
def reference_report(grader):
    assignment = grader.assignment
    return grader.grade(assignment.reference, only={t.id for t in assignment.tasks} | {assignment.quiz.task_id})


REQUIREMENTS = {
    "files-hidden": lambda f: bool(f & {"landlock", "namespaces"}),
    "memory-protected": lambda f: bool(f & {"landlock", "namespaces", "uid"}) or os.geteuid() != 0,
    "signals-contained": lambda f: bool(f & {"landlock-scope", "namespaces", "uid"}),
    "network-blocked": lambda f: bool(f & {"landlock-net", "namespaces"}),
}


# ----------------------------------------------------------------------------------------------------------
# Helpers: building submissions, finding stray processes, a network listener
# ----------------------------------------------------------------------------------------------------------

def build(case: dict, destination: Path, substitutions: dict[str, str]) -> Path:
    """Copy the reference package and apply the case's edits, appended code and extra files."""
    package = destination / "assignment3"
    shutil.copytree(REPO / "reference_solutions" / "assignment3", package,
                    ignore=shutil.ignore_patterns("__pycache__"))

    def fill(text: str) -> str:
        for key, value in substitutions.items():
            text = text.replace("{" + key + "}", value)
        return text

    for edit in case.get("edit", []):
        path = package / edit["file"]
        text = path.read_text()
        assert text.count(edit["old"]) == 1, f"edit anchor of {edit['file']} not found exactly once: {edit['old']!r}"
        path.write_text(text.replace(edit["old"], fill(edit["new"])))
    for extra in case.get("append", []):
        path = package / extra["file"]
        path.write_text(path.read_text() + fill(extra["text"]))
    for extra in case.get("file", []):
        (package / extra["name"]).write_text(fill(extra["text"]))
    return package


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def processes_with_marker(markers: list[str]) -> list[int]:
    needles = {f"{MARKER_VARIABLE}={m}".encode() for m in markers if m}
    return [int(p) for p in os.listdir("/proc") if p.isdigit()
            and needles & set(_read(f"/proc/{p}/environ").split(b"\0"))]


def strays(grader: Grader, pattern: str | None = None) -> list[str]:
    """Processes a job left behind: carrying a worker's marker (other than the zygotes and the template they are
    forked from), running as a sandbox user, or whose command line contains ``pattern``."""
    allowed = {z.template.process.pid for z in grader.zygotes if z.template.process is not None}
    for zygote in grader.zygotes:
        if zygote.process is not None:
            allowed.add(zygote.process.pid)
            for pid in os.listdir("/proc"):
                status = _read(f"/proc/{pid}/status").decode(errors="replace") if pid.isdigit() else ""
                fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
                if fields.get("PPid", "").strip() == str(zygote.process.pid) and fields.get("NSpid", "").split()[-1:] == ["1"]:
                    allowed.add(int(pid))
    sandbox_uids = {z.isolation["uid"] for z in grader.zygotes if "uid" in z.isolation["features"]}
    found = []
    for pid in processes_with_marker([z.marker for z in grader.zygotes]):
        if pid not in allowed:
            found.append(f"{pid} (marker) {_read(f'/proc/{pid}/cmdline')[:80]!r}")
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        cmdline = _read(f"/proc/{pid}/cmdline").replace(b"\0", b" ")
        status = _read(f"/proc/{pid}/status").decode(errors="replace")
        uid_line = next((line for line in status.splitlines() if line.startswith("Uid:")), "Uid: -1")
        uid = int(uid_line.split()[1])
        if pattern and pattern.encode() in cmdline and b"pytest" not in cmdline:
            found.append(f"{pid} (pattern) {cmdline[:80]!r}")
        elif uid in sandbox_uids and "(zombie)" not in status:
            found.append(f"{pid} (sandbox uid {uid}) {cmdline[:80]!r}")
    return found


def wait_for_no_strays(grader: Grader, pattern: str | None, seconds: float = 3.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while True:
        found = strays(grader, pattern)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


class Listener:
    """A local TCP and UDP listener on one port that records whether anything reached it."""

    def __init__(self) -> None:
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.tcp.setblocking(False)
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.udp.setblocking(False)

    def contacts(self) -> list[str]:
        found = []
        try:
            connection, _ = self.tcp.accept()
            connection.close()
            found.append("tcp")
        except BlockingIOError:
            pass
        try:
            found.append(f"udp: {self.udp.recv(100)!r}")
        except BlockingIOError:
            pass
        return found

    def close(self) -> None:
        self.tcp.close()
        self.udp.close()


# ----------------------------------------------------------------------------------------------------------
# The suite
# ----------------------------------------------------------------------------------------------------------

def test_every_case_file_is_well_formed():
    assert len(CASES) >= 30
    for path in CASES:
        case = tomllib.loads(path.read_text())
        assert case.get("description"), path.name
        assert "target" in case and case.get("others"), path.name
        assert case.get("requires") in (None, *REQUIREMENTS), path.name


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_hostile_submission(path, grader, features, reference_report, tmp_path, monkeypatch):
    case = tomllib.loads(path.read_text())
    requirement = case.get("requires")
    if requirement and not REQUIREMENTS[requirement](features):
        pytest.skip(f"the sandbox here ({sorted(features)}) does not provide {requirement}")
    if case.get("import_timeout"):
        monkeypatch.setattr(grading_jobs, "IMPORT_TIMEOUT", float(case["import_timeout"]))
    listener = Listener() if case.get("listener") else None
    substitutions = {"PORT": str(listener.port)} if listener else {}
    submission = build(case, tmp_path / "submission", substitutions)
    decoy = None
    if case.get("tamper_report"):
        decoy = Path(tempfile.gettempdir()) / f"hostile-report-{secrets.token_hex(8)}.json"
        decoy.write_text('{"score": 1}')
    target, others = case["target"], case["others"]
    only = {target, *others} - {""}
    try:
        started = time.monotonic()
        report = grader.grade(submission, only=only)
        elapsed = time.monotonic() - started

        # The grader: within the time bound, a valid report in every format, scores that add up.
        assert elapsed < CASE_SECONDS, f"grading took {elapsed:.1f} s"
        data = json.loads(render_json(report))
        assert data["score"] == pytest.approx(sum(t["score"] for t in data["tasks"]))
        rendered = [render_json(report), render_gradescope(report), render_text(report), render_junit(report)]
        ElementTree.fromstring(rendered[-1])  # well-formed XML whatever the student's messages hold
        json.loads(rendered[1])
        for text in rendered:
            text.encode("utf-8")  # no lone surrogates
        assert report.environment["isolation"] in TIERS
        tasks = {t.id: t for t in report.tasks}
        assert set(tasks) == only

        # Every other task keeps full marks.
        for other in others:
            assert tasks[other].score == tasks[other].max_score, (other, tasks[other].feedback)

        # The target task: no unearned points, a clear status and message.
        expect = case.get("expect", {})
        if target:
            result = tasks[target]
            text = " ".join([result.feedback] + [f"{c.message} {c.hint}" for c in result.checks])
            wanted_score = expect.get("score", 0)
            if wanted_score == "full":
                wanted_score = result.max_score
            if target == "quiz" and "score" not in expect:
                reference_quiz = next(t for t in reference_report.tasks if t.id == "quiz")
                right = sum(c.status == "passed" for c in reference_quiz.checks)
                spoilt = sum(status != "passed" for status in expect.get("checks", {}).values())
                wanted_score = result.max_score * (right - spoilt) / len(reference_quiz.checks)
            assert result.score == pytest.approx(wanted_score), (result.score, text)
            if "status" in expect:
                assert result.status == expect["status"], text
            for message in expect.get("messages", []):
                assert message in text, (message, text)
            for feature, messages in expect.get("messages_if", {}).items():
                if feature in features:
                    for message in messages:
                        assert message in text, (message, text)
            for name, status in expect.get("checks", {}).items():
                check = next(c for c in result.checks if c.name == name)
                assert check.status == status, (name, check.message)
        for snippet in expect.get("report_excludes", []):
            assert not [text for text in rendered if snippet in text], (snippet, rendered[2][:2000])
        for note in expect.get("notes", []):
            assert any(note in n for n in report.notes), (note, report.notes)

        # Student output: captured, bounded, only ever shown as the student's own.
        assert len(report.student_output.encode()) <= grader.assignment.max_output_bytes + 100
        for snippet in expect.get("output_includes", []):
            assert snippet in report.student_output, (snippet, report.student_output[:2000])
        for snippet in expect.get("output_excludes", []):
            snippet = snippet.replace("{CANARY}", CANARY)
            assert snippet not in report.student_output, (snippet, report.student_output[:2000])

        # Nothing left running; no report tampered with later; the network was unreachable.
        if decoy is not None:
            written = tmp_path / "report.json"
            written.write_text(render_json(report))
            time.sleep(3.5)  # longer than the daemons wait before they strike
            assert decoy.read_text() == '{"score": 1}'
            assert json.loads(written.read_text()) == data
        assert wait_for_no_strays(grader, case.get("stray_pattern")) == []
        if listener is not None:
            time.sleep(0.2)
            contacts = listener.contacts()
            if "namespaces" not in features:  # Landlock alone governs TCP only
                contacts = [c for c in contacts if not c.startswith("udp")]
            assert contacts == []

        # This process's own torch state is untouched by anything the student did.
        assert torch.get_default_dtype() == torch.float32 and torch.is_grad_enabled()
    finally:
        if listener is not None:
            listener.close()
        if decoy is not None:
            decoy.unlink(missing_ok=True)


def test_the_grader_still_grades_the_reference_after_the_suite(grader, reference_report):
    report = grader.grade(REPO / "reference_solutions" / "assignment3", only={"causal_mask", "attention"})
    assert report.score == report.max_score, [(t.id, t.feedback) for t in report.tasks]
    assert reference_report.environment["isolation"] == grader.zygotes[0].isolation["tier"]


# ----------------------------------------------------------------------------------------------------------
# Untrusted archives
# ----------------------------------------------------------------------------------------------------------

def _zip(path: Path, members: list[tuple[str, bytes]], symlink: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, data in members:
            bundle.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo("assignment3/link.py")
            info.external_attr = (0o120777 << 16)
            bundle.writestr(info, symlink)
    return path


def _reference_members() -> list[tuple[str, bytes]]:
    folder = REPO / "reference_solutions" / "assignment3"
    return [(f"assignment3/{p.name}", p.read_bytes()) for p in sorted(folder.iterdir()) if p.is_file()]


@pytest.mark.parametrize("evil", ["../escaped.py", "assignment3/../../escaped.py", "/tmp/escaped.py",
                                  "..\\escaped.py", "C:/escaped.py"])
def test_zip_slip_archive_is_rejected_and_writes_nothing_outside(tmp_path, evil):
    archive = _zip(tmp_path / "submission.zip", _reference_members() + [(evil, b"print('escaped')")])
    scratch = tmp_path / "deep" / "scratch"
    scratch.mkdir(parents=True)
    with pytest.raises(SubmissionError, match="unsafe path"):
        prepare_submission(archive, load_assignment("assignment3"), scratch)
    assert not list(tmp_path.rglob("escaped.py"))
    assert not Path("/tmp/escaped.py").exists()


def test_zip_with_a_symbolic_link_is_rejected(tmp_path):
    archive = _zip(tmp_path / "submission.zip", _reference_members(), symlink="/etc/passwd")
    with pytest.raises(SubmissionError, match="symbolic link"):
        prepare_submission(archive, load_assignment("assignment3"), tmp_path / "scratch")


def test_a_zip_bomb_in_a_file_that_is_not_graded_is_never_read(tmp_path):
    archive = _zip(tmp_path / "submission.zip", _reference_members() + [("assignment3/big.bin", bytes(60 << 20))])
    assert archive.stat().st_size < 1 << 20
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    prepared = prepare_submission(archive, load_assignment("assignment3"), scratch)
    assert "big.bin (not graded; not read)" in prepared.ignored and not prepared.refused
    assert not list(scratch.rglob("big.bin"))


def test_a_zip_slip_through_the_grader_is_an_error_not_a_crash(grader, tmp_path):
    archive = _zip(tmp_path / "submission.zip", _reference_members() + [("../../escaped.py", b"x = 1")])
    with pytest.raises(SubmissionError, match="unsafe path"):
        grader.grade(archive, only={"causal_mask"})
    report = grader.grade(REPO / "reference_solutions" / "assignment3", only={"causal_mask"})
    assert report.score == report.max_score


# ----------------------------------------------------------------------------------------------------------
# The command line: a daemon that outlives grading cannot touch the report; weak isolation fails loudly
# ----------------------------------------------------------------------------------------------------------

def _cli(*args: str, env: dict[str, str] | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)


def test_cli_report_survives_a_daemon_and_nothing_is_left_running(tmp_path):
    text = (HERE / "cases" / "daemon_outlives_grading.toml").read_text()
    case = tomllib.loads(text.replace("300.456", "300.654"))  # its own marker: other tests may run in parallel
    submission = build(case, tmp_path / "submission", {})
    report_path = Path(tempfile.gettempdir()) / f"hostile-report-{secrets.token_hex(8)}.json"
    try:
        done = _cli("grade", "assignment3", str(submission), "--task", "causal_mask", "--task", "attention",
                    "--format", "json", "--output", str(report_path))
        assert done.returncode == 0, done.stderr
        written = report_path.read_text()
        data = json.loads(written)
        assert data["score"] == data["max_score"] == 14
        time.sleep(3.5)
        assert report_path.read_text() == written
        leftovers = [p for p in os.listdir("/proc") if p.isdigit()
                     and b"300.654" in _read(f"/proc/{p}/cmdline") and b"pytest" not in _read(f"/proc/{p}/cmdline")]
        assert leftovers == []
    finally:
        report_path.unlink(missing_ok=True)


def test_cli_require_isolation_fails_loudly_on_a_weaker_tier(tmp_path):
    report_path = tmp_path / "report.json"
    done = _cli("grade", "assignment3", str(REPO / "reference_solutions" / "assignment3"), "--task", "causal_mask",
                "--require-isolation", "landlock", "--output", str(report_path),
                env={"GRADER_MAX_ISOLATION": "rlimits"})
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "isolation level 'landlock' is required" in done.stderr
    assert not report_path.exists()
