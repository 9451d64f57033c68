"""The vocabulary of figure files: ``@probe`` (runs in the sandbox) and ``@figure`` (draws in the parent).

A figure file (``assignments/<a>/figures/*.py``, listed under ``[figures]`` in ``assignment.toml``) is plain Python::

    from autograder.show.figures import figure, probe

    @probe(timeout=10)
    def weights(impl, ctx):
        q, k, v = ctx.randn(1, 1, 6, 8), ctx.randn(1, 1, 6, 8), ctx.randn(1, 1, 6, 8)
        return {"causal": impl.attention.scaled_dot_product_attention(q, k, v, causal=True)[1]}

    @figure(weights, "Causal attention weights", caption="Row i is how query i spreads its attention ...")
    def causal_weights(data, fig, notes):
        w = data.tensor("causal", shape=(1, 1, 6, 6))[0, 0]
        fig.add_subplot().imshow(w)
        notes.check(bool((w.sum(-1) - 1).abs().max() < 1e-4), "rows sum to 1")

* A *probe* ``(impl, ctx) -> dict`` calls the student's code (``impl``, their package, nothing substituted) on fixed
  inputs from ``ctx`` (seeded as in hidden checks) and returns plain outputs. It runs as a check of a pseudo-task
  in the sandboxed worker, with its own wall clock (``timeout`` seconds). Several figures may share one probe
  (e.g. one short training run feeds the loss curve, the attention maps and the continuations).
* A *figure* ``(data, fig, notes)`` runs in the trusted parent on the decoded outputs only: ``data`` is a
  :class:`Data`, ``fig`` a matplotlib ``Figure`` (Agg), ``notes`` the :class:`Notes` listed under the image.
  Notes state only properties the public material states (never hidden tests).

This module is sent to the worker with the figure file (as a checks helper under its own name), so it imports
nothing of the grader but :mod:`autograder.probe`, which the worker already holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from autograder.errors import Unusable
from autograder.probe import Check, Context

TASK = "figures"
DEFAULT_TIMEOUT = 20.0
MAX_DRAWN = 1_000_000  # values in one output a figure accepts: drawing more would cost the parent seconds
# Figure names become PNG file names in the student release, whose leak scan refuses these parts.
FORBIDDEN_NAME_PARTS = ("hidden", "key", "reference", "mistake", "variant")
PROBE_ATTRIBUTE = "__figure_probe__"
FIGURE_ATTRIBUTE = "__figure__"
NOTE_OK, NOTE_BAD, NOTE_INFO = "ok", "bad", "info"


@dataclass
class Probe:
    """What runs in the sandbox for one or more figures.

    Attributes:
        name: The probe's name (its function's name), unique in the assignment.
        function: ``function(impl, ctx) -> dict`` of plain outputs.
        timeout: Wall-clock seconds the probe may take (a hang costs the figures of this probe only).
        description: What the probe runs, in words (shown when it fails).
        tasks: The tasks whose known mistakes may explain what its figures show wrong: where the grading material
            is present (the instructor's copy), a figure with a ✗ note names the one mistake of these tasks that
            the student's numbers match (``autograder/show/diagnose.py``); nowhere else is a cause named.
        reaches: The tasks whose functions the probe calls (:attr:`calls`), for the figure cache
            (``autograder/show/cache.py``: its result is reused while their code, and what they ``uses``, is
            unchanged) and the upstream line under a ✗ (``autograder/show/upstream.py``). Default: ``tasks``; a
            probe that declares neither reaches all of the student's code, and its ✗ names no upstream task.
    """

    name: str
    function: Callable[[Any, Context], Mapping[str, Any]]
    timeout: float = DEFAULT_TIMEOUT
    description: str = ""
    tasks: tuple[str, ...] = ()
    reaches: tuple[str, ...] = ()

    @property
    def __check__(self) -> Check:
        """The probe as a check of the figures pseudo-task (how the worker finds and runs it)."""
        return Check(name=f"{TASK}.{self.name}", task=TASK, weight=1.0, description=self.description or self.name,
                     probe=lambda impl, _ref, ctx: self.function(impl, ctx), compare_reference=False,
                     diagnose=False)

    @property
    def calls(self) -> tuple[str, ...]:
        """The tasks whose functions it calls: ``reaches``, else ``tasks`` (empty: not declared). The figure cache
        keys its result on their code; the page's upstream line starts its walk of ``uses`` from them."""
        return self.reaches or self.tasks


@dataclass
class Figure:
    """One picture drawn in the parent from a probe's outputs.

    Attributes:
        name: The figure's name (its draw function's name): the PNG is ``<name>.png``.
        probe: The probe whose outputs it draws.
        title: A short title.
        caption: One paragraph: what the picture should show when the code is right.
        draw: ``draw(data, fig, notes)``.
        size: Width and height in inches.
    """

    name: str
    probe: Probe
    title: str
    caption: str
    draw: Callable[[Data, Any, Notes], None]
    size: tuple[float, float] = (8.0, 3.6)


def probe(timeout: float = DEFAULT_TIMEOUT, description: str = "", tasks: tuple[str, ...] = (),
          reaches: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Probe]:
    """Declare the decorated ``(impl, ctx) -> dict`` function as a probe run in the sandbox.

    Args:
        timeout: Wall-clock seconds it may take.
        description: What it runs (default: the docstring's first line).
        tasks: Task ids whose known mistakes may explain its outputs (see :class:`Probe`); each known mistake costs
            one extra sandboxed run of the probe when a figure shows something wrong, so keep slow probes out.
        reaches: Task ids whose functions it calls, where they are not ``tasks`` (see :class:`Probe`): a slow probe
            names them here, so a change elsewhere does not run it again.

    Returns:
        A decorator returning the :class:`Probe`.
    """

    def decorate(function: Callable[..., Any]) -> Probe:
        text = description or (function.__doc__ or function.__name__).strip().splitlines()[0]
        return Probe(name=function.__name__, function=function, timeout=float(timeout), description=text,
                     tasks=tuple(tasks), reaches=tuple(reaches))

    return decorate


def figure(source: Probe, title: str, caption: str,
           size: tuple[float, float] = (8.0, 3.6)) -> Callable[[Callable[..., None]], Figure]:
    """Declare the decorated ``(data, fig, notes)`` function as a figure drawn from ``source``'s outputs.

    Args:
        source: The probe whose outputs are drawn.
        title: A short title.
        caption: One paragraph saying what the picture should show.
        size: Width and height in inches.

    Returns:
        A decorator returning the :class:`Figure`.
    """
    if not isinstance(source, Probe):
        raise TypeError("figure(...) takes the probe it draws (a function decorated with @probe)")

    def decorate(draw: Callable[..., None]) -> Figure:
        return Figure(name=draw.__name__, probe=source, title=title, caption=" ".join(caption.split()), draw=draw,
                      size=size)

    return decorate


# -- the parent's side: what a draw function receives ------------------------------------------------------


@dataclass
class Notes:
    """Observations listed under a figure, each marked ✓ (as the notes say), ✗ (not as they say) or plain.

    A note states what the figure's own inputs show ("rows sum to 0.05 … 1, not 1"), never a guessed cause: the
    cause of a ✗ is named only by the judge's known mistakes (``Panel.diagnosis``, see ``show/diagnose.py``), and
    a ✓ only for a property the probe's inputs can test.
    """

    items: list[tuple[str, str]] = field(default_factory=list)

    def ok(self, text: str) -> None:
        """A property that holds."""
        self.items.append((NOTE_OK, text))

    def bad(self, text: str) -> None:
        """A property that does not hold (say what it means for the code)."""
        self.items.append((NOTE_BAD, text))

    def info(self, text: str) -> None:
        """A plain observation."""
        self.items.append((NOTE_INFO, text))

    def check(self, holds: bool, good: str, bad: str | None = None) -> bool:
        """``ok(good)`` if ``holds``, else ``bad(bad or "not " + good)``; returns ``holds``."""
        if holds:
            self.ok(good)
        else:
            self.bad(bad or f"not so: {good}")
        return holds


class Data(Mapping[str, Any]):
    """A probe's decoded outputs (plain tensors, numbers, strings, or descriptions of foreign values).

    The accessors raise :class:`Unusable` with a sentence for the student when an output is missing or is not
    what the figure needs, so a draw function never has to guard against a wrong type or shape itself.
    """

    def __init__(self, outputs: Mapping[str, Any]) -> None:
        self._outputs = dict(outputs)
        self.used: list[str] = []  # the outputs a figure read, in order (what the generic notes speak of)
        self.infinite: set[str] = set()  # the outputs read with allow_inf: ±inf there are right, not noted

    def __getitem__(self, name: str) -> Any:
        return self._outputs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._outputs)

    def __len__(self) -> int:
        return len(self._outputs)

    def _get(self, name: str) -> Any:
        if name not in self.used:
            self.used.append(name)
        if name not in self._outputs:
            raise Unusable(f"{name}: no such output came back")
        return self._outputs[name]

    def tensor(self, name: str, shape: tuple[int, ...] | None = None, ndim: int | None = None,
               allow_inf: bool = False) -> torch.Tensor:
        """The output as a float64 tensor: booleans and integers as 0.0, 1.0, ...; infinities become NaN, so plots
        skip them rather than fail.

        Args:
            name: The output's name.
            shape: The shape it must have, if any.
            ndim: The number of dimensions it must have, if any.
            allow_inf: ±inf are right values here (masked logits): the figure's notes do not mark them ✗ (NaN still
                is marked).

        Raises:
            Unusable: If it is missing, not numeric, or not of the given shape or number of dimensions.
        """
        value = self._get(name)
        if allow_inf:
            self.infinite.add(name)
        if type(value) is not torch.Tensor:
            describe = getattr(value, "describe", None)
            kind = describe() if callable(describe) else type(value).__name__
            raise Unusable(f"{name}: expected a tensor, got {kind}")
        if shape is not None and tuple(value.shape) != tuple(shape):
            raise Unusable(f"{name}: expected shape {tuple(shape)}, got {tuple(value.shape)}")
        if ndim is not None and value.dim() != ndim:
            raise Unusable(f"{name}: expected {ndim} dimensions, got shape {tuple(value.shape)}")
        if value.numel() > MAX_DRAWN:
            raise Unusable(f"{name}: {value.numel():,} values, more than a figure draws ({MAX_DRAWN:,})")
        values = value.detach().to(torch.float64)
        return torch.where(torch.isinf(values), torch.full_like(values, math.nan), values)

    def number(self, name: str) -> float:
        """The output as a float (a one-element tensor counts).

        Raises:
            Unusable: If it is missing or not a number.
        """
        value = self._get(name)
        if type(value) is torch.Tensor and value.numel() == 1:
            return float(value.to(torch.float64).item())
        if type(value) in (int, float) and not isinstance(value, bool):
            return float(value)
        raise Unusable(f"{name}: expected a number, got {type(value).__name__}")

    def text(self, name: str) -> str:
        """The output as a string.

        Raises:
            Unusable: If it is missing or not a string.
        """
        value = self._get(name)
        if type(value) is not str:
            raise Unusable(f"{name}: expected a string, got {type(value).__name__}")
        return value


def check_name(name: str) -> str | None:
    """Why ``name`` cannot name a figure or probe (it becomes a file name), or None."""
    if not name.isidentifier() or name.startswith("_"):
        return f"{name!r} is not a plain identifier"
    bad = next((part for part in FORBIDDEN_NAME_PARTS if part in name.lower()), None)
    return f"{name!r} contains {bad!r}, which the student release refuses in file names" if bad else None

