"""The gradebook's tables as SQLAlchemy Core metadata: what every query is written against, on SQLite and PostgreSQL.

The tables are created and changed only by the Alembic migrations (``gradebook/migrations/versions/``);
``tests/gradebook/test_migrations.py`` checks that the migrations build exactly these tables.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    Double,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
    text,
)

# A row id: SQLite's rowid alias must be declared INTEGER; PostgreSQL's ids are 64-bit.
ID = BigInteger().with_variant(Integer(), "sqlite")

metadata = MetaData()

meta = Table(
    "meta", metadata,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)

students = Table(
    "students", metadata,
    Column("id", Text, primary_key=True),
    Column("first_seen", Text, nullable=False),
    Column("last_seen", Text, nullable=False),
)

submissions = Table(
    "submissions", metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("assignment", Text, nullable=False),
    Column("student", Text, ForeignKey("students.id"), nullable=False),
    Column("digest", Text, nullable=False),
    Column("fingerprint", Text, nullable=False),
    Column("source", Text, nullable=False, server_default=text("''")),
    Column("graded_at", Text, nullable=False),
    Column("score", Double, nullable=False, server_default=text("0")),
    Column("max_score", Double, nullable=False, server_default=text("0")),
    Column("status", Text, nullable=False),
    Column("message", Text, nullable=False, server_default=text("''")),
    Column("seconds", Double, nullable=False, server_default=text("0")),
    Column("check_seconds", Double, nullable=False, server_default=text("0")),
    Column("worker_rss_mb", Double),
    Column("report_json", Text),
    Column("raw_score", Double),
    Column("submitted_at", Text),
    Column("due_at", Text),
    Column("late_seconds", Double, nullable=False, server_default=text("0")),
    Column("penalty", Double, nullable=False, server_default=text("0")),
    Column("late_note", Text, nullable=False, server_default=text("''")),
    CheckConstraint("status IN ('graded', 'error')"),
    UniqueConstraint("assignment", "student", "digest", "fingerprint"),
    sqlite_autoincrement=True,  # an id is never reused: a re-recorded submission gets a new one
)

task_scores = Table(
    "task_scores", metadata,
    Column("submission", ID, ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False),
    Column("position", ID, nullable=False),
    Column("task", Text, nullable=False),
    Column("title", Text, nullable=False),
    Column("score", Double, nullable=False),
    Column("max_score", Double, nullable=False),
    Column("status", Text, nullable=False),
    Column("feedback", Text, nullable=False),
    PrimaryKeyConstraint("submission", "task"),
)

check_results = Table(
    "check_results", metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("submission", ID, ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False),
    Column("task", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("description", Text, nullable=False),
    Column("weight", Double, nullable=False),
    Column("status", Text, nullable=False),
    Column("message", Text, nullable=False),
    Column("hint", Text, nullable=False),
    Column("seconds", Double, nullable=False),
    Index("check_results_submission", "submission"),
)

sources = Table(
    "sources", metadata,
    Column("submission", ID, ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False),
    Column("file", Text, nullable=False),
    Column("text", Text, nullable=False),
    PrimaryKeyConstraint("submission", "file"),
)

current = Table(
    "current", metadata,
    Column("assignment", Text, nullable=False),
    Column("student", Text, ForeignKey("students.id"), nullable=False),
    Column("submission", ID, ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False),
    Column("seen_at", Text, nullable=False),
    PrimaryKeyConstraint("assignment", "student"),
)

# `grade-all --queue` (batch/queue.py): the class's submissions, each claimed by one worker at a time.
grading_queue = Table(
    "grading_queue", metadata,
    Column("assignment", Text, nullable=False),
    Column("student", Text, nullable=False),
    Column("digest", Text, nullable=False),
    Column("fingerprint", Text, nullable=False),
    Column("worker", Text),
    Column("lease_until", DateTime(timezone=True)),
    Column("done", Boolean, nullable=False, server_default=text("false")),
    Column("claim", BigInteger),  # the claim id: a fencing token, new with each claim
    PrimaryKeyConstraint("assignment", "student"),
)
