"""What the page shows of one figure: its image, whether it was drawn, why not, and the notes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .outcome import FAULTS

if TYPE_CHECKING:  # the figures API imports torch; the page and the command need not
    from .figures import Figure

DRAWN, PLACEHOLDER = "drawn", "placeholder"
OK = "ok"
DIAGNOSIS = "diagnosis"  # the kind of the line that names a cause: only from Panel.diagnosis, never from a figure
UPSTREAM = "upstream"  # the kind of the line that points at a wrong task this one uses: only from Panel.upstream


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
        upstream: Which task this figure's tasks use shows a ✗ on its own figure, to be fixed first, set only by
            ``show/upstream.py`` (as `grader check` says it of a failing test); ``""`` when none does.
    """

    figure: Figure
    image: str
    status: str
    reason: str = ""
    notes: list[tuple[str, str]] = field(default_factory=list)
    probe_status: str = OK
    diagnosis: str = ""
    upstream: str = ""

    def lines(self) -> list[tuple[str, str]]:
        """What is listed under the figure, ``(kind, text)``: the figure's notes, then the diagnosis and the
        upstream line if any (every view of a panel lists these, so a cause is shown only where the judge named
        one)."""
        return (self.notes + ([(DIAGNOSIS, f"Diagnosis: {self.diagnosis}")] if self.diagnosis else [])
                + ([(UPSTREAM, self.upstream)] if self.upstream else []))

    @property
    def shows_wrong(self) -> bool:
        """Whether the figure shows a ✗: a ✗ note, or a placeholder from an error (outputs it could not be drawn
        from, or a probe that raised or hung); a figure not implemented yet or not run shows none."""
        from .figures import NOTE_BAD  # loaded already: this panel holds one of its figures

        return (any(kind == NOTE_BAD for kind, _ in self.notes)
                or self.status != DRAWN and self.probe_status in (OK, *FAULTS))
