"""Render a student's figures into a folder (page + PNGs), and the reference's figures as the expected PNGs."""

from __future__ import annotations

import importlib
import queue
import shutil
import time
from contextlib import ExitStack
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.errors import GraderError
from autograder.public.hints import join_names
from autograder.reports.results import ERROR, TIMEOUT
from autograder.sandbox.host import new_scratch
from autograder.spec.assignment import Assignment, load_assignment
from autograder.submission.intake import prepare_submission
from autograder.submission.package import PreparedSubmission
from autograder.util.targets import output_folder

from .page import PageInfo, render_page, write_page
from .panel import DRAWN, Panel
from .outcome import OK, STATUS, ProbeResult, RunOutcome
from .run import run_probes, start_workers, stop_workers
from .upstream import add_upstream_lines

if TYPE_CHECKING:
    from autograder.sandbox.host import Zygote

    from .cache import FigureCache
    from .catalog import Catalog
    from .diagnose import Diagnoser
    from .figures import Figure

# Importing this module does not import torch or matplotlib: render_figures starts the sandboxed workers first, so
# the parent's heavy imports (the catalog, the drawing) overlap the workers' own start.

DIAGNOSIS_MODULE = "autograder.show.diagnose"

EXPECTED_SUBFOLDER = "expected"
# why a figure was not drawn, as the summary counts it ("2 with an error"); a status not named here is said as it is
_NOT_DRAWN = {OK: "could not be drawn", STATUS[ERROR]: "with an error", STATUS[TIMEOUT]: "timed out"}


@dataclass(frozen=True)
class Rendered:
    """What was written.

    Attributes:
        folder: The output folder.
        page: Its ``index.html``.
        panels: The figures, in page order.
        outcome: How each probe went.
        seconds: Wall time from the call to the written page.
        expected: Figure name to its expected PNG, relative to the folder (where one stands beside the student's).
        reading: What reading a notebook found that the student should know (a cell with a syntax error, ...).
        redrawn: The figures drawn by this run, in page order; the others were found whole in the figure cache
            (their probe's code did not change).
        left_out: For the instructor, one line per known mistake the diagnosis could not use (stale, or not
            importing: ``Diagnoser.left_out``); never on the page.
        choice: The intake's sentence on what was drawn when a package stands beside a notebook
            (``PreparedSubmission.choice``; empty when there was no choice to make).
    """

    folder: Path
    page: Path
    panels: list[Panel]
    outcome: RunOutcome
    seconds: float = 0.0
    expected: dict[str, str] = field(default_factory=dict)
    reading: list[str] = field(default_factory=list)
    redrawn: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    choice: str = ""

    @property
    def drawn(self) -> int:
        """How many figures were drawn (the others are placeholders)."""
        return sum(panel.status == DRAWN for panel in self.panels)

    def summary(self) -> str:
        """One line: how many figures were drawn and how many of those show a ✗, why the others were not (the
        figures that timed out by name: which one's code to look at for a loop), how long it took."""
        missing: dict[str, list[str]] = {}
        for panel in self.panels:
            if panel.status != DRAWN:
                missing.setdefault(_NOT_DRAWN.get(panel.probe_status, panel.probe_status), []).append(panel.figure.name)
        details = ", ".join(f"{len(names)} {why}" + (f": {join_names(names)}" if why == _NOT_DRAWN[STATUS[TIMEOUT]]
                                                      else "") for why, names in missing.items())
        wrong = sum(panel.status == DRAWN and panel.shows_wrong for panel in self.panels)
        return (f"{self.drawn} of {len(self.panels)} figures drawn" + (f", {wrong} with a ✗" if wrong else "")
                + (f" ({details})" if details else "") + f" in {self.seconds:.1f} s")

    def terminal_lines(self, headline: str, choice: bool = True) -> str:
        """What a terminal prints of the page: the run's notes (a module that cannot be imported, with its file and
        line, as the page and a notebook list them), ``headline`` (the summary) and the page's path.

        Args:
            headline: The summary line.
            choice: Whether to say the intake's choice of what was drawn (a watch says it again only when it
                changes; the page always says it).
        """
        notes = "".join(f"note: {note}\n" for note in self.outcome.notes if choice or note != self.choice)
        return f"{notes}{headline}\npage: {self.page}\n"


