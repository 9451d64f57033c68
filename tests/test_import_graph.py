"""No import circle anywhere in ``autograder/``, inside a subpackage or across them (imports inside functions count)."""

from __future__ import annotations

from pathlib import Path

from autograder.authoring.closure import imported_names
from autograder.util.paths import PACKAGE_DIR


def module_files(root: Path) -> dict[str, Path]:
    """Every module and package under the package folder ``root``, by dotted name (``a.b`` for ``a/b/__init__.py``)."""
    return {".".join(p.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__"): p
            for p in sorted(root.rglob("*.py"))}


def _enclosing(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def import_graph(root: Path) -> dict[str, set[str]]:
    """Which modules under ``root`` each one imports, as Python runs them (``TYPE_CHECKING`` imports left out).

    ``from p import x`` reaches ``p.x`` if that is a module, else ``p`` itself (a name its ``__init__`` defines).
    Importing ``a.b.c`` also runs the ``__init__`` of ``a`` and ``a.b``, except of the packages that enclose the
    importer: those are initialised before any module inside them, so they add no edge.
    """
    modules = module_files(root)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        inside = set(_enclosing(name))
        targets = set()
        for imported in imported_names(name, path):
            owner = imported.rpartition(".")[0]
            if imported in modules and imported not in inside:
                targets.add(imported)
            elif imported not in modules and owner in modules:
                targets.add(owner)
        graph[name] = {step for target in targets for step in [target, *_enclosing(target)]
                       if step in modules and step not in inside and step != name}
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[str]:
    """Each circle a depth-first walk of ``graph`` closes, written ``a -> b -> a``; empty when there is none."""
    state: dict[str, str] = {}
    circles: list[str] = []

    def visit(module: str, trail: list[str]) -> None:
        state[module] = "open"
        for other in sorted(graph[module]):
            if state.get(other) == "open":  # ``other`` is on the walk's trail: the edge closes a circle
                circles.append(" -> ".join(trail[trail.index(other):] + [module, other]))
            elif other not in state:
                visit(other, trail + [module])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [])
    return circles


def test_no_import_circle_in_the_grader() -> None:
    graph = import_graph(PACKAGE_DIR)
    assert import_circles(graph) == []
    # the walk sees late imports and resolves relative ones (it could not miss a circle by missing its edges)
    assert "autograder.show._jobs" in graph["autograder.show.run"]  # inside start_workers
    assert "autograder.batch.figures" in graph["autograder.batch.pool"]  # inside the worker's loop
    assert "autograder.show.figures" in graph["autograder.show.catalog"]  # ``from . import figures``


def test_a_circle_is_named_late_imports_count_and_typing_ones_do_not(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    files = {"__init__.py": "", "sub/__init__.py": "",
             "a.py": "from pkg.sub import b\n",
             "sub/b.py": "def late():\n    from .. import c\n",
             "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import d\nimport pkg.a\n",
             "d.py": "from pkg import c\n"}
    for name, text in files.items():
        (package / name).write_text(text, encoding="utf-8")
    assert import_circles(import_graph(package)) == ["pkg.a -> pkg.sub.b -> pkg.c -> pkg.a"]
