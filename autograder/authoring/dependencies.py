"""What a student's ``grader check`` and ``grader show`` need installed: the grader's runtime dependencies from
``pyproject.toml`` without the instructor-only ones (one source for the student release's project file and the
notebook's setup cell)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from autograder.errors import TemplateError
from autograder.util.paths import project_file
from autograder.util.tomlio import load_toml

# Runtime dependencies neither `grader check` nor `show` imports: progress bars, the export reader, the tables, and
# the gradebook's database library and migrations (only the instructor commands open a gradebook).
INSTRUCTOR_ONLY = ("tqdm", "pyyaml", "tabulate", "sqlalchemy", "alembic")
SHOW_ONLY = ("matplotlib", "jinja2")  # runtime dependencies only `grader show` imports (it draws, and writes a page)
# Never installed by the notebook: torch is a large download that must match the course's pin; the others are
# requirements of torch (jinja2) or of every Jupyter kernel (platformdirs, through jupyter_core).
KERNEL_PROVIDED = ("torch", "jinja2", "platformdirs")

_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9_.-]*)\s*([^;]*?)\s*(?:;\s*(.*?))?\s*$")
_PYTHON_BELOW = re.compile(r"""^python_version\s*<\s*['"](\d+)\.(\d+)['"]$""")


@dataclass(frozen=True)
class Requirement:
    """One runtime dependency.

    Attributes:
        name: The distribution's name (``matplotlib``).
        text: What pip is given (``matplotlib>=3.7``), without its environment marker.
        import_name: The module it provides, to test whether it is installed (the name, ``-`` as ``_``).
        python_below: Needed only below this Python version (``python_version < '3.11'``), else None.
    """

    name: str
    text: str
    import_name: str
    python_below: tuple[int, int] | None = None


def runtime_requirements() -> list[Requirement]:
    """The grader's runtime dependencies a student needs (``[project] dependencies`` minus INSTRUCTOR_ONLY).

    Raises:
        TemplateError: On an environment marker other than ``python_version < 'X.Y'`` (the notebook's setup cell
            evaluates only that one).
    """
    found = []
    for line in load_toml(project_file("the student notebook"))["project"]["dependencies"]:
        match = _REQUIREMENT.match(line)
        if match is None or match.group(1).lower() in INSTRUCTOR_ONLY:
            continue
        name, version, marker = match.group(1), match.group(2), match.group(3)
        below = None
        if marker:
            python = _PYTHON_BELOW.match(marker)
            if python is None:
                raise TemplateError(f"pyproject.toml: the notebook's setup cell cannot evaluate the marker {marker!r} "
                                    f"of {name} (only python_version < 'X.Y')")
            below = (int(python.group(1)), int(python.group(2)))
        found.append(Requirement(name, f"{name}{version}", name.lower().replace("-", "_"), below))
    return found


def student_dependencies(figures: bool) -> list[str]:
    """The ``[project] dependencies`` entries of the student release's project file, as the grader's declares them
    (with their markers): all but INSTRUCTOR_ONLY, and but SHOW_ONLY when the release has no ``grader show``.

    Args:
        figures: The release ships ``grader show`` (its assignment declares figures).
    """
    left_out = INSTRUCTOR_ONLY + (() if figures else SHOW_ONLY)
    lines = load_toml(project_file("the student release"))["project"]["dependencies"]
    return [line for line in lines if _name(line) not in left_out]


def _name(requirement: str) -> str:
    """A requirement's distribution name, lowercase (``PyYAML>=6`` -> ``pyyaml``)."""
    match = _REQUIREMENT.match(requirement)
    return match.group(1).lower() if match else requirement.strip().lower()


def notebook_requirements() -> list[Requirement]:
    """What the notebook's setup cell installs when missing: every runtime requirement but torch."""
    return [r for r in runtime_requirements() if r.name.lower() not in KERNEL_PROVIDED]
