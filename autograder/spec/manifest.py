"""The manifest's schema: every table and key of ``assignment.toml`` declared once, with its type, default and doc.

The loader (``spec/assignment.py``) validates a parsed manifest against this schema before building anything, and
``docs/MANIFEST.md`` is generated from it (``python -m autograder.spec.manifest --write``), so a key cannot be
documented wrongly or forgotten. Errors name the file, the line and the key in one sentence.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from autograder.util.names import nearest

# Names in the student release (figure files and figure PNGs) must not contain these parts: its leak scan refuses
# them, so they are refused where they are declared instead.
FORBIDDEN_NAME_PARTS = ("hidden", "key", "reference", "mistake", "variant")

REQUIRED = object()  # a key's default when it must be given
DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "MANIFEST.md"


@dataclass(frozen=True)
class Kind:
    """A TOML value's accepted shape: its words in the docs and the Python types ``tomllib`` gives for it."""

    words: str
    types: tuple[type, ...]
    items: tuple[type, ...] = ()  # for a list or an inline table: the accepted types of its elements

    def problem(self, value: Any) -> str:
        """Why ``value`` is not of this kind ('' when it is)."""
        wrong = (isinstance(value, bool) and bool not in self.types) or not isinstance(value, self.types)
        if not wrong and self.items:
            elements = value.values() if isinstance(value, dict) else value
            wrong = any(isinstance(e, bool) and bool not in self.items or not isinstance(e, self.items)
                        for e in elements)
        return f"must be {self.words}, not {_shown(value)}" if wrong else ""


STRING = Kind("a string", (str,))
INTEGER = Kind("an integer", (int,))
NUMBER = Kind("a number", (int, float))
BOOLEAN = Kind("true or false", (bool,))
STRINGS = Kind("a list of strings", (list,), (str,))
STRING_TABLE = Kind("an inline table of strings", (dict,), (str,))
TIME = Kind("a time with its UTC offset (a TOML datetime or an ISO 8601 string)", (str, datetime))


@dataclass(frozen=True)
class Key:
    """One manifest key.

    Attributes:
        name: The key as written in the manifest.
        kind: Its accepted value.
        default: Its default (``REQUIRED`` when it must be given; None when it has no value unless given).
        doc: What it means, in one or two sentences.
        default_words: The default in words when it is not a constant (e.g. "the folder's name").
        file: Whether it names files (relative to the assignment folder) that must exist.
        folder: Whether it names a folder (relative to the assignment folder) that must exist.
    """

    name: str
    kind: Kind
    default: Any
    doc: str
    default_words: str = ""
    file: bool = False
    folder: bool = False


@dataclass(frozen=True)
class Table:
    """One manifest table (``[name]``) or array of tables (``[[name]]``) and its keys."""

    name: str
    doc: str
    keys: tuple[Key, ...]
    array: bool = False
    required: bool = False

    @property
    def header(self) -> str:
        """The table's header as written in the manifest."""
        return f"[[{self.name}]]" if self.array else f"[{self.name}]"

    def key(self, name: str) -> Key:
        """The key of this name (KeyError if the table has none)."""
        return next(k for k in self.keys if k.name == name)


