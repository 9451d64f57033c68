"""Where a gradebook lives: an SQLite file (the embedded default) or a PostgreSQL database shared by many shards.

The gradebook's SQL is written once, in SQLite's dialect (``gradebook/store.py``, ``gradebook/merge.py``);
:func:`connect` returns a connection with sqlite3's small surface (``execute``, ``executescript``, rows by
name and position, ``lastrowid``) and, for PostgreSQL, translates the few differences on the way: ``?``
placeholders, ``BEGIN IMMEDIATE`` (one writer at a time, as in SQLite: a transaction-scoped advisory lock),
``INSERT OR IGNORE``, ``AUTOINCREMENT`` keys, ``REAL`` columns (double precision), two-argument ``min``/``max``,
``PRAGMA`` statements (SQLite-only tuning, skipped; ``table_info`` answered from the information schema).
PostgreSQL needs the optional extra ``postgres`` (psycopg 3).
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any, Iterator

from autograder.errors import GraderError

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
WRITER_LOCK = 0x67726164  # the advisory lock that serialises gradebook writers (BEGIN IMMEDIATE)


def is_postgres(location: str | Path) -> bool:
    """Whether a gradebook location is a PostgreSQL URL (else it is an SQLite file)."""
    return str(location).startswith(POSTGRES_SCHEMES)


def parse_location(text: str | Path) -> str | Path:
    """A gradebook option's value: a PostgreSQL URL kept as text, ``sqlite:///path`` or a plain path as a Path."""
    value = str(text)
    if is_postgres(value):
        return value
    if value.startswith("sqlite:///"):
        return Path(value[len("sqlite://"):])
    if value.startswith("sqlite://"):
        raise GraderError(f"an SQLite gradebook URL is sqlite:///path/to/file.db (three slashes), not {value!r}")
    return Path(value)


def display(location: str | Path) -> str:
    """A location fit for messages: a URL without its password."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", str(location))


def database_errors() -> tuple[type[BaseException], ...]:
    """The exception types a gradebook connection raises for database problems (both backends)."""
    try:
        import psycopg
    except ImportError:
        return (sqlite3.DatabaseError,)
    return (sqlite3.DatabaseError, psycopg.Error)


def connect(location: str | Path, readonly: bool = False) -> Any:
    """Open a gradebook connection: sqlite3 for a path, a :class:`PostgresConnection` for a URL.

    Args:
        location: A path, ``sqlite:///path`` or ``postgresql://user:password@host:port/database``.
        readonly: Never write (SQLite: ``mode=ro``; PostgreSQL: read-only transactions).

    Returns:
        A connection whose rows are read by name or position.

    Raises:
        GraderError: If psycopg is not installed for a PostgreSQL URL, or the server cannot be reached.
    """
    location = parse_location(location)
    if isinstance(location, Path):
        if readonly:
            db = sqlite3.connect(location.resolve().as_uri() + "?mode=ro", uri=True, isolation_level=None)
        else:
            location.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(location, isolation_level=None, timeout=30.0)
        db.row_factory = sqlite3.Row
        return db
    return PostgresConnection(location, readonly)


class Row(tuple):
    """A result row readable like sqlite3.Row: by position, by column name, ``keys()`` and ``dict(row)``."""

    names: tuple[str, ...] = ()

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self.names.index(key))
            except ValueError:
                raise IndexError(f"no column named {key!r}") from None
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self.names)


def _row_factory(cursor: Any) -> Any:
    names = tuple(column.name for column in cursor.description or ())
    kind = type("Row", (Row,), {"names": names})
    return lambda values: kind(values)


class _Cursor:
    """What ``execute`` returns: rows fetched, iterated, and the new row's id of an INSERT."""

    def __init__(self, rows: list[Any], lastrowid: int | None = None) -> None:
        self._rows = rows
        self.lastrowid = lastrowid

    def fetchone(self) -> Any:
        return self._rows.pop(0) if self._rows else None

    def fetchall(self) -> list[Any]:
        rows, self._rows = self._rows, []
        return rows

    def __iter__(self) -> Iterator[Any]:
        while self._rows:
            yield self._rows.pop(0)


_SERIAL_TABLES = re.compile(r"^\s*INSERT\s+INTO\s+(submissions|check_results)\b", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"\?")
_SCALAR_MIN_MAX = re.compile(r"\b(min|max)\(([^(),]+),([^()]+)\)", re.IGNORECASE)
_TABLE_INFO = re.compile(r"^\s*PRAGMA\s+table_info\((\w+)\)\s*;?\s*$", re.IGNORECASE)


