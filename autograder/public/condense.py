"""Condense a failing public test into a few lines a student can act on (which output, where, by how much)."""

from __future__ import annotations

import ast
import linecache
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.public.loops import Loop, loop_holding
from autograder.submission.notebook.places import CellMap, place
from autograder.util.syntax import parse
from autograder.util.wording import entries_differ

MAX_LINES = 6
MAX_WIDTH = 110
_MISMATCHED = re.compile(r"Mismatched elements: (\d+) / (\d+)")
# torch says "(up to X allowed)" only with a tolerance; with rtol=atol=0 (tensors that must be equal) it says nothing
_TORCH_GREATEST = re.compile(r"Greatest absolute difference: (\S+) at index (\([^)]*\))(?: \(up to (\S+) allowed\))?")
_NUMPY_GREATEST = re.compile(r"Max absolute difference(?: among violations)?: (\S+)")
_ATTRIBUTE = re.compile(r"The values for attribute '(\w+)' do not match: (.+?) != (.+?)\.?$", re.M)
_TORCH_SIZE = re.compile(r"torch\.Size\(\[([^\]]*)\]\)")  # torch.Size([3, 3]): said as a shape is said, (3, 3)
_DID_NOT_RAISE = re.compile(r"DID NOT RAISE (.+)$")
_DUMPED_FRAME = re.compile(r'^\s*File "(.+)", line (\d+) in (\S+)', re.M)  # a frame of faulthandler's stack


@dataclass(frozen=True)
class Unequal:
    """A ``torch.equal`` call that returned False: where it was called from, and what it compared.

    Attributes:
        code: The calling frame's code object.
        line: The calling line (1-based).
        compared: Its two arguments.
    """

    code: Any
    line: int
    compared: tuple[Any, Any]


def shorten(text: str, width: int = MAX_WIDTH) -> str:
    """One line of at most ``width`` characters (whitespace collapsed, an ellipsis where cut)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def condense(excinfo: Any, test_file: Path, package_dir: Path, cell_map: CellMap | None = None,
             unequal: Unequal | None = None) -> list[str]:
    """At most MAX_LINES lines saying what went wrong in a failing test.

    Args:
        excinfo: pytest's ExceptionInfo of the failure.
        test_file: The public test file (to find the failing statement).
        package_dir: The student's package folder (to find the student's line that raised).
        cell_map: A notebook's map of its extracted files (the student's line is then said as a cell's).
        unequal: The last ``torch.equal`` call of the test that returned False (the plugin records it: the
            assertion's message holds only the tensors' shortened reprs).

    Returns:
        The lines, the first naming the test's failing line.
    """
    entries = list(excinfo.traceback)
    test_entry = next((e for e in reversed(entries) if _same(e.path, test_file)), None)
    student_entry = next((e for e in reversed(entries) if _inside(e.path, package_dir)), None)
    statement, lineno = _statement(test_entry)
    lines = [f"{test_file.name}, line {lineno}: {shorten(statement, MAX_WIDTH - 20)}"] if statement else []
    value = excinfo.value
    expected = _expected_exception(test_file, lineno) if lineno else None
    message = _message(value)
    wrong_kind = _numpy_for_tensor(test_entry, test_file, statement, message)
    if wrong_kind:
        lines.append(wrong_kind)
    elif type(value).__name__ == "Failed" and _DID_NOT_RAISE.search(message):
        lines.append(f"expected {_DID_NOT_RAISE.search(message).group(1)} to be raised, but nothing was raised")
    elif expected and not isinstance(value, AssertionError):
        lines.append(f"expected {expected} to be raised, but got {type(value).__name__}: {shorten(message, 70)}")
        lines += _student_frame(student_entry, package_dir, cell_map)
    elif isinstance(value, AssertionError) and ("Mismatched elements" in message or "do not match" in message):
        lines += _close_failure(message, entries, statement)
    elif isinstance(value, AssertionError) and _asserted_equal(test_entry, statement, unequal):
        lines += _equal_failure(statement, *unequal.compared) or _assertion(message)  # type: ignore[union-attr]
    elif isinstance(value, AssertionError):
        lines += _assertion(message)
    else:
        lines.append(shorten(f"{type(value).__name__}: {message}"))
        lines += _student_frame(student_entry, package_dir, cell_map)
    return [shorten(line) for line in lines[:MAX_LINES]]


def _message(value: BaseException) -> str:
    try:
        return str(value)
    except Exception:  # noqa: BLE001 - a student's exception whose __str__ raises
        return "<unprintable>"


def _same(path: Any, other: Path) -> bool:
    try:
        return Path(str(path)).resolve() == other.resolve()
    except OSError:
        return False


def student_frames(excinfo: Any, package_dir: Path) -> list[str]:
    """The student's functions a failure's traceback passes through, as ``module.qualname`` (``attention.causal_mask``,
    ``attention.MultiHeadAttention.forward``), outermost first."""
    frames = [student_function(entry.path, entry.frame.code.raw, package_dir) for entry in excinfo.traceback]
    return list(dict.fromkeys(frame for frame in frames if frame is not None))


def student_function(path: Any, code: Any, package_dir: Path) -> str | None:
    """``module.qualname`` of a code object defined in the student's package, or None for code outside it."""
    if not _inside(path, package_dir):
        return None
    module = ".".join(Path(str(path)).resolve().relative_to(package_dir.resolve()).with_suffix("").parts)
    return f"{module}.{getattr(code, 'co_qualname', code.co_name)}"


