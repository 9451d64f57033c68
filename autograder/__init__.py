"""Auto-grader for course assignments: sandboxed hidden tests that compare student code with a reference."""

__version__ = "0.2.0"  # a new version re-grades every gradebook and redraws every figure: bump it when grades change
