"""Confine a job before student code runs: hide files, drop privileges, Landlock, rlimits; and the trial checks."""

from __future__ import annotations

import errno
import importlib
import importlib.abc
import importlib.util
import io
import json
import os
import signal
import socket
import sys
import tempfile
from typing import Any

import torch

from autograder.errors import TrialFailed
from autograder.sandbox import linux
from autograder.sandbox.linux import prctl_quietly
from autograder.sandbox.plan import Plan
from autograder.sandbox.procfs import threads_of_user
from autograder.util.paths import CHECKOUT, PACKAGE_DIR

try:
    import resource
except ImportError:  # Windows: no resource limits (the runtime without fork says so: tier none)
    resource = None  # type: ignore[assignment]

PRIVATE_PLACES = ("/tmp", "/var/tmp", "/dev/shm", "/root", "/home", "/run", "/srv")


SYSTEM_READ = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc")


PROC_READ = ("/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/sys/devices/system/cpu")


DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


class CappedText(io.TextIOBase):
    """A text stream that writes at most ``limit`` bytes to ``fd`` and silently counts the rest."""

    def __init__(self, fd: int, limit: int) -> None:
        self._fd = fd
        self._left = limit
        self.dropped = 0

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._fd

    def flush(self) -> None:
        return None

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self._left <= 0:
            self.dropped += len(text)
            return len(text)
        data = text.encode("utf-8", errors="replace")
        chunk = data[: self._left]
        if len(chunk) < len(data):
            self.dropped += len(data) - len(chunk)
            chunk += b"\n[further output dropped by the grader]\n"
            self._left = 0
        else:
            self._left -= len(chunk)
        try:
            while chunk:
                chunk = chunk[os.write(self._fd, chunk):]
        except OSError:
            self._left = 0
        return len(text)


def read_payload(job: dict[str, Any]) -> dict[str, Any]:
    """The job's private payload (checks and reference as compiled code), read before any restriction."""
    if job.get("trial"):
        return {}
    with open(job["payload"], "rb") as handle:
        return json.loads(handle.read())