def _inside(path: Any, folder: Path) -> bool:
    try:
        return folder.resolve() in Path(str(path)).resolve().parents
    except OSError:
        return False


def _statement(entry: Any) -> tuple[str, int]:
    """The failing statement's text and its 1-based line number ('' and 0 without a test frame)."""
    if entry is None:
        return "", 0
    try:
        return " ".join(str(entry.statement).split()), entry.lineno + 1
    except Exception:  # noqa: BLE001 - source unavailable
        return "", entry.lineno + 1


def _student_frame(entry: Any, package_dir: Path, cell_map: CellMap | None) -> list[str]:
    """Where in the student's own files (or notebook cells) the exception was raised, with that line's text."""
    if entry is None:
        return []
    try:
        name = Path(str(entry.path)).resolve().relative_to(package_dir.resolve()).as_posix()
        code = entry.frame.code.raw
        where = f"raised in {place(name, entry.lineno + 1, cell_map)}, in {getattr(code, 'co_qualname', entry.name)}"
        return [where, f"    {shorten(str(entry.statement), MAX_WIDTH - 4)}"]
    except Exception:  # noqa: BLE001 - source unavailable
        return []


def stack_frames(stack: str, package_dir: Path) -> list[str]:
    """The student's functions in faulthandler's stack, as ``module.qualname`` outermost first (what
    :func:`student_frames` gives for a traceback: a hint may then name a building block a test hung in)."""
    frames = []
    for path, line, function in reversed(_DUMPED_FRAME.findall(stack)):
        if _inside(path, package_dir):
            module = ".".join(Path(path).resolve().relative_to(package_dir.resolve()).with_suffix("").parts)
            frames.append(f"{module}.{_qualname(path, int(line), function)}")
    return list(dict.fromkeys(frames))


def _qualname(path: str, line: int, name: str) -> str:
    """The qualified name of the function ``name`` whose lines hold ``line`` (``MultiHeadAttention.forward``:
    faulthandler names a frame by its code's plain name); ``name`` when the file says nothing better."""
    try:
        nodes: list[tuple[ast.AST, str]] = [(parse(Path(path).read_text(encoding="utf-8")), "")]
    except (OSError, SyntaxError, ValueError):
        return name
    found = name
    while nodes:
        node, prefix = nodes.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                    child.lineno <= line <= (child.end_lineno or child.lineno):
                qualified = f"{prefix}{child.name}"
                if child.name == name and not isinstance(child, ast.ClassDef):
                    found = qualified
                nodes.append((child, qualified + ("." if isinstance(child, ast.ClassDef) else ".<locals>.")))
    return found


