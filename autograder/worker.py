"""The untrusted side: a pre-imported zygote forks one limited child per job to run probes on student code.

Run as ``python -I -m autograder.worker``. The zygote imports torch once and never runs student code; for each
job read from stdin it forks a child that drops into its own session under resource limits, imports the
student's package (the reference substituted for what the task builds on), runs the job's probes and writes
plain results (JSON lines plus safetensors files) into the job's folder. The zygote reports the child's pid
and exit status on stdout, then kills anything the child left behind.
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.abc
import importlib.util
import json
import os
import resource
import signal
import sys
import time
import traceback
import types
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save as save_safetensors

from autograder import probe as probe_api
from autograder.transport import dumps_record, encode_outputs

REFERENCE_PACKAGE = "_grader_reference"
CHECKS_MODULE = "_grader_checks"
BLOCKED_TOP_LEVEL = ("autograder.sandbox", "autograder.grading", "autograder.reference", "reference_solutions",
                     "assignments", "student_template", "_reference_")
PR_SET_CHILD_SUBREAPER = 36


# ----------------------------------------------------------------------------------------------------------
# Zygote
# ----------------------------------------------------------------------------------------------------------

def main() -> None:
    """Serve jobs from stdin until it closes: one forked child per job, reported as JSON lines on stdout."""
    torch.set_num_threads(1)
    _become_subreaper()
    channel = sys.stdout
    for line in sys.stdin:
        job = json.loads(line)
        channel.flush()
        pid = os.fork()
        if pid == 0:
            _child(job)  # never returns
        channel.write(json.dumps({"pid": pid}) + "\n")
        channel.flush()
        _, status = os.waitpid(pid, 0)
        leftovers = _kill_descendants()
        channel.write(json.dumps({"exit": _describe_status(status), "leftovers": leftovers}) + "\n")
        channel.flush()


def _become_subreaper() -> None:
    """Orphans of a child (double-forked daemons) are re-parented here, where they can be found and killed."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


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
    """Kill and reap every process still parented to the zygote; return how many there were."""
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
# Child: limits, imports, probes
# ----------------------------------------------------------------------------------------------------------

def _child(job: dict[str, Any]) -> None:
    try:
        os.setsid()
        job_dir = Path(job["job_dir"])
        _redirect_output(job_dir / "output.txt")
        results = open(job_dir / "results.jsonl", "w", buffering=1)
        _apply_limits(job["limits"])
        os.chdir(job["workdir"])
        _isolate_imports(job["workdir"])
        _run_job(job, results, job_dir)
        results.write(dumps_record({"done": True}) + "\n")
        results.flush()
    except BaseException:  # noqa: BLE001 - the child must never return into the zygote's loop
        try:
            traceback.print_exc()
        except BaseException:  # noqa: BLE001
            pass
    finally:
        os._exit(0)


def _redirect_output(path: Path) -> None:
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.closerange(3, 256)
    sys.stdin = open(os.devnull)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)


def _apply_limits(limits: dict[str, int]) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails with EFBIG instead of killing us
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_bytes"], limits["file_bytes"]))
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_seconds"], limits["cpu_seconds"] + 1))
    if limits.get("address_space_bytes"):
        current = _current_address_space()
        budget = current + limits["address_space_bytes"]
        resource.setrlimit(resource.RLIMIT_AS, (budget, budget))
    if limits.get("processes") and os.geteuid() != 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"], limits["processes"]))


def _current_address_space() -> int:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


class _ImportBlocker(importlib.abc.MetaPathFinder):
    """Refuse imports of the grader's trusted side and of instructor material."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname.startswith(BLOCKED_TOP_LEVEL):
            raise ImportError(f"importing {fullname!r} is not allowed in graded code")
        return None


class _SourceLoader(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serve the pruned reference package from memory (never from a path a student could open)."""

    def __init__(self, package: str, sources: dict[str, str]) -> None:
        self.package = package
        self.sources = sources

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname == self.package:
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        module = fullname[len(self.package) + 1:] if fullname.startswith(self.package + ".") else None
        if module in self.sources:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        if module.__name__ == self.package:
            module.__path__ = []
            return
        name = module.__name__[len(self.package) + 1:]
        exec(compile(self.sources[name], f"<reference {name}>", "exec"), module.__dict__)


