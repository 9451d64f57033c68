"""Where a gradebook lives: an SQLite file (the embedded default) or a PostgreSQL database, as a SQLAlchemy engine.

Every statement is written once, in SQLAlchemy Core against ``gradebook/schema.py``'s tables, and runs as it is on
both. What differs is set up here, once per engine: for SQLite the pragmas (write-ahead log, foreign keys) and
``BEGIN IMMEDIATE`` for a write transaction (one writer at a time, each waiting up to 30 s for the other); for
PostgreSQL the driver (psycopg 3, the optional extra ``postgres``), read-only sessions, and a transaction-scoped
advisory lock that serialises writers as SQLite does.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import sqlalchemy
from sqlalchemy import Connection, Engine, event, func, select
from sqlalchemy.engine import URL, make_url

from autograder.errors import GraderError

POSTGRES_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")
POSTGRES_DRIVER = "postgresql+psycopg"  # the SQLAlchemy dialect and driver every PostgreSQL URL is opened with
WRITER_LOCK = 0x67726164  # the advisory lock that serialises a PostgreSQL gradebook's writers
WRITE = "gradebook_write"  # the execution option that makes a transaction a write transaction (see writing)
BUSY_SECONDS = 30.0  # how long an SQLite connection waits for another's write transaction


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
    """A location fit for messages: a URL without its password (the rest as the user typed it)."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", str(location))


def database_errors() -> tuple[type[BaseException], ...]:
    """The exception types a gradebook's engine raises for database problems (both backends)."""
    return (sqlalchemy.exc.SQLAlchemyError,)


def reason(exc: BaseException) -> str:
    """A database error in one line: the driver's own first line, without SQLAlchemy's statement and link."""
    cause = getattr(exc, "orig", None) or exc
    lines = str(cause).strip().splitlines()
    return lines[0].strip() if lines else type(cause).__name__


def create_engine(location: str | Path, readonly: bool = False) -> Engine:
    """The engine of a gradebook location (nothing is opened until it is used).

    Args:
        location: A path, ``sqlite:///path`` or ``postgresql://user:password@host:port/database`` (also
            ``postgres://`` and ``postgresql+psycopg://``; libpq's ``?host=/socket/dir`` works too).
        readonly: Never write (SQLite: ``mode=ro``; PostgreSQL: read-only transactions).

    Raises:
        GraderError: If psycopg is not installed for a PostgreSQL URL, or the URL cannot be read.
    """
    location = parse_location(location)
    return _sqlite(location, readonly) if isinstance(location, Path) else _postgres(location, readonly)


def writing(engine: Engine) -> Any:
    """A write transaction on ``engine`` (a context manager yielding its Connection): committed when the block
    ends, rolled back if it raises, and the gradebook's only writer while it lasts."""
    return engine.execution_options(**{WRITE: True}).begin()


def _sqlite(path: Path, readonly: bool) -> Engine:
    if readonly:  # a URI, so that SQLite itself refuses every write
        url = URL.create("sqlite", database=path.resolve().as_uri(), query={"mode": "ro", "uri": "true"})
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        url = URL.create("sqlite", database=str(path))
    engine = sqlalchemy.create_engine(url, connect_args={"timeout": BUSY_SECONDS})

    @event.listens_for(engine, "connect")
    def _session(dbapi_connection: Any, _record: Any) -> None:
        # sqlite3 would begin a transaction only before a write; SQLAlchemy's begin event below says BEGIN instead
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys = ON")
        if not readonly:
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: a killed process loses no commit
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        # IMMEDIATE takes the write lock first: a write transaction that read first could not upgrade to writing
        connection.exec_driver_sql("BEGIN IMMEDIATE" if connection.get_execution_options().get(WRITE) else "BEGIN")

    return engine


def _postgres(text: str, readonly: bool) -> Engine:
    try:
        url = make_url(text).set(drivername=POSTGRES_DRIVER)
    except sqlalchemy.exc.ArgumentError as exc:
        raise GraderError(f"cannot read the PostgreSQL URL {display(text)}: {exc}") from None
    options: dict[str, Any] = {"connect_timeout": 30}
    if readonly:
        options["options"] = "-c default_transaction_read_only=on"
    try:
        engine = sqlalchemy.create_engine(url, connect_args=options)
    except ImportError:
        raise GraderError("a PostgreSQL gradebook needs psycopg: pip install 'transformer-autograder[postgres]'"
                          ) from None

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        if connection.get_execution_options().get(WRITE):
            connection.execute(select(func.pg_advisory_xact_lock(WRITER_LOCK)))

    return engine