def _resolve(assignment: Assignment | str) -> Assignment:
    return assignment if isinstance(assignment, Assignment) else load_assignment(assignment)


def default_folder(assignment: Assignment, work: Path) -> Path:
    """Beside the work, never inside it: ``<work>/../<package>-figures/``."""
    return work.parent / f"{assignment.package}-figures"


def render_figures(assignment: Assignment | str, path: Path | str | None = None, out: Path | str | None = None,
                   expected: bool | None = None, workers: int | None = None, expected_folder: Path | None = None,
                   zygotes: list[Zygote] | None = None, source: str | None = None, cache: bool = True,
                   prepared: PreparedSubmission | None = None) -> Rendered:
    """Run the assignment's figure probes on the student's code in the sandbox and draw the page.

    Args:
        assignment: The assignment (or its name).
        path: What the student gave (a package folder, a folder holding it, a notebook or a zip; default
            this folder), found by the one intake (:func:`autograder.submission.intake.prepare_submission`).
        out: The output folder (default :func:`default_folder`); ``index.html`` and ``<figure>.png`` go there.
        expected: Place the expected figures beside the student's (default: the manifest's ``show_expected``;
            only where the pre-rendered PNGs exist).
        workers: Sandboxed workers (default: as many as grading one submission starts here; see
            :func:`autograder.show.run.start_workers`).
        expected_folder: Where the expected PNGs are (default: the manifest's ``expected`` folder).
        zygotes: Sandboxed workers already started (``grade-all``'s), left running; new ones by default.
        source: Where the code came from, as the page names it (default: the work's path; a notebook's package
            is extracted into a temporary folder whose name would mean nothing to the student).
        cache: Keep the probes' results in ``<out>/.cache/`` by the digest of the code they ran, and reuse those
            whose code did not change (``show/cache.py``); False runs every probe and keeps nothing.
        prepared: What the one intake already made of the work (``grade-all``'s copy, so the figures show the
            code that was graded); ``path`` is then not read again.

    Returns:
        What was written.

    Raises:
        GraderError: On bad input (unknown assignment, no figures declared, missing path, no package there).
    """
    started = time.monotonic()
    spec = _resolve(assignment)
    with ExitStack() as cleanup:
        if prepared is None:  # the one intake, here: the probes run on this copy
            intake = new_scratch(prefix="grader-show-intake-")
            cleanup.callback(shutil.rmtree, intake, ignore_errors=True)
            prepared = prepare_submission(Path(path).expanduser() if path is not None else None, spec, intake)
        return _render(spec, prepared, out, expected, workers, expected_folder, zygotes, source, started, cache)


