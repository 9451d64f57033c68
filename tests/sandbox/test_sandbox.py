"""The sandbox itself: tiers, fallbacks, limits, tree kills, no state across jobs, untrusted job files, CSV safety."""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from autograder.errors import IsolationError
from autograder.probe import load_checks_file
from autograder.protocol import MARKER_VARIABLE
from autograder.sandbox import linux, tiers
from autograder.sandbox.host import Zygote, describe_isolation, new_scratch
from autograder.sandbox.limits import Limits
from autograder.sandbox.results import read_plain, sanitize_job_dir
from autograder.util.safety import csv_safe

REPO = Path(__file__).resolve().parents[2]

CHECKS = '''
import os, sys, tempfile
import torch
from autograder.probe import check


@check("t", weight=1)
def pollute(impl, ref, ctx):
    torch.set_default_dtype(torch.float64)
    torch.manual_seed(123)
    torch.set_num_threads(2)
    torch.set_grad_enabled(False)
    torch.add = lambda *args, **kwargs: "patched"
    impl.mod.SHARED.append("polluted")
    os.environ["POLLUTED"] = "1"
    for folder in (tempfile.gettempdir(), os.path.expanduser("~"), os.getcwd()):
        try:
            open(os.path.join(folder, "left-behind"), "w").close()
        except OSError:
            pass
    return {"done": True}


@check("t", weight=1)
def observe(impl, ref, ctx):
    leftovers = [f for f in (tempfile.gettempdir(), os.path.expanduser("~"), os.getcwd())
                 if os.path.exists(os.path.join(f, "left-behind"))]
    return {"dtype": str(torch.get_default_dtype()), "random": float(torch.rand(1)), "threads": torch.get_num_threads(),
            "grad": torch.is_grad_enabled(), "add": torch.add is torch._C._VariableFunctions.add or
            torch.add.__name__ == "add", "shared": len(impl.mod.SHARED), "env": os.environ.get("POLLUTED", ""),
            "files": ",".join(leftovers)}


@check("t", weight=1)
def sleepy_daemon(impl, ref, ctx):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            import time
            time.sleep(120)
        os._exit(0)
    import time
    time.sleep(120)


@check("t", weight=1)
def nap(impl, ref, ctx):
    import time
    time.sleep(0.8)
    return {"ok": True}


@check("t", weight=1)
def hang(impl, ref, ctx):
    import time
    time.sleep(120)


@check("t", weight=1)
def forge_steps(impl, ref, ctx):
    """Keep claiming that a new check starts, to stretch the wall-clock limit forever."""
    import time
    results = None
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").endswith("results.jsonl"):
                results = int(fd)
        except OSError:
            pass
    while True:
        os.write(results, b'{"start":"t.nap"}\\n')
        time.sleep(0.2)


@check("t", weight=1)
def chatty(impl, ref, ctx):
    for _ in range(1000):
        print("x" * 1000)
    return {"ok": True}


@check("t", weight=1)
def collector(impl, ref, ctx):
    import gc, weakref
    from autograder.sandbox.job import BLOCKED_TOP_LEVEL

    class Node:
        pass

    first, second = Node(), Node()
    first.other, second.other = second, first
    alive = weakref.ref(first)
    del first, second
    gc.collect()
    return {"cycle collected": alive() is None, "zygote frozen": gc.get_freeze_count() > 0, "enabled": gc.isenabled(),
            "trusted modules": ",".join(m for m in sys.modules if m.startswith(BLOCKED_TOP_LEVEL))}


@check("t", weight=1)
def snoop(impl, ref, ctx):
    found = {}
    for path in PATHS:
        try:
            with open(path, "rb") as handle:
                found[path] = "read " + str(len(handle.read()))
        except OSError as exc:
            found[path] = type(exc).__name__
    return found
'''


def make_package(root: Path) -> Path:
    work = root / "work"
    (work / "pkg").mkdir(parents=True)
    (work / "pkg" / "__init__.py").write_text("")
    (work / "pkg" / "mod.py").write_text("SHARED = []\n")
    return work


def run(zygote: Zygote, work: Path, checks: str | list[str], scratch: Path, seconds: float = 30, **job):
    """One job running the named check (or checks, in order), ``seconds`` of wall-clock time for each."""
    names = [checks] if isinstance(checks, str) else checks
    job_dir = scratch / f"job-{time.monotonic_ns()}"
    job_dir.mkdir()
    source = CHECKS.replace("PATHS", repr(job.pop("paths", [])))
    spec = {"package": "pkg", "workdir": str(work), "checks_source": source,
            "checks": [{"name": name, "seed": 7} for name in names]}
    limits = Limits(wall_seconds=seconds, cpu_seconds=int(seconds * len(names)) + 5, steps=len(names))
    return zygote.run(spec | job, limits, job_dir, 4096)


