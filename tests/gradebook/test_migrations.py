"""Gradebooks written by earlier graders open, are upgraded in place (Alembic: gradebook/migrate.py) and export exactly
what they held; the migrations build exactly the tables the code queries (gradebook/schema.py).

``old_gradebooks/<version>/`` holds what grader <version> wrote and exported, made with that grader's own code (a
``git worktree add`` of its commit: 3a1f351 for 0.1.0, the last with schema 1; c2915ed for 0.2.0) from five ``mini``
submissions (tests/fixtures: the reference, a stub, a known mistake, a print of ``<script>``, no package), graded
twice with bob's submission changed in between (his first grade stays in the history):
``grader grade-all mini CLASS --gradebook g.db --jobs 1`` (0.2.0 also with ``--due 2026-12-01T23:59:00+01:00
--late-penalty 10%/day --timestamps stamps.csv``, and once more into PostgreSQL with ``--queue``), then
``grader gradebook export g.db --csv class.csv --feedback feedback``. ``gradebook.sql`` is the database as the old
grader left it (``sqlite3 g.db .dump``; ``pg_dump --inserts --no-owner --no-privileges`` without its ``\\restrict``
lines).
"""

from __future__ import annotations

import csv
import io
import html.parser
import re
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import sqlalchemy
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from click.testing import CliRunner

from autograder.cli import main
from autograder.errors import GraderError
from autograder.gradebook.migrate import VERSION_TABLE, head
from autograder.gradebook.schema import metadata
from autograder.gradebook.store import Gradebook

OLD = Path(__file__).with_name("old_gradebooks")
INTERNAL = ("sqlite_sequence", VERSION_TABLE)  # what the comparison of tables leaves out


def _engine(location: str | Path) -> sqlalchemy.Engine:
    """A plain engine on a database, for the test's own reads (not the grader's)."""
    url = f"sqlite:///{location}" if isinstance(location, Path) else str(location).replace(
        "postgresql://", "postgresql+psycopg://")
    return sqlalchemy.create_engine(url)


def _tables(location: str | Path) -> dict[str, list[dict]]:
    """Every row of every table, sorted, by table."""
    engine = _engine(location)
    found = sqlalchemy.MetaData()
    found.reflect(engine)
    with engine.connect() as connection:
        rows = {name: sorted((dict(r._mapping) for r in connection.execute(sqlalchemy.select(table))), key=repr)
                for name, table in found.tables.items() if name not in INTERNAL}
    engine.dispose()
    return rows


def _load(version: str, tmp_path: Path) -> Path:
    """The SQLite gradebook grader ``version`` wrote, as it left it."""
    db = tmp_path / f"{version}.db"
    with sqlite3.connect(db) as connection:
        connection.executescript((OLD / version / "gradebook.sql").read_text(encoding="utf-8"))
    connection.close()
    return db


def _export(location: str | Path, tmp_path: Path) -> Path:
    """``grader gradebook export LOCATION --csv --feedback`` into a fresh folder, in-process; returns the folder."""
    out = tmp_path / "export"
    result = CliRunner().invoke(main, ["gradebook", "export", str(location), "--csv", str(out / "class.csv"),
                                       "--feedback", str(out / "feedback")])
    assert result.exit_code == 0, result.output
    return out


def _revision(location: str | Path) -> list[tuple]:
    engine = _engine(location)
    with engine.connect() as connection:
        found = connection.execute(sqlalchemy.text(f"SELECT version_num FROM {VERSION_TABLE}")).all()
    engine.dispose()
    return found


def _kept(before: dict[str, list[dict]], after: dict[str, list[dict]]) -> None:
    """Every row held before the upgrade is still there, every value as it was (the only row dropped: meta's
    schema_version, which the revision table now says)."""
    for table, rows in before.items():
        held = [r for r in rows if not (table == "meta" and r["key"] == "schema_version")]
        now = sorted(({column: row[column] for column in rows[0]} for row in after[table]), key=repr) if rows else []
        assert now == held, table


