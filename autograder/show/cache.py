"""Figure results kept beside the page (``<out>/.cache/``), keyed by the digest of exactly the code a probe ran.

A probe's key digests the grader's version, the assignment's seed, the declaration API, the probe's figure file
(with its helpers), the probe's name and time limit, the modules the sandbox could not import, and the student's
code the probe reaches: the functions of the tasks it declares (``@probe(reaches=...)``, else ``tasks=``) and,
transitively, what they ``uses`` in the manifest, plus every module's code outside the tasks' functions (a
helper, an import, a constant may reach anything). A probe that declares neither reaches all of the student's
code. The function
digests are ``grader check --watch``'s (:func:`autograder.public.watch.code_digests`: a comment or a blank line
changes nothing).

Only a probe that gave outputs and printed nothing is kept (a failure, a time-out or printed text is run again,
so the page's "what your code printed" is always this run's). What is kept is the worker's own transport (its
JSON description and safetensors bytes), decoded on reuse by the same untrusted-input decoder as a fresh result.
Each figure drawn from a kept result is kept too (its PNG and notes, under the probe's key and the drawing code's
digest), so a re-run draws only the figures whose probe ran again.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import autograder
from autograder.grading.records import seconds_of
from autograder.judge.transport import TransportError, decode_outputs
from autograder.public.watch import QUIZ, REST, code_digests
from autograder.spec.assignment import Assignment
from autograder.util.atomic import write_atomic

from .catalog import API_SOURCE, Catalog
from .figures import Figure, Probe
from .outcome import OK, ProbeResult
from .panel import Panel

CACHE_FOLDER = ".cache"
IMPORTS = "imports"
DRAWING = Path(__file__).with_name("draw.py")  # read, not imported: a page found whole never loads matplotlib


def grader_version() -> str:
    """The grader's version (part of every key: a new grader recomputes every figure)."""
    return autograder.__version__


def reached(assignment: Assignment, tasks: tuple[str, ...]) -> set[str] | None:
    """The qualified function names a probe declaring ``tasks`` reaches (:meth:`Assignment.reaches`); None for a
    probe that declares none (it may reach anything)."""
    return assignment.reaches(tasks) if tasks else None


