"""Where a line of an extracted module comes from: a notebook cell and its line, or text the grader wrote."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Span:
    """Consecutive lines of an extracted module that come from one place.

    Attributes:
        first: The span's first line in the extracted file (1-based).
        last: Its last line.
        cell: The label of the cell the lines come from (``cell 7``, ``In [5]``); '' for lines the grader wrote.
        cell_line: The cell's line that ``first`` is (0 when the lines are not the cell's own text, line for line).
        what: What the lines are, said when they are not from a cell (``the template's imports``).
        stub: The function or class whose grader's stub the lines are ('' for anything else).
    """

    first: int
    last: int
    cell: str = ""
    cell_line: int = 0
    what: str = ""
    stub: str = ""


@dataclass(frozen=True)
class Unreadable:
    """A cell that could not be parsed: it defines nothing, so the grader's stubs stand in for what it meant to.

    Attributes:
        cell: Its label (``cell 7``, ``In [5]``).
        first_line: Its first line, as the student knows it.
        line: The cell's line of the syntax error (0 when unknown).
        message: Python's words for the error (``'(' was never closed``).
        defines: The top-level functions and classes its text seems to define (its ``def``/``class`` lines).
    """

    cell: str
    first_line: str
    line: int
    message: str
    defines: tuple[str, ...] = ()

    def note(self) -> str:
        """The note the extraction gives the student about this cell."""
        where = f" at line {self.line}" if self.line else ""
        return (f"{self.cell} ({self.first_line!r}) has a syntax error{where}: {self.message}; its definitions were "
                f"not graded")

    def error_words(self) -> str:
        """The error as the student is sent to fix it: ``the syntax error in cell 7 (line 3: '(' was never
        closed)``: the one wording of an unreadable cell every surface uses, as :func:`place` is for a line."""
        where = f"line {self.line}: " if self.line else ""
        return f"the syntax error in {self.cell} ({where}{self.message})"


@dataclass
class CellMap:
    """Every extracted module's lines, by where they come from; recorded while the modules are laid out.

    Attributes:
        spans: The extracted file's name (``attention.py``) to its spans, in order.
    """

    spans: dict[str, list[Span]] = field(default_factory=dict)
    unreadable: list[Unreadable] = field(default_factory=list)

    def unreadable_defining(self, names: Iterable[str]) -> list[Unreadable]:
        """The unreadable cells whose text defines any of ``names`` (their stubs stand in for them)."""
        wanted = set(names)
        return [cell for cell in self.unreadable if wanted & set(cell.defines)]

    def stubbed(self, names: Iterable[str]) -> list[str]:
        """``names`` when the grader's stubs stand in for every one of them (no cell read, or in a kernel run,
        defines them), else none."""
        wanted, stubs = list(names), {span.stub for spans in self.spans.values() for span in spans if span.stub}
        return wanted if wanted and all(name in stubs for name in wanted) else []

    def place(self, file: str, line: int) -> str | None:
        """The notebook's words for a line of an extracted file (``cell 7, line 3``), or what the grader wrote
        there when no cell holds it; None when the file is not an extracted module."""
        name = file.replace("\\", "/").rsplit("/", 1)[-1]
        spans = self.spans.get(name)
        if spans is None:
            return None
        if not line:
            return f"the extracted {name}"
        span = next((s for s in spans if s.first <= line <= s.last), None)
        if span is None:
            return f"line {line} of the extracted {name}, not a line of a cell"
        if span.cell and span.cell_line:
            return f"{span.cell}, line {span.cell_line + line - span.first}"
        unread = self.unreadable_defining([span.stub]) if span.stub else []
        if unread:
            return f"{unread[-1].error_words()} kept {span.stub} from being read"
        if span.cell:  # the grader rewrote the cell's code (definitions that need each other at import)
            return f"the grader's rearrangement of the code of {span.cell} (line {line} of the extracted {name})"
        return f"{span.what}, not a line of a cell (line {line} of the extracted {name})"

    def cells_of(self, file: str) -> list[str]:
        """The cells (their labels, in the file's order, each once) whose code an extracted file holds."""
        return list(dict.fromkeys(span.cell for span in self.spans.get(file, []) if span.cell))

    def to_data(self) -> dict[str, Any]:
        """Plain data for a process that cannot receive objects (the public tests' worker)."""
        return {"spans": {name: [[s.first, s.last, s.cell, s.cell_line, s.what, s.stub] for s in spans]
                          for name, spans in self.spans.items()},
                "unreadable": [[u.cell, u.first_line, u.line, u.message, list(u.defines)] for u in self.unreadable]}

    @classmethod
    def from_data(cls, data: Any) -> CellMap | None:
        """The map :meth:`to_data` wrote (None for anything else, e.g. a package's check, which has none)."""
        if not isinstance(data, dict) or not isinstance(data.get("spans"), dict):
            return None
        try:
            spans = {str(name): [Span(int(a), int(b), str(c), int(d), str(e), str(f)) for a, b, c, d, e, f in spans]
                     for name, spans in data["spans"].items()}
            unreadable = [Unreadable(str(a), str(b), int(c), str(d), tuple(str(n) for n in e))
                          for a, b, c, d, e in data.get("unreadable", [])]
        except (TypeError, ValueError):
            return None
        return cls(spans, unreadable)


def place(file: str, line: int, cells: CellMap | None = None) -> str:
    """How a student is told a line of their code: ``attention.py, line 42`` for a package, the cell and its line
    for a notebook's extracted module (the one function every surface calls for a location).

    Args:
        file: The file as the surface names it (``assignment3/attention.py``, ``attention.py``).
        line: The line (0 when unknown).
        cells: The notebook's map of its extracted modules; None for a package (or when the student asked for
            the extracted files, ``--show-extracted``, which are then named).
    """
    located = cells.place(file, line) if cells is not None else None
    if located is not None:
        return located
    return f"{file}, line {line}" if line else file


def module_words(module: str, cells: CellMap | None = None) -> str:
    """How a student is told one of their modules as a whole (``kv_cache.py cannot be imported``): its file for a
    package; for a notebook, which has no such file, the cells its code came from (``the kv_cache code of cells
    30 and 36``). The one wording every surface uses, as :func:`place` is for a line.

    Args:
        module: The module's name (``kv_cache``).
        cells: The notebook's map of its extracted modules; None for a package.
    """
    if cells is None or f"{module}.py" not in cells.spans:
        return f"{module}.py"
    labels = cells.cells_of(f"{module}.py")
    if not labels:
        return f"the notebook's {module} code"
    if len(labels) == 1:
        return f"the {module} code of {labels[0]}"
    if all(label.startswith("cell ") for label in labels):  # cells 32, 33 and 36 (a kernel's In [n] stay whole)
        labels = ["cells " + labels[0].removeprefix("cell ")] + [label.removeprefix("cell ") for label in labels[1:]]
    return f"the {module} code of {', '.join(labels[:-1])} and {labels[-1]}"
