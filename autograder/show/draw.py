"""Draw each figure in the trusted parent with matplotlib (Agg) from a probe's decoded outputs, or a placeholder."""

from __future__ import annotations

import re
import textwrap
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display, no GUI toolkit: the parent only writes PNGs

import numpy as np
import torch
from matplotlib.figure import Figure as Canvas

from .figures import Data, Figure, Notes, Unusable
from .panel import DRAWN, PLACEHOLDER, Panel
from .outcome import OK, ProbeResult

DPI = 100
NAN_COLOUR = "#ff4fd8"
HUGE = 1e100  # matplotlib's axes overflow far below float64's limit
# grading's error format (grading/records.py): "... (<place>, in <function>)", the place a file and line, or a
# notebook's cell and line (submission/notebook/places.py), said here as it was said there
_WHERE = re.compile(r"\((?P<place>.+), in (?P<name>[^()]+)\)$")
_PLACEHOLDER_COLOURS = {"not implemented": "#f3f3f3", "timeout": "#fdf0dc", "error": "#fbe3e3"}
NON_FINITE = "(magenta cells in maps, gaps in curves)"  # how the notes on NaN and infinite values end


def draw_panel(figure: Figure, result: ProbeResult | None, folder: Path) -> Panel:
    """Draw ``figure`` from its probe's result into ``folder/<name>.png`` (a placeholder if it cannot be drawn).

    Never raises for anything the student's outputs contain: a failing draw becomes a placeholder with the reason.
    """
    image = f"{figure.name}.png"
    result = result or ProbeResult("not run", "the code of this figure did not run")
    if result.status != OK:
        reason = _probe_reason(result)
        _save_placeholder(figure, result.status, reason, folder / image)
        return Panel(figure, image, PLACEHOLDER, reason, probe_status=result.status)
    data, notes = Data(_as_tensors(result.outputs)), Notes()
    reason = _draw(figure, data, notes, folder / image)
    notes.items[:0] = _non_finite(data)
    if reason:
        _save_placeholder(figure, "error", reason, folder / image)
        return Panel(figure, image, PLACEHOLDER, reason, notes.items)
    return Panel(figure, image, DRAWN, "", notes.items)


def _draw(figure: Figure, data: Data, notes: Notes, path: Path) -> str:
    """Run the figure's draw function and save the PNG; return why it could not be drawn, or ``""``."""
    canvas = Canvas(figsize=figure.size, dpi=DPI, layout="constrained")
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # log axes over zeros, NaN colour limits: the notes say what is odd
            figure.draw(data, canvas, notes)
            _show_missing_cells(canvas)
            canvas.savefig(path, dpi=DPI)
    except Unusable as exc:
        return f"cannot draw this from your outputs: {exc}"
    except Exception as exc:  # noqa: BLE001 - odd outputs can trip a draw function; explain, never a traceback
        largest = _largest(data)
        huge = f"values as large as {largest:.3g} are beyond what a plot can show; " if largest > HUGE else ""
        return f"cannot draw this from your outputs: {huge}{type(exc).__name__}: {str(exc)[:200]}"
    return ""


def _show_missing_cells(canvas: Canvas) -> None:
    """NaN cells of every image in a colour no colour map uses (matplotlib leaves them blank, like zeros)."""
    for ax in canvas.axes:
        for image in ax.images:
            image.set_cmap(image.get_cmap().with_extremes(bad=NAN_COLOUR))


def _largest(data: Data) -> float:
    """The largest finite magnitude among the outputs' tensors (0 if none)."""
    largest = 0.0
    for value in data.values():
        if type(value) is torch.Tensor and value.is_floating_point() and value.numel():
            finite = value[torch.isfinite(value)]
            largest = max(largest, float(finite.abs().max())) if finite.numel() else largest
    return largest


def _as_tensors(outputs: dict) -> dict:
    """NumPy outputs (decoded as plain numeric arrays) as tensors, so figures handle both alike."""
    return {name: torch.from_numpy(value.copy()) if isinstance(value, np.ndarray) else value
            for name, value in outputs.items()}


def _probe_reason(result: ProbeResult) -> str:
    if result.status == "not implemented":
        where = _WHERE.search(result.message)
        if where:
            return f"not implemented yet: {where['name']} ({where['place']})"
        return "not implemented yet"
    if result.status == "timeout":
        return f"stopped: {result.message}" if result.message else "stopped: it took too long"
    return result.message or result.status


def _non_finite(data: Data) -> list[tuple[str, str]]:
    """Notes on the outputs the figure read that hold NaN or infinite values (drawn as gaps), whatever the figure;
    ±inf in an output it read with ``allow_inf`` are right values there (masked logits), not noted."""
    notes = Notes()
    for name in data.used:
        value = data.get(name)
        if type(value) is torch.Tensor and value.is_floating_point() and value.numel():
            odd = value.isnan() if name in data.infinite else ~torch.isfinite(value)
            bad = int(odd.sum())
            if bad:
                kinds = " or ".join(k for k, hit in (("NaN", bool(value.isnan().any())),
                                                     ("infinite", bool(odd.logical_and(value.isinf()).any())))
                                    if hit)
                notes.bad(f"{name}: {bad} of {value.numel()} values are {kinds} {NON_FINITE}")
    return notes.items


def _save_placeholder(figure: Figure, status: str, reason: str, path: Path) -> None:
    """A grey panel saying why the figure is missing, the size of the figure it replaces."""
    width, _ = figure.size
    canvas = Canvas(figsize=(width, 1.6), dpi=DPI)
    canvas.patch.set_facecolor(_PLACEHOLDER_COLOURS.get(status, "#f3f3f3"))
    wrapped = "\n".join(textwrap.wrap(reason, width=int(width * 12))[:5]) or status
    canvas.text(0.5, 0.62, figure.title, ha="center", va="center", fontsize=12, weight="bold", color="#555555")
    canvas.text(0.5, 0.3, wrapped, ha="center", va="center", fontsize=9, color="#333333", wrap=True)
    canvas.savefig(path, dpi=DPI, facecolor=canvas.get_facecolor())
