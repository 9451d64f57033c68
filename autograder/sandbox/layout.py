"""A job's files on the host: its private payload (compiled code), the permissions of the student's copy, trial folders."""

from __future__ import annotations

import functools
import marshal
import os
import secrets
import tempfile
from pathlib import Path
from typing import Any


def job_payload(job: dict[str, Any]) -> dict[str, Any]:
    """The job's private payload: hidden checks and the pruned reference travel as compiled code, never as text."""
    payload = {k: v for k, v in job.items()
               if k not in ("workdir", "checks_source", "helper_sources", "reference_sources")}
    if job.get("checks_source"):
        payload["checks_code"] = _compiled(job["checks_source"], "<hidden checks>")
    payload["helpers_code"] = {
        helper: _compiled(source, f"<hidden check helper {helper}>")
        for helper, source in (job.get("helper_sources") or {}).items()
    }
    payload["reference_code"] = {
        module: _compiled(source, f"<reference {module}>")
        for module, source in (job.get("reference_sources") or {}).items()
    }
    return payload


@functools.lru_cache(maxsize=256)
def _compiled(source: str, filename: str) -> str:
    """Trusted source compiled and marshalled (hex), once per source: every submission's jobs send the same."""
    return marshal.dumps(compile(source, filename, "exec")).hex()


def prepare_dirs(workdir: Path, job_dir: Path, features: list[str]) -> Path:
    """Make the student's copy readable to the sandbox user and the job folder private to the grader.

    Without namespaces the copy is moved to an unguessable name in a folder others may traverse but not list.
    """
    if "uid" not in features:
        return workdir
    os.chmod(job_dir, 0o700)
    for folder, dirs, files in os.walk(workdir):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    if "namespaces" in features:
        return workdir
    os.chmod(workdir.parent, 0o711)
    hidden = workdir.parent / f"w-{secrets.token_hex(16)}"
    os.rename(workdir, hidden)
    return hidden


def make_trial_dirs() -> Path:
    """A throw-away job layout for the zygote's isolation trials (mirrors a submission's scratch folder)."""
    root = Path(tempfile.mkdtemp(prefix="grader-trial-"))
    os.chmod(root, 0o711)
    package = root / "work" / "trialpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text("VALUE = 1\n")
    for folder in (root / "work", package):
        os.chmod(folder, 0o755)
    for file in package.iterdir():
        os.chmod(file, 0o644)
    (root / "out").mkdir(mode=0o700)
    return root


def protected_samples(folders: list[Path]) -> list[str]:
    """A file directly inside (or one level below) each protected folder, for the trials to check it is hidden."""
    samples = []
    for folder in folders:
        if not folder.is_dir():
            continue
        try:
            entries = sorted(folder.iterdir())
            candidates = [p for p in entries if p.is_file()] or [
                q for p in entries if p.is_dir() and not p.name.startswith(".") for q in sorted(p.iterdir())
                if q.is_file()]
        except OSError:
            continue
        samples += [str(p.resolve()) for p in candidates[:1]]
    return sorted(set(samples))