def open_outputs(job_dir: str, checks: int) -> dict[str, Any]:
    """Open the job's output files now, so the sandboxed job needs no access to the job folder."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)

    def create(name: str) -> int:
        fd = os.open(os.path.join(job_dir, name), flags, 0o600)
        os.set_inheritable(fd, False)
        return fd

    return {"output": create("output.txt"), "results": create("results.jsonl"), "stack": create("stack.txt"),
            "tensors": {index: create(f"check_{index}.safetensors") for index in range(checks)}}


def open_fds() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 256))


def enter_sandbox(job: dict[str, Any], plan: Plan, limits: dict[str, int]) -> str:
    """Hide, restrict and limit this process; return its private temporary folder."""
    workdir = job["workdir"]
    address_space = _current_address_space()
    if plan.namespaces:
        linux.make_mounts_private()
        linux.mount_proc()
        keep = plan.keep + [workdir]
        places = [p for p in PRIVATE_PLACES if os.path.isdir(p) and not os.path.islink(p)]
        masks = sorted({os.path.realpath(p) for p in places} | set(plan.protected), key=lambda p: p.count("/"))
        for mask in masks:
            if not os.path.isdir(mask):
                continue  # hidden already by an outer mask
            writable = mask == "/tmp"
            size = str(max(limits["file_bytes"] * 2, 1 << 24)) if writable else "1m"
            linux.expose_only(mask, keep, writable=writable, size=size)
        tmp = "/tmp"
    else:
        tmp = os.path.join(workdir, ".tmp")
        os.makedirs(tmp, mode=0o700, exist_ok=True)
        if "uid" in plan.features:
            os.chown(tmp, plan.uid, plan.gid)
    processes = int(limits.get("processes", 64))
    if not plan.root and not plan.namespaces and hasattr(os, "getuid"):
        processes += threads_of_user(os.getuid())  # RLIMIT_NPROC counts every thread of the user
    if "uid" in plan.features:
        linux.drop_to_user(plan.uid, plan.gid)
    elif plan.root or plan.namespaces:
        linux.drop_capabilities()
    if linux.LINUX:
        linux.prctl(linux.PR_SET_NO_NEW_PRIVS, 1)
    prctl_quietly(linux.PR_SET_DUMPABLE, 1)  # our own /proc/self stays readable to us
    prctl_quietly(linux.PR_SET_PDEATHSIG, signal.SIGKILL)  # again: changing the user cleared it
    if "landlock" in plan.features:
        read = plan.keep + list(SYSTEM_READ) + list(PROC_READ) + [workdir]
        linux.landlock_restrict(read=read, write=[tmp], devices=DEVICES, abi=plan.abi)
    _apply_limits(limits, address_space, processes if "nproc" in plan.features else 0)
    os.environ.update({"HOME": tmp, "TMPDIR": tmp, "USER": "student", "LOGNAME": "student"})
    tempfile.tempdir = None
    os.chdir(workdir)
    return tmp


def _apply_limits(limits: dict[str, int], address_space: int, processes: int) -> None:
    if resource is None:
        return
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails with EFBIG instead of killing us
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_bytes"], limits["file_bytes"]))
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_seconds"], limits["cpu_seconds"] + 1))
    _, nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
    cap = 1024 if nofile == resource.RLIM_INFINITY else min(1024, nofile)
    resource.setrlimit(resource.RLIMIT_NOFILE, (cap, cap))
    if limits.get("address_space_bytes") and address_space:  # unknown without /proc (macOS): left alone
        budget = address_space + limits["address_space_bytes"]
        resource.setrlimit(resource.RLIMIT_AS, (budget, budget))
    if processes:
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))


def _current_address_space() -> int:
    """This process's address space in bytes (0 where there is no /proc)."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def trial_checks(plan: Plan, job: dict[str, Any], tmp: str, results: Any) -> None:
    """What a trial job verifies after the setup: the job can work, and each feature really protects."""
    why = ""
    try:
        fresh = next(m for m in ("colorsys", "wave", "sndhdr", "xdrlib", "this") if m not in sys.modules)
        importlib.import_module(fresh)
        _require(float(torch.ones(3).sum()) == 3.0, "torch does not compute")
        with tempfile.NamedTemporaryFile(dir=tmp) as handle:
            handle.write(b"x" * 1000)
        sys.path.insert(0, job["workdir"])
        importlib.import_module("trialpkg.mod")
        samples = [s for s in plan.config.get("protected_samples", [])
                   if not any(linux.inside(s, kept) for kept in plan.keep)]
        if plan.namespaces:
            _require(os.getppid() == 1, "the zygote is not PID 1 of its own PID namespace")
            if "landlock" not in plan.features:
                visible = {int(p) for p in os.listdir("/proc") if p.isdigit()}
                _require(visible <= {1, os.getpid()}, f"other processes are visible: {sorted(visible)[:5]}")
            for sample in samples:
                _require(not os.path.exists(sample), f"{sample} is still visible")
            with socket.socket() as sock:
                sock.settimeout(1)
                refused = sock.connect_ex(("127.0.0.1", 9))
            _require(refused in (errno.ENETUNREACH, errno.EACCES, errno.EPERM), f"network reachable ({refused})")
        if "uid" in plan.features:
            _require(os.getuid() == plan.uid, "still running as root")
        if "landlock" in plan.features:
            own = [os.path.join(PACKAGE_DIR, "sandbox", "job.py")] if CHECKOUT else []  # a wheel's: no secret
            for sample in samples + own:
                try:
                    with open(sample, "rb"):
                        pass
                except FileNotFoundError:
                    continue
                except PermissionError:
                    continue
                raise TrialFailed(f"{sample} is readable under Landlock")
    except BaseException as exc:  # noqa: BLE001
        why = f"{type(exc).__name__}: {exc}"
    results.write(json.dumps({"trial": "failed", "why": why} if why else {"trial": "ok"}) + "\n")
    results.flush()


def _require(condition: bool, why: str) -> None:
    """Fail the trial unless ``condition`` holds (explicit, so the check survives ``python -O``)."""
    if not condition:
        raise TrialFailed(why)
