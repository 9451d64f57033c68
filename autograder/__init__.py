"""Auto-grader for course assignments: sandboxed hidden tests that compare student code with a reference."""

__version__ = "0.1.0"
