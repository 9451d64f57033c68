"""The manifest's schema: docs/MANIFEST.md is generated from it, and each misfit is one line naming file, line, key."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.errors import AssignmentError
from autograder.spec.assignment import load_assignment
from autograder.spec.manifest import DOC_PATH, SCHEMA, render_reference

BASE = """\
[assignment]
modules = ["m"]
student_files = ["m.py"]
seed = 1

[[tasks]]
id = "t"
points = 1
functions = ["m.f"]
checks = "c.py"
"""


def _load(root: Path, body: str):
    folder = root / "demo"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "assignment.toml").write_text(body)
    return load_assignment("demo", root=root)


def test_the_committed_reference_is_the_generated_one():
    assert DOC_PATH.read_text(encoding="utf-8") == render_reference(), \
        "docs/MANIFEST.md is stale: run `python -m autograder.spec.manifest --write`"
    for spec in SCHEMA:
        assert all(f"| `{key.name}` |" in render_reference() for key in spec.keys)


def test_defaults_come_from_the_schema(tmp_path):
    assignment = _load(tmp_path, BASE)
    task = assignment.tasks[0]
    assert (assignment.title, assignment.memory_mb, assignment.public_timeout) == ("demo", 2048, 5.0)
    assert (task.title, task.timeout, task.slow, task.visibility) == ("t", 20.0, False, "visible")
    assert (assignment.audit.min_mistakes, assignment.audit.min_variants, assignment.audit.balanced_key) == \
        (15, 5, True)


@pytest.mark.parametrize("extra, message", [
    ("timout = 3\n", r"demo/assignment.toml:11: unknown key 'timout' in \[\[tasks\]\] \(did you mean 'timeout'\?\)"),
    ("timeout = \"fast\"\n", r"demo/assignment.toml:11: timeout must be a number, not str 'fast'"),
    ("slow = 1\n", r"assignment.toml:11: slow must be true or false, not int 1"),
    ("uses = \"m.f\"\n", r"assignment.toml:11: uses must be a list of strings"),
    ("\n[audit]\nmin_mistake = 3\n", r"assignment.toml:13: unknown key 'min_mistake' in \[audit\] \(did you mean "
                                     r"'min_mistakes'\?\)"),
    ("\n[quizz]\npoints = 3\n", r"assignment.toml:12: unknown table \[quizz\] \(did you mean 'quiz'\?\)"),
    ("\n[quiz]\nquestions = \"q.toml\"\nkey = \"k.toml\"\n", r"assignment.toml:12: \[quiz\] needs the key 'points'"),
])
def test_a_misfit_is_one_line_naming_file_line_and_key(tmp_path, extra, message):
    with pytest.raises(AssignmentError, match=message) as caught:
        _load(tmp_path, BASE + extra)
    assert "\n" not in str(caught.value)


def test_figure_files_must_exist_and_pass_the_release_rules_on_load(tmp_path):
    figures = "\n[figures]\nfiles = [\"figures/variant_demo.py\"]\n"
    with pytest.raises(AssignmentError, match=r"assignment.toml:13: \[figures\] files names "
                                              r"'figures/variant_demo.py', which does not exist"):
        _load(tmp_path, BASE + figures)
    (tmp_path / "demo" / "figures").mkdir()
    (tmp_path / "demo" / "figures" / "variant_demo.py").write_text("")
    with pytest.raises(AssignmentError, match=r"assignment.toml:13: \[figures\] files: 'figures/variant_demo.py' "
                                              r"contains 'variant'.*rename it"):
        _load(tmp_path, BASE + figures)


def test_the_regenerating_command(tmp_path, monkeypatch, capsys):
    import autograder.spec.manifest as manifest

    target = tmp_path / "MANIFEST.md"
    monkeypatch.setattr(manifest, "DOC_PATH", target)
    assert manifest.main(["--write"]) == 0 and target.read_text(encoding="utf-8") == render_reference()
    assert manifest.main([]) == 0 and capsys.readouterr().out.endswith(render_reference())
    assert manifest.main(["--wrte"]) == 2 and "usage: python -m autograder.spec.manifest" in capsys.readouterr().err