def run_steps(zygote: Zygote, work: Path, checks: list[str], scratch: Path, seconds: float):
    """``run`` several checks in one job; also return the job's wall-clock seconds."""
    assert zygote.isolation["tier"]  # wait here: a fresh zygote's start-up is not the job's time
    started = time.monotonic()
    result = run(zygote, work, checks, scratch, seconds)
    return result, time.monotonic() - started


def values(result) -> dict:
    record = result.records[0]
    assert record["status"] == "ok", record
    return {k: v.get("value") for k, v in record["values"].items()}


def marked(marker: str) -> list[int]:
    needle = f"{MARKER_VARIABLE}={marker}".encode()
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                if needle in handle.read().split(b"\0"):
                    found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.fixture(scope="module")
def scratch():
    folder = new_scratch()
    yield folder
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def zygote(scratch):
    worker = Zygote(scratch / "zygote")
    worker.start()
    yield worker
    worker.close()


@pytest.fixture(scope="module")
def work(scratch):
    return make_package(scratch / "package")


# ----------------------------------------------------------------------------------------------------------

def test_tiers_are_cumulative():
    assert tiers.tier_of([]) == "none"
    assert tiers.tier_of(["rlimits", "namespaces", "uid"]) == "rlimits"  # no Landlock: only the first tier
    assert tiers.tier_of(["rlimits", "landlock", "namespaces"]) == "namespaces"
    assert tiers.meets(["rlimits", "landlock", "namespaces", "uid"], "uid")
    assert not tiers.meets(["rlimits", "landlock", "uid"], "namespaces")
    with pytest.raises(IsolationError):
        tiers.meets(["rlimits"], "bubblewrap")


def test_isolation_is_detected_and_described(zygote):
    summary = zygote.isolation
    assert summary["tier"] in tiers.TIERS
    assert "rlimits" in summary["features"]
    assert summary["tier"] == tiers.tier_of(summary["features"])
    if os.geteuid() == 0 and linux.landlock_abi() >= 1:
        assert summary["tier"] in ("uid", "namespaces", "landlock"), summary


def test_no_state_leaks_from_one_job_to_the_next(zygote, work, scratch):
    assert values(run(zygote, work, "t.pollute", scratch)) == {"done": True}
    seen = values(run(zygote, work, "t.observe", scratch))
    fresh = values(run(zygote, work, "t.observe", scratch))
    assert seen == fresh  # the same seed gives the same draw: the global generator was reset too
    assert seen["dtype"] == "torch.float32"
    assert seen["threads"] == 1 and seen["grad"] is True and seen["add"] is True
    assert seen["shared"] == 0 and seen["env"] == ""
    if {"landlock", "namespaces"} & set(zygote.isolation["features"]):
        assert seen["files"] == ""  # a private temporary folder per job


def test_a_timeout_kills_the_job_with_its_detached_daemon(zygote, work, scratch):
    started = time.monotonic()
    result = run(zygote, work, "t.sleepy_daemon", scratch, seconds=2)
    assert result.timed_out and time.monotonic() - started < 15
    # what carries the marker now: the template, the zygote and its PID namespace's init (no daemon, no job)
    alive = {zygote.template.process.pid, zygote.process.pid, *_children(zygote.process.pid)}
    assert set(marked(zygote.marker)) <= alive
    assert values(run(zygote, work, "t.chatty", scratch)) == {"ok": True}  # the same worker goes on


def test_each_check_of_a_job_gets_its_own_wall_clock(zygote, work, scratch):
    result, _ = run_steps(zygote, work, ["t.nap", "t.nap", "t.nap"], scratch, seconds=1.5)
    assert not result.timed_out and result.done  # 2.4 s in all, under 1.5 s each
    assert [r["status"] for r in result.records] == ["ok", "ok", "ok"]


def test_a_hang_in_a_later_check_is_cut_at_its_own_limit(zygote, work, scratch):
    result, seconds = run_steps(zygote, work, ["t.nap", "t.hang", "t.nap"], scratch, seconds=1.5)
    assert result.timed_out and not result.done
    assert [r["check"] for r in result.records] == ["t.nap"]  # the first check's result survives
    assert result.started == ["t.nap", "t.hang"]
    assert seconds < 0.8 + 1.5 + 3  # killed 1.5 s after the hang began, not after the job's cap of 4.5 s


