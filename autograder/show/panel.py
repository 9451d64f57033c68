"""What the page shows of one figure: its image, whether it was drawn, why not, and the notes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the figures API imports torch; the page and the command need not
    from .figures import Figure

DRAWN, PLACEHOLDER = "drawn", "placeholder"
OK = "ok"


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
    """

    figure: Figure
    image: str
    status: str
    reason: str = ""
    notes: list[tuple[str, str]] = field(default_factory=list)
    probe_status: str = OK