@dataclass
class FigureCache:
    """The kept results of one page's probes (see the module docstring).

    Args:
        folder: The cache folder (``<out>/.cache``).
        common: What every key shares (grader version, seed, API).
        digests: The student's code, digest per function and per module's other code.
        files: Probe name to the digest of its figure file and helpers.
        reach: Probe name to the function names it reaches (None: all).
        good: Probe name to its key, for each probe whose result was found here or kept this run (the figures
            drawn from these are kept too).
    """

    folder: Path
    common: str
    digests: dict[str, str]
    files: dict[str, str]
    reach: dict[str, set[str] | None]
    good: dict[str, str] = field(default_factory=dict)

    @classmethod
    def beside(cls, page_folder: Path, assignment: Assignment, catalog: Catalog, package: Path) -> FigureCache:
        """The cache of the page in ``page_folder`` for the student's package copied at ``package``."""
        common = _digest(grader_version(), str(assignment.seed), API_SOURCE, DRAWING.read_text(encoding="utf-8"))
        files, reach = {}, {}
        for file in catalog.files:
            source = _digest(file.source, *(f"{name}\0{file.helpers[name]}" for name in sorted(file.helpers)))
            for probe in file.probes:
                files[probe.name] = source
                reach[probe.name] = reached(assignment, probe.calls)
        digests = {key: value for key, value in code_digests(assignment, package).items() if key != QUIZ}
        return cls(page_folder / CACHE_FOLDER, common, digests, files, reach)

    def key(self, probe: Probe, broken: dict[str, str]) -> str:
        """The digest of exactly what ``probe`` ran on (see the module docstring)."""
        reach = self.reach[probe.name]
        code = sorted((name, value) for name, value in self.digests.items()
                      if reach is None or name in reach or name.endswith(f".{REST}"))
        return _digest(self.common, self.files[probe.name], probe.name, f"{probe.timeout:g}",
                       json.dumps(code), json.dumps(sorted(broken.items())))

    def imports_key(self) -> str:
        """The key of the import check: all of the student's code."""
        return _digest(self.common, IMPORTS, json.dumps(sorted(self.digests.items())))

    def lookup(self, probe: Probe, broken: dict[str, str]) -> ProbeResult | None:
        """The kept result of ``probe``, decoded as a fresh one is; None if there is none (or it cannot be read)."""
        key = self.key(probe, broken)
        stored = self._read(key)
        if stored is None:
            return None
        entry, tensors = stored
        try:
            outputs = decode_outputs(entry.get("values"), tensors)
        except TransportError:
            return None  # a damaged entry: run the probe again
        self.good[probe.name] = key
        return ProbeResult(OK, "", outputs, seconds_of(entry.get("seconds")))

    def keep(self, probe: Probe, broken: dict[str, str], result: ProbeResult, printed: bool) -> None:
        """Keep ``result`` if it is good: outputs, nothing printed, its transport known."""
        if result.status != OK or printed or result.transport is None:
            return
        values, tensors = result.transport
        key = self.key(probe, broken)
        self._write(key, {"values": values, "seconds": result.seconds}, tensors)
        self.good[probe.name] = key

    def panel(self, figure: Figure, folder: Path) -> Panel | None:
        """The kept drawing of ``figure`` (its PNG copied into ``folder``), if its probe's result is good here."""
        key = self.good.get(figure.probe.name)
        stored = self._read(f"{key}.{figure.name}") if key is not None else None
        image = self.folder / f"{key}.{figure.name}.png"
        if stored is None or not image.is_file():
            return None
        entry = stored[0]
        shutil.copyfile(image, folder / f"{figure.name}.png")
        return Panel(figure, f"{figure.name}.png", str(entry["status"]), str(entry["reason"]),
                     [(str(kind), str(text)) for kind, text in entry["notes"]], str(entry["probe_status"]))

    def keep_panel(self, panel: Panel, folder: Path) -> None:
        """Keep a figure drawn from a good result (its PNG and what the page lists under it)."""
        key = self.good.get(panel.figure.probe.name)
        if key is None:
            return
        name = f"{key}.{panel.figure.name}"
        write_atomic(self.folder / f"{name}.png", (folder / panel.image).read_bytes())
        self._write(name, {"status": panel.status, "reason": panel.reason, "notes": panel.notes,
                           "probe_status": panel.probe_status}, None)

    def found_whole(self, figures: list[Figure]) -> bool:
        """Whether every one of ``figures`` is kept, drawn, for this code (its import check kept clean too): the
        page then needs no drawing, so matplotlib need not load."""
        return self.lookup_imports() and all(
            self._entry(f"{self.key(figure.probe, {})}.{figure.name}").is_file() for figure in figures)

    def lookup_imports(self) -> bool:
        """Whether this code is known to import cleanly (no module broken, nothing printed)."""
        return self._read(self.imports_key()) is not None

    def keep_imports(self, broken: dict[str, str], printed: bool) -> None:
        """Keep a clean import check (a broken module or printed text is checked again each run)."""
        if not broken and not printed:
            self._write(self.imports_key(), {"imports": "clean"}, None)

    def prune(self, keys: set[str]) -> None:
        """Remove entries other than ``keys`` (earlier versions of the code): the folder stays one page's size."""
        if not self.folder.is_dir():
            return
        for path in self.folder.iterdir():
            if path.name.split(".")[0] not in keys:
                path.unlink(missing_ok=True)

    def _read(self, key: str) -> tuple[dict[str, Any], bytes | None] | None:
        try:
            entry = json.loads(self._entry(key).read_text(encoding="utf-8"))
            tensors = self.folder / f"{key}.safetensors"
            return entry, tensors.read_bytes() if entry.get("tensors") else None
        except (OSError, ValueError):
            return None  # none kept, or a damaged entry: the probe runs again

    def _write(self, key: str, entry: dict[str, Any], tensors: bytes | None) -> None:
        """Write an entry atomically (its tensors first): a run killed half-way leaves no half entry."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if tensors is not None:
            write_atomic(self.folder / f"{key}.safetensors", tensors)
        write_atomic(self._entry(key), json.dumps({**entry, "tensors": tensors is not None}).encode())

    def _entry(self, name: str) -> Path:
        """The file of an entry (a probe's result by its key, or a figure drawn from it: ``<key>.<figure>``)."""
        return self.folder / f"{name}.json"


def _digest(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()
