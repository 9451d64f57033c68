"""Tables as aligned text or markdown (tabulate): the one table renderer of every report and command."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence

from tabulate import tabulate

LEFT, RIGHT = "left", "right"


def table(header: Sequence[str], rows: Iterable[Sequence[object]], align: Sequence[str] | None = None,
          markdown: bool = False, indent: str = "") -> list[str]:
    """The lines of a table, each column as wide as its widest cell.

    Every cell is shown as its text, never read as a number (an id ``00123`` stays ``00123``): format numbers
    before. Text tables get a rule under the header (none without a header); markdown tables are pipe tables.

    Args:
        header: The column titles; empty for a table of rows only (``label  value`` pairs).
        rows: The cells, row by row.
        align: ``LEFT`` or ``RIGHT`` per column (default: every column left).
        markdown: A markdown pipe table (cells must already be markdown-safe) instead of aligned text.
        indent: Put before every line of a text table.
    """
    style = "pipe" if markdown else "simple" if header else "plain"
    text = tabulate([[str(cell) for cell in row] for row in rows], headers=list(header), tablefmt=style,
                    disable_numparse=True, colalign=tuple(align) if align else None)
    return textwrap.indent(text, indent).splitlines() if text else []
