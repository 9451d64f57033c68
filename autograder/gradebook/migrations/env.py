"""Alembic's environment for the gradebook: migrate on the connection ``gradebook/migrate.py`` opened and locked.

No ``alembic.ini``: the configuration is built in code, and the connection, already inside the transaction that
holds the gradebook's writer lock, comes in ``config.attributes``; every revision runs in that one transaction.
"""

from alembic import context

attributes = context.config.attributes
context.configure(connection=attributes["connection"], version_table=attributes["version_table"])
with context.begin_transaction():
    context.run_migrations()