def _render(spec: Assignment, prepared: PreparedSubmission, out: Path | str | None, expected: bool | None,
            workers: int | None, expected_folder: Path | None, zygotes: list[Zygote] | None, source: str | None,
            started: float, cache: bool = True) -> Rendered:
    """render_figures on the work the intake prepared."""
    work = prepared.shown.resolve()
    folder = Path(out).expanduser().resolve() if out is not None else default_folder(spec, work)
    if folder == work or work in folder.parents:
        raise GraderError(f"refusing to write the figures into the work itself ({work}); choose another --out")
    _check_folder(folder, out is not None)
    own = start_workers(spec, workers) if zygotes is None and declares_figures(spec) else None
    try:
        from .catalog import load_catalog  # torch loads here, while the first worker starts

        catalog = load_catalog(spec)
        _prepare_folder(folder, catalog)
        kept = _cache(folder, spec, catalog, prepared) if cache else None
        arrived: queue.SimpleQueue[tuple[str, ProbeResult] | None] = queue.SimpleQueue()
        redrawn: set[str] = set()
        with ThreadPoolExecutor(1) as pool:
            running = pool.submit(run_probes, spec, catalog, prepared, workers, lambda *item: arrived.put(item),
                                  zygotes or own, kept)
            running.add_done_callback(lambda _: arrived.put(None))  # ends the drawing loop, even if the run fails
            if kept is None or not kept.found_whole(catalog.figures):
                # matplotlib loads while the probes run: after the first result (a re-run's only one), it would
                # lengthen the page by its time
                importlib.import_module(".draw", __package__)
            drawn = _draw_as_they_arrive(catalog, arrived, folder, kept, redrawn)
        outcome = running.result()
        panels = [drawn.get(figure.name) or _draw(figure, outcome.probes.get(figure.probe.name), folder, kept,
                                                  redrawn)
                  for figure in catalog.figures]
        diagnoser = grading_diagnoser(spec, catalog)
        if diagnoser is not None:
            diagnoser.diagnose(panels, outcome, zygotes or own)
        left_out = diagnoser.left_out if diagnoser is not None else []
    finally:
        if own is not None:
            stop_workers(own)
    add_upstream_lines(spec, panels)  # from this run's panels, the cached ones too: never kept in the cache
    show_expected = catalog.show_expected if expected is None else expected
    beside = _copy_expected(expected_folder or catalog.expected, catalog, folder) if show_expected else {}
    info = PageInfo(assignment=spec.name, title=spec.title, source=source or str(work), isolation=outcome.isolation,
                    notes=tuple(outcome.notes), printed=outcome.printed, seconds=outcome.seconds)
    page = write_page(folder, render_page(info, panels, beside))
    return Rendered(folder=folder, page=page, panels=panels, outcome=outcome,
                    seconds=round(time.monotonic() - started, 2), expected=beside, reading=prepared.reading,
                    redrawn=[panel.figure.name for panel in panels if panel.figure.name in redrawn], left_out=left_out,
                    choice=prepared.choice)


def _cache(folder: Path, spec: Assignment, catalog: Catalog, prepared: PreparedSubmission) -> FigureCache:
    from .cache import FigureCache  # imports the catalog's torch, loaded by now

    return FigureCache.beside(folder, spec, catalog, prepared.package_dir)


def _check_folder(folder: Path, given: bool) -> None:
    """The page's folder can be written, checked before the sandbox starts (the default one beside the work too)."""
    try:
        output_folder(folder, "--out" if given else "the figures' folder")
    except GraderError as exc:
        if given:
            raise
        raise GraderError(f"{exc}; choose another with --out") from None


def _draw_as_they_arrive(catalog: Catalog, arrived: queue.SimpleQueue[tuple[str, ProbeResult] | None],
                         folder: Path, kept: FigureCache | None, redrawn: set[str]) -> dict[str, Panel]:
    """Draw each figure as soon as its probe's result arrives, while the slower probes still run (the parent's
    drawing overlaps the sandbox's work instead of following it); None in ``arrived`` says the run has ended."""
    drawn: dict[str, Panel] = {}
    while True:
        item = arrived.get()
        if item is None:  # every result was put before the run ended
            return drawn
        name, result = item
        for figure in (f for f in catalog.figures if f.probe.name == name):
            drawn[figure.name] = _draw(figure, result, folder, kept, redrawn)


def _draw(figure: Figure, result: ProbeResult | None, folder: Path, kept: FigureCache | None,
          redrawn: set[str]) -> Panel:
    """The figure as kept in the cache when its probe's result is, else drawn now (named in ``redrawn``, and kept
    if its result is)."""
    panel = kept.panel(figure, folder) if kept is not None else None
    if panel is not None:
        return panel
    from .draw import draw_panel  # matplotlib loads here, once the workers are starting (never if all are kept)

    panel = draw_panel(figure, result, folder)
    redrawn.add(figure.name)
    if kept is not None:
        kept.keep_panel(panel, folder)
    return panel


def declares_figures(assignment: Assignment) -> bool:
    """Whether the manifest has a [figures] table (cheap: no torch; the release, the batch and the notebook
    generator ask; load_catalog says what is wrong with one)."""
    from autograder.spec.assignment import MANIFEST
    from autograder.util.tomlio import load_toml

    try:
        return isinstance(load_toml(assignment.root / MANIFEST).get("figures"), dict)
    except Exception:  # noqa: BLE001 - load_catalog reports the manifest's problem in one line
        return False


