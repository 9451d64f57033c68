"""Revision 0001: the gradebook of grader 0.1.0 (its ``meta.schema_version`` 1), the first schema ever written.

A revision is a frozen record of one change: it spells its tables out instead of importing ``gradebook/schema.py``,
which describes the newest schema only.
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # SQLite's rowid alias must be declared INTEGER


def upgrade() -> None:
    """Create the tables grader 0.1.0 created."""
    op.create_table("meta", sa.Column("key", sa.Text, primary_key=True), sa.Column("value", sa.Text, nullable=False))
    op.create_table("students", sa.Column("id", sa.Text, primary_key=True),
                    sa.Column("first_seen", sa.Text, nullable=False), sa.Column("last_seen", sa.Text, nullable=False))
    op.create_table(
        "submissions",
        sa.Column("id", ID, primary_key=True, autoincrement=True),
        sa.Column("assignment", sa.Text, nullable=False),
        sa.Column("student", sa.Text, sa.ForeignKey("students.id"), nullable=False),
        sa.Column("digest", sa.Text, nullable=False),
        sa.Column("fingerprint", sa.Text, nullable=False),
        sa.Column("source", sa.Text, nullable=False, server_default=sa.text("''")),
        sa.Column("graded_at", sa.Text, nullable=False),
        sa.Column("score", sa.Double, nullable=False, server_default=sa.text("0")),
        sa.Column("max_score", sa.Double, nullable=False, server_default=sa.text("0")),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("message", sa.Text, nullable=False, server_default=sa.text("''")),
        sa.Column("seconds", sa.Double, nullable=False, server_default=sa.text("0")),
        sa.Column("check_seconds", sa.Double, nullable=False, server_default=sa.text("0")),
        sa.Column("worker_rss_mb", sa.Double),
        sa.Column("report_json", sa.Text),
        sa.CheckConstraint("status IN ('graded', 'error')"),
        sa.UniqueConstraint("assignment", "student", "digest", "fingerprint"),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "task_scores",
        sa.Column("submission", ID, sa.ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", ID, nullable=False),
        sa.Column("task", sa.Text, nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("score", sa.Double, nullable=False),
        sa.Column("max_score", sa.Double, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("feedback", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("submission", "task"),
    )
    op.create_table(
        "check_results",
        sa.Column("id", ID, primary_key=True, autoincrement=True),
        sa.Column("submission", ID, sa.ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("task", sa.Text, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("weight", sa.Double, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("hint", sa.Text, nullable=False),
        sa.Column("seconds", sa.Double, nullable=False),
    )
    op.create_index("check_results_submission", "check_results", ["submission"])
    op.create_table(
        "current",
        sa.Column("assignment", sa.Text, nullable=False),
        sa.Column("student", sa.Text, sa.ForeignKey("students.id"), nullable=False),
        sa.Column("submission", ID, sa.ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("seen_at", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("assignment", "student"),
    )