def stopped_in(stack: str, package_dir: Path, cell_map: CellMap | None = None) -> list[str]:
    """Where a test that overran was when it was stopped, with that line's text: the innermost line of the student's
    own code in faulthandler's stack (most recent call first), said as the loop of its function that holds it
    (``stopped in the loop at attention.py, line 50``: the same on every run, wherever in the loop the stack was
    taken, :func:`autograder.public.loops.loop_holding`), or as the line itself when no loop holds it; nothing when
    no frame is the student's.

    Args:
        stack: faulthandler's dump of the test's thread.
        package_dir: The student's package folder.
        cell_map: A notebook's map of its extracted files (the line is then said as a cell's).
    """
    for path, line, function in _DUMPED_FRAME.findall(stack):
        if _inside(path, package_dir):
            name = Path(path).resolve().relative_to(package_dir.resolve()).as_posix()
            loop = _loop_of(path, int(line))
            shown = loop.line if loop is not None else int(line)
            where = (f"the loop at {place(name, shown, cell_map)}, in {loop.function or function}" if loop is not None
                     else f"{place(name, shown, cell_map)}, in {function}")
            text = linecache.getline(path, shown).strip()
            return [f"stopped in {where}", *([f"    {shorten(text, MAX_WIDTH - 4)}"] if text else [])]
    return []


def _loop_of(path: str, line: int) -> Loop | None:
    """The loop of the student's file holding its line (read from the file, as its text is: no code of it runs)."""
    try:
        return loop_holding(Path(path).read_bytes(), line)
    except OSError:
        return None


def _expected_exception(test_file: Path, lineno: int) -> str | None:
    """The exception a ``with pytest.raises(X)`` around line ``lineno`` of the test file expects, if any."""
    try:
        tree = parse(test_file.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.With) or not node.body:
            continue
        if not node.body[0].lineno <= lineno <= (node.end_lineno or node.lineno):
            continue
        for item in node.items:
            call = item.context_expr
            if isinstance(call, ast.Call) and ast.unparse(call.func).endswith("raises") and call.args:
                return ast.unparse(call.args[0])
    return None


def _numpy_for_tensor(entry: Any, test_file: Path, statement: str, message: str) -> str:
    """'f returned a numpy.ndarray; return a torch.Tensor' when a test that works with tensors got a NumPy array
    from the code under test ('' otherwise): said plainly instead of ``assert dtype('bool') == torch.bool`` or
    torch's TypeError. An array the test made itself (``np.zeros``) is not the student's doing."""
    if "torch" not in statement and "torch" not in message:
        return ""
    try:
        local = entry.frame.f_locals if entry is not None else {}
    except Exception:  # noqa: BLE001 - a frame without locals
        local = {}
    lineno = entry.lineno + 1 if entry is not None else 0
    producers = [_producer(test_file, lineno, name) for name in _names(statement) if _is_numpy(local.get(name))]
    producer = next((p for p in producers if p and not p.startswith(_LIBRARIES)), "")
    if not producer and _NUMPY_NOT_TENSOR.search(message):  # the student's result went straight into torch
        producer = next((call for call in _calls(statement) if not call.startswith(_LIBRARIES)), "your function")
    return f"{producer} returned a numpy.ndarray; return a torch.Tensor" if producer else ""


_LIBRARIES = ("torch", "np.", "numpy", "pytest")
_NUMPY_NOT_TENSOR = re.compile(r"numpy\.ndarray'?>? and <class 'torch\.Tensor|Tensor, not numpy\.ndarray")


def _is_numpy(value: Any) -> bool:
    """A NumPy array or scalar (``numpy.ndarray``, ``numpy.bool_``...)."""
    return type(value).__module__ == "numpy"


def _names(statement: str) -> list[str]:
    """The plain names a statement reads, in order (``mask`` in ``assert mask.dtype == torch.bool``)."""
    try:
        tree = parse(statement.strip())
    except SyntaxError:
        return []
    return list(dict.fromkeys(n.id for n in ast.walk(tree) if isinstance(n, ast.Name)))


