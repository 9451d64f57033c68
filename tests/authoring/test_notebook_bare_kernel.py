"""The generated notebook on a bare JupyterHub kernel: a fresh venv holding only the student release, ipykernel and
torch runs it top to bottom (its setup cell installs the rest) and no cell ends in a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from autograder.authoring.dependencies import notebook_requirements
from autograder.authoring.release import build_student_release
from autograder.authoring.template import render_template
from autograder.spec.assignment import available_assignments, load_assignment

pytestmark = pytest.mark.slow

# Exposed from this machine rather than downloaded (torch's CPU wheel alone takes ~100 s to install here): what a
# JupyterHub image provides before the notebook runs.
KERNEL_PROVIDES = ("torch", "ipykernel")


def distribution_closure(roots: tuple[str, ...]) -> list[metadata.Distribution]:
    """The installed distributions ``roots`` need, with their own requirements (extras left out), transitively."""
    found: dict[str, metadata.Distribution] = {}
    queue = list(roots)
    while queue:
        name = queue.pop().lower().replace("_", "-")
        if name in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an optional requirement this machine does not have
        found[name] = dist
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                queue.append(requirement.name)
    return list(found.values())


def expose(distributions: list[metadata.Distribution], folder: Path) -> set[str]:
    """Symlink each distribution's top-level modules and metadata into ``folder``; returns the names linked."""
    folder.mkdir()
    linked = set()
    for dist in distributions:
        base = Path(str(dist.locate_file("")))
        for top in {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}:
            if top != "__pycache__" and (base / top).exists() and not (folder / top).exists():
                (folder / top).symlink_to(base / top)
                linked.add(top)
    return linked


def bare_venv(root: Path) -> Path:
    """A venv with pip, whose only other packages are torch and ipykernel (and what they need), exposed by a .pth."""
    venv.EnvBuilder(with_pip=True).create(root / "venv")
    python = root / "venv" / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    linked = expose(distribution_closure(KERNEL_PROVIDES), root / "exposed")
    forbidden = {r.import_name for r in notebook_requirements()} | {"autograder"}
    assert not linked & forbidden, f"torch or ipykernel would bring {linked & forbidden}: the test would prove nothing"
    (Path(site) / "kernel-provides.pth").write_text(f"{root / 'exposed'}\n")
    return python


def missing_modules(python: Path, modules: list[str], cwd: Path) -> list[str]:
    """The modules the venv's Python cannot import when started in ``cwd``."""
    code = f"import importlib.util as u; print(','.join(m for m in {modules!r} if u.find_spec(m) is None))"
    result = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True,
                            env=_clean_env(), cwd=cwd)
    return [m for m in result.stdout.strip().split(",") if m]


def _clean_env() -> dict[str, str]:
    """This process's environment without what would show the kernel this repository's copy of the grader."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


@pytest.mark.parametrize("name", available_assignments())
def test_the_generated_notebook_runs_top_to_bottom_on_a_bare_kernel(name: str, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    spec = load_assignment(name)
    release = build_student_release(spec, tmp_path / f"{name}-student", render_template(spec))
    python = bare_venv(tmp_path)
    needed = [r.import_name for r in notebook_requirements()
              if r.python_below is None or sys.version_info < r.python_below]
    assert sorted(missing_modules(python, needed + ["autograder"], tmp_path)) == sorted(needed + ["autograder"])
    assert missing_modules(python, ["torch", "ipykernel"], tmp_path) == []

    kernels = tmp_path / "jupyter" / "kernels" / "bare"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "bare",
        "language": "python", "env": {"PYTHONPATH": "", "PYTHONNOUSERSITE": "1"}}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    notebook = nbformat.read(release / f"{name}.ipynb", as_version=4)
    NotebookClient(notebook, kernel_name="bare", timeout=300, allow_errors=True,
                   resources={"metadata": {"path": str(release)}}).execute()

    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.outputs:
            text = json.dumps(output)
            assert output.output_type != "error" and "Traceback" not in text, (cell.source[:80], text[:2000])
    printed = "".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.outputs)
    assert "not implemented" in printed  # the check cells ran on the untouched stubs
    assert missing_modules(python, needed, tmp_path) == []  # the setup cell installed what was missing
    assert missing_modules(python, ["autograder"], release) == []  # the release beside the notebook is the checker
