"""The paths of a check's own folders said as the student sees them (pytest's relative paths, a notebook's cells)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from autograder.submission.notebook.places import CellMap, place


class ShownPaths:
    """Paths of the check's own folders, in the words pytest and Python print them, said as the student sees them.

    pytest names a file relative to the session's working folder (a temporary one) when that is shorter than its
    absolute path, and the session imports an intake's copy of the student's work: neither resolves from the folder
    the student ran ``grader check`` in, nor exists once the check ends.

    A notebook's extracted files are no files of the student's: with ``cell_map``, a line of one of them
    (``.../attention.py:42``, ``File ".../attention.py", line 42``) is said as its cell and line instead.

    Args:
        folders: Each folder of the check (the public tests, the copy of the student's package), with how the
            student sees it (a path relative to their current folder, or absolute).
        session_folder: The session's working folder (pytest's relative paths start there).
        cell_map: A notebook's map of its extracted files (None for a package).
        package: The folders holding the extracted files (with ``cell_map``).
    """

    def __init__(self, folders: dict[Path, str], session_folder: Path, cell_map: CellMap | None = None,
                 package: tuple[Path, ...] = ()) -> None:
        self.names = self._forms(folders, session_folder)
        self.pattern = self._pattern(self.names, r"(?=[/\\])")
        self.cell_map = cell_map
        self.lines = None
        if cell_map is not None and package:
            extracted = self._forms({folder: "" for folder in package}, session_folder)
            self.lines = self._pattern(extracted, r"""[/\\](?P<file>\w+\.py)(?:"?, line (?P<a>\d+)|:(?P<b>\d+))""",
                                       quote=True)

    @staticmethod
    def _forms(folders: dict[Path, str], session_folder: Path) -> dict[str, str]:
        names: dict[str, str] = {}
        for folder, shown in folders.items():
            for form in (folder, folder.resolve()):
                names.setdefault(str(form), shown)
                for start in (session_folder, session_folder.resolve()):
                    try:
                        names.setdefault(os.path.relpath(form, start), shown)
                    except ValueError:  # another drive (Windows): pytest prints the absolute path then
                        pass
        return {form: shown for form, shown in names.items() if form not in (".", "")}

    @staticmethod
    def _pattern(names: dict[str, str], after: str, quote: bool = False) -> re.Pattern[str]:
        forms = sorted(names, key=len, reverse=True)  # the longest first: a relative form is part of others
        return re.compile(r"(?<![\w.~/-])" + ('"?' if quote else "") + "(" + "|".join(map(re.escape, forms)) + ")"
                          + after)

    def shown(self, text: str) -> str:
        """``text`` with every path below one of the folders starting as the student sees that folder, and a
        notebook's extracted line said as its cell's."""
        if self.lines is not None:
            text = self.lines.sub(lambda match: place(match["file"], int(match["a"] or match["b"]), self.cell_map),
                                  text)
        return self.pattern.sub(lambda match: self.names[match.group(1)], text) if self.names else text
