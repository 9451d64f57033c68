"""The one table renderer (autograder/util/table.py): aligned text with a header rule, or a markdown pipe table."""

from __future__ import annotations

import re

from autograder.util.table import LEFT, RIGHT, table


def test_a_text_table_aligns_its_columns_under_a_rule_and_keeps_cells_as_text() -> None:
    lines = table(["student", "score"], [("00123", "1.50"), ("ada lovelace", "10")], [LEFT, RIGHT], indent="  ")
    assert lines[0].split() == ["student", "score"] and re.fullmatch(r"  -+  -+", lines[1])
    assert lines[2].split() == ["00123", "1.50"], "an id is never read as the number 123"
    assert len({len(line) for line in lines}) == 1, "every line as wide: the last column is right-aligned"
    assert lines[2].index("00123") == lines[3].index("ada lovelace") == 2


def test_rows_without_a_header_are_label_value_pairs_without_a_rule() -> None:
    assert table([], [("graded now", "2"), ("could not grade", "1 (see below)")]) == [
        "graded now       2", "could not grade  1 (see below)"]


def test_a_markdown_table_is_a_pipe_table_with_each_columns_alignment() -> None:
    lines = table(["task", "students"], [("row\\|sums", "3")], [LEFT, RIGHT], markdown=True)
    assert re.fullmatch(r"\| task +\| +students \|", lines[0])
    assert re.fullmatch(r"\|:-+\|-+:\|", lines[1])
    assert re.fullmatch(r"\| row\\\|sums +\| +3 \|", lines[2])
