"""WRITING_CHECKS.md is the complete instructor's guide: every public name, tolerance and mutation key is in it."""

from __future__ import annotations

import re
from pathlib import Path

import autograder.probe as probe
from autograder.judge.compare import TOLERANCES
from autograder.spec.mutation import EDITS, SCHEMA
from autograder.util.tomlio import loads_toml

DOC = Path(__file__).resolve().parents[2] / "docs" / "WRITING_CHECKS.md"
MUTATION_KEYS = {key.name for table in (*SCHEMA, EDITS) for key in table.keys}  # the loader's own schema


def _spans() -> set[str]:
    """The leading name of every code span (``rows_sum_to_one(*names)`` -> ``rows_sum_to_one``)."""
    return {re.match(r"[\w.@]*", span.lstrip("@")).group(0) for span in re.findall(r"`([^`\n]+)`", DOC.read_text())}


def test_every_public_name_of_the_probe_api_is_documented():
    missing = sorted(name for name in probe.__all__ if name not in _spans())
    assert missing == [], f"document these in docs/WRITING_CHECKS.md: {missing}"


def test_every_tolerance_is_in_the_table_with_its_numbers():
    rows = {m[0]: (float(m[1]), float(m[2])) for m in
            re.findall(r"^\| `(\w+)` \| ([\d.e-]+) \| ([\d.e-]+) \|", DOC.read_text(), re.M)}
    assert rows == {name: (t.rtol, t.atol) for name, t in TOLERANCES.items()}


def test_every_mutation_key_and_both_forms_are_shown():
    text = DOC.read_text()
    assert {key for key in MUTATION_KEYS if f"`{key}`" not in text} == set()
    [example] = [block for block in re.findall(r"```toml\n(.*?)```", text, re.S) if "[[mutation.edits]]" in block]
    single, multiple = loads_toml(example)["mutation"]
    assert {"file", "old", "new"} <= set(single) and "edits" not in single
    assert len(multiple["edits"]) == 2 and "file" not in multiple


def test_the_python_examples_compile():
    for block in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S):
        compile(block, str(DOC), "exec")
