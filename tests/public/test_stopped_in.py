"""Where a public test that overran was when it was stopped: the student's innermost line in the stack the fork's
faulthandler wrote, as the loop of its function that holds it (the same place whichever line the stack was taken
on), said as ``raised in`` is (a file and line, or a notebook's cell and line)."""

from __future__ import annotations

from pathlib import Path

from autograder.public.condense import stack_frames, stopped_in
from autograder.public.loops import Loop, loop_holding
from autograder.submission.notebook.places import CellMap, Span


def _stack(package: Path) -> str:
    return ("Stack (most recent call first):\n"
            '  File "/usr/lib/python3/site-packages/torch/_tensor_str.py", line 120 in _tensor_str\n'
            f'  File "{package / "attention.py"}", line 3 in scaled_dot_product_attention\n'
            f'  File "{package / "attention.py"}", line 7 in forward\n'
            '  File "/course/public_tests/test_attention.py", line 45 in test_shapes\n')


def test_the_students_innermost_line_is_named_as_the_loop_holding_it_with_its_text(tmp_path: Path) -> None:
    package = tmp_path / "assignment3"
    package.mkdir()
    (package / "attention.py").write_text("def scaled_dot_product_attention(q):\n    while True:\n"
                                          "        print(q)\n")
    assert stopped_in(_stack(package), package) == [
        "stopped in the loop at attention.py, line 2, in scaled_dot_product_attention", "    while True:"]
    cells = CellMap({"attention.py": [Span(1, 3, "In [5]", 10)]})
    assert stopped_in(_stack(package), package, cells)[0] == (
        "stopped in the loop at In [5], line 11, in scaled_dot_product_attention")


def test_a_line_in_no_loop_is_named_as_it_was_sampled(tmp_path: Path) -> None:
    """One long call, no loop: the sampled line is the place (it is the same on every run)."""
    package = tmp_path / "assignment3"
    package.mkdir()
    (package / "attention.py").write_text("def scaled_dot_product_attention(q):\n    q = q + 1\n"
                                          "    print(q)\n")
    assert stopped_in(_stack(package), package) == [
        "stopped in attention.py, line 3, in scaled_dot_product_attention", "    print(q)"]
    cells = CellMap({"attention.py": [Span(1, 3, "In [5]", 10)]})
    assert stopped_in(_stack(package), package, cells)[0] == (
        "stopped in In [5], line 12, in scaled_dot_product_attention")


def test_every_line_of_a_loop_is_said_as_the_loop_whatever_frame_python_sampled(tmp_path: Path) -> None:
    """``while True: pass`` is sampled on either line; a comprehension is its own frame in Python 3.11."""
    package = tmp_path / "assignment3"
    package.mkdir()
    (package / "attention.py").write_text(
        "def scaled_dot_product_attention(q):\n    while True:\n        q = [v for v in q]\n        pass\n")
    said = set()
    for line, function in ((2, "scaled_dot_product_attention"), (3, "<listcomp>"), (4, "scaled_dot_product_attention")):
        stack = ("Stack (most recent call first):\n"
                 f'  File "{package / "attention.py"}", line {line} in {function}\n'
                 '  File "/course/public_tests/test_attention.py", line 45 in test_shapes\n')
        said.add(tuple(stopped_in(stack, package)))
    assert said == {("stopped in the loop at attention.py, line 2, in scaled_dot_product_attention",
                     "    while True:")}


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


# -- which loop a sampled line is in (no process) -----------------------------------------------------------------

NESTED = '''\
def scaled_dot_product_attention(q, k):
    total = 0
    for row in q:
        for value in row:
            total += value
        total -= 1
    else:
        total = 0
    while True:
        pass
    return [
        v * 2 for v in k
        if v
    ]


class MultiHeadAttention:
    def forward(self, x):
        while x:
            def helper(y):
                return y + 1
            x = [helper(v) for v in x]
        return x
'''


def test_a_line_in_a_loop_is_said_as_the_outermost_loop_of_its_function_holding_it() -> None:
    # a nested loop: the inner loop's lines and the outer loop's own are one place (every sample in the nest agrees)
    assert {loop_holding(NESTED, line) for line in (3, 4, 5, 6)} == {Loop(3, "scaled_dot_product_attention")}
    assert {loop_holding(NESTED, line) for line in (9, 10)} == {Loop(9, "scaled_dot_product_attention")}
    assert {loop_holding(NESTED, line) for line in (12, 13)} == {Loop(11, "scaled_dot_product_attention")}
    # a comprehension inside a loop is the loop's (Python 3.11 samples it in a frame of its own, <listcomp>), and
    # so is a def statement (its header runs in the loop; its body is another function's)
    assert {loop_holding(NESTED, line) for line in (19, 20, 22)} == {Loop(19, "forward")}


def test_a_line_in_no_loop_of_its_own_function_has_no_loop() -> None:
    # the function's plain lines, a for's else (it runs once), the body of a function defined in a loop (a
    # function of its own), a class's line, a line past the end
    assert [loop_holding(NESTED, line) for line in (1, 2, 7, 8, 21, 23, 17, 99)] == [None] * 8
    assert loop_holding("def f(:\n    while True: pass\n", 2) is None  # a file that cannot be parsed


def test_a_loop_at_the_top_level_of_a_module_names_no_function() -> None:
    assert loop_holding("x = 0\nwhile True:\n    x += 1\n", 3) == Loop(2, "")