def grading_diagnoser(assignment: Assignment, catalog: Catalog) -> Diagnoser | None:
    """The judge's diagnosis of what the figures show wrong, where the grading material is present (the
    instructor's copy); None in the student release, which names no cause.

    ``show/diagnose.py`` is imported by name, not by an import statement: the release's static closure
    (``authoring/closure.py``) then leaves it out of the student's copy, with the judge it imports, so a cause
    cannot be named there even if the assignment's known mistakes were copied beside it.
    """
    try:
        module = importlib.import_module(DIAGNOSIS_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name != DIAGNOSIS_MODULE:
            raise  # the instructor's copy with a broken dependency: say so, never drop the diagnosis silently
        return None  # the student release
    return module.Diagnoser.where_material(assignment, catalog)


def _prepare_folder(folder: Path, catalog: Catalog) -> None:
    """Create the folder; remove what an earlier run wrote there (only files this command writes)."""
    folder.mkdir(parents=True, exist_ok=True)
    for figure in catalog.figures:
        (folder / f"{figure.name}.png").unlink(missing_ok=True)
    shutil.rmtree(folder / EXPECTED_SUBFOLDER, ignore_errors=True)


def _copy_expected(expected: Path, catalog: Catalog, folder: Path) -> dict[str, str]:
    """Copy the pre-rendered expected PNGs beside the page; figure name to the relative path of each one found."""
    found: dict[str, str] = {}
    for figure in catalog.figures:
        source = expected / f"{figure.name}.png"
        if source.is_file() and not source.is_symlink():
            target = folder / EXPECTED_SUBFOLDER / source.name
            target.parent.mkdir(exist_ok=True)
            shutil.copyfile(source, target)
            found[figure.name] = f"{EXPECTED_SUBFOLDER}/{source.name}"
    return found


def render_expected(assignment: Assignment | str, destination: Path | str | None = None,
                    scratch: Path | None = None) -> list[Path]:
    """Render the reference solution's figures as the expected PNGs (images only: no code, no numbers).

    ``grader release`` can call this to carry them in the student release (``figures/expected/<figure>.png``).

    Args:
        assignment: The assignment (or its name).
        destination: Where the PNGs go (default: the manifest's ``expected`` folder, ``figures/expected/``).
        scratch: A folder for the intermediate page (default: beside the destination, removed afterwards).

    Returns:
        The PNGs written.

    Raises:
        GraderError: If the reference has no package or one of its figures cannot be drawn (a broken figure file).
    """
    from .catalog import load_catalog

    spec = _resolve(assignment)
    catalog = load_catalog(spec)
    target = Path(destination).resolve() if destination is not None else catalog.expected
    if destination is None:  # --out is checked by the CLI; the manifest's folder is checked here, before drawing
        output_folder(target, "the expected figures' folder (the manifest's [figures] expected)")
    work = target.parent / f".{target.name}-rendering" if scratch is None else scratch
    try:
        rendered = render_figures(spec, spec.reference, work, expected=False)
        broken = [panel for panel in rendered.panels if panel.status != DRAWN]
        if broken:
            raise GraderError(f"the reference's figure {broken[0].figure.name} was not drawn: {broken[0].reason}")
        target.mkdir(parents=True, exist_ok=True)
        written = []
        for panel in rendered.panels:
            shutil.copyfile(work / panel.image, target / panel.image)
            written.append(target / panel.image)
        return written
    finally:
        if scratch is None:
            shutil.rmtree(work, ignore_errors=True)


def release_figures(assignment: Assignment | str, target: Path) -> list[Path]:
    """What the student release needs for ``grader show``: the figure files (and helpers) and, where the
    instructor allows it, the expected PNGs. ``target`` is the release's ``assignments/<name>/`` folder.

    Returns:
        The files written.
    """
    from .catalog import load_catalog

    spec = _resolve(assignment)
    catalog = load_catalog(spec)
    sources = dict.fromkeys(source for file in catalog.files  # a helper shared by several files is copied once
                            for source in [file.path] + [file.path.parent / f"{name}.py" for name in file.helpers])
    written = []
    for source in sources:
        destination = target / source.relative_to(spec.root)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
        written.append(destination)
    if catalog.show_expected:
        written += render_expected(spec, target / catalog.expected.relative_to(spec.root.resolve()))
    return written
