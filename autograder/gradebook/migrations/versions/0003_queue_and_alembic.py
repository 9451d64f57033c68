"""Revision 0003: the ``grade-all --queue`` table becomes part of the schema, and Alembic keeps the schema's version.

Before, the queue created ``grading_queue`` in a PostgreSQL gradebook when first used (and added its ``claim``
column later); such a table is kept as it is, with its rows. Its sequence ``grading_queue_claims`` is left unused:
a claim id is now drawn at random by the claimer, the same way on every database. ``meta``'s ``schema_version``
goes: the revision in ``gradebook_revision`` says it now, and a grader older than this one refuses the file
instead of writing into it.
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the queue's table (or add the claim id to one made before claim ids), and drop the old version key."""
    tables = sa.inspect(op.get_bind())
    if not tables.has_table("grading_queue"):
        op.create_table(
            "grading_queue",
            sa.Column("assignment", sa.Text, nullable=False),
            sa.Column("student", sa.Text, nullable=False),
            sa.Column("digest", sa.Text, nullable=False),
            sa.Column("fingerprint", sa.Text, nullable=False),
            sa.Column("worker", sa.Text),
            sa.Column("lease_until", sa.DateTime(timezone=True)),
            sa.Column("done", sa.Boolean, nullable=False, server_default=sa.text("false")),
            sa.Column("claim", sa.BigInteger),
            sa.PrimaryKeyConstraint("assignment", "student"),
        )
    elif "claim" not in {c["name"] for c in tables.get_columns("grading_queue")}:
        op.add_column("grading_queue", sa.Column("claim", sa.BigInteger))
    meta = sa.table("meta", sa.column("key"))
    op.execute(meta.delete().where(meta.c.key == "schema_version"))