SCHEMA: tuple[Table, ...] = (
    Table("assignment", "What students submit and how it is run.", required=True, keys=(
        Key("title", STRING, None, "Human-readable title, shown in reports.", "the folder's name"),
        Key("package", STRING, None, "The Python package students submit (a folder of that name, or a zip).",
            "the folder's name"),
        Key("modules", STRINGS, REQUIRED, "Student modules, in import order, without `.py`."),
        Key("student_files", STRINGS, REQUIRED, "Files taken from a submission, relative to the package folder "
            "(nothing else of a submission is read); every module's `.py` and the quiz's `answers_file` must be "
            "among them."),
        Key("seed", INTEGER, REQUIRED, "Base seed from which every check's seed is derived (change it and every "
            "input changes)."),
        Key("reference", STRING, None, "Folder of the reference solution package, relative to the course "
            "folder (the one holding `assignments/`: see INSTRUCTORS.md, \"Your course folder\").",
            "`reference_solutions/<name>`"),
        Key("template", STRING, None, "Folder of the generated student template, relative to the course "
            "folder (the one holding `assignments/`: see INSTRUCTORS.md, \"Your course folder\").",
            "`student_template/<name>`"),
        Key("public_tests", STRING, "public_tests", "Folder of the public tests, relative to the assignment.",
            folder=True),
        Key("max_output_bytes", INTEGER, 64 * 1024, "The most printed output kept per job (the rest is cut)."),
        Key("memory_mb", INTEGER, 2048, "Memory budget of one job in MiB."),
        Key("public_timeout", NUMBER, 5.0, "Wall-clock seconds each public test may take in `grader check`, unless "
            "its task or a `time_limit` marker says otherwise."),
        Key("due", TIME, None, "The deadline; needed by `[late]`."),
        Key("total_points", NUMBER, None, "What the tasks' and the quiz's points must add up to (e.g. 100): "
            "`grader verify` refuses another sum, naming each `points` line. Points need not add up to 100: a "
            "report shows the score out of their sum.", "not held to a total: `grader verify` says the sum"),
    )),
    Table("tasks", "One graded unit each, in report order.", array=True, keys=(
        Key("id", STRING, REQUIRED, "Stable identifier used in reports, seeds and `@check(\"<id>\")`."),
        Key("title", STRING, None, "Human-readable name.", "the id"),
        Key("points", NUMBER, REQUIRED, "Points the task is worth."),
        Key("functions", STRINGS, (), "`module.name` of each function or class the student writes for it."),
        Key("uses", STRINGS, (), "`module.name` of other tasks' code it builds on: graded with the reference for "
            "them, so one bug costs one task."),
        Key("checks", STRING, REQUIRED, "Its hidden checks file, relative to the assignment.", file=True),
        Key("timeout", NUMBER, 20.0, "Wall-clock seconds allowed per check."),
        Key("slow", BOOLEAN, False, "Grading it is expensive (e.g. it trains): the audit grades it only when a "
            "mutation edits its files."),
        Key("assets", STRINGS, (), "Files of `hidden/assets/` its checks read through `ctx.assets`."),
        Key("visibility", STRING, "visible", "When Gradescope shows its test: `visible`, `hidden`, `after_due_date` "
            "or `after_published`."),
        Key("check_visibility", STRING_TABLE, {}, "Check name (`<task>.<function>`, the task's id and the name of "
            "the check's function in its checks file) -> visibility, for checks shown at another time than their "
            "task; `grader verify` refuses a name that is not a check of the task."),
        Key("public_timeout", NUMBER, None, "Wall-clock seconds each of its public tests may take.",
            "`[assignment] public_timeout`"),
    )),
    Table("quiz", "A multiple-choice quiz graded against a hidden key.", keys=(
        Key("id", STRING, "quiz", "Its task id in reports."),
        Key("title", STRING, "Quiz", "Human-readable name."),
        Key("points", NUMBER, REQUIRED, "Points the quiz is worth."),
        Key("questions", STRING, REQUIRED, "The questions file, relative to the assignment (shipped to students).",
            file=True),
        Key("key", STRING, REQUIRED, "The key file, relative to the assignment (under `hidden/`).", file=True),
        Key("answers_file", STRING, "answers.toml", "The file of the student's package holding the answers."),
        Key("feedback", STRING, "score", "What reports show of the key: `score`, `answers` or `explanations` "
            "(gives the key away: for after the deadline)."),
        Key("max_blind_score", INTEGER, None, "The most a blind strategy (always the longest option, always \"a\", "
            "...) may score.", "ceil(0.375 * questions)"),
    )),
    Table("late", "How work after `[assignment] due` loses points.", keys=(
        Key("penalty", STRING, None, "What every started day or hour costs, e.g. `\"10%/day\"`, `\"2%/hour\"`.",
            "no penalty"),
        Key("grace", STRING, None, "Lateness forgiven, e.g. `\"15m\"`, `\"2h\"`.", "none"),
        Key("cap", STRING, None, "The most a late submission can lose, e.g. `\"50%\"`.", "100%"),
        Key("last_accepted", TIME, None, "Work after this earns nothing.", "none"),
    )),
    Table("gradescope", "Gradescope's top-level settings of the results.", keys=(
        Key("visibility", STRING, "visible", "Visibility of the whole result."),
        Key("stdout_visibility", STRING, "hidden", "Whether Gradescope shows the autograder's output."),
    )),
    Table("figures", "`grader show`: figures drawn from the student's own code (see SHOW.md).", keys=(
        Key("files", STRINGS, REQUIRED, "Figure files, relative to the assignment; their names must not contain "
            + ", ".join(f"`{p}`" for p in FORBIDDEN_NAME_PARTS) + " (the student release refuses them).",
            file=True),
        Key("show_expected", BOOLEAN, False, "Let the expected figure stand beside the student's."),
        Key("expected", STRING, "figures/expected", "Folder of the pre-rendered expected PNGs."),
    )),
    Table("audit", "The minimums `grader verify` and `grader audit` hold the assignment to.", keys=(
        Key("min_mistakes", INTEGER, 15, "Known mistakes (`hidden/mistakes/*.toml`) the assignment must have."),
        Key("min_variants", INTEGER, 5, "Correct variants (`hidden/variants/*.toml`) the assignment must have."),
        Key("min_right_hints", INTEGER, 0, "Known mistakes `grader audit` must find with their own hint (the "
            "student's outputs match that mistake's); only the audit can count them."),
        Key("balanced_key", BOOLEAN, True, "The quiz key uses each letter as often as the others, within one (so "
            "\"always the most common letter\" gains nothing)."),
    )),
)


