"""Grade a whole class: find every student's submission, grade in parallel workers, record each in the gradebook."""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing
import os
import shutil
import signal
import statistics
import time
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Callable, TextIO

from . import __version__
from .assignment import Assignment
from .errors import GraderError, SubmissionError
from .gradebook import ERROR, GRADED, Gradebook, Outcome, SubmissionRow, export_csv, export_feedback
from .safety import printable
from .submission import submission_digest

LAYOUTS = ("auto", "plain", "gradescope", "classroom", "nbgrader")
GRADESCOPE_METADATA = "submission_metadata.yml"
WORKER_STARTUP_SECONDS = 180.0
MAX_STARTUP_FAILURES = 3
RAW_DIGEST_MAX_FILES = 5000
RAW_DIGEST_MAX_BYTES = 1 << 20

GraderFactory = Callable[[Assignment], Any]


# -- finding submissions --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    """One student's submission: the student id and the folder or zip holding their work."""

    student: str
    path: Path


def discover(root: Path, layout: str, assignment_name: str) -> tuple[list[Entry], list[str]]:
    """Find one submission per student in ``root``.

    Layouts: ``plain`` (a subfolder or ``.zip`` per student, named by the student id), ``gradescope`` (an
    unzipped "Export Submissions" folder: ``submission_<n>/`` folders and ``submission_metadata.yml``; the id
    is the submitter's SID, else e-mail, else name, group members joined by ``+``), ``classroom`` (GitHub
    Classroom's ``<assignment>-<username>`` folders; the id is the username) and ``auto`` (gradescope when
    the metadata file is present, plain otherwise).

    Returns:
        The entries sorted by student id, and the names of entries that were not used.

    Raises:
        GraderError: If the folder is missing, the layout unknown, or two entries claim the same student.
    """
    if not root.is_dir():
        raise GraderError(f"submissions folder not found: {root}")
    if layout not in LAYOUTS:
        raise GraderError(f"unknown layout {layout!r} (choose from {', '.join(LAYOUTS)})")
    if layout == "auto":
        layout = "gradescope" if (root / GRADESCOPE_METADATA).is_file() else "plain"
    if layout == "nbgrader":  # ROOT is an nbgrader course: submitted/<student>/<assignment>/
        from .nbgrader_course import discover as nbgrader_discover

        pairs, ignored = nbgrader_discover(root, assignment_name)
        return _unique(pairs), ignored
    candidates, ignored = _candidates(root)
    if layout == "gradescope":
        pairs = _gradescope_ids(root, candidates)
    elif layout == "classroom":
        pairs = _classroom_ids(candidates, assignment_name)
    else:
        pairs = [(_stem(p), p) for p in candidates]
    return _unique(pairs), ignored


def _candidates(root: Path) -> tuple[list[Path], list[str]]:
    used, ignored = [], []
    for path in sorted(root.iterdir()):
        if path.name.startswith(".") or path.name == "__MACOSX" or path.name == GRADESCOPE_METADATA:
            continue
        if path.is_symlink():
            ignored.append(f"{printable(path.name)} (a symbolic link)")
        elif path.is_dir() or (path.is_file() and path.suffix.lower() in (".zip", ".ipynb")):  # .ipynb: notebook.py
            used.append(path)
        else:
            ignored.append(f"{printable(path.name)} (neither a folder nor a .zip)")
    return used, ignored


def _stem(path: Path) -> str:
    if path.is_file() and path.suffix.lower() in (".zip", ".ipynb"):
        return path.name[: -len(path.suffix)]
    return path.name


def _unique(pairs: list[tuple[str, Path]]) -> list[Entry]:
    seen: dict[str, Path] = {}
    for student, path in pairs:
        student = printable(student)  # a folder name need not be UTF-8; ids end up in SQLite, CSV and reports
        if not student.strip():
            raise GraderError(f"cannot derive a student id from {path.name!r}")
        if student in seen:
            raise GraderError(f"two submissions for student {student!r}: {seen[student].name} and {path.name}")
        seen[student] = path
    return [Entry(student, seen[student]) for student in sorted(seen)]


