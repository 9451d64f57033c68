"""A grading worker imports no database library: the gradebook is the parent's (each worker saves ~14 MB)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_grading_worker_imports_neither_sqlalchemy_nor_alembic():
    # what a spawned worker imports to run batch/pool.py:_worker_main (and the figures it may draw)
    probe = ("import sys, autograder.batch.pool, autograder.batch.figures; "
             "print(sorted(m for m in ('sqlalchemy', 'alembic', 'psycopg') if m in sys.modules))")
    found = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "[]"
