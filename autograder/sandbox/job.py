"""The untrusted side: a pre-imported zygote forks one sandboxed process per job to run probes on student code.

Forked from a template process started as ``python -I`` (no user site, no environment variables, no current folder
on the path; ``autograder.sandbox.template``), through ``autograder.sandbox.boot``, which makes the zygote PID 1 of
its own PID namespace where the kernel allows it. The zygote shares the torch its template imported once and never
runs student code. At start it reads a configuration line, tries each isolation feature in a throw-away trial job
and reports the features that work (``autograder.sandbox.tiers`` names the tiers). Then, for each job read from stdin, it forks one process that

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

import importlib
import importlib.abc
import importlib.util
import marshal
import os
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
from autograder.errors import AssignmentError, OutputTooLarge
from autograder.judge.transport import dumps_record, encode_outputs
from autograder.sandbox import globalstate, linux
from autograder.sandbox.confine import (
    CappedText,
    enter_sandbox,
    open_fds,
    open_outputs,
    read_payload,
    trial_checks,
)
from autograder.sandbox.linux import prctl_quietly
from autograder.sandbox.memory import JOB_OOM_SCORE_ADJ, set_oom_score_adj
from autograder.sandbox.plan import Plan
from autograder.sandbox.steps import Steps
from autograder.util.packages import PackageImportError, load_package
from autograder.util.paths import CHECKOUT

REFERENCE_PACKAGE = "_grader_reference"


CHECKS_MODULE = "_grader_checks"


# The grader's trusted side (it knows where the reference and the hidden checks live) and instructor material.
BLOCKED_TOP_LEVEL = ("autograder.sandbox.host", "autograder.sandbox.results", "autograder.grading",
                     "autograder.judge.verdict", "autograder.spec.reference", "autograder.spec.mutation",
                     "autograder.authoring", "autograder.batch", "autograder.gradebook", "reference_solutions",
                     "assignments", "student_template", "_reference_", "_mistake_")




EXIT_SANDBOX_FAILED = 70

# The session its zygote opened before it served jobs (its ``run(request, steps)`` runs a job's steps), or None: a
# zygote of ``grader check`` imports the student's modules and collects the public tests once, for every job.
SESSION: Any = None


def start_job(job: dict[str, Any], plan: Plan, pipe: int) -> None:
    """The job's first process: set up the sandbox, then run the job; never returns."""
    began = time.perf_counter()
    set_oom_score_adj(JOB_OOM_SCORE_ADJ)  # the OOM killer's first choice: a job, never the grader or a zygote
    try:
        if hasattr(os, "setsid") and os.getpgid(0) != os.getpid():  # a spawned job leads its session already
            os.setsid()
        prctl_quietly(linux.PR_SET_PDEATHSIG, getattr(signal, "SIGKILL", 9))
        if plan.namespaces:
            linux.unshare(linux.CLONE_NEWNS | linux.CLONE_NEWNET | linux.CLONE_NEWIPC
                              | linux.CLONE_NEWUTS)
        payload = read_payload(job)
        job_dir = job["job_dir"]
        opened = open_outputs(job_dir, len(payload.get("checks", [])))
        limits = job["limits"]
        tmp = enter_sandbox(job, plan, limits)
        os.dup2(opened["output"], 1)
        os.dup2(opened["output"], 2)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        keep = {0, 1, 2, opened["results"], opened["stack"], *opened["tensors"].values()}
        for fd in open_fds():
            if fd not in keep and fd != pipe:
                try:
                    os.close(fd)
                except OSError:
                    pass
        os.close(pipe)  # from here on, nothing the zygote or leader reads can be written by the job
        cap = int(limits.get("output_bytes", 1 << 16))
        sys.stdin = open(os.devnull)
        sys.stdout = sys.__stdout__ = CappedText(1, cap)  # type: ignore[misc]
        sys.stderr = sys.__stderr__ = CappedText(2, cap // 4)  # type: ignore[misc]
        results = os.fdopen(opened["results"], "w", buffering=1)
        results.write(dumps_record({"setup_seconds": round(time.perf_counter() - began, 5)}) + "\n")
        steps = Steps(results, opened["stack"], float(job.get("step_seconds") or 0))
        if job.get("trial"):
            trial_checks(plan, job, tmp, results)
            os._exit(0)
    except BaseException as exc:  # noqa: BLE001 - fail closed: no student code runs in a broken sandbox
        try:
            os.write(pipe, f"error {type(exc).__name__}: {exc}".replace("\n", " ")[:400].encode() + b"\n")
        except OSError:
            pass
        os._exit(EXIT_SANDBOX_FAILED)
    try:
        _isolate_imports(job["workdir"])
        if "session" in payload:  # a step of the session its zygote opened (grader check's tests of one task)
            SESSION.run(payload["session"], steps)
        else:
            _run_job(payload, job, steps, opened["tensors"])
        steps.write({"done": True})
    except BaseException:  # noqa: BLE001 - the job's end is reported by its absence of "done"
        try:
            traceback.print_exc()
        except BaseException:  # noqa: BLE001
            pass
    finally:
        os._exit(0)


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


_MODULES_WHEN_FORGOTTEN = -1  # len(sys.modules) when forget_trusted_side last ran in this process (or its zygote)


def forget_trusted_side() -> None:
    """Drop the grader's trusted side from ``sys.modules``, where graded code could otherwise reach it (the
    import blocker refuses to import it again).

    The zygote calls this before it serves jobs. Reading every name in ``sys.modules`` writes to each name's
    reference count, so doing it in every job copied about 5 MB of the zygote's pages (5 ms) to find nothing;
    a job does it again only when ``sys.modules`` changed size since (the zygote imported something after).
    """
    global _MODULES_WHEN_FORGOTTEN
    for name in [m for m in sys.modules if m.startswith(BLOCKED_TOP_LEVEL)]:
        del sys.modules[name]
    _MODULES_WHEN_FORGOTTEN = len(sys.modules)


def _isolate_imports(workdir: str) -> None:
    """Student code imports from the job's copy, never from the grader's folder nor the trusted side.

    No ``importlib.invalidate_caches()``: the workdir is a fresh folder no finder has cached, and a cached
    finder stats its folder on every lookup, so a folder the sandbox hides is seen as empty anyway; the call
    only made every later import re-list its folder (and cost 1.5 ms of copied pages)."""
    sys.path[:] = [workdir] + [p for p in sys.path if p and os.path.realpath(p) != str(CHECKOUT)]
    sys.meta_path.insert(0, _ImportBlocker())
    if len(sys.modules) != _MODULES_WHEN_FORGOTTEN:  # sys.modules only grows in the zygote
        forget_trusted_side()


def _reset_torch_state(seed: int) -> None:
    """Undo global state a student may have changed (at import or in an earlier check of the same job), rebound
    library functions included (the probe about to run may compare with torch.equal)."""
    globalstate.restore_library()
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
        package: The package name (e.g. ``"attention101"``).
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
        before = globalstate.capture()
        try:
            loaded = importlib.import_module(f"{self._package}.{module}")
        finally:  # what a module sets at import (default dtype, grad mode, seeds, ...) stays in its import
            globalstate.restore(before)
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


def _run_job(payload: dict[str, Any], job: dict[str, Any], steps: Steps, tensor_fds: dict[int, int]) -> None:
    helpers = {name: _unmarshal(code) for name, code in payload.pop("helpers_code", {}).items()}
    checks = _load_checks(_unmarshal(payload.pop("checks_code", None)), helpers)
    reference = _load_reference({m: _unmarshal(c) for m, c in payload.pop("reference_code", {}).items()})
    substitutions = {q: _resolve(reference, q) for q in payload.get("uses", [])}
    impl = StudentPackage(payload["package"], substitutions, payload.get("broken_modules", {}), reference)
    assets = {name: bytes.fromhex(data) for name, data in payload.pop("assets", {}).items()}
    workdir = job["workdir"]
    file_limit = int(job["limits"]["file_bytes"])
    if payload.get("import_modules"):
        _probe_imports(payload, steps, workdir)
        return
    if payload.get("import_packages"):
        _import_packages(payload["import_packages"], steps)
        return
    for index, entry in enumerate(payload["checks"]):
        record: dict[str, Any] = {"check": entry["name"]}
        steps.start(entry["name"])
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
            record.update(status="error", error=_describe_exception(exc, workdir, substitutions))
            record.pop("tensors", None)
        record["seconds"] = round(time.perf_counter() - started, 4)
        record["cpu_seconds"] = round(time.process_time() - cpu_started, 4)
        steps.write(record)


def _probe_imports(payload: dict[str, Any], steps: Steps, workdir: str) -> None:
    """Import each student module on its own and record which ones fail (a syntax error, an exception)."""
    for module in payload["import_modules"]:
        steps.start(f"import:{module}")
        try:
            importlib.import_module(f"{payload['package']}.{module}")
            record = {"import": module, "status": "ok"}
        except BaseException as exc:  # noqa: BLE001
            record = {"import": module, "status": "error", "error": _describe_exception(exc, workdir)}
        steps.write(record)


def _import_packages(packages: list[dict[str, Any]], steps: Steps) -> None:
    """Import each package (a mutated reference: the instructor's code) from its folder under its private name, as
    the judge imports one (:func:`autograder.util.packages.load_package`): ``detail`` says where and why it raised."""
    for index, entry in enumerate(packages):
        steps.start(f"package:{index}")
        try:
            load_package(Path(entry["folder"]), str(entry["name"]), tuple(entry["modules"]))
            detail = ""
        except AssignmentError as exc:
            detail = exc.detail if isinstance(exc, PackageImportError) else str(exc)
        steps.write({"package": index, "detail": detail})


def _resolve(reference: Any, qualified: str) -> Any:
    module, name = qualified.split(".", 1)
    return getattr(getattr(reference, module), name)


def _stand_in_lacking(exc: BaseException, substitutions: dict[str, Any]) -> dict[str, str] | None:
    """The reference object standing in for the student's that an AttributeError was raised on, if any: a
    student's code asked it for something only their own version has (a helper method they added)."""
    if not isinstance(exc, AttributeError) or not isinstance(exc.name, str):
        return None
    target = exc.obj
    for qualified, replacement in substitutions.items():
        if target is replacement or (isinstance(replacement, type) and isinstance(target, replacement)):
            return {"name": qualified, "attribute": exc.name}
    return None


def _describe_exception(exc: BaseException, workdir: str,
                        substitutions: dict[str, Any] | None = None) -> dict[str, Any]:
    """Exception type, message and the innermost frame in the student's own files (no hidden-check frames);
    ``stand_in`` names the reference object a missing attribute was looked up on (see ``_stand_in_lacking``)."""
    where = None
    try:
        for frame, lineno in traceback.walk_tb(exc.__traceback__):
            code = frame.f_code
            if code.co_filename.startswith(workdir):  # the qualified name says whose __init__ (Python >= 3.11)
                name = getattr(code, "co_qualname", code.co_name)
                where = {"file": os.path.relpath(code.co_filename, workdir), "line": lineno, "function": name}
        if isinstance(exc, SyntaxError) and exc.filename and str(exc.filename).startswith(workdir):
            where = {"file": os.path.relpath(exc.filename, workdir), "line": exc.lineno}
    except BaseException:  # noqa: BLE001 - a hostile traceback
        where = None
    try:
        # a SyntaxError's str() ends with its place, "(attention.py, line 9)", which `where` says already
        message = exc.msg if isinstance(exc, SyntaxError) and where and isinstance(exc.msg, str) else str(exc)
    except BaseException:  # noqa: BLE001 - a hostile __str__
        message = "<unprintable>"
    kind = type(exc).__name__
    if isinstance(exc, MemoryError) or (isinstance(exc, RuntimeError) and "allocate" in message
                                        and ("memory" in message or "bytes" in message)):
        kind = "MemoryError"
    try:
        stand_in = _stand_in_lacking(exc, substitutions or {})
        missing = _missing_from_own_module(exc, workdir)
    except BaseException:  # noqa: BLE001 - a hostile __class__ or attribute
        stand_in = missing = None
    return {"type": str(kind)[:80], "message": message[:500], "where": where, "stand_in": stand_in,
            "missing": missing}


def _missing_from_own_module(exc: BaseException, workdir: str) -> dict[str, str] | None:
    """``{"file": "assignment3/attention.py", "name": "causal_mask"}`` when an AttributeError was raised on one of
    the student's own modules (a function renamed or removed), None otherwise."""
    if not isinstance(exc, AttributeError) or not isinstance(exc.name, str) or not isinstance(exc.obj, types.ModuleType):
        return None
    file = getattr(exc.obj, "__file__", None)
    if not isinstance(file, str) or not file.startswith(workdir + os.sep):
        return None
    return {"file": os.path.relpath(file, workdir), "name": exc.name}