def translate(statement: str) -> str | None:
    """One SQLite statement in PostgreSQL's dialect; None for a statement PostgreSQL has no use for (PRAGMA)."""
    text = statement.strip()
    upper = text.upper()
    table_info = _TABLE_INFO.match(text)
    if table_info:
        return ("SELECT ordinal_position - 1 AS cid, column_name AS name, data_type AS type, "
                "CASE WHEN is_nullable = 'NO' THEN 1 ELSE 0 END AS notnull, column_default AS dflt_value, 0 AS pk "
                f"FROM information_schema.columns WHERE table_schema = current_schema() "
                f"AND table_name = '{table_info.group(1)}' ORDER BY ordinal_position")
    if upper.startswith("PRAGMA"):
        return None
    if upper.startswith("BEGIN"):
        return "BEGIN"
    if upper.startswith(("CREATE TABLE", "ALTER TABLE")):
        text = re.sub(r"\bINTEGER PRIMARY KEY AUTOINCREMENT\b", "BIGSERIAL PRIMARY KEY", text, flags=re.IGNORECASE)
        text = re.sub(r"\bid INTEGER PRIMARY KEY\b", "id BIGSERIAL PRIMARY KEY", text, flags=re.IGNORECASE)
        text = re.sub(r"\bREAL\b", "DOUBLE PRECISION", text)
        text = re.sub(r"\bINTEGER\b", "BIGINT", text)
    if re.match(r"^INSERT\s+OR\s+IGNORE\b", text, re.IGNORECASE):
        text = re.sub(r"^INSERT\s+OR\s+IGNORE\b", "INSERT", text, flags=re.IGNORECASE) + " ON CONFLICT DO NOTHING"
    upsert = re.match(r"^INSERT\s+INTO\s+(\w+).*\bDO\s+UPDATE\b", text, re.IGNORECASE | re.DOTALL)

    def qualified(argument: str) -> str:  # in an upsert a bare column is ambiguous for PostgreSQL
        name = argument.strip()
        return f"{upsert.group(1)}.{name}" if upsert and re.fullmatch(r"\w+", name) else argument

    text = _SCALAR_MIN_MAX.sub(lambda m: f"{'LEAST' if m.group(1).lower() == 'min' else 'GREATEST'}"
                                         f"({qualified(m.group(2))},{m.group(3)})", text)
    text = text.replace("%", "%%")
    text = _PLACEHOLDER.sub("%s", text)
    if _SERIAL_TABLES.match(text):
        text += " RETURNING id"
    return text


def split_script(script: str) -> list[str]:
    """The statements of a script without string literals holding ``;`` (the gradebook's scripts have none)."""
    return [part.strip() for part in script.split(";") if part.strip()]


class PostgresConnection:
    """A psycopg 3 connection in autocommit mode (transactions are explicit, as with ``isolation_level=None``).

    Args:
        url: ``postgresql://user:password@host:port/database`` (libpq's URL; ``?host=/socket/dir`` works too).
        readonly: Make every transaction read-only.

    Raises:
        GraderError: If psycopg is missing or the server refuses the connection.
    """

    def __init__(self, url: str, readonly: bool = False) -> None:
        try:
            import psycopg
        except ImportError:
            raise GraderError("a PostgreSQL gradebook needs psycopg: pip install 'transformer-autograder[postgres]'"
                              ) from None
        try:
            self._db = psycopg.connect(url, autocommit=True, row_factory=_row_factory, connect_timeout=30)
        except psycopg.Error as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise GraderError(f"cannot open the PostgreSQL gradebook {display(url)}: {reason}") from None
        if readonly:
            self._db.execute("SET default_transaction_read_only = on")

    def execute(self, statement: str, parameters: tuple[Any, ...] | list[Any] = ()) -> _Cursor:
        """Run one statement written for SQLite; BEGIN IMMEDIATE also takes the writers' lock."""
        translated = translate(statement)
        if translated is None:
            return _Cursor([])
        cursor = self._db.execute(translated, tuple(parameters))  # a tuple even if empty: %% stays %
        if statement.strip().upper().startswith("BEGIN IMMEDIATE"):
            self._db.execute("SELECT pg_advisory_xact_lock(%s)", (WRITER_LOCK,))
        rows = cursor.fetchall() if cursor.description else []
        lastrowid = rows[0][0] if _SERIAL_TABLES.match(translated) and rows else None
        return _Cursor(rows, lastrowid)

    def executescript(self, script: str) -> None:
        for statement in split_script(script):
            self.execute(statement)

    def has_table(self, name: str) -> bool:
        """Whether the database already holds this table (a gradebook's or someone else's)."""
        row = self._db.execute("SELECT to_regclass(%s)", (name,)).fetchone()
        return row is not None and row[0] is not None

    def close(self) -> None:
        self._db.close()
