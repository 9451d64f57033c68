"""The ``grader`` command line: one click group; each command lives in its own module and only forwards.

A release may ship only some command modules (the student release: ``check`` and ``show``); the group lists the
commands whose modules are present, and leaves out of their ``--help`` the options for instructors
(``cli/base.py:InstructorOption``), so ``grader --help`` shows only what can run.
"""

from __future__ import annotations

import importlib

import click

from autograder.cli.base import InstructorOption, run_then_exit

# (module, command object) in the order ``grader --help`` lists them.
COMMANDS = (("check", "check"), ("grade", "grade"), ("grade_all", "grade_all"), ("report", "report"),
            ("gradebook", "gradebook_group"), ("show", "show"), ("template", "template"), ("verify", "verify"),
            ("release", "release"), ("audit", "audit"), ("new", "new"))


class _Commands(click.Group):
    """The group: a known command whose module this release does not ship is refused in one sentence."""

    absent: set[str] = set()

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in self.absent:
            raise click.UsageError(f"`grader {cmd_name}` is an instructor's command and is not part of this release "
                                   "(it needs the hidden tests and the reference); run `grader check ASSIGNMENT`")
        return command


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="transformer-autograder")
def main() -> None:
    """Auto-grader for the transformers course (students: `grader check ASSIGNMENT` tests your work)."""


def _register() -> None:
    for module_name, attribute in COMMANDS:
        qualified = f"{__name__}.{module_name}"
        try:
            module = importlib.import_module(qualified)
        except ModuleNotFoundError as exc:
            if exc.name != qualified:  # a command that is present but broken must fail loudly
                raise
            _Commands.absent.add(module_name.replace("_", "-"))  # not part of this release
            continue
        main.add_command(getattr(module, attribute))
    if in_student_release():  # known once every command module was looked for
        for command in main.commands.values():
            for param in command.params:
                if isinstance(param, InstructorOption):
                    param.hidden = True


def in_student_release() -> bool:
    """Whether this installation is the student release: the one fact that says so is that it leaves the
    instructors' command modules out (``_Commands.absent``), by which the group refuses those commands and hides
    the instructors' options of the commands it ships, which refuse them too."""
    return bool(_Commands.absent)


_register()


def run() -> None:
    """The ``grader`` console script."""
    run_then_exit(main)


if __name__ == "__main__":
    run()
