"""The instructor's tools: generate the template, verify an assignment, build releases, audit the checks."""
