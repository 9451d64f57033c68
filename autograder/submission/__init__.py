"""A student's submission: find the package in a folder or zip, unpack it safely, copy declared files."""