class _Text(html.parser.HTMLParser):
    """The text a browser shows of a page (what a student reads), whitespace collapsed."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.feed(page)

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def __str__(self) -> str:
        return " ".join(" ".join(self.parts).split())


def _ungraded_cells_empty(text: str) -> str:
    """The old CSV with the one deliberate change since: a submission that could not be graded has empty score
    cells (raw_score, penalty, total), not 0 (issue 41, item 7: a 0 read as a grade)."""
    rows = list(csv.DictReader(io.StringIO(text)))
    for row in rows:
        if row["status"] == "error":
            row.update({column: "" for column in ("raw_score", "penalty", "total") if column in row})
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _same_exports(expected: Path, out: Path) -> None:
    """The CSV byte for byte (ungraded cells now empty), what each feedback file says a student earned."""
    assert (out / "class.csv").read_text() == _ungraded_cells_empty((expected / "class.csv").read_text())
    names = sorted(p.name for p in (expected / "feedback").iterdir())
    assert sorted(p.name for p in (out / "feedback").iterdir()) == names
    for name in names:
        old, new = ((folder / "feedback" / name).read_text(encoding="utf-8") for folder in (expected, out))
        if name.endswith(".html"):  # the text a student reads: up to the first check, the same words
            old, new = (str(_Text(page)).split("[passed]")[0] for page in (old, new))
            assert new == old, name
        else:
            assert _grades(new) == _grades(old), name


def _grades(markdown: str) -> list[str]:
    """A feedback file's headings, score line and task table: what it says a student earned. Its check lines are
    worded as the grader words them now (a cause said once since issue 41), so they are not compared."""
    return [line for line in markdown.splitlines() if line.startswith(("#", "**Score", "|"))]


def test_a_gradebook_of_grader_0_1_0_is_upgraded_in_place_and_exports_what_it_held(tmp_path):
    db = _load("0.1.0", tmp_path)
    before = _tables(db)
    assert [r["value"] for r in before["meta"]] == ["1"] and len(before["submissions"]) == 6  # bob's two, history
    out = _export(db, tmp_path)
    assert _revision(db) == [(head(),)]
    after = _tables(db)
    _kept(before, after)
    assert all((r["raw_score"], r["late_seconds"], r["penalty"], r["late_note"], r["submitted_at"]) ==
               (r["score"], 0.0, 0.0, "", None) for r in after["submissions"]) and after["sources"] == []
    # 0.1.0's CSV had no lateness columns: those it had hold the same cells
    old = list(csv.DictReader(io.StringIO(_ungraded_cells_empty((OLD / "0.1.0" / "class.csv").read_text()))))
    new = list(csv.DictReader((out / "class.csv").open()))
    assert [{k: row[k] for k in old[0]} for row in new] == old and new[0]["raw_score"] == old[0]["total"]
    # its feedback rendered checks another way (escaping, paths): each student's scores, tasks and check statuses
    for expected in sorted((OLD / "0.1.0" / "feedback").iterdir()):
        assert _scores(expected.read_text()) == _scores((out / "feedback" / expected.name).read_text()), expected.name


def _scores(markdown: str) -> list[str]:
    """A feedback file's headings, score and task table, and the statuses its checks had."""
    lines = [line for line in markdown.splitlines() if line.startswith(("#", "**Score", "|"))]
    return lines + sorted(set(re.findall(r"^- \\?\[(\w+)\\?\]", markdown, flags=re.M)))  # a cause said once now


def test_a_gradebook_of_grader_0_2_0_is_upgraded_in_place_and_exports_exactly_what_it_exported(tmp_path):
    db = _load("0.2.0", tmp_path)
    before = _tables(db)
    assert [r["value"] for r in before["meta"]] == ["2"] and len(before["sources"]) == 5
    _same_exports(OLD / "0.2.0", _export(db, tmp_path))
    assert _revision(db) == [(head(),)]
    _kept(before, _tables(db))


def test_a_postgres_gradebook_of_grader_0_2_0_keeps_its_queue_and_exports_exactly_what_it_exported(database,
                                                                                                   tmp_path):
    import psycopg

    with psycopg.connect(database, autocommit=True) as connection:
        connection.execute((OLD / "0.2.0-postgres" / "gradebook.sql").read_text(encoding="utf-8"))
    before = _tables(database)
    assert {r["student"]: r["done"] for r in before["grading_queue"]} == dict.fromkeys(["ada", "bob", "cy", "eve"],
                                                                                       True)
    _same_exports(OLD / "0.2.0-postgres", _export(database, tmp_path))
    assert _revision(database) == [(head(),)]
    _kept(before, _tables(database))


def test_processes_opening_one_old_gradebook_at_once_upgrade_it_once(tmp_path):
    db = _load("0.2.0", tmp_path)
    before = _tables(db)

    def opened(_: int) -> int:
        with Gradebook(db, readonly=True) as book:
            return len(book.current("mini"))

    with ThreadPoolExecutor(4) as pool:  # each its own connections; the writers' lock lets one upgrade
        assert list(pool.map(opened, range(4))) == [5] * 4
    assert _revision(db) == [(head(),)]
    _kept(before, _tables(db))


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_migrations_build_exactly_the_tables_the_code_queries(backend, tmp_path, request):
    location = tmp_path / "new.db" if backend == "sqlite" else request.getfixturevalue("database")
    Gradebook(location).close()
    engine = _engine(location)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE, "compare_type": True,
                                                               "compare_server_default": True})
        assert compare_metadata(context, metadata) == []
    engine.dispose()


def test_an_upgraded_old_gradebook_has_every_table_column_and_index_the_code_queries(tmp_path):
    db = _load("0.1.0", tmp_path)
    Gradebook(db).close()
    engine = _engine(db)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
        # 0.1.0 declared REAL where the newest schema says DOUBLE: the same storage class in SQLite
        shape = [d for d in compare_metadata(context, metadata) if isinstance(d, tuple) and d[0] in (
            "add_table", "remove_table", "add_column", "remove_column", "add_index", "remove_index")]
    engine.dispose()
    assert shape == []


def test_a_newer_or_foreign_database_is_refused_in_one_line(tmp_path):
    newer = tmp_path / "newer.db"
    Gradebook(newer).close()
    with sqlite3.connect(newer) as connection:
        connection.execute(f"UPDATE {VERSION_TABLE} SET version_num = '9999'")
    connection.close()
    with pytest.raises(GraderError, match=rf"written by a newer grader \(gradebook revision 9999; this grader knows up "
                                          rf"to {head()}\): upgrade the grader"):
        Gradebook(newer, readonly=True)
    foreign = tmp_path / "nbgrader.db"  # e.g. nbgrader's own gradebook.db, given by mistake
    with sqlite3.connect(foreign) as connection:
        connection.execute("CREATE TABLE assignment (id TEXT PRIMARY KEY)")
    connection.close()
    result = CliRunner().invoke(main, ["gradebook", "export", str(foreign), "--csv", str(tmp_path / "c.csv")])
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert "is not a gradebook (it holds other tables: assignment)" in result.output
    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(GraderError, match="holds no gradebook"):
        Gradebook(empty, readonly=True)
    assert empty.stat().st_size == 0  # nothing written into it
