"""Read an assignment's ``[figures]`` declaration and load its figure files in the trusted parent."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autograder.errors import AssignmentError
from autograder.probe import helper_sources, run_checks_file
from autograder.spec.assignment import MANIFEST, Assignment
from autograder.util.names import nearest
from autograder.util.tomlio import TOMLDecodeError, load_toml

from . import figures as api

API_MODULE = api.__name__  # the name figure files import the declaration API by, in the parent and the worker
API_SOURCE = Path(api.__file__).read_text(encoding="utf-8")
EXPECTED_FOLDER = "figures/expected"


@dataclass(frozen=True)
class FigureFile:
    """One figure file: its source (sent to the worker), its helpers, and what it declares.

    Attributes:
        path: The file.
        source: Its text.
        helpers: Helper modules beside it (``_name.py``), by name, as for hidden checks.
        probes: Its probes, in declaration order.
        figures: Its figures, in declaration order.
    """

    path: Path
    source: str
    helpers: dict[str, str]
    probes: tuple[api.Probe, ...]
    figures: tuple[api.Figure, ...]


@dataclass(frozen=True)
class Catalog:
    """Every figure an assignment declares.

    Attributes:
        files: The figure files, in manifest order.
        show_expected: Whether the instructor lets the expected figure stand beside the student's.
        expected: Folder of the pre-rendered expected PNGs (``<figure>.png``).
    """

    files: tuple[FigureFile, ...] = ()
    show_expected: bool = False
    expected: Path = field(default_factory=Path)

    @property
    def figures(self) -> list[api.Figure]:
        """All figures, in declaration order."""
        return [figure for file in self.files for figure in file.figures]


def load_catalog(assignment: Assignment) -> Catalog:
    """Load the figures declared in ``assignment.toml``'s ``[figures]`` table.

    The table holds ``files`` (figure files relative to the assignment folder), ``show_expected`` (default
    false) and ``expected`` (folder of expected PNGs, default ``figures/expected``).

    Raises:
        AssignmentError: If the assignment declares no figures or a declaration is broken.
    """
    manifest = assignment.root / MANIFEST
    try:
        table = load_toml(manifest).get("figures")
    except (OSError, TOMLDecodeError) as exc:
        raise AssignmentError(f"cannot read {manifest}: {exc}") from None
    if not isinstance(table, dict) or not table.get("files"):
        raise AssignmentError(f"{assignment.name} declares no figures (a [figures] table with files = [...] in "
                              f"{MANIFEST})")
    files = tuple(_load_file(assignment, str(name)) for name in table["files"])
    _refuse_duplicates(files)
    return Catalog(files=files, show_expected=bool(table.get("show_expected", False)),
                   expected=(assignment.root / str(table.get("expected", EXPECTED_FOLDER))).resolve())


def _load_file(assignment: Assignment, name: str) -> FigureFile:
    path = (assignment.root / name).resolve()
    if assignment.root.resolve() not in path.parents or not path.is_file():
        raise AssignmentError(f"figure file {name!r} of {assignment.name} does not exist")
    source = path.read_text(encoding="utf-8")
    helpers = helper_sources(path)
    compiled = {helper: compile(text, str(path.parent / f"{helper}.py"), "exec") for helper, text in helpers.items()}
    try:
        namespace = run_checks_file(compile(source, str(path), "exec"), compiled, f"_figures_{path.stem}")
    except Exception as exc:  # noqa: BLE001 - the instructor's file: say which one is broken, in one line
        raise AssignmentError(f"figure file {name} cannot be loaded ({type(exc).__name__}: {exc})") from None
    probes = tuple(v for v in namespace.values() if isinstance(v, api.Probe))
    found = tuple(v for v in namespace.values() if isinstance(v, api.Figure))
    for item in probes + found:
        problem = api.check_name(item.name)
        if problem:
            raise AssignmentError(f"{name}: {problem}")
    for item in probes:
        _refuse_unknown_tasks(assignment, name, item)
    for figure in found:
        if not any(figure.probe is p for p in probes):
            raise AssignmentError(f"{name}: figure {figure.name} draws a probe declared in another file")
    if not found:
        raise AssignmentError(f"figure file {name} declares no figure")
    return FigureFile(path=path, source=source, helpers=helpers, probes=probes, figures=found)


def _refuse_unknown_tasks(assignment: Assignment, name: str, probe: api.Probe) -> None:
    """A probe's ``tasks`` and ``reaches`` name tasks whose code it calls: the quiz is none of them."""
    code_tasks = [task.id for task in assignment.tasks]
    unknown = [task for task in probe.tasks + probe.reaches if task not in code_tasks]
    if not unknown:
        return
    code = getattr(probe.function, "__code__", None)  # its first decorator's line: where the tasks are named
    where = f"{name}:{code.co_firstlineno}" if code is not None else name
    meant = nearest(unknown[0], code_tasks)
    raise AssignmentError(f"{where}: probe {probe.name} names unknown tasks {unknown} (the tasks of "
                          f"{assignment.name}: {', '.join(code_tasks)})" + (f" — did you mean {meant}?" if meant else ""))


def _refuse_duplicates(files: tuple[FigureFile, ...]) -> None:
    for kind, names in (("probe", [p.name for f in files for p in f.probes]),
                        ("figure", [g.name for f in files for g in f.figures])):
        seen = {name for name in names if names.count(name) > 1}
        if seen:
            raise AssignmentError(f"{kind} names must be unique across figure files: {sorted(seen)}")
