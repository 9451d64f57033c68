"""Grading one submission: the Grader orchestrates the sandboxed jobs, the judge and the scores."""
