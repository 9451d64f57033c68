"""What the page shows of one figure: its image, whether it was drawn, why not, and the notes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the figures API imports torch; the page and the command need not
    from .figures import Figure

DRAWN, PLACEHOLDER = "drawn", "placeholder"
OK = "ok"
DIAGNOSIS = "diagnosis"  # the kind of the line that names a cause: only from Panel.diagnosis, never from a figure


@dataclass
class Panel:
    """One figure as drawn for the page.

    Attributes:
        figure: The declaration.
        image: The PNG's file name (beside the page).
        status: ``drawn`` or ``placeholder``.
        reason: Why a placeholder stands instead of the figure (``""`` when drawn).
        notes: ``(kind, text)`` observations (kind ``ok``, ``bad`` or ``info``).
        probe_status: How the probe went (``ok``, ``not implemented``, ``error``, ``timeout``, ``not run``).
        diagnosis: The hint of the known mistake the student's numbers match, set only by
            ``show/diagnose.py`` from the judge (instructor side); ``""`` when none is named.
    """

    figure: Figure
    image: str
    status: str
    reason: str = ""
    notes: list[tuple[str, str]] = field(default_factory=list)
    probe_status: str = OK
    diagnosis: str = ""

    def lines(self) -> list[tuple[str, str]]:
        """What is listed under the figure, ``(kind, text)``: the figure's notes, then the diagnosis if any (every
        view of a panel lists these, so a cause is shown only where the judge named one)."""
        return self.notes + ([(DIAGNOSIS, f"Diagnosis: {self.diagnosis}")] if self.diagnosis else [])