def table(name: str) -> Table:
    """The schema's table of this name."""
    return next(t for t in SCHEMA if t.name == name)


class ManifestProblem(ValueError):
    """A manifest that does not fit the schema; its message is one line naming the file, line and key."""


def validate(data: dict[str, Any], text: str, path: Path, schema: tuple[Table, ...] = SCHEMA) -> dict[str, Any]:
    """Check a parsed manifest against the schema; return it with every constant default filled in.

    Args:
        data: The parsed manifest.
        text: Its text (to find line numbers).
        path: Its file (named in errors; declared files are looked up beside it).
        schema: The tables it may hold (another TOML file of the assignment passes its own, e.g. the mutations').

    Returns:
        ``{table: {key: value}}`` (a list of those for an array of tables) with defaults for absent keys.

    Raises:
        ManifestProblem: The first problem :func:`validate_all` finds (an unknown table or key, a value of the wrong
            type, a missing required key).
    """
    filled, problems = validate_all(data, text, path, schema)
    if problems:
        raise ManifestProblem(problems[0])
    return filled


def validate_all(data: dict[str, Any], text: str, path: Path,
                 schema: tuple[Table, ...] = SCHEMA) -> tuple[dict[str, Any], list[str]]:
    """Check a parsed file against a schema and find every problem, not only the first (see :func:`validate`).

    Returns:
        The file with its defaults filled in, a table (or an entry of an array of tables) with a problem being
        None there, so that the other entries keep their places; and one line per problem, ``file:line: ...``,
        in the file's order of tables.
    """
    known = {t.name: t for t in schema}
    problems = []
    for name, value in data.items():
        if name not in known:
            table_like = isinstance(value, (dict, list))  # a key above every table is found before any header
            where = location(path, text, name, None) if table_like else location(path, text, None, name, -1)
            problems.append(where + f"unknown {_written(name, value)}{suggest(name, known)}")
    filled: dict[str, Any] = {}
    for spec in schema:
        raw = data.get(spec.name)
        filled[spec.name] = [] if spec.array else None
        if raw is None:
            if spec.required:
                problems.append(f"{path}: the {spec.header} table is missing")
            continue
        entries = raw if isinstance(raw, list) else [raw]
        if spec.array != isinstance(raw, list) or not all(isinstance(e, dict) for e in entries):
            problems.append(location(path, text, spec.name, None) + f"{spec.name} must be written {spec.header}")
            continue
        done = []
        for index, entry in enumerate(entries):
            found = _entry_problems(spec, entry, index, text, path)
            problems += found
            done.append(None if found else _fill(spec, entry))
        filled[spec.name] = done if spec.array else done[0]
    return filled, problems


