"""The results model and its renderers (text, JSON, Gradescope, JUnit), feedback and the class report."""
