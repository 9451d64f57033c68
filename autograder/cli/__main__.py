"""``python -m autograder.cli``: the ``grader`` command without its console script."""

from autograder.cli import run

run()