def _entry_problems(spec: Table, entry: dict[str, Any], index: int, text: str, path: Path) -> list[str]:
    """Every problem of one table (or one entry of an array of tables): unknown keys, then each key in the schema's
    order that is missing while required (unless an unknown key is its misspelling) or of the wrong type."""
    names = {k.name for k in spec.keys}
    unknown = [name for name in entry if name not in names]
    problems = [location(path, text, spec.name, name, index) + f"unknown key {name!r} in {spec.header}"
                f"{suggest(name, names)}" for name in unknown]
    # A required key written misspelt is one slip: its unknown key's line already names it.
    misspelt = {nearest(name, names) for name in unknown} - {None}
    for key in spec.keys:
        if key.name not in entry:
            if key.default is REQUIRED and key.name not in misspelt:
                problems.append(location(path, text, spec.name, None, index)
                                + f"{spec.header} needs the key {key.name!r} ({key.doc})")
            continue
        problem = key.kind.problem(entry[key.name])
        if problem:
            problems.append(location(path, text, spec.name, key.name, index) + f"{key.name} {problem}")
    return problems


def _fill(spec: Table, entry: dict[str, Any]) -> dict[str, Any]:
    """A sound table's values, with the default of each key it does not set."""
    return {key.name: entry[key.name] if key.name in entry else key.default for key in spec.keys}


@dataclass(frozen=True)
class DeclaredPath:
    """A file or folder a manifest names (relative to the assignment folder), and the key that names it."""

    table: str
    key: str
    index: int  # which ``[[table]]`` entry (0 for a plain table)
    name: str
    folder: bool


def declared_paths(filled: dict[str, Any]) -> list[DeclaredPath]:
    """Every file and folder a validated manifest names, defaults included (``public_tests``)."""
    found = []
    for spec in SCHEMA:
        entries = filled.get(spec.name) if spec.array else [filled.get(spec.name)]
        for index, entry in enumerate(entries or []):
            if entry is None:  # a table the manifest leaves out names no file
                continue
            for key in (k for k in spec.keys if (k.file or k.folder) and entry.get(k.name) is not None):
                values = entry[key.name] if isinstance(entry[key.name], list) else [entry[key.name]]
                found += [DeclaredPath(spec.name, key.name, index, str(value), key.folder) for value in values]
    return found


def missing_file_problem(path: Path, text: str, table_name: str, key: str, index: int, name: str,
                         folder: bool = False) -> str:
    """The one-line error for a declared file (or folder) that does not exist ('' when it does).

    Args:
        path: The manifest.
        text: Its text (to find the key's line).
        table_name: The table of the key.
        key: The key that names the file.
        index: Which ``[[table]]`` entry.
        name: The file, relative to the manifest's folder.
        folder: It names a folder.
    """
    target = path.parent / name
    if target.is_dir() if folder else target.is_file():
        return ""
    given = key_line(text, table_name, key, index) is not None
    what = "the folder " if folder else ""
    default = "" if given else f" (the default: {key} is not set)"
    return (location(path, text, table_name, key, index)
            + f"{table(table_name).header} {key} names {what}{name!r}, which does not exist{default}")


def forbidden_name_problem(name: str) -> str:
    """Why a name cannot appear in the student release ('' when it can)."""
    bad = [part for part in FORBIDDEN_NAME_PARTS if part in name.lower()]
    return (f"{name!r} contains {bad[0]!r}, which the student release's leak scan refuses; rename it" if bad
            else "")


