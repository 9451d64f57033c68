"""One Alembic revision per change of the gradebook's schema, oldest first (``0001`` is grader 0.1.0's schema)."""