def _calls(statement: str) -> list[str]:
    """The functions a statement calls, by their written names (``causal_mask`` in ``torch.equal(causal_mask(1), ...)``)."""
    try:
        tree = parse(statement.strip())
    except SyntaxError:
        return []
    return [ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)]


def _producer(test_file: Path, lineno: int, name: str) -> str:
    """The function whose result the failing test assigned to ``name`` last before line ``lineno``
    (``causal_mask`` for ``mask = causal_mask(4)``); '' when it was not a call's result."""
    try:
        tree = parse(test_file.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return ""
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.lineno <= lineno <= (n.end_lineno or n.lineno)]
    if not functions:
        return ""
    found, latest = "", 0
    for node in ast.walk(functions[-1]):
        assigned = isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and latest < node.lineno < lineno
        if assigned and any(isinstance(t, ast.Name) and t.id == name for target in node.targets
                            for t in ast.walk(target)):
            found, latest = ast.unparse(node.value.func), node.lineno
    return found


def _close_failure(message: str, entries: list[Any], statement: str) -> list[str]:
    """``assert_close``/``assert_allclose``: which output, its shape, how many entries differ, by how much, where."""
    return _difference(message, _first_argument(statement) or "the output", *_compared_values(entries))


def _difference(message: str, name: str, actual: Any, expected: Any) -> list[str]:
    """What differs between an output and its expected value, from the comparison's message (torch's or NumPy's)
    and the values: a shape or dtype, else how many entries differ and where (the largest difference and what is
    allowed, or, when the values must be equal, the first element that differs with both values)."""
    attribute = _ATTRIBUTE.search(message)
    if attribute:
        got, wanted = (_TORCH_SIZE.sub(_as_tuple, attribute.group(i)) for i in (2, 3))
        return [f"{name}: {attribute.group(1)} {got}, expected {wanted}"]
    shape = _shape(actual)
    lines = [f"{name}" + (f" (shape {shape})" if shape else "") + " differs from the expected values"]
    mismatched = _MISMATCHED.search(message)
    if mismatched:
        lines.append(entries_differ(mismatched.group(1), mismatched.group(2)))
    greatest = _TORCH_GREATEST.search(message)
    first = _first_difference(actual, expected) if greatest and not greatest.group(3) else ""
    if first:
        lines[-1] += f" (must be equal); {first}"
    elif greatest:
        allowed = f"{greatest.group(3)} allowed" if greatest.group(3) else "must be equal"
        lines[-1] += f"; the largest difference is {_number(greatest.group(1))} at index {greatest.group(2)} ({allowed})"
    else:
        numpy_greatest, where = _NUMPY_GREATEST.search(message), _argmax_difference(actual, expected)
        if numpy_greatest:
            at = f" at index {where}" if where else ""
            lines[-1] += f"; the largest difference is {numpy_greatest.group(1)}{at}"
    return lines


def _asserted_equal(entry: Any, statement: str, unequal: Unequal | None) -> bool:
    """Whether the failing statement is ``assert torch.equal(a, b)`` and ``unequal`` is that very call."""
    if unequal is None or entry is None:
        return False
    try:
        same = entry.frame.code.raw is unequal.code and entry.lineno + 1 == unequal.line
        tree = parse(statement.strip())
    except Exception:  # noqa: BLE001 - no frame, or a statement that is not Python on its own
        return False
    test = tree.body[0].test if tree.body and isinstance(tree.body[0], ast.Assert) else None
    return same and isinstance(test, ast.Call) and ast.unparse(test.func).endswith("equal") and len(test.args) == 2