def _gradescope_ids(root: Path, candidates: list[Path]) -> list[tuple[str, Path]]:
    metadata_path = root / GRADESCOPE_METADATA
    metadata = read_gradescope_metadata(metadata_path) if metadata_path.is_file() else {}
    pairs = []
    for path in candidates:
        submitters = metadata.get(_stem(path), [])
        ids = [_submitter_id(s) for s in submitters]
        ids = [i for i in ids if i]
        pairs.append(("+".join(sorted(ids)) if ids else _stem(path), path))
    return pairs


def _submitter_id(submitter: dict[str, Any]) -> str:
    for key in ("sid", "email", "name"):
        value = submitter.get(key)
        if value not in (None, ""):
            return str(value).strip()
    return ""


def read_gradescope_metadata(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Read Gradescope's ``submission_metadata.yml``: folder name to its submitters (``name``, ``sid``, ``email``).

    PyYAML is used when installed; otherwise a small reader handles the layout Gradescope writes.

    Raises:
        GraderError: If the file cannot be read.
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise GraderError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        return _parse_gradescope_metadata(text)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise GraderError(f"{path} is not valid YAML ({str(exc).splitlines()[0]})") from None
    result: dict[str, list[dict[str, Any]]] = {}
    for folder, info in (data or {}).items() if isinstance(data, dict) else []:
        if not isinstance(info, dict):
            continue
        submitters = info.get(":submitters") or info.get("submitters") or []
        result[str(folder)] = [{str(k).lstrip(":"): v for k, v in s.items()} for s in submitters
                               if isinstance(s, dict)]
    return result


def _parse_gradescope_metadata(text: str) -> dict[str, list[dict[str, Any]]]:
    """The fallback reader: top-level ``folder:`` keys, each with a ``:submitters:`` list of ``:key: value``."""
    result: dict[str, list[dict[str, Any]]] = {}
    folder, in_submitters, indent = None, False, 0
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped == "---":
            continue
        depth = len(line) - len(line.lstrip())
        if depth == 0:
            folder, in_submitters = _yaml_scalar(stripped.rstrip(":")), False
            result[folder] = []
        elif folder is not None and stripped.startswith(":submitters:"):
            in_submitters, indent = True, depth
        elif in_submitters and stripped.startswith("- "):
            result[folder].append({})
            _yaml_pair(stripped[2:], result[folder][-1])
        elif in_submitters and depth > indent and result[folder]:
            _yaml_pair(stripped, result[folder][-1])
        else:
            in_submitters = False
    return result


def _yaml_pair(text: str, target: dict[str, Any]) -> None:
    key, _, value = text.partition(": ")
    if key:
        target[key.strip().lstrip(":").rstrip(":")] = _yaml_scalar(value)


def _yaml_scalar(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _classroom_ids(candidates: list[Path], assignment_name: str) -> list[tuple[str, Path]]:
    names = [_stem(p) for p in candidates]
    prefix = classroom_prefix(names, assignment_name)
    return [(name[len(prefix):] if name.startswith(prefix) and len(name) > len(prefix) else name, path)
            for name, path in zip(names, candidates, strict=True)]


def classroom_prefix(names: list[str], assignment_name: str) -> str:
    """The ``<assignment>-`` prefix GitHub Classroom put before every username.

    It is ``<assignment_name>-`` when every folder starts with it, else the longest common prefix of all
    folder names cut after its last ``-`` (for a single folder: up to its first ``-``).
    """
    if not names:
        return ""
    if all(n.startswith(f"{assignment_name}-") for n in names):
        return f"{assignment_name}-"
    if len(names) == 1:
        head, dash, _ = names[0].partition("-")
        return head + dash
    common = os.path.commonprefix(names)
    return common[: common.rfind("-") + 1]


# -- sharding -------------------------------------------------------------------------------------------------

def parse_shard(text: str) -> tuple[int, int]:
    """Parse ``K/N`` (1 <= K <= N).

    Raises:
        GraderError: If the text is not a valid shard.
    """
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise GraderError(f"--shard must look like K/N (e.g. 2/4), not {text!r}") from None
    if not 1 <= k <= n:
        raise GraderError(f"--shard {text}: K must be between 1 and N")
    return k, n


def select_shard(entries: list[Entry], k: int, n: int) -> list[Entry]:
    """The K-th of N slices: students sorted by a hash of their id, every N-th from position K-1.

    Every student lands in exactly one shard, shard sizes differ by at most one, and the split depends only
    on the set of student ids (not on file order or machine).
    """
    ordered = sorted(entries, key=lambda e: (hashlib.sha256(e.student.encode()).hexdigest(), e.student))
    return sorted(ordered[k - 1::n], key=lambda e: e.student)


# -- what changed ---------------------------------------------------------------------------------------------

def assignment_fingerprint(assignment: Assignment) -> str:
    """A hash of everything that decides a grade besides the submission: tasks, points, checks, reference, key.

    A rerun re-grades a submission whose stored grade was computed with a different fingerprint (e.g. after
    a hidden check was fixed).
    """
    digest = hashlib.sha256()
    quiz = assignment.quiz
    header = {
        "grader": __version__, "name": assignment.name, "package": assignment.package, "seed": assignment.seed,
        "student_files": list(assignment.student_files), "memory_mb": assignment.memory_mb,
        "tasks": [[t.id, t.points, list(t.functions), list(t.uses), t.timeout] for t in assignment.tasks],
        "quiz": [quiz.task_id, quiz.points, quiz.answers_file, quiz.feedback] if quiz else None,
    }
    digest.update(json.dumps(header, sort_keys=True).encode())
    files = [(f"checks/{t.id}", t.checks) for t in assignment.tasks if t.checks is not None]
    files += _tree("hidden", assignment.root / "hidden") + _tree("reference", assignment.reference)
    if quiz:
        files += [("quiz/questions", quiz.questions_file), ("quiz/key", quiz.key_file)]
    for label, path in files:
        digest.update(label.encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"<missing>")
        digest.update(b"\0")
    return digest.hexdigest()


def _tree(label: str, folder: Path) -> list[tuple[str, Path]]:
    if not folder.is_dir():
        return []
    return [(f"{label}/{p.relative_to(folder).as_posix()}", p) for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts]


def raw_digest(path: Path) -> str:
    """A content hash of an unusable submission (a broken zip, no package), so an unchanged one is not retried.

    Bounded: at most RAW_DIGEST_MAX_FILES files and the first RAW_DIGEST_MAX_BYTES of each (plus its size).
    """
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    for file in files[:RAW_DIGEST_MAX_FILES]:
        name = b"" if file == path else file.relative_to(path).as_posix().encode()
        try:
            digest.update(name + b"\0" + str(file.stat().st_size).encode() + b"\0")
            with open(file, "rb") as handle:
                digest.update(handle.read(RAW_DIGEST_MAX_BYTES))
        except OSError:
            digest.update(b"<unreadable>")
    return "raw:" + digest.hexdigest()


# -- options and results --------------------------------------------------------------------------------------

def default_jobs() -> int:
    """One worker per usable CPU."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class BatchOptions:
    """How to run a batch.

    Attributes:
        jobs: Parallel grading workers.
        gradebook: The SQLite gradebook file.
        force: Re-grade every submission, changed or not.
        retry_errors: Re-grade unchanged submissions whose last attempt could not be graded.
        shard: ``(K, N)`` to grade only the K-th of N slices of the class.
        layout: How student ids are derived (see discover()).
        csv: Write the class CSV here afterwards.
        feedback: Write one markdown feedback file per student into this folder afterwards.
        submission_timeout: Seconds one submission may take before its worker is stopped (default: derived
            from the task timeouts).
        grader_factory: Builds the grader in each worker (default: ``Grader``); must be picklable.
    """

    jobs: int = field(default_factory=default_jobs)
    gradebook: Path = Path("gradebook.db")
    force: bool = False
    retry_errors: bool = False
    shard: tuple[int, int] | None = None
    layout: str = "auto"
    csv: Path | None = None
    feedback: Path | None = None
    submission_timeout: float | None = None
    grader_factory: GraderFactory | None = None


@dataclass
class BatchSummary:
    """What a batch did."""

    assignment: str
    root: Path
    gradebook: Path
    jobs: int
    selected: list[str] = field(default_factory=list)
    graded: list[tuple[str, Outcome]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    wall_seconds: float = 0.0
    rows: list[SubmissionRow] = field(default_factory=list)
    csv_rows: int | None = None
    feedback_files: int | None = None

    @property
    def errors(self) -> list[tuple[str, Outcome]]:
        """Submissions of this run that could not be graded."""
        return [(s, o) for s, o in self.graded if o.status == ERROR]


def submission_timeout(assignment: Assignment) -> float:
    """A generous bound on one submission's grading time: the import probe plus four times every task's timeout."""
    return 120.0 + 4.0 * sum(t.timeout for t in assignment.tasks)


# -- the worker process ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Job:
    """One submission to grade."""

    index: int
    student: str
    path: Path
    digest: str


def _default_grader(assignment: Assignment) -> Any:
    """A Grader with one zygote, started first so that its torch import overlaps with this process's own."""
    from .sandbox import new_scratch, start_zygotes

    scratch = new_scratch()
    zygotes = start_zygotes(1, scratch)
    try:
        from .grading import Grader  # imported in the worker only: the parent never loads torch

        grader = Grader(assignment, scratch=scratch, zygotes=zygotes)
        for zygote in zygotes:  # wait for its start-up here, not inside the first check's time limit
            getattr(zygote, "isolation", None)
        return grader
    except BaseException:
        for zygote in zygotes:
            zygote.close()
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def _worker_main(conn: Connection, assignment: Assignment, factory: GraderFactory | None, parent: int) -> None:
    """A grading worker: build one grader, then grade every job the parent sends until it sends None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGTERM, _exit_now)
    _die_with_parent()
    if os.getppid() != parent:
        return
    try:
        grader = (factory or _default_grader)(assignment)
    except BaseException as exc:  # noqa: BLE001 - report any failure to build the grader, then stop
        conn.send({"kind": "fatal", "message": _one_line(exc)})
        return
    try:
        scratch = getattr(grader, "scratch", None)
        conn.send({"kind": "ready", "pid": os.getpid(), "scratch": str(scratch) if scratch else None})
        while True:
            try:
                job = conn.recv()
            except (EOFError, OSError):
                break
            if job is None:
                break
            conn.send({"kind": "result", "index": job.index, "outcome": grade_one(grader, job.path, assignment)})
    except (BrokenPipeError, EOFError, OSError):
        pass
    finally:
        close = getattr(grader, "close", None)
        if close:
            close()


def _exit_now(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _die_with_parent() -> None:
    """Ask Linux to send SIGTERM when the parent dies (e.g. ``kill -9``), so no worker outlives its batch."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if isinstance(exc, GraderError) else f"{type(exc).__name__}: {text}"


def grade_one(grader: Any, path: Path, assignment: Assignment) -> Outcome:
    """Grade one submission with a constructed grader; any failure becomes an ``error`` outcome, never a raise."""
    started = time.monotonic()
    try:
        report = grader.grade(Path(path))
    except Exception as exc:  # noqa: BLE001 - one student's submission must never stop the batch
        message = str(exc) if isinstance(exc, GraderError) else \
            f"the grader failed on this submission ({_one_line(exc)})"
        return Outcome(ERROR, max_score=assignment.max_score, message=message,
                       seconds=round(time.monotonic() - started, 3), worker_rss_mb=_worker_rss_mb(grader))
    return Outcome(
        GRADED,
        score=report.score,
        max_score=report.max_score,
        seconds=report.seconds,
        check_seconds=round(sum(c.seconds for t in report.tasks for c in t.checks), 4),
        worker_rss_mb=_worker_rss_mb(grader),
        report=report.to_dict(),
    )


def _worker_rss_mb(grader: Any) -> float | None:
    """Peak resident memory of this worker plus its zygote (their VmHWM), in MB."""
    pids = [os.getpid()]
    for zygote in getattr(grader, "zygotes", None) or [getattr(grader, "zygote", None)]:
        process = getattr(zygote, "process", None)
        if process is not None and getattr(process, "pid", None):
            pids.append(process.pid)
    peaks = [peak_rss_mb(pid) for pid in pids]
    known = [p for p in peaks if p is not None]
    return round(sum(known), 1) if known else None


def peak_rss_mb(pid: int) -> float | None:
    """A process's peak resident set size (VmHWM) in MB, or None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, grandchildren, ...), read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, frontier = [], [pid]
    while frontier:
        nxt = [c for p in frontier for c in children.get(p, [])]
        found += nxt
        frontier = nxt
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL a process and everything below it (its zygote and the job it runs)."""
    for victim in [pid, *descendants(pid)]:
        try:
            os.kill(victim, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


# -- the parent: a pool of workers ----------------------------------------------------------------------------

class _Worker:
    """The parent's handle on one worker process."""

    def __init__(self, context: Any, assignment: Assignment, factory: GraderFactory | None) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, assignment, factory, os.getpid()),
                                       daemon=True, name="grader-worker")
        self.process.start()
        child.close()
        self.ready = False
        self.job: Job | None = None
        self.deadline = math.inf
        self.scratch: str | None = None

    def kill(self) -> None:
        """Kill the worker and its process tree, and remove the grader's scratch folder it can no longer clean."""
        if self.process.exitcode is None:  # not reaped yet, so the pid is still this worker's
            kill_tree(self.process.pid)
            self.process.join(5)
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def assign(self, job: Job, timeout: float) -> None:
        self.conn.send(job)
        self.job = job
        self.deadline = time.monotonic() + timeout + (0.0 if self.ready else WORKER_STARTUP_SECONDS)

    def stop(self, wait_seconds: float) -> None:
        try:
            self.conn.send(None)
        except (OSError, ValueError):
            pass
        self.process.join(wait_seconds)
        if self.process.is_alive():
            self.kill()
        self.conn.close()


class WorkerPool:
    """N worker processes, each holding one grader, fed one submission at a time.

    Args:
        assignment: The assignment (sent to each worker, which builds its own grader once).
        jobs: Number of workers.
        timeout: Seconds a submission may take before its worker is killed and replaced.
        factory: Builds the grader in each worker.
    """

    def __init__(self, assignment: Assignment, jobs: int, timeout: float, factory: GraderFactory | None) -> None:
        self.assignment = assignment
        self.jobs = jobs
        self.timeout = timeout
        self.factory = factory
        self.context = multiprocessing.get_context("spawn")
        self.workers: list[_Worker] = []
        self.startup_failures = 0

    def run(self, jobs: list[Job], on_result: Callable[[Job, Outcome], None], tick: Callable[[], None]) -> None:
        """Grade every job, calling ``on_result`` in this process as each one finishes.

        Raises:
            GraderError: If the workers cannot build a grader (e.g. hidden checks missing).
        """
        queue = deque(jobs)
        finished = False
        try:
            self.workers = [self._spawn() for _ in range(min(self.jobs, len(queue)))]
            while queue or any(w.job for w in self.workers):
                for worker in self.workers:
                    if worker.job is None and queue:
                        worker.assign(queue.popleft(), self.timeout)
                wait([w.conn for w in self.workers] + [w.process.sentinel for w in self.workers], timeout=1.0)
                survivors = []
                for worker in self.workers:
                    if self._service(worker, queue, on_result):
                        survivors.append(worker)
                    elif queue:
                        survivors.append(self._spawn())
                self.workers = survivors
                tick()
            finished = True
        finally:  # after an error or Ctrl-C, busy workers are killed: their submissions were not recorded
            self.close(wait_seconds=10.0 if finished else 0.5)

    def close(self, wait_seconds: float = 10.0) -> None:
        """Stop every worker (asking first, killing what does not stop)."""
        for worker in self.workers:
            try:
                worker.conn.send(None)
            except (OSError, ValueError):
                pass
        for worker in self.workers:
            worker.stop(wait_seconds)
        self.workers = []

    def _spawn(self) -> _Worker:
        return _Worker(self.context, self.assignment, self.factory)

    def _service(self, worker: _Worker, queue: deque[Job], on_result: Callable[[Job, Outcome], None]) -> bool:
        """Read a worker's messages; return False when it is gone and must be replaced."""
        dead = False
        while not dead and worker.conn.poll():
            try:
                message = worker.conn.recv()
            except (EOFError, OSError):
                dead = True
                break
            self._handle(worker, message, on_result)
        if dead or not worker.process.is_alive():
            self._buried(worker, queue, on_result)
            return False
        if worker.job is not None and time.monotonic() > worker.deadline:
            job = worker.job
            worker.kill()
            worker.job = None
            on_result(job, Outcome(ERROR, max_score=self.assignment.max_score,
                                   message=f"grading took longer than {self.timeout:g} s and was stopped",
                                   seconds=self.timeout))
            worker.conn.close()
            return False
        return True

    def _handle(self, worker: _Worker, message: Any, on_result: Callable[[Job, Outcome], None]) -> None:
        kind = message.get("kind") if isinstance(message, dict) else None
        if kind == "fatal":
            raise GraderError(f"the grading workers cannot start: {message.get('message')}")
        if kind == "ready":
            worker.ready = True
            worker.scratch = message.get("scratch") if isinstance(message.get("scratch"), str) else None
            if worker.job is not None:  # its first job starts now
                worker.deadline = time.monotonic() + self.timeout
        elif kind == "result" and worker.job is not None:
            job, worker.job, worker.deadline = worker.job, None, math.inf
            on_result(job, message["outcome"])

    def _buried(self, worker: _Worker, queue: deque[Job], on_result: Callable[[Job, Outcome], None]) -> None:
        worker.process.join(5)
        code = worker.process.exitcode
        worker.kill()
        worker.conn.close()
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        if not worker.ready:
            self.startup_failures += 1
            if worker.job is not None:
                queue.appendleft(worker.job)
            if self.startup_failures >= MAX_STARTUP_FAILURES:
                raise GraderError(f"the grading workers keep dying while starting ({how})")
            return
        if worker.job is not None:
            on_result(worker.job, Outcome(ERROR, max_score=self.assignment.max_score,
                                          message=f"the grading worker stopped unexpectedly ({how}) while "
                                                  f"grading this submission"))


# -- progress ------------------------------------------------------------------------------------------------

class Progress:
    """Progress on stderr: one redrawn bar on a terminal, one plain line per submission otherwise.

    Args:
        total: Submissions to grade.
        stream: Where to write (None: nowhere).
        jobs: Workers grading in parallel (for the ETA).
        tty: Force terminal (True) or plain (False) output; detected by default.
    """

    BAR = 24

    def __init__(self, total: int, stream: TextIO | None, jobs: int = 1, tty: bool | None = None) -> None:
        self.total = total
        self.jobs = max(1, min(jobs, total))
        self.busy_seconds = 0.0
        self.stream = stream
        self.tty = bool(stream is not None and (tty if tty is not None else _isatty(stream)))
        self.done = 0
        self.failures = 0
        self.started = time.monotonic()
        self._last_draw = 0.0

    def eta(self) -> str:
        """Remaining time as ``m:ss``: the mean grading time so far, times what is left, over the workers."""
        if not self.done:
            return "?"
        return _clock(self.busy_seconds / self.done * (self.total - self.done) / self.jobs)

    def update(self, student: str, outcome: Outcome) -> None:
        """Count one finished submission and show it."""
        self.done += 1
        self.failures += outcome.status == ERROR
        self.busy_seconds += outcome.seconds
        if self.stream is None:
            return
        if self.tty:
            self.draw(force=True)
            return
        what = (f"error: {outcome.message}" if outcome.status == ERROR
                else f"{outcome.score:g} / {outcome.max_score:g} in {outcome.seconds:.1f} s")
        self.stream.write(f"[{self.done}/{self.total}] {student}: {what} "
                          f"(failures {self.failures}, ETA {self.eta()})\n")
        self.stream.flush()

    def draw(self, force: bool = False) -> None:
        """Redraw the bar (at most a few times a second unless forced)."""
        if not self.tty or self.stream is None or (not force and time.monotonic() - self._last_draw < 0.25):
            return
        self._last_draw = time.monotonic()
        filled = int(self.BAR * self.done / self.total) if self.total else self.BAR
        bar = "#" * filled + "-" * (self.BAR - filled)
        self.stream.write(f"\r{self.done:>{len(str(self.total))}}/{self.total} [{bar}] failures {self.failures}"
                          f"  ETA {self.eta()}  elapsed {_clock(time.monotonic() - self.started)}  ")
        self.stream.flush()

    def finish(self) -> None:
        """End the bar's line."""
        if self.tty and self.stream is not None:
            self.draw(force=True)
            self.stream.write("\n")
            self.stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
        else f"{seconds // 60}:{seconds % 60:02d}"


# -- the batch ------------------------------------------------------------------------------------------------

def grade_all(assignment: Assignment, submissions: Path, options: BatchOptions | None = None,
              progress: TextIO | None = None) -> BatchSummary:
    """Grade every student's submission in ``submissions`` into the gradebook; resumable and parallel.

    Unchanged submissions already graded with the same setup are skipped (unless ``force``); each graded
    submission is committed on its own, so a killed batch loses nothing finished and a rerun does the rest.

    Args:
        assignment: The assignment (may be a subset of a manifest's tasks, e.g. via dataclasses.replace).
        submissions: Folder holding one submission per student.
        options: How to run (defaults: all CPUs, ``gradebook.db``).
        progress: Where progress goes, e.g. ``sys.stderr`` (default: nowhere).

    Returns:
        The summary.

    Raises:
        GraderError: If the folder, layout, shard or gradebook is unusable, or no grader can be built.
    """
    options = options or BatchOptions()
    if options.jobs < 1:
        raise GraderError("--jobs must be at least 1")
    started = time.monotonic()
    entries, ignored = discover(Path(submissions), options.layout, assignment.name)
    if options.shard:
        entries = select_shard(entries, *options.shard)
    summary = BatchSummary(assignment.name, Path(submissions), Path(options.gradebook), options.jobs,
                           selected=[e.student for e in entries], ignored=ignored)
    fingerprint = assignment_fingerprint(assignment)
    with Gradebook(Path(options.gradebook)) as book:
        jobs = _plan(book, assignment, fingerprint, entries, options, summary)
        bar = Progress(len(jobs), progress, options.jobs)
        if progress is not None:
            progress.write(f"grading {len(jobs)} of {len(entries)} submissions with "
                           f"{min(options.jobs, len(jobs)) if jobs else 0} workers "
                           f"({len(summary.skipped)} unchanged, skipped)\n")

        def record(job: Job, outcome: Outcome) -> None:
            try:
                book.record(assignment.name, fingerprint, job.student, job.digest, printable(job.path), outcome)
            except Exception as exc:  # noqa: BLE001 - a report the gradebook cannot store must not end the batch
                outcome = Outcome(ERROR, max_score=assignment.max_score, seconds=outcome.seconds,
                                  message=f"the gradebook could not store this report ({_one_line(exc)})")
                book.record(assignment.name, fingerprint, job.student, job.digest, printable(job.path), outcome)
            summary.graded.append((job.student, outcome))
            bar.update(job.student, outcome)

        if jobs:
            timeout = options.submission_timeout or submission_timeout(assignment)
            pool = WorkerPool(assignment, options.jobs, timeout, options.grader_factory)
            try:
                pool.run(jobs, record, bar.draw)
            finally:
                bar.finish()
        summary.wall_seconds = round(time.monotonic() - started, 2)
        selected = set(summary.selected)
        summary.rows = [r for r in book.current(assignment.name, with_reports=False) if r.student in selected]
        if options.csv:
            summary.csv_rows = export_csv(book, assignment.name, options.csv)
        if options.feedback:
            summary.feedback_files = export_feedback(book, assignment.name, options.feedback)
    return summary


def _plan(book: Gradebook, assignment: Assignment, fingerprint: str, entries: list[Entry],
          options: BatchOptions, summary: BatchSummary) -> list[Job]:
    """Hash each submission; skip what is already graded, record what cannot be read, queue the rest."""
    jobs = []
    for entry in entries:
        try:
            digest, problem = submission_digest(entry.path, assignment), None
        except Exception as exc:  # noqa: BLE001 - an unreadable submission is that student's error, not the batch's
            digest = raw_digest(entry.path)
            problem = printable(str(exc) if isinstance(exc, SubmissionError) else
                                f"cannot read this submission ({_one_line(exc)})")
        found = None if options.force else book.find(assignment.name, entry.student, digest, fingerprint)
        if found is not None and not (options.retry_errors and found.status == ERROR):
            if book.current_id(assignment.name, entry.student) != found.id:
                book.mark_current(assignment.name, entry.student, found.id)
            summary.skipped.append(entry.student)
        elif problem is not None:
            outcome = Outcome(ERROR, max_score=assignment.max_score, message=problem)
            book.record(assignment.name, fingerprint, entry.student, digest, printable(entry.path), outcome)
            summary.graded.append((entry.student, outcome))
        else:
            jobs.append(Job(len(jobs), entry.student, entry.path, digest))
    return jobs


# -- the final table ------------------------------------------------------------------------------------------

def render_summary(summary: BatchSummary) -> str:
    """The table printed when a batch ends: counts, scores, per-task means and pass counts, problems."""
    rows = summary.rows
    graded_rows = [r for r in rows if r.status == GRADED]
    now_graded = len(summary.graded) - len(summary.errors)
    lines = [f"{summary.assignment}: {len(summary.selected)} submissions in {summary.root}", ""]
    lines.append(f"  graded now       {now_graded}")
    lines.append(f"  unchanged        {len(summary.skipped)} (skipped; --force re-grades them)")
    lines.append(f"  could not grade  {len(summary.errors)}")
    if graded_rows:
        scores = [r.score for r in graded_rows]
        top = max(r.max_score for r in graded_rows)
        full = sum(1 for r in graded_rows if r.max_score and r.score >= r.max_score)
        lines.append(f"  scores           mean {statistics.fmean(scores):.2f} / {top:g}, median "
                     f"{statistics.median(scores):g}, {full} with full marks")
    per = f" ({summary.wall_seconds / now_graded:.2f} s per graded submission)" if now_graded else ""
    lines.append(f"  wall time        {summary.wall_seconds:g} s with {summary.jobs} workers{per}")
    lines += _task_table(graded_rows)
    if summary.errors:
        lines += ["", "could not grade:"] + [f"  {s}: {o.message}" for s, o in summary.errors[:20]]
        if len(summary.errors) > 20:
            lines.append(f"  ... and {len(summary.errors) - 20} more")
    if summary.ignored:
        lines += ["", f"not used: {', '.join(summary.ignored[:10])}" + (" ..." if len(summary.ignored) > 10 else "")]
    lines += ["", f"gradebook: {summary.gradebook}"]
    if summary.csv_rows is not None:
        lines.append(f"csv: {summary.csv_rows} students")
    if summary.feedback_files is not None:
        lines.append(f"feedback: {summary.feedback_files} files")
    return "\n".join(lines) + "\n"


def _task_table(rows: list[SubmissionRow]) -> list[str]:
    stats: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        for task in row.tasks:
            stats.setdefault(task["task"], []).append(task)
    if not stats:
        return []
    width = max(4, *(len(t) for t in stats))
    lines = ["", f"  {'task'.ljust(width)}  {'mean':>7}  {'max':>5}  passed"]
    for task, results in stats.items():
        mean = statistics.fmean(r["score"] for r in results)
        passed = sum(1 for r in results if r["status"] == "passed")
        lines.append(f"  {task.ljust(width)}  {mean:>7.2f}  {results[0]['max_score']:>5g}  {passed}/{len(results)}")
    return lines
