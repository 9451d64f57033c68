"""Revision 0002: grader 0.2.0's schema 2, a submission's lateness (raw score, times, penalty) and its source files.

A schema 1 submission's raw score is its score (no late penalty applied then); it has no stored sources.
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    """Add the lateness columns (the raw score copied from the score) and the sources table."""
    op.add_column("submissions", sa.Column("raw_score", sa.Double))
    op.add_column("submissions", sa.Column("submitted_at", sa.Text))
    op.add_column("submissions", sa.Column("due_at", sa.Text))
    op.add_column("submissions", sa.Column("late_seconds", sa.Double, nullable=False, server_default=sa.text("0")))
    op.add_column("submissions", sa.Column("penalty", sa.Double, nullable=False, server_default=sa.text("0")))
    op.add_column("submissions", sa.Column("late_note", sa.Text, nullable=False, server_default=sa.text("''")))
    submissions = sa.table("submissions", sa.column("score"), sa.column("raw_score"))
    op.execute(submissions.update().values(raw_score=submissions.c.score))
    op.create_table(
        "sources",
        sa.Column("submission", ID, sa.ForeignKey("submissions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("file", sa.Text, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("submission", "file"),
    )
