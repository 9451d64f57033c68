"""``python -m autograder.cli``: the ``grader`` command (what the Gradescope and Classroom scripts call)."""

from autograder.cli import run

run()