def test_forged_start_lines_buy_no_more_than_the_jobs_cap(zygote, work, scratch):
    result, seconds = run_steps(zygote, work, ["t.forge_steps", "t.nap"], scratch, seconds=1.5)
    assert result.timed_out
    assert 3.0 <= seconds < 3.0 + 3  # two checks of 1.5 s: the cap, however many starts the job claims


def _children(pid: int) -> list[int]:
    found = []
    for entry in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{entry}/stat") as handle:
                if int(handle.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
        except OSError:
            pass
    return found


def test_printed_output_is_captured_and_cut(zygote, work, scratch):
    result = run(zygote, work, "t.chatty", scratch)
    assert result.output_truncated and len(result.output) == 4096
    assert (result.job_dir / "output.txt").stat().st_size <= 300 * 1024


def test_the_job_cannot_read_the_grader_or_instructor_files(zygote, work, scratch):
    if not {"landlock", "namespaces"} & set(zygote.isolation["features"]):
        pytest.skip("the rlimits tier does not hide files")
    secrets = [str(REPO / "autograder" / "grading" / "grader.py"), str(REPO / "assignments" / "assignment3" / "assignment.toml"),
               str(REPO / "reference_solutions" / "assignment3" / "attention.py")]
    found = values(run(zygote, work, "t.snoop", scratch, paths=secrets))
    assert all(not outcome.startswith("read") for outcome in found.values()), found


def test_a_job_collects_its_own_garbage_beside_the_frozen_zygote_and_finds_no_trusted_module(zygote, work, scratch):
    assert values(run(zygote, work, "t.collector", scratch)) == {
        "cycle collected": True, "zygote frozen": True, "enabled": True, "trusted modules": ""}


def test_job_overhead_is_small(zygote, work, scratch):
    setups = [run(zygote, work, "t.chatty", scratch).setup_seconds for _ in range(8)]
    assert statistics.median(setups) < 0.5, setups  # typically 5-30 ms; generous for loaded CI machines


@pytest.mark.parametrize("tier", tiers.TIERS)
def test_every_weaker_tier_still_grades(tier, zygote, work, scratch):
    if not tiers.meets(zygote.isolation["features"], tier):
        pytest.skip(f"tier {tier} is not available here")
    worker = Zygote(scratch / f"zygote-{tier}", max_isolation=tier)
    try:
        worker.start()
        assert worker.isolation["tier"] == tier
        assert values(run(worker, work, "t.chatty", scratch)) == {"ok": True}
    finally:
        worker.close()


def test_a_lazy_zygote_is_waited_for_in_slices_and_only_ready_ones_describe_the_isolation(scratch):
    lazy, never = Zygote(scratch / "zygote-lazy"), Zygote(scratch / "zygote-never")
    assert not lazy.started and not lazy.ready
    try:
        assert lazy.wait_ready(0.01) is False  # starts it; importing torch takes far longer than 10 ms
        assert lazy.started and not lazy.ready
        deadline = time.monotonic() + 120
        while not lazy.wait_ready(0.5):
            assert time.monotonic() < deadline
        assert lazy.ready and lazy.wait_ready(0) is True
        assert describe_isolation([never, lazy])["tier"] == lazy.isolation["tier"]
        assert not never.started  # describing did not start the idle one
    finally:
        lazy.close()
        never.close()


HELPER_CHECKS = """
from _shared_numbers import answer
from autograder.probe import check


@check("h", weight=1)
def uses_helper(impl, ref, ctx):
    import sys
    return {"answer": answer(), "helper still importable": "_shared_numbers" in sys.modules}
"""


def test_checks_import_helper_modules_in_the_worker_and_the_parent(zygote, work, scratch, tmp_path):
    result = run(zygote, work, "h.uses_helper", scratch, checks_source=HELPER_CHECKS,
                 helper_sources={"_shared_numbers": "def answer():\n    return 42\n"})
    assert values(result) == {"answer": 42, "helper still importable": False}  # gone before student code runs

    (tmp_path / "h.py").write_text(HELPER_CHECKS)
    (tmp_path / "_shared_numbers.py").write_text("def answer():\n    return 42\n")
    namespace = load_checks_file(tmp_path / "h.py", "_test_helper_checks")
    assert namespace["answer"]() == 42 and "_shared_numbers" not in sys.modules


def test_a_required_tier_that_is_missing_refuses_to_run_anything(scratch, work):
    worker = Zygote(scratch / "zygote-weak", max_isolation="rlimits", required="landlock")
    try:
        with pytest.raises(IsolationError, match="'landlock' is required"):
            run(worker, work, "t.chatty", scratch)
    finally:
        worker.close()


def test_the_worker_dies_with_a_killed_grader(tmp_path):
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(REPO)!r})
        from pathlib import Path
        from autograder.sandbox.host import Zygote, new_scratch
        from autograder.sandbox.limits import Limits
        scratch = new_scratch()
        (scratch / "w" / "pkg").mkdir(parents=True)
        (scratch / "w" / "pkg" / "__init__.py").write_text("")
        (scratch / "j").mkdir()
        checks = "from autograder.probe import check\\n@check('t')\\ndef nap(impl, ref, ctx):\\n    import time\\n    time.sleep(300)\\n"
        zygote = Zygote(scratch / "z")
        zygote.start()
        zygote.isolation
        print(zygote.marker, flush=True)
        zygote.run({{"package": "pkg", "workdir": str(scratch / "w"), "checks_source": checks,
                     "checks": [{{"name": "t.nap", "seed": 1}}]}}, Limits(300, 300), scratch / "j", 100)
    """)
    grader = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    marker = grader.stdout.readline().strip()
    assert marker
    time.sleep(1.5)  # the job is running now
    assert len(marked(marker)) >= 2
    grader.send_signal(signal.SIGKILL)
    grader.wait()
    deadline = time.monotonic() + 10
    while marked(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marked(marker) == []


# ----------------------------------------------------------------------------------------------------------
# Untrusted job files
# ----------------------------------------------------------------------------------------------------------

def test_links_fifos_and_folders_in_a_job_folder_are_removed_before_reading(tmp_path):
    (tmp_path / "secret").write_text("root only")
    (tmp_path / "job").mkdir()
    job = tmp_path / "job"
    (job / "results.jsonl").symlink_to(tmp_path / "secret")
    os.mkfifo(job / "output.txt")
    os.link(tmp_path / "secret", job / "check_0.safetensors")
    (job / "extra").mkdir()
    (job / "fine.txt").write_text("ok")
    sanitize_job_dir(job)
    assert sorted(p.name for p in job.iterdir()) == ["fine.txt"]


def test_reading_a_job_file_never_follows_links_or_blocks(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "target").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    assert read_plain(tmp_path / "fifo", 10) is None
    assert read_plain(tmp_path / "link", 10) is None
    assert read_plain(tmp_path / "target", 10) == (b"x", 1)


# ----------------------------------------------------------------------------------------------------------
# CSV
# ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, safe", [
    ("=HYPERLINK(\"http://evil\")", "'=HYPERLINK(\"http://evil\")"),
    ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
    ("-2+3", "'-2+3"),
    ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
    ("\t=1", "'\t=1"),
    ("\r=1", "'\r=1"),
    ("  =1", "'  =1"),
    ("\u200b=1", "'\u200b=1"),
    ("\uff1d1+1", "'\uff1d1+1"),
    ("s1234567", "s1234567"),
    ("Ada Lovelace", "Ada Lovelace"),
    ("-3.5", "-3.5"),
    ("+4", "+4"),
    ("1e-3", "1e-3"),
    ("", ""),
    (None, ""),
    (12, "12"),
])
def test_csv_safe_defuses_formulas_and_keeps_numbers(text, safe):
    assert csv_safe(text) == safe


def test_csv_safe_cells_survive_a_csv_round_trip(tmp_path):
    import csv

    rows = [["=1+1", "feedback: -boom", "@x"], ["s1", "fine", "-1"]]
    path = tmp_path / "grades.csv"
    with open(path, "w", newline="") as handle:
        csv.writer(handle).writerows([[csv_safe(c) for c in row] for row in rows])
    with open(path, newline="") as handle:
        read = list(csv.reader(handle))
    assert all(not cell.startswith(("=", "+", "-", "@")) or cell == "-1" for row in read for cell in row)
    assert json.dumps(read)


def test_a_syntax_error_in_the_students_file_is_described_with_its_place_once(tmp_path):
    """str(SyntaxError) ends with "(positions.py, line 2)", and the record's ``where`` says the place too: the page
    and grading's notes said it twice ("unmatched ')' (positions.py, line 2) (assignment3/positions.py, line 2)")."""
    from autograder.sandbox.job import _describe_exception

    source = tmp_path / "assignment3" / "positions.py"
    source.parent.mkdir()
    source.write_text("x = 1\n)\n")
    try:
        compile(source.read_text(), str(source), "exec")
    except SyntaxError as exc:
        record = _describe_exception(exc, str(tmp_path))
    assert record["message"] == "unmatched ')'" and record["where"] == {"file": "assignment3/positions.py", "line": 2}
