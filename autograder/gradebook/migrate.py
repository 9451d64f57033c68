"""Open a gradebook's database at the schema this grader writes: its Alembic migrations are applied when it opens.

The revisions live in ``gradebook/migrations/versions/`` and Alembic records the one a database is at in the table
``gradebook_revision`` (not Alembic's default ``alembic_version``, which nbgrader's gradebook, or another program
sharing the PostgreSQL database, may hold). A gradebook written before Alembic (grader 0.1.0 and 0.2.0) says its
schema in ``meta``'s ``schema_version``: it is stamped with that schema's revision, then upgraded like any other.
The upgrade runs in one transaction holding the writers' lock, so nothing is half-migrated and two processes opening
the same old gradebook at once upgrade it once.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, inspect, select

from autograder.errors import GraderError
from autograder.gradebook import backend, schema

if TYPE_CHECKING:
    from alembic.script import ScriptDirectory

# Alembic is imported when a gradebook is opened, not with this module: the grading workers import the batch
# package (and so this module) but never open a gradebook.

VERSION_TABLE = "gradebook_revision"
MIGRATIONS = Path(__file__).with_name("migrations")
LEGACY = {"1": "0001", "2": "0002"}  # a pre-Alembic gradebook's meta.schema_version -> the revision it is at


def open_database(location: str | Path, readonly: bool = False) -> Engine:
    """The engine of a gradebook at the newest schema: created if the database is empty, upgraded in place if older.

    Upgrading is the one write a read-only open makes (once per gradebook: an old file stays readable by nothing
    but a grader this new).

    Args:
        location: An SQLite file or a PostgreSQL URL (see :func:`backend.create_engine`).
        readonly: Never write grades (reads through a read-only connection).

    Raises:
        GraderError: If the gradebook cannot be reached or read, is missing (read-only), is another program's
            database, or was written by a newer grader.
    """
    location = backend.parse_location(location)
    shown = backend.display(location)
    if readonly and isinstance(location, Path) and not location.is_file():
        raise GraderError(f"gradebook not found: {shown}")
    engine = backend.create_engine(location, readonly)
    try:
        _bring_to_head(engine, location, readonly)
    except GraderError:
        engine.dispose()
        raise
    except backend.database_errors() as exc:
        engine.dispose()
        raise GraderError(f"{shown} is not a usable gradebook ({backend.reason(exc)})") from None
    return engine


@functools.cache
def _scripts() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS))


def head() -> str:
    """The newest revision: the schema this grader writes."""
    return _scripts().get_current_head()


def _bring_to_head(engine: Engine, location: str | Path, readonly: bool) -> None:
    try:
        connection = engine.connect()
    except backend.database_errors() as exc:
        raise GraderError(f"cannot open the gradebook {backend.display(location)}: {backend.reason(exc)}") from None
    with connection:
        found = _revision(connection, location)
    if found == (head(), False):
        return
    if found[0] is None and readonly:
        raise GraderError(f"{backend.display(location)} holds no gradebook")
    writer = backend.create_engine(location) if readonly else engine
    try:
        with backend.writing(writer) as connection:
            revision, legacy = _revision(connection, location)  # again under the lock: another may have upgraded
            if revision != head():
                _upgrade(connection, revision, legacy)
    finally:
        if writer is not engine:
            writer.dispose()


def _revision(connection: Connection, location: str | Path) -> tuple[str | None, bool]:
    """The revision a database is at (None: no gradebook yet), and whether it is a pre-Alembic one to stamp.

    Raises:
        GraderError: If the database holds another program's tables (an SQLite file), a gradebook of a schema this
            grader does not know, or one of a newer grader.
    """
    from alembic.runtime.migration import MigrationContext

    current = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE}).get_current_revision()
    shown = backend.display(location)
    if current is not None:
        if current not in {script.revision for script in _scripts().walk_revisions()}:
            raise GraderError(f"{shown} was written by a newer grader (gradebook revision {current}; this grader "
                              f"knows up to {head()}): upgrade the grader")
        return current, False
    tables = set(inspect(connection).get_table_names())
    if "meta" in tables:
        version = connection.execute(select(schema.meta.c.value).where(schema.meta.c.key == "schema_version")
                                     ).scalar()
        if version in LEGACY:
            return LEGACY[version], True
        raise GraderError(f"{shown} is not a gradebook this grader can read (schema version {version or 'none'}); "
                          f"grade into a new gradebook file")
    if tables & set(schema.metadata.tables) or (tables and isinstance(location, Path)):
        raise GraderError(f"{shown} is not a gradebook (it holds other tables: {', '.join(sorted(tables)[:5])}); "
                          f"grade into a new gradebook file")
    return None, False


def _upgrade(connection: Connection, revision: str | None, legacy: bool) -> None:
    """Run the revisions after ``revision`` on ``connection`` (inside its transaction), stamping a legacy one first."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS).replace("%", "%%"))
    config.attributes.update(connection=connection, version_table=VERSION_TABLE)
    if legacy:
        command.stamp(config, revision)
    command.upgrade(config, "head")
