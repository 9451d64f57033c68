"""The student release's grader: its module list (found statically) and the figure files it carries."""

from __future__ import annotations

import pytest

from autograder.authoring.closure import imported_names, module_closure, module_file
from autograder.errors import ReleaseError
from autograder.util.paths import PACKAGE_DIR


def _relative(paths: list) -> set[str]:
    return {p.relative_to(PACKAGE_DIR).as_posix() for p in paths}


def test_a_lazy_import_inside_a_function_is_part_of_the_closure() -> None:
    # sandbox.host imports the reference cache's location inside default_protected(), when a zygote starts
    shipped = _relative(module_closure(["autograder.sandbox.host"]))
    assert "judge/refcache.py" in shipped
    assert {"__init__.py", "sandbox/__init__.py", "judge/__init__.py"} <= shipped  # the packages holding them


def test_typing_only_imports_are_left_out(tmp_path) -> None:
    # a name used in annotations only is imported under TYPE_CHECKING: the release need not carry its module
    module = tmp_path / "render.py"
    module.write_text("from typing import TYPE_CHECKING\n\nfrom .page import render_page\n\n"
                      "if TYPE_CHECKING:\n    from autograder.sandbox.host import Zygote\n")
    names = set(imported_names("autograder.show.render", module))
    assert "autograder.show.page" in names and "autograder.sandbox.host" not in names


def test_relative_imports_resolve_against_the_package() -> None:
    names = set(imported_names("autograder.show._jobs", module_file("autograder.show._jobs")))
    assert {"autograder.show.catalog", "autograder.show.outcome"} <= names


def test_check_alone_ships_the_sandbox_it_runs_on_and_no_instructor_module() -> None:
    from autograder.authoring.release import student_grader_modules

    shipped = _relative(student_grader_modules(figures=False))
    assert "public/runner.py" in shipped and "cli/check.py" in shipped
    # grader check runs on the sandbox's runtime: its template (a fresh interpreter imports it by name) and the
    # session its zygotes open (named in their configuration), as grader show does
    assert {"sandbox/template.py", "sandbox/zygote.py", "sandbox/job.py", "public/session.py"} <= shipped
    assert not [p for p in shipped if p.startswith(("grading/", "show/", "authoring/", "batch/"))]


def test_an_unknown_entry_point_is_refused() -> None:
    with pytest.raises(ReleaseError, match="not a module of the grader"):
        module_closure(["autograder.no_such_module"])


def test_without_show_expected_the_release_carries_the_figure_files_but_no_png(assignment_copy, tmp_path) -> None:
    from autograder.show.render import release_figures

    manifest = assignment_copy.root / "assignment.toml"
    manifest.write_text(manifest.read_text().replace("show_expected = true", "show_expected = false"))
    written = release_figures(assignment_copy, tmp_path / "release")  # no rendering: nothing to draw
    assert sorted(p.name for p in written) == ["_drawing.py", "attention.py", "kv_cache.py", "positions.py",
                                               "tiny_gpt.py"]
    assert not list((tmp_path / "release").rglob("*.png"))
