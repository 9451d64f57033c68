"""The untrusted side: a pre-imported zygote forks one sandboxed process per job to run probes on student code.

Started by ``autograder.sandbox`` as ``python -I`` (no user site, no environment variables, no current folder on the
path) through ``autograder.isolation.boot``, which makes the zygote PID 1 of its own PID namespace where the kernel
allows it. The zygote imports torch once and never runs student code. At start it reads a configuration line, tries
each isolation feature in a throw-away trial job and reports the features that work (``autograder.isolation``
names the tiers). Then, for each job read from stdin, it forks one process that

* reads the job's private payload file, opens its output files, enters new mount, network, IPC and UTS namespaces,
  hides the grader's files and other private places behind empty mounts, drops to a separate user (root) or drops
  every capability, restricts itself with Landlock and applies rlimits -- all *before* any student code runs;
* imports the student's package (the reference substituted for what the task builds on), runs the probes and
  writes plain results (JSON lines plus safetensors files).

When the job ends, or when the grader sends ``kill`` (wall-clock limit), the zygote kills every other process in
its PID namespace with ``kill(-1)``; without a PID namespace it is a child subreaper and kills what is left of the
job's tree. If a sandbox feature that the trial found working fails for a real job, the job fails closed: no
student code runs.
"""

from __future__ import annotations

import errno
import importlib
import importlib.abc
import importlib.util
import io
import json
import marshal
import os
import resource
import selectors
import signal
import socket
import sys
import tempfile
import time
import traceback
import types
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save as save_safetensors

from autograder import isolation
from autograder import probe as probe_api
from autograder.transport import dumps_record, encode_outputs

REFERENCE_PACKAGE = "_grader_reference"
CHECKS_MODULE = "_grader_checks"
BLOCKED_TOP_LEVEL = ("autograder.sandbox", "autograder.grading", "autograder.reference", "reference_solutions",
                     "assignments", "student_template", "_reference_", "_mistake_")
PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)
EXIT_SANDBOX_FAILED = 70
PRIVATE_PLACES = ("/tmp", "/var/tmp", "/dev/shm", "/root", "/home", "/run", "/srv")
SYSTEM_READ = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc")
PROC_READ = ("/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/sys/devices/system/cpu")
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


# ----------------------------------------------------------------------------------------------------------
# Isolation plan: what this machine allows, decided once by trial jobs
# ----------------------------------------------------------------------------------------------------------

class Plan:
    """The isolation features applied to every job, and the paths they need.

    Attributes:
        features: Tier names in force (see autograder.isolation.TIERS) plus details (``landlock-net``,
            ``landlock-scope``, ``nproc``).
        uid, gid: The unprivileged user jobs run as (root only).
        protected: Folders the job must not see (the grader, instructor material, scratch folders).
        keep: Folders of the Python installation a job needs to read (kept visible inside hidden places).
    """

    def __init__(self, config: dict[str, Any], pidns: bool = False) -> None:
        self.config = config
        self.pidns = pidns
        self.root = os.geteuid() == 0
        self.uid = int(config.get("uid", 60000))
        self.gid = int(config.get("gid", self.uid))
        self.protected = sorted({os.path.realpath(p) for p in config.get("protected", [])})
        self.keep = _python_paths(self.protected)
        self.abi = isolation.landlock_abi()
        self.features: set[str] = {"rlimits"}
        self.notes: dict[str, str] = {}

    @property
    def namespaces(self) -> bool:
        return "namespaces" in self.features

    def summary(self) -> dict[str, Any]:
        return {"features": sorted(self.features), "tier": isolation.tier_of(self.features), "notes": self.notes,
                "uid": self.uid if "uid" in self.features else os.geteuid(), "landlock_abi": self.abi}

    def detect(self) -> None:
        """Try each feature on top of the ones that already work, keeping those whose trial job passes."""
        allowed = isolation.TIERS[: isolation.TIERS.index(self.config.get("max_tier", "uid")) + 1]
        candidates = [t for t in ("namespaces", "uid", "landlock") if t in allowed]
        for feature in candidates:
            if feature == "uid" and not self.root:
                self.notes["uid"] = "the grader does not run as root"
                continue
            if feature == "namespaces" and not self.pidns:
                self.notes.setdefault("namespaces", "the worker could not enter a PID namespace")
                continue
            if feature == "landlock" and self.abi < 1:
                self.notes["landlock"] = "Landlock is not available in this kernel"
                continue
            self.features.add(feature)
            problem = _trial(self)
            if problem:
                self.features.discard(feature)
                self.notes[feature] = problem
        if "landlock" in self.features:
            if self.abi >= 4:
                self.features.add("landlock-net")
            if self.abi >= 6:
                self.features.add("landlock-scope")
        if "uid" in self.features or not self.root:
            self.features.add("nproc")  # RLIMIT_NPROC is ignored for root


