"""`grader new`: scaffold a complete assignment to start from."""

from __future__ import annotations

from pathlib import Path

import click

from autograder.cli.base import friendly_errors


@click.command()
@click.argument("name")
@friendly_errors
def new(name: str) -> None:
    """Scaffold assignments/NAME/ (every manifest key commented), its reference and its student template, in the
    course every command finds from this folder ($GRADER_ASSIGNMENTS, else the nearest assignments/ from here up);
    where there is none, a new course here: ./assignments/NAME/."""
    from autograder.authoring.scaffold import new_assignment
    from autograder.spec.course import ASSIGNMENTS, find_assignments_root
    from autograder.util.paths import display_path
    from autograder.util.targets import output_folder

    root = find_assignments_root(bundled=False) or Path.cwd() / ASSIGNMENTS
    for folder, what in ((root / name, "the assignment's folder"),
                         (root.parent / "reference_solutions" / name, "the reference's folder"),
                         (root.parent / "student_template" / name, "the template's folder")):
        output_folder(folder, what)  # all three before the first file is written: no half-made assignment
    written = new_assignment(name, root)
    click.echo(f"{len(written)} files written: {display_path(root / name)}, "
               f"{display_path(root.parent / 'reference_solutions' / name)} and the student template")
    click.echo(f"next: edit them, then `grader verify {name}`, `grader audit {name}`, `grader release {name}`")
