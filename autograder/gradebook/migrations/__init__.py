"""The gradebook's Alembic migrations (``env.py``, ``versions/``), run by ``gradebook/migrate.py`` on open."""
