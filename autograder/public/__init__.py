"""The student's side: `grader check` runs an assignment's public tests and reports each task."""