def _equal_failure(statement: str, actual: Any, expected: Any) -> list[str]:
    """``assert torch.equal(a, b)``, whose message is a bare False: said as an ``assert_close`` with no tolerance
    would say it (its message, then :func:`_difference`); nothing when that comparison cannot run."""
    try:
        import torch

        torch.testing.assert_close(actual, expected, rtol=0, atol=0)
    except AssertionError as exc:
        return _difference(str(exc), _first_argument(statement) or "the output", actual, expected)
    except Exception:  # noqa: BLE001 - what torch.equal compares but assert_close cannot (a tensor subclass...)
        pass
    return []


def _first_difference(actual: Any, expected: Any) -> str:
    """``the first at index (0, 1): got True, expected False`` for two arrays or tensors of one shape ('' when that
    cannot be computed)."""
    try:
        import numpy as np

        index = tuple(int(i) for i in np.argwhere(np.asarray(actual != expected))[0])
        got, wanted = _element(actual[index]), _element(expected[index])
    except Exception:  # noqa: BLE001 - shapes that differ, values that are not arrays
        return ""
    nan = " (NaN equals nothing, itself included: no tensor holding a NaN is equal to another)" \
        if got == wanted == "nan" else ""
    return f"the first at index {index}: got {got}, expected {wanted}{nan}"


def _as_tuple(size: re.Match) -> str:
    """``torch.Size([3, 3])`` as ``(3, 3)`` (``(3,)`` for one dimension), the way every shape is said here."""
    dims = [d.strip() for d in size.group(1).split(",") if d.strip()]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _element(value: Any) -> str:
    """One element as a student reads it: ``True``, ``3``, ``0.1235`` (four significant digits)."""
    value = value.item() if hasattr(value, "item") else value
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _number(text: str) -> str:
    """A difference in four significant digits (``4.256`` for ``4.256357669830322``); other text as it is."""
    try:
        return f"{float(text):.4g}"
    except ValueError:
        return text


def _compared_values(entries: list[Any]) -> tuple[Any, Any]:
    """The two values an ``assert_close`` (torch) or ``assert_allclose`` (NumPy) frame compared."""
    for entry in entries:
        try:
            local = entry.frame.f_locals
            name = entry.frame.code.name
        except Exception:  # noqa: BLE001
            continue
        if name == "assert_close" and "actual" in local:
            return local.get("actual"), local.get("expected")
        if name == "assert_allclose" and "actual" in local:
            return local.get("actual"), local.get("desired")
    return None, None


def _shape(value: Any) -> str:
    shape = getattr(value, "shape", None)
    try:
        return "(" + ", ".join(str(int(n)) for n in shape) + ("," if len(shape) == 1 else "") + ")"
    except TypeError:
        return ""


def _argmax_difference(actual: Any, expected: Any) -> str:
    """The index of the largest absolute difference of two NumPy-like arrays ('' when it cannot be computed)."""
    try:
        import numpy as np

        difference = np.abs(np.asarray(actual, dtype=float) - np.asarray(expected, dtype=float))
        index = np.unravel_index(int(np.nanargmax(difference)), difference.shape)
        return "(" + ", ".join(str(int(i)) for i in index) + ")"
    except Exception:  # noqa: BLE001 - shapes that do not broadcast, objects that are not numbers
        return ""


_COMPARISONS = ("assert_close", "assert_allclose", "equal")  # calls whose first argument is the output compared


def _first_argument(statement: str) -> str:
    """The first argument of the comparison call in a statement (``weights[0, 0]`` in ``assert_close(weights[0, 0],
    expected)``, ``mask`` in ``assert torch.equal(mask, expected)``)."""
    try:
        tree = parse(statement.strip())
    except SyntaxError:
        return ""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and ast.unparse(node.func).endswith(_COMPARISONS):
            return shorten(ast.unparse(node.args[0]), 50)
    return ""


def _assertion(message: str) -> list[str]:
    """A plain ``assert``: pytest's explanation of the values, without object addresses, at most two lines."""
    lines = [line for line in message.splitlines() if line.strip()]
    cleaned = [re.sub(r" at 0x[0-9a-f]+", "", line).replace("\\n", " ") for line in lines]  # tensor reprs
    if not cleaned:
        return ["the assertion failed"]
    return [shorten(line) for line in cleaned[:2]]
