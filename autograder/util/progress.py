"""Progress bars for long commands (audit, verify, release, grade-all): tqdm on a terminal, nothing otherwise."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from tqdm import tqdm


def is_terminal(stream: TextIO | None) -> bool:
    """Whether ``stream`` is an interactive terminal (False for files, pipes and closed streams)."""
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError):
        return False


def progress_bar(total: int, what: str, unit: str = "step", stream: TextIO | None = None,
                 enabled: bool | None = None) -> Any:
    """A progress bar on ``stream`` (default stderr), silent unless it is a terminal.

    Args:
        total: How many units the work has.
        what: What is done, shown before the bar (e.g. ``"audit"``).
        unit: What one unit is (``"mutation"``, ``"submission"``).
        stream: Where to draw.
        enabled: Draw (True) or not (False) whatever the stream is; default: only on a terminal.

    Returns:
        A tqdm bar (``update(n)``, ``set_postfix_str(text)``, ``close()``; a context manager).
    """
    stream = stream if stream is not None else sys.stderr
    show = is_terminal(stream) if enabled is None else enabled
    return tqdm(total=total, desc=what, unit=unit, file=stream, disable=not show, leave=False, dynamic_ncols=True)
