"""Where a public test that overran was when it was stopped: the student's innermost line in the stack the fork's
faulthandler wrote, said as ``raised in`` is (a file and line, or a notebook's cell and line)."""

from __future__ import annotations

from pathlib import Path

from autograder.public.condense import stack_frames, stopped_in
from autograder.submission.notebook.places import CellMap, Span


def _stack(package: Path) -> str:
    return ("Stack (most recent call first):\n"
            '  File "/usr/lib/python3/site-packages/torch/_tensor_str.py", line 120 in _tensor_str\n'
            f'  File "{package / "attention.py"}", line 3 in scaled_dot_product_attention\n'
            f'  File "{package / "attention.py"}", line 7 in forward\n'
            '  File "/course/public_tests/test_attention.py", line 45 in test_shapes\n')


def test_the_students_innermost_line_is_named_with_its_text(tmp_path: Path) -> None:
    package = tmp_path / "assignment3"
    package.mkdir()
    (package / "attention.py").write_text("def scaled_dot_product_attention(q):\n    while True:\n"
                                          "        print(q)\n")
    assert stopped_in(_stack(package), package) == [
        "stopped in attention.py, line 3, in scaled_dot_product_attention", "    print(q)"]
    cells = CellMap({"attention.py": [Span(1, 3, "In [5]", 10)]})
    assert stopped_in(_stack(package), package, cells)[0] == "stopped in In [5], line 12, in scaled_dot_product_attention"


def test_a_stack_outside_the_students_code_says_nothing(tmp_path: Path) -> None:
    assert stopped_in(_stack(tmp_path / "elsewhere"), tmp_path / "assignment3") == []
    assert stopped_in("", tmp_path) == []


def test_the_students_functions_in_the_stack_are_named_by_their_qualified_names(tmp_path: Path) -> None:
    """As a traceback's: a hint then names the building block a test of a later task hung in ("may be caused by
    attention, which fails"), where faulthandler gives a method's plain name only."""
    package = tmp_path / "assignment3"
    package.mkdir()
    (package / "attention.py").write_text(
        "def scaled_dot_product_attention(q):\n    while True:\n        print(q)\n\n\n"
        "class MultiHeadAttention:\n    def forward(self, x):\n        return scaled_dot_product_attention(x)\n")
    stack = ("Stack (most recent call first):\n"
             f'  File "{package / "attention.py"}", line 3 in scaled_dot_product_attention\n'
             f'  File "{package / "attention.py"}", line 8 in forward\n'
             '  File "/course/public_tests/test_attention.py", line 45 in test_shapes\n')
    assert stack_frames(stack, package) == ["attention.MultiHeadAttention.forward",
                                            "attention.scaled_dot_product_attention"]
