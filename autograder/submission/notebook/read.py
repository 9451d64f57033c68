"""Read a notebook's code cells as plain JSON (never executed) and neutralise IPython-only syntax."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.errors import NotebookError

# nbformat is not imported here: its import costs seconds (jsonschema), which would dominate grading a notebook.
# The file format (nbformat 4, and nbformat 3's worksheets) is plain JSON and read as such.
NOTEBOOK_SUFFIX = ".ipynb"


MAX_NOTEBOOK_BYTES = 100 * 1024 * 1024  # embedded output images make real notebooks large; only sources are kept


# Cell magics whose body is Python that IPython runs (timed, captured): the body is kept, the magic line dropped.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})


_HELP = re.compile(r"^[A-Za-z_][\w.]*(\(.*\))?\?{1,2}$")


_SHELL_ASSIGN = re.compile(r"^[A-Za-z_][\w.,\s]*=\s*[!%]")


@dataclass(frozen=True)
class Cell:
    """One code cell as the extraction sees it.

    Attributes:
        label: How messages name it: ``cell 7`` (its position among all cells) or ``In [5]`` (kernel history).
        source: Its text.
    """

    label: str
    source: str

    @property
    def first_line(self) -> str:
        line = next((line.strip() for line in self.source.split("\n") if line.strip()), "")
        return line if len(line) <= 60 else line[:57] + "..."


def is_notebook(path: Path) -> bool:
    """Whether ``path`` names a notebook file (by its suffix)."""
    return path.suffix.lower() == NOTEBOOK_SUFFIX


def read_notebook(path: Path) -> list[Cell]:
    """The code cells of a notebook file, labelled by their position among all its cells.

    Raises:
        NotebookError: If the file is too large, not JSON, or not a Jupyter notebook (nbformat 3 or 4).
    """
    name = path.name
    try:
        size = path.stat().st_size
        if size > MAX_NOTEBOOK_BYTES:
            raise NotebookError(f"{name} is {size // (1024 * 1024)} MB, more than the {MAX_NOTEBOOK_BYTES >> 20} MB "
                                f"a notebook may have; clear its outputs (Edit > Clear All Outputs) and save it again")
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise NotebookError(f"cannot read {name}: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:
        raise NotebookError(f"{name} is not a Jupyter notebook: it is not valid JSON ({str(exc)[:80]}); save it "
                            f"from Jupyter or Colab again (File > Download .ipynb)") from None
    return notebook_cells(data, name)


def notebook_cells(data: Any, name: str = "the notebook") -> list[Cell]:
    """The code cells of a parsed notebook (nbformat 4, or 3 whose cells live in worksheets).

    Raises:
        NotebookError: If ``data`` is not a notebook.
    """
    if not isinstance(data, dict) or "nbformat" not in data:
        raise NotebookError(f"{name} is JSON but not a Jupyter notebook (no 'nbformat' field)")
    version = data.get("nbformat")
    if version == 3:
        worksheets = data.get("worksheets") or [{}]
        raw_cells = [c for sheet in worksheets if isinstance(sheet, dict) for c in sheet.get("cells") or []]
        source_key = "input"
    elif version == 4:
        raw_cells, source_key = data.get("cells"), "source"
    else:
        raise NotebookError(f"{name} is in notebook format {version!r}; the grader reads formats 3 and 4: open it "
                            f"in Jupyter and save it again")
    if not isinstance(raw_cells, list):
        raise NotebookError(f"{name} is not a readable notebook (its 'cells' is not a list)")
    cells = []
    for position, raw in enumerate(raw_cells, start=1):
        if isinstance(raw, dict) and raw.get("cell_type") == "code":
            cells.append(Cell(f"cell {position}", _text(raw.get(source_key, ""))))
    return cells


def _text(source: Any) -> str:
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def neutralise(source: str) -> str:
    """Replace IPython-only syntax by ``pass`` lines, keeping line numbers.

    Line magics (``%time``), shell escapes (``!pip``, ``x = !ls``) and help (``?obj``, ``obj??``) become
    ``pass`` at their indentation; a cell magic (``%%bash``) drops its cell, unless its body is Python that
    IPython runs (``%%time``, ``%%capture``: the body is kept). Lines inside triple-quoted strings are left alone.
    """
    lines = source.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        magic = lines[first].lstrip()[2:].split(maxsplit=1)
        if not magic or magic[0] not in PYTHON_CELL_MAGICS:
            return ""
        lines[first] = ""
    quote: str | None = None
    for number, line in enumerate(lines):
        if quote is None and _ipython_line(line.strip()):
            lines[number] = line[: len(line) - len(line.lstrip())] + "pass"
        else:
            quote = _quote_after(line, quote)
    return "\n".join(lines)


def _ipython_line(stripped: str) -> bool:
    return bool(stripped) and (stripped[0] in "%!?" or bool(_HELP.match(stripped))
                               or bool(_SHELL_ASSIGN.match(stripped)))


def _quote_after(line: str, quote: str | None) -> str | None:
    """The triple quote still open after ``line`` (None when none is): a small scanner, enough to skip docstrings."""
    index, single = 0, None
    while index < len(line):
        if quote is not None:
            end = line.find(quote, index)
            if end < 0:
                return quote
            index, quote = end + 3, None
            continue
        char = line[index]
        if single is not None:
            index += 2 if char == "\\" else 1
            if char == single:
                single = None
            continue
        if char == "#":
            break
        if line.startswith(('"""', "'''"), index):
            quote, index = line[index:index + 3], index + 3
            continue
        if char in "\"'":
            single = char
        index += 1
    return quote
