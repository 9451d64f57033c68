"""`python -m autograder.cli`: the `grader` console script's command line (Gradescope's run_autograder uses it)."""

from autograder.cli import run

if __name__ == "__main__":
    run()