def _python_paths(protected: list[str]) -> list[str]:
    """The folders of the Python installation and its packages (never the grader's own folder)."""
    import sysconfig

    candidates = [p for p in sys.path if p and os.path.isdir(p)]
    candidates += [sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    libdir = sysconfig.get_config_var("LIBDIR")
    if libdir:
        candidates.append(libdir)
    keep = set()
    for path in candidates:
        real = os.path.realpath(path)
        if real == PACKAGE_ROOT or not os.path.isdir(real):
            continue
        if any(isolation._inside(p, real) for p in protected + [PACKAGE_ROOT]):
            continue  # a folder that contains the grader or instructor material is never exposed whole
        keep.add(real)
    return sorted(keep)


def _trial(plan: Plan) -> str:
    """Run one throw-away job with the plan's features; return '' if everything worked, else why not."""
    config = plan.config
    job = {"trial": True, "workdir": config["trial_workdir"], "job_dir": config["trial_job_dir"],
           "limits": {"cpu_seconds": 20, "address_space_bytes": 1 << 30, "file_bytes": 1 << 22,
                      "processes": 64, "output_bytes": 1 << 16}}
    for name in os.listdir(job["job_dir"]):
        os.unlink(os.path.join(job["job_dir"], name))
    try:
        outcome = _run_one(job, plan, report=None, deadline=60.0)
    except Exception as exc:  # noqa: BLE001 - a trial that cannot even start means the feature is unusable
        return f"{type(exc).__name__}: {exc}"
    try:
        lines = Path(job["job_dir"], "results.jsonl").read_text().splitlines()
        record = json.loads(lines[-1]) if lines else {}
    except (OSError, ValueError):
        record = {}
    if record.get("trial") == "ok":
        return ""
    return str(record.get("why") or outcome.get("setup_error") or f"trial job ended with {outcome['exit']}")[:300]


# ----------------------------------------------------------------------------------------------------------
# Zygote
# ----------------------------------------------------------------------------------------------------------

class _Stdin:
    """Unbuffered line reader on fd 0 (so waiting for a job can also watch for commands and the grader leaving)."""

    def __init__(self) -> None:
        self.buffer = b""

    def readline(self) -> bytes:
        while b"\n" not in self.buffer:
            chunk = os.read(0, 1 << 16)
            if not chunk:
                rest, self.buffer = self.buffer, b""
                return rest
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line + b"\n"


_STDIN = _Stdin()


def main(config: dict[str, Any] | None = None, pidns: bool = False, note: str = "") -> int:
    """Detect the isolation features, then serve jobs until stdin closes (see autograder.isolation.boot)."""
    torch.set_num_threads(1)
    sys.dont_write_bytecode = True
    _prctl_quietly(isolation.PR_SET_DUMPABLE, 0)  # the grader's side: no ptrace, no /proc/<pid>/mem by students
    if not pidns:
        _prctl_quietly(isolation.PR_SET_CHILD_SUBREAPER, 1)
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    if config is None:
        config = json.loads(_STDIN.readline() or b"{}")
    plan = Plan(config, pidns)
    if note:
        plan.notes["namespaces"] = note
    plan.detect()
    if config.get("warm_up", True):
        _warm_up()
    channel.write(json.dumps({"ready": True, "isolation": plan.summary()}) + "\n")
    while True:
        line = _STDIN.readline()
        if not line.strip():
            return 0
        job = json.loads(line)
        if not isinstance(job, dict) or "job_dir" not in job:
            continue

        def report(message: dict[str, Any]) -> None:
            channel.write(json.dumps(message) + "\n")

        report(_run_one(job, plan, report=report, deadline=None))


def _warm_up() -> None:
    """Pay torch's lazy imports here once (the first optimizer step imports torch._dynamo, seconds) rather than
    in every forked job; touches no random state."""
    parameter = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.AdamW([parameter], lr=0.1)
    (parameter * 2).sum().backward()
    optimizer.step()


def _prctl_quietly(option: int, value: int) -> None:
    try:
        isolation.prctl(option, value)
    except OSError:
        pass


def _run_one(job: dict[str, Any], plan: Plan, report: Any, deadline: float | None) -> dict[str, Any]:
    """Fork the job, report its pid, wait for it to end (or a kill command); return the exit message."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _init(job, plan, write_end)  # never returns
    os.close(write_end)
    if report is not None:
        report({"pid": pid})
    status, killed = _wait(pid, plan, deadline)
    with os.fdopen(read_end, "rb") as pipe:
        lines = [raw.decode(errors="replace").strip() for raw in pipe.read(1 << 16).splitlines()]
    message: dict[str, Any] = {"exit": _describe_status(status), "killed": killed}
    for text in lines:
        if text.startswith("error "):
            message["setup_error"] = text[6:][:500]
    message["leftovers"] = _kill_everything(plan)
    return message


def _wait(pid: int, plan: Plan, deadline: float | None) -> tuple[int, bool]:
    """Wait for the job; obey a ``kill`` line from the grader; exit if the grader goes away (stdin closes)."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return os.waitpid(pid, 0)[1], False
    killed = False
    end = None if deadline is None else time.monotonic() + deadline
    with selectors.DefaultSelector() as selector:
        selector.register(handle, selectors.EVENT_READ)
        selector.register(0, selectors.EVENT_READ)
        while True:
            timeout = None if end is None else max(0.0, end - time.monotonic())
            ready = {key.fd for key, _ in selector.select(timeout)}
            if handle in ready:
                break
            if 0 in ready:
                line = _STDIN.readline()
                if not line:  # the grader is gone: leave nothing behind
                    _kill_job(pid, plan)
                    _kill_everything(plan)
                    os._exit(0)
                if line.strip() == b"kill":
                    _kill_job(pid, plan)
                    killed = True
            if end is not None and time.monotonic() >= end:
                _kill_job(pid, plan)
                killed = True
                end = None
    os.close(handle)
    return os.waitpid(pid, 0)[1], killed


def _kill_job(pid: int, plan: Plan) -> None:
    if plan.pidns:
        try:
            os.kill(-1, signal.SIGKILL)  # as PID 1 of our namespace: every other process in it
        except OSError:
            pass
    for action in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            action()
        except OSError:
            pass


def _kill_everything(plan: Plan) -> int:
    """Kill and reap whatever a job left behind; return how many processes that was."""
    if not plan.pidns:
        return _kill_descendants()
    reaped = 0
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        try:
            child, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if child == 0:
            time.sleep(0.005)
        else:
            reaped += 1
    return reaped


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _kill_descendants() -> int:
    """Kill and reap every process still parented to the zygote (orphans of a job); return how many."""
    killed = 0
    for _ in range(50):
        children = _children_of(os.getpid())
        if not children:
            break
        for child in children:
            try:
                os.kill(child, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            try:
                reaped, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if reaped == 0:
                time.sleep(0.01)
    return killed


def _describe_status(status: int) -> dict[str, int | None]:
    if os.WIFSIGNALED(status):
        return {"code": None, "signal": os.WTERMSIG(status)}
    return {"code": os.WEXITSTATUS(status), "signal": None}


# ----------------------------------------------------------------------------------------------------------
# Init: sandbox setup (trusted), then the student's code
# ----------------------------------------------------------------------------------------------------------

class _CappedText(io.TextIOBase):
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


def _init(job: dict[str, Any], plan: Plan, pipe: int) -> None:
    """The job's first process: set up the sandbox, then run the job; never returns."""
    began = time.perf_counter()
    try:
        os.setsid()
        _prctl_quietly(isolation.PR_SET_PDEATHSIG, signal.SIGKILL)
        if plan.namespaces:
            isolation.unshare(isolation.CLONE_NEWNS | isolation.CLONE_NEWNET | isolation.CLONE_NEWIPC
                              | isolation.CLONE_NEWUTS)
        payload = _read_payload(job)
        job_dir = job["job_dir"]
        opened = _open_outputs(job_dir, len(payload.get("checks", [])))
        limits = job["limits"]
        tmp = _enter_sandbox(job, plan, limits)
        os.dup2(opened["output"], 1)
        os.dup2(opened["output"], 2)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        keep = {0, 1, 2, opened["results"], *opened["tensors"].values()}
        for fd in _open_fds():
            if fd not in keep and fd != pipe:
                try:
                    os.close(fd)
                except OSError:
                    pass
        os.close(pipe)  # from here on, nothing the zygote or leader reads can be written by the job
        cap = int(limits.get("output_bytes", 1 << 16))
        sys.stdin = open(os.devnull)
        sys.stdout = sys.__stdout__ = _CappedText(1, cap)  # type: ignore[misc]
        sys.stderr = sys.__stderr__ = _CappedText(2, cap // 4)  # type: ignore[misc]
        results = os.fdopen(opened["results"], "w", buffering=1)
        results.write(dumps_record({"setup_seconds": round(time.perf_counter() - began, 5)}) + "\n")
        if job.get("trial"):
            _trial_checks(plan, job, tmp, results)
            os._exit(0)
    except BaseException as exc:  # noqa: BLE001 - fail closed: no student code runs in a broken sandbox
        try:
            os.write(pipe, f"error {type(exc).__name__}: {exc}".replace("\n", " ")[:400].encode() + b"\n")
        except OSError:
            pass
        os._exit(EXIT_SANDBOX_FAILED)
    try:
        _isolate_imports(job["workdir"])
        _run_job(payload, job, results, opened["tensors"])
        results.write(dumps_record({"done": True}) + "\n")
        results.flush()
    except BaseException:  # noqa: BLE001 - the job's end is reported by its absence of "done"
        try:
            traceback.print_exc()
        except BaseException:  # noqa: BLE001
            pass
    finally:
        os._exit(0)


def _read_payload(job: dict[str, Any]) -> dict[str, Any]:
    """The job's private payload (checks and reference as compiled code), read before any restriction."""
    if job.get("trial"):
        return {}
    with open(job["payload"], "rb") as handle:
        return json.loads(handle.read())


def _open_outputs(job_dir: str, checks: int) -> dict[str, Any]:
    """Open the job's output files now, so the sandboxed job needs no access to the job folder."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC

    def create(name: str) -> int:
        fd = os.open(os.path.join(job_dir, name), flags, 0o600)
        os.set_inheritable(fd, False)
        return fd

    return {"output": create("output.txt"), "results": create("results.jsonl"),
            "tensors": {index: create(f"check_{index}.safetensors") for index in range(checks)}}


def _open_fds() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 256))


def _enter_sandbox(job: dict[str, Any], plan: Plan, limits: dict[str, int]) -> str:
    """Hide, restrict and limit this process; return its private temporary folder."""
    workdir = job["workdir"]
    address_space = _current_address_space()
    if plan.namespaces:
        isolation.make_mounts_private()
        isolation.mount_proc()
        keep = plan.keep + [workdir]
        places = [p for p in PRIVATE_PLACES if os.path.isdir(p) and not os.path.islink(p)]
        masks = sorted({os.path.realpath(p) for p in places} | set(plan.protected), key=lambda p: p.count("/"))
        for mask in masks:
            if not os.path.isdir(mask):
                continue  # hidden already by an outer mask
            writable = mask == "/tmp"
            size = str(max(limits["file_bytes"] * 2, 1 << 24)) if writable else "1m"
            isolation.expose_only(mask, keep, writable=writable, size=size)
        tmp = "/tmp"
    else:
        tmp = os.path.join(workdir, ".tmp")
        os.makedirs(tmp, mode=0o700, exist_ok=True)
        if "uid" in plan.features:
            os.chown(tmp, plan.uid, plan.gid)
    processes = int(limits.get("processes", 64))
    if not plan.root and not plan.namespaces:
        processes += _tasks_of_user(os.getuid())  # RLIMIT_NPROC counts every thread of the user
    if "uid" in plan.features:
        isolation.drop_to_user(plan.uid, plan.gid)
    elif plan.root or plan.namespaces:
        isolation.drop_capabilities()
    isolation.prctl(isolation.PR_SET_NO_NEW_PRIVS, 1)
    _prctl_quietly(isolation.PR_SET_DUMPABLE, 1)  # our own /proc/self stays readable to us
    _prctl_quietly(isolation.PR_SET_PDEATHSIG, signal.SIGKILL)  # again: changing the user cleared it
    if "landlock" in plan.features:
        read = plan.keep + list(SYSTEM_READ) + list(PROC_READ) + [workdir]
        isolation.landlock_restrict(read=read, write=[tmp], devices=DEVICES, abi=plan.abi)
    _apply_limits(limits, address_space, processes if "nproc" in plan.features else 0)
    os.environ.update({"HOME": tmp, "TMPDIR": tmp, "USER": "student", "LOGNAME": "student"})
    tempfile.tempdir = None
    os.chdir(workdir)
    return tmp


def _tasks_of_user(uid: int) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/status") as handle:
                    fields = dict(line.split(":", 1) for line in handle if ":" in line)
            except OSError:
                continue
            if int(fields.get("Uid", "-1").split()[0]) == uid:
                count += int(fields.get("Threads", "1").strip())
    return count


def _apply_limits(limits: dict[str, int], address_space: int, processes: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails with EFBIG instead of killing us
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_bytes"], limits["file_bytes"]))
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_seconds"], limits["cpu_seconds"] + 1))
    _, nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
    cap = 1024 if nofile == resource.RLIM_INFINITY else min(1024, nofile)
    resource.setrlimit(resource.RLIMIT_NOFILE, (cap, cap))
    if limits.get("address_space_bytes"):
        budget = address_space + limits["address_space_bytes"]
        resource.setrlimit(resource.RLIMIT_AS, (budget, budget))
    if processes:
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))


def _current_address_space() -> int:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _trial_checks(plan: Plan, job: dict[str, Any], tmp: str, results: Any) -> None:
    """What a trial job verifies after the setup: the job can work, and each feature really protects."""
    why = ""
    try:
        fresh = next(m for m in ("colorsys", "wave", "sndhdr", "xdrlib", "this") if m not in sys.modules)
        importlib.import_module(fresh)
        assert float(torch.ones(3).sum()) == 3.0, "torch does not compute"
        with tempfile.NamedTemporaryFile(dir=tmp) as handle:
            handle.write(b"x" * 1000)
        sys.path.insert(0, job["workdir"])
        importlib.import_module("trialpkg.mod")
        samples = [s for s in plan.config.get("protected_samples", [])
                   if not any(isolation._inside(s, kept) for kept in plan.keep)]
        if plan.namespaces:
            assert os.getppid() == 1, "the zygote is not PID 1 of its own PID namespace"
            if "landlock" not in plan.features:
                visible = {int(p) for p in os.listdir("/proc") if p.isdigit()}
                assert visible <= {1, os.getpid()}, f"other processes are visible: {sorted(visible)[:5]}"
            for sample in samples:
                assert not os.path.exists(sample), f"{sample} is still visible"
            with socket.socket() as sock:
                sock.settimeout(1)
                refused = sock.connect_ex(("127.0.0.1", 9))
            assert refused in (errno.ENETUNREACH, errno.EACCES, errno.EPERM), f"network reachable ({refused})"
        if "uid" in plan.features:
            assert os.getuid() == plan.uid, "still running as root"
        if "landlock" in plan.features:
            for sample in samples + [os.path.join(PACKAGE_ROOT, "autograder", "worker.py")]:
                try:
                    with open(sample, "rb"):
                        pass
                except FileNotFoundError:
                    continue
                except PermissionError:
                    continue
                raise AssertionError(f"{sample} is readable under Landlock")
    except BaseException as exc:  # noqa: BLE001
        why = f"{type(exc).__name__}: {exc}"
    results.write(json.dumps({"trial": "failed", "why": why} if why else {"trial": "ok"}) + "\n")
    results.flush()


# ----------------------------------------------------------------------------------------------------------
# The job: imports and probes (student code runs from here on)
# ----------------------------------------------------------------------------------------------------------

class _ImportBlocker(importlib.abc.MetaPathFinder):
    """Refuse imports of the grader's trusted side and of instructor material."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname.startswith(BLOCKED_TOP_LEVEL):
            raise ImportError(f"importing {fullname!r} is not allowed in graded code")


class _CodeLoader(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serve the pruned reference package from compiled code in memory (never from a path)."""

    def __init__(self, package: str, code: dict[str, types.CodeType]) -> None:
        self.package = package
        self.code = code

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname == self.package:
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        module = fullname[len(self.package) + 1:] if fullname.startswith(self.package + ".") else None
        if module in self.code:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        if module.__name__ == self.package:
            module.__path__ = []
            return
        exec(self.code[module.__name__[len(self.package) + 1:]], module.__dict__)


def _isolate_imports(workdir: str) -> None:
    sys.path[:] = [workdir] + [p for p in sys.path if p and os.path.realpath(p) != PACKAGE_ROOT]
    sys.meta_path.insert(0, _ImportBlocker())
    for name in [m for m in sys.modules if m.startswith(BLOCKED_TOP_LEVEL)]:
        del sys.modules[name]
    importlib.invalidate_caches()


def _reset_torch_state(seed: int) -> None:
    """Undo global state a student may have changed (at import or in an earlier check of the same job)."""
    probe_api.pin_torch_state(seed)
    stack = torch.overrides._get_current_function_mode_stack()
    for _ in stack:
        torch._C._pop_torch_function_stack()
    from torch.utils import _python_dispatch

    for _ in _python_dispatch._get_current_dispatch_mode_stack():
        torch._C._pop_torch_dispatch_stack()


class _Placeholder:
    """Stands in for the code of a student module that failed to import; fails loudly when used."""

    def __init__(self, qualified: str, reason: str) -> None:
        self._message = f"{qualified} is unavailable because {reason}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise ImportError(self._message)

    def __getattr__(self, name: str) -> Any:
        raise ImportError(self._message)


def _fallback_module(fullname: str, module: str, reason: str, reference: Any) -> types.ModuleType:
    """A module for a broken student file: reference objects the task may use, placeholders otherwise."""
    fallback = types.ModuleType(fullname)
    ref_module = getattr(reference, module, None) if reference is not None else None

    def lookup(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if ref_module is not None and hasattr(ref_module, name):
            return getattr(ref_module, name)
        return _Placeholder(f"{module}.{name}", reason)

    fallback.__getattr__ = lookup  # type: ignore[method-assign]
    return fallback


class StudentPackage:
    """Lazy access to the student's modules (``impl.attention``), substituting reference objects on import.

    Args:
        package: The package name (e.g. ``"assignment3"``).
        substitutions: Qualified name to the reference object that replaces the student's.
        broken: Module name to the reason it cannot be imported (replaced by a fallback module).
        reference: The pruned reference package (for fallbacks), or None.
    """

    def __init__(self, package: str, substitutions: dict[str, Any], broken: dict[str, str], reference: Any):
        self._package = package
        self._substitutions = substitutions
        for module, reason in broken.items():
            fullname = f"{package}.{module}"
            sys.modules[fullname] = _fallback_module(fullname, module, reason, reference)

    def __getattr__(self, module: str) -> types.ModuleType:
        if module.startswith("_"):
            raise AttributeError(module)
        loaded = importlib.import_module(f"{self._package}.{module}")
        self._substitute()
        return loaded

    def _substitute(self) -> None:
        modules = [m for name, m in list(sys.modules.items()) if name.startswith(self._package + ".")]
        for qualified, replacement in self._substitutions.items():
            module_name, name = qualified.split(".", 1)
            home = sys.modules.get(f"{self._package}.{module_name}")
            original = vars(home).get(name) if home is not None else None
            if home is not None and original is not replacement:
                setattr(home, name, replacement)
            if original is None or original is replacement:
                continue
            for module in modules:
                namespace = vars(module)
                for alias, value in list(namespace.items()):
                    if value is original:
                        namespace[alias] = replacement


def _load_reference(code: dict[str, types.CodeType]) -> Any:
    if not code:
        return None
    sys.meta_path.insert(0, _CodeLoader(REFERENCE_PACKAGE, code))
    package = importlib.import_module(REFERENCE_PACKAGE)
    for module in code:
        setattr(package, module, importlib.import_module(f"{REFERENCE_PACKAGE}.{module}"))
    return package


def _load_checks(code: types.CodeType | None, helpers: dict[str, types.CodeType]) -> dict[str, probe_api.Check]:
    if code is None:
        return {}
    namespace = probe_api.run_checks_file(code, helpers, CHECKS_MODULE)
    return {c.name: c for c in probe_api.collect_checks(namespace)}


def _unmarshal(text: str | None) -> Any:
    return marshal.loads(bytes.fromhex(text)) if text else None


def _run_job(payload: dict[str, Any], job: dict[str, Any], results: Any, tensor_fds: dict[int, int]) -> None:
    helpers = {name: _unmarshal(code) for name, code in payload.pop("helpers_code", {}).items()}
    checks = _load_checks(_unmarshal(payload.pop("checks_code", None)), helpers)
    reference = _load_reference({m: _unmarshal(c) for m, c in payload.pop("reference_code", {}).items()})
    substitutions = {q: _resolve(reference, q) for q in payload.get("uses", [])}
    impl = StudentPackage(payload["package"], substitutions, payload.get("broken_modules", {}), reference)
    assets = {name: bytes.fromhex(data) for name, data in payload.pop("assets", {}).items()}
    workdir = job["workdir"]
    file_limit = int(job["limits"]["file_bytes"])
    if payload.get("import_modules"):
        _probe_imports(payload, results, workdir)
        return
    for index, entry in enumerate(payload["checks"]):
        record: dict[str, Any] = {"check": entry["name"]}
        results.write(dumps_record({"start": entry["name"]}) + "\n")
        started, cpu_started = time.perf_counter(), time.process_time()
        _reset_torch_state(entry["seed"])
        try:
            outputs = checks[entry["name"]].probe(impl, reference, probe_api.Context(entry["seed"], assets))
            if not isinstance(outputs, dict):
                raise TypeError(f"the code under test returned {type(outputs).__name__}")
            values, tensors = encode_outputs(outputs)
            if tensors:
                size = sum(t.numel() * t.element_size() for t in tensors.values())
                if size > file_limit - (1 << 20):
                    raise OutputTooLarge(f"the outputs are too large to send back ({size / 2**20:.0f} MiB; "
                                         f"the limit is {file_limit / 2**20:.0f} MiB)")
                data = save_safetensors(tensors)
                fd = tensor_fds[index]
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                record["tensors"] = f"check_{index}.safetensors"
            record.update(status="ok", values=values)
        except NotImplementedError as exc:
            record.update(status="not_implemented", error=_describe_exception(exc, workdir))
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt, pytest outcomes alike
            record.update(status="error", error=_describe_exception(exc, workdir))
            record.pop("tensors", None)
        record["seconds"] = round(time.perf_counter() - started, 4)
        record["cpu_seconds"] = round(time.process_time() - cpu_started, 4)
        results.write(dumps_record(record) + "\n")
        results.flush()


class OutputTooLarge(Exception):
    """A probe's outputs exceed what the worker may write back."""


def _probe_imports(payload: dict[str, Any], results: Any, workdir: str) -> None:
    """Import each student module on its own and record which ones fail (a syntax error, an exception)."""
    for module in payload["import_modules"]:
        results.write(dumps_record({"start": f"import:{module}"}) + "\n")
        try:
            importlib.import_module(f"{payload['package']}.{module}")
            record = {"import": module, "status": "ok"}
        except BaseException as exc:  # noqa: BLE001
            record = {"import": module, "status": "error", "error": _describe_exception(exc, workdir)}
        results.write(dumps_record(record) + "\n")
        results.flush()


def _resolve(reference: Any, qualified: str) -> Any:
    module, name = qualified.split(".", 1)
    return getattr(getattr(reference, module), name)


def _describe_exception(exc: BaseException, workdir: str) -> dict[str, Any]:
    """Exception type, message and the innermost frame in the student's own files (no hidden-check frames)."""
    where = None
    try:
        for frame in traceback.extract_tb(exc.__traceback__):
            if frame.filename.startswith(workdir):
                where = f"{os.path.relpath(frame.filename, workdir)}, line {frame.lineno}, in {frame.name}"
        if isinstance(exc, SyntaxError) and exc.filename and str(exc.filename).startswith(workdir):
            where = f"{os.path.relpath(exc.filename, workdir)}, line {exc.lineno}"
    except BaseException:  # noqa: BLE001 - a hostile traceback
        where = None
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001 - a hostile __str__
        message = "<unprintable>"
    kind = type(exc).__name__
    if isinstance(exc, MemoryError) or (isinstance(exc, RuntimeError) and "allocate" in message
                                        and ("memory" in message or "bytes" in message)):
        kind = "MemoryError"
    return {"type": str(kind)[:80], "message": message[:500], "where": where}


if __name__ == "__main__":
    main()
