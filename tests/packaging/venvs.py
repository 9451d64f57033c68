"""Fresh virtual environments for the packaging tests (imported by name, beside them), beside this machine's torch
rather than a download of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def fresh_venv(folder: Path) -> Path:
    """A new venv in ``folder`` that sees the system's site-packages (torch and the other dependencies, as a course
    image or a student's environment has them); returns its Python. It has no pip of its own (seconds saved):
    :func:`pip` runs this process's on it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(folder)], check=True)
    return folder / "bin" / "python"


def pip(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``pip ARGS`` on the venv of ``python`` (pip's ``--python``), failing the test with pip's output."""
    result = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), *args], cwd=cwd, env=clean_env(),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would point a command at this repository's copy of the grader."""
    env = {k: v for k, v in os.environ.items() if k not in ("GRADER_ASSIGNMENTS", "PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1", **extra}


def site_packages(python: Path) -> Path:
    """The venv's own site-packages."""
    return Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())


def fake_distribution(python: Path, name: str, version: str) -> None:
    """Make pip in the venv see ``name`` at ``version`` as installed (its metadata only: no code): another torch
    than this machine's, without downloading one."""
    info = site_packages(python) / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "INSTALLER").write_text("pip\n")
    (info / "RECORD").write_text("")


def planned_installs(python: Path, target: str, cwd: Path) -> list[str]:
    """The distributions ``pip install target`` would install in the venv (``--dry-run --report``), as name==version."""
    report = cwd / "pip-report.json"
    pip(python, "install", "--quiet", "--dry-run", "--report", str(report), target, cwd=cwd)
    return [f"{item['metadata']['name']}=={item['metadata']['version']}"
            for item in json.loads(report.read_text())["install"]]
