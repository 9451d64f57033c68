"""One bug, one task, on the figure page: a ✗ points at the ✗ of a task it builds on, as `grader check` does."""

from __future__ import annotations

from collections.abc import Callable

from autograder.public.hints import join_names, wrong_used_tasks
from autograder.spec.assignment import Assignment

from .panel import Panel


def add_upstream_lines(assignment: Assignment, panels: list[Panel]) -> None:
    """Set ``upstream`` on each panel that shows a ✗ whose probe's tasks use a task whose own figure shows a ✗.

    Which tasks are upstream is decided by `grader check`'s own function
    (:func:`autograder.public.hints.wrong_used_tasks`: the manifest's ``uses``, in its order), from the tasks the
    probe calls (:attr:`Probe.calls`: ``reaches``, else ``tasks``, so a slow probe that declares no ``tasks`` to
    spare the diagnosis its reruns still gets the line). Wrong, here, is a ✗ (:attr:`Panel.shows_wrong`) on a
    figure of another probe that calls the task; a figure of the same probe never counts: its ✗ comes from the same
    outputs, so it would point at itself. A task that no figure on the page calls has no verdict here, so the walk
    looks through it to what it uses (TinyGPT's figures reach attention through the block, which has no figure).

    Args:
        assignment: The assignment.
        panels: The page's figures, in page order (changed in place).
    """
    wrong = [panel for panel in panels if panel.shows_wrong]
    place = {panel.figure.name: index for index, panel in enumerate(panels)}
    on_the_page = _called_by(panels)
    for panel in wrong:
        elsewhere = [other for other in wrong if other.figure.probe.name != panel.figure.probe.name]
        upstream = wrong_used_tasks(assignment, panel.figure.probe.calls, _called_by(elsewhere),
                                    unseen=lambda task: not on_the_page(task))
        panel.upstream = _line(panel, upstream, elsewhere, place) if upstream else ""


def _called_by(panels: list[Panel]) -> Callable[[str], bool]:
    """Whether one of these figures' probes calls a task (show's notion of wrong, for figures that show a ✗)."""
    return lambda task: any(task in panel.figure.probe.calls for panel in panels)


def _line(panel: Panel, upstream: list[str], elsewhere: list[Panel], place: dict[str, int]) -> str:
    """``may be caused by a or b, whose figure “…” above shows ✗: fix that first``: the upstream tasks grouped by
    the first figure (in page order) that declares them and shows a ✗; the groups in the order of their first task
    in the manifest, the first one to fix first."""
    groups: dict[str, tuple[Panel, list[str]]] = {}
    for task in upstream:
        shown = next(other for other in elsewhere if task in other.figure.probe.calls)
        groups.setdefault(shown.figure.name, (shown, []))[1].append(task)

    def figure(shown: Panel) -> str:
        where = "above" if place[shown.figure.name] < place[panel.figure.name] else "below"
        return f"whose figure “{shown.figure.title}” {where} shows ✗"

    (first, tasks), *rest = groups.values()
    also = "; ".join(f"also {join_names(others, 'or')}, {figure(shown)}" for shown, others in rest)
    return (f"may be caused by {join_names(tasks, 'or')}, {figure(first)}: fix that first"
            + (f" ({also})" if also else ""))
