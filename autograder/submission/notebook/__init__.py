"""A notebook submission: read its cells (never run), collect its definitions, lay them out as the package."""