def _isolate_imports(workdir: str) -> None:
    here = str(Path(__file__).resolve().parent.parent)
    sys.path[:] = [workdir] + [p for p in sys.path if p and os.path.abspath(p) != here]
    sys.meta_path.insert(0, _ImportBlocker())
    for name in [m for m in sys.modules if m.startswith(BLOCKED_TOP_LEVEL)]:
        del sys.modules[name]


def _reset_torch_state(seed: int) -> None:
    """Undo global state a student may have changed (at import or in an earlier check)."""
    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    stack = torch.overrides._get_current_function_mode_stack()  # noqa: SLF001 - no public API to clear it
    for _ in stack:
        torch._C._pop_torch_function_stack()  # noqa: SLF001


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


def _load_reference(sources: dict[str, str]) -> Any:
    if not sources:
        return None
    sys.meta_path.insert(0, _SourceLoader(REFERENCE_PACKAGE, sources))
    package = importlib.import_module(REFERENCE_PACKAGE)
    for module in sources:
        setattr(package, module, importlib.import_module(f"{REFERENCE_PACKAGE}.{module}"))
    return package


def _load_checks(source: str) -> dict[str, probe_api.Check]:
    namespace: dict[str, Any] = {"__name__": CHECKS_MODULE}
    exec(compile(source, "<hidden checks>", "exec"), namespace)
    return {c.name: c for c in probe_api.collect_checks(namespace)}


def _run_job(job: dict[str, Any], results: Any, job_dir: Path) -> None:
    checks = _load_checks(job["checks_source"]) if job.get("checks_source") else {}
    reference = _load_reference(job.get("reference_sources", {}))
    substitutions = {q: _resolve(reference, q) for q in job.get("uses", [])}
    impl = StudentPackage(job["package"], substitutions, job.get("broken_modules", {}), reference)
    assets = {name: bytes.fromhex(data) for name, data in job.get("assets", {}).items()}
    if job.get("import_modules"):
        _probe_imports(job, results)
        return
    for index, entry in enumerate(job["checks"]):
        record: dict[str, Any] = {"check": entry["name"]}
        results.write(dumps_record({"start": entry["name"]}) + "\n")
        started = time.perf_counter()
        _reset_torch_state(entry["seed"])
        try:
            outputs = checks[entry["name"]].probe(impl, reference, probe_api.Context(entry["seed"], assets))
            if not isinstance(outputs, dict):
                raise TypeError(f"the code under test returned {type(outputs).__name__}")
            values, tensors = encode_outputs(outputs)
            record.update(status="ok", values=values)
            if tensors:
                tensor_file = f"check_{index}.safetensors"
                (job_dir / tensor_file).write_bytes(save_safetensors(tensors))
                record["tensors"] = tensor_file
        except NotImplementedError as exc:
            record.update(status="not_implemented", error=_describe_exception(exc, job["workdir"]))
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt, pytest outcomes alike
            record.update(status="error", error=_describe_exception(exc, job["workdir"]))
        record["seconds"] = round(time.perf_counter() - started, 4)
        results.write(dumps_record(record) + "\n")
        results.flush()


def _probe_imports(job: dict[str, Any], results: Any) -> None:
    """Import each student module on its own and record which ones fail (a syntax error, an exception)."""
    for module in job["import_modules"]:
        results.write(dumps_record({"start": f"import:{module}"}) + "\n")
        try:
            importlib.import_module(f"{job['package']}.{module}")
            record = {"import": module, "status": "ok"}
        except BaseException as exc:  # noqa: BLE001
            record = {"import": module, "status": "error", "error": _describe_exception(exc, job["workdir"])}
        results.write(dumps_record(record) + "\n")
        results.flush()


def _resolve(reference: Any, qualified: str) -> Any:
    module, name = qualified.split(".", 1)
    return getattr(getattr(reference, module), name)


def _describe_exception(exc: BaseException, workdir: str) -> dict[str, Any]:
    """Exception type, message and the innermost frame in the student's own files (no hidden-check frames)."""
    where = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename.startswith(workdir):
            where = f"{os.path.relpath(frame.filename, workdir)}, line {frame.lineno}, in {frame.name}"
    if isinstance(exc, SyntaxError) and exc.filename and str(exc.filename).startswith(workdir):
        where = f"{os.path.relpath(exc.filename, workdir)}, line {exc.lineno}"
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001 - a hostile __str__
        message = "<unprintable>"
    return {"type": type(exc).__name__, "message": message[:500], "where": where}


if __name__ == "__main__":
    main()
