"""``python -m autograder.cli``: the ``grader`` command (how Gradescope's run_autograder and setup.sh call it)."""

from autograder.cli import run

run()
