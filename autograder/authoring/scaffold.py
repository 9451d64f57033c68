"""``grader new NAME``: scaffold a complete assignment that ``verify``, ``audit`` and ``release`` accept as it is."""

from __future__ import annotations

import zlib
from pathlib import Path

from autograder.errors import AssignmentError
from autograder.spec.assignment import MANIFEST, available_assignments, load_assignment
from autograder.util.paths import PACKAGE_DIR

SOURCE = PACKAGE_DIR / "templates" / "new"
# template file -> where it goes: under the assignment's folder, or (``reference:``) the reference package.
FILES = {
    "assignment.toml": MANIFEST,
    "STUDENT_README.md": "STUDENT_README.md",
    "quiz.toml": "quiz.toml",
    "quiz_key.toml": "hidden/quiz_key.toml",
    "checks_softmax.py": "hidden/checks/softmax.py",
    "mistakes_softmax.toml": "hidden/mistakes/softmax.toml",
    "variants_softmax.toml": "hidden/variants/softmax.toml",
    "public_conftest.py": "public_tests/conftest.py",
    "public_test_ops.py": "public_tests/test_ops.py",
    "figure_temperature.py": "figures/temperature.py",
    "figures_gitignore": "figures/.gitignore",  # the expected PNGs are rendered, never committed
    "reference_init.py": "reference:__init__.py",
    "reference_ops.py": "reference:ops.py",
    "answers.toml": "reference:answers.toml",
}


def new_assignment(name: str, root: Path) -> list[Path]:
    """Write the assignment ``name`` under ``root`` (its reference beside ``root``, in ``reference_solutions/``)
    and generate its student template, as ``grader template`` does.

    Args:
        name: The assignment's (and the student package's) name: a Python identifier.
        root: The folder of assignments (``autograder.cli.new``: the course's, or a new one).

    Returns:
        The files written, the template's last.

    Raises:
        AssignmentError: If the name is not an identifier or the assignment, its reference or its template exists.
    """
    from autograder.authoring.template import generate_template

    folder, reference = root / name, root.parent / "reference_solutions" / name
    if not name.isidentifier() or name.startswith("_"):
        raise AssignmentError(f"{name!r} cannot name an assignment: use a Python identifier (it is the package "
                              f"students import), e.g. rope_attention")
    taken = [p for p in (folder, reference, root.parent / "student_template" / name) if p.exists()]
    if taken or name in available_assignments(root):
        raise AssignmentError(f"{taken[0] if taken else folder} already exists; choose another name or remove it")
    values = {"@@NAME@@": name, "@@SEED@@": str(zlib.crc32(name.encode()))}
    written = []
    for template, target in FILES.items():
        text = (SOURCE / f"{template}.tmpl").read_text(encoding="utf-8")
        for placeholder, value in values.items():
            text = text.replace(placeholder, value)
        destination = reference / target.split(":", 1)[1] if target.startswith("reference:") else folder / target
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(text, encoding="utf-8")
        written.append(destination)
    template_folder = generate_template(load_assignment(name, root))
    notebook = template_folder.parent / f"{name}.ipynb"
    return written + sorted(p for p in template_folder.rglob("*") if p.is_file()) + [notebook]
