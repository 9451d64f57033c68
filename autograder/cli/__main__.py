"""`python -m autograder.cli`: the same command line as the `grader` console script (used by Gradescope's run_autograder)."""

from autograder.cli import run

run()