def key_line(text: str, table_name: str | None, key: str | None, index: int = 0) -> int | None:
    """The line (from 1) where ``key`` is set in the ``index``-th ``[table]`` / ``[[table]]`` (the header's line
    when ``key`` is None; above every table when ``table_name`` is None and ``index`` -1), or None when it cannot
    be found."""
    current, seen = None, -1
    for number, line in enumerate(text.splitlines(), start=1):
        header = re.match(r"^\s*\[\[?\s*([A-Za-z0-9_.\-]+)\s*\]\]?", line)
        if header:
            current = header.group(1)
            if current == table_name:
                seen += 1
                if key is None and seen == index:
                    return number
            continue
        if key is not None and current == table_name and seen == index and \
                re.match(rf"^\s*\"?{re.escape(key)}\"?\s*=", line):
            return number
    return None


def location(path: Path, text: str, table_name: str | None, key: str | None, index: int = 0) -> str:
    """``file:line: `` of a key (``file: `` when its line cannot be found), to start a one-line error."""
    line = key_line(text, table_name, key, index)
    return f"{path}:{line}: " if line else f"{path}: "


def _written(name: str, value: Any) -> str:
    """A top-level name as the file writes it: ``table [[name]]``, ``table [name]`` or a key above every table."""
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return f"table [[{name}]]"
    return f"table [{name}]" if isinstance(value, dict) else f"key {name!r} above every table"


def suggest(name: str, known: Any) -> str:
    """`` (did you mean 'x'?)`` with the known name nearest to ``name``, else `` (known: ...)``: an error's end."""
    close = nearest(name, known)
    return f" (did you mean {close!r}?)" if close else f" (known: {', '.join(sorted(known))})"


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{type(value).__name__} {value!r}"[:60]


def _default_words(key: Key) -> str:
    if key.default is REQUIRED:
        return "**required**"
    if key.default_words:
        return key.default_words
    if key.default is None:
        return "none"
    if isinstance(key.default, bool):
        return f"`{str(key.default).lower()}`"
    if isinstance(key.default, str):
        return f"`\"{key.default}\"`"
    if isinstance(key.default, (tuple, list)) and not key.default:
        return "`[]`"
    if isinstance(key.default, dict) and not key.default:
        return "`{}`"
    return f"`{key.default:g}`" if isinstance(key.default, float) else f"`{key.default}`"


def render_reference() -> str:
    """``docs/MANIFEST.md``: every table and key of the schema."""
    lines = ["# The manifest: `assignments/<name>/assignment.toml`", "",
             "<!-- Generated from autograder/spec/manifest.py by `python -m autograder.spec.manifest --write`; "
             "do not edit by hand. -->", "",
             "Every key the loader accepts, with its type and default. An unknown table or key, a value of the wrong "
             "type, a missing required key or a figure file that does not exist is refused when the manifest loads, "
             "with one line naming the file, the line and the key. Every other file or folder the manifest names "
             "(a task's `checks`, the quiz's `questions` and `key`, `public_tests`) is looked up by `grader verify`, "
             "which names each one that does not exist in the same way, and `grader release` refuses to start while "
             "one is missing; grading beside the reference (the instructor's copy) names a missing checks file or "
             "quiz key in the same words. A student's copy lacks the hidden files by design. `grader new NAME` "
             "writes a manifest with every key commented.", ""]
    for spec in SCHEMA:
        lines += [f"## `{spec.header}`", "", spec.doc + (" Required." if spec.required else ""), "",
                  "| key | type | default | meaning |", "| --- | --- | --- | --- |"]
        lines += [f"| `{k.name}` | {k.kind.words} | {_default_words(k)} | {k.doc} |" for k in spec.keys]
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """``python -m autograder.spec.manifest [--write]``: print the reference, or write ``docs/MANIFEST.md``."""
    if argv == ["--write"]:
        DOC_PATH.write_text(render_reference(), encoding="utf-8")
        print(f"wrote {DOC_PATH}")
        return 0
    if argv:
        print("usage: python -m autograder.spec.manifest [--write]", file=sys.stderr)
        return 2
    sys.stdout.write(render_reference())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
