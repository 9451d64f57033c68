"""One bug, one task, on the figure page too: a figure's ✗ whose probe's tasks use a task whose own figure shows a
✗ says to fix that one first, decided by the walk of the manifest's ``uses`` that `grader check` uses."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from autograder.show.catalog import load_catalog
from autograder.show.figures import NOTE_BAD, NOTE_OK
from autograder.show.page import PageInfo, render_page
from autograder.show.panel import DRAWN, PLACEHOLDER, Panel
from autograder.show.render import render_figures
from autograder.spec.assignment import load_assignment
from autograder.spec.mutation import apply_mutation, load_mutations

A3 = load_assignment("assignment3")
ATTENTION = "Attention weights of six tokens, without and with the causal mask"
HEADS = "Eight heads, and concatenated back to the model width"
POSITIONS = "The sinusoidal position table: 50 positions × 64 features"
CURVES = "Four columns of the table as curves"
FROM_ATTENTION = f"may be caused by causal_mask or attention, whose figure “{ATTENTION}” above shows ✗: fix that first"
TRAINING = ("loss_curve", "attention_maps", "continuations")  # short_training's figures
# attention's own mask off by one (triu diagonal=2): the attention figure, the KV-cache figure and the three TinyGPT
# figures show ✗, and the judge names no cause for it (a mask that lets the next token through looks the same from
# causal_mask)
UPSTREAM_MISTAKE = "attention_mask_sees_next"


@pytest.fixture(scope="module")
def figures() -> dict:
    return {figure.name: figure for figure in load_catalog(A3).figures}


def _panels(figures: dict, wrong: dict[str, str], order: tuple[str, ...] = ()) -> list[Panel]:
    """Every assignment3 figure drawn with a ✓ note, except those in ``wrong``: ``bad`` (a ✗ note) or the probe
    status of a placeholder (``ok`` for outputs it could not be drawn from)."""
    panels = []
    for name in order or tuple(figures):
        how = wrong.get(name)
        if how is None or how == "bad":
            panels.append(Panel(figures[name], f"{name}.png", DRAWN, notes=[(NOTE_BAD if how else NOTE_OK, "n")]))
        else:
            panels.append(Panel(figures[name], f"{name}.png", PLACEHOLDER, "why", probe_status=how))
    return panels


def _upstream(figures: dict, wrong: dict[str, str], order: tuple[str, ...] = ()) -> dict[str, str]:
    from autograder.show.upstream import add_upstream_lines

    panels = _panels(figures, wrong, order)
    add_upstream_lines(A3, panels)
    return {panel.figure.name: panel.upstream for panel in panels if panel.upstream}


def test_a_wrong_figure_of_a_used_task_is_named_first_and_never_the_figure_itself(figures):
    assert _upstream(figures, {"attention_weights": "bad", "projection_rows": "bad"}) == \
        {"projection_rows": FROM_ATTENTION}  # kv_cache_decode uses causal_mask and attention; no self-reference
    assert _upstream(figures, {"attention_weights": "bad", "heads": "bad", "projection_rows": "bad"}) == \
        {"projection_rows": f"{FROM_ATTENTION} (also head_split, whose figure “{HEADS}” above shows ✗)"}
    assert _upstream(figures, {"heads": "bad", "projection_rows": "bad"}) == \
        {"projection_rows": f"may be caused by head_split, whose figure “{HEADS}” above shows ✗: fix that first"}


def test_only_a_wrong_figure_of_a_used_task_counts(figures):
    assert _upstream(figures, {"projection_rows": "bad"}) == {}  # the attention figure is right
    assert _upstream(figures, {"attention_weights": "bad"}) == {}  # the KV figure is right: nothing to explain
    assert _upstream(figures, {"position_table": "bad", "projection_rows": "bad"}) == {}  # not used
    assert _upstream(figures, {"cache_size": "bad", "loss_curve": "bad"}) == {}  # TinyGPT does not use it


def test_the_training_figures_name_what_their_probe_reaches_through_the_tasks_no_figure_shows(figures):
    # short_training declares no `tasks` (no diagnosis reruns of a 5-second training) but `reaches`
    # tiny_gpt_training, which uses tiny_gpt, which uses transformer_block and sinusoidal_positions; the block uses
    # multi_head_attention, which uses causal_mask, attention and head_split. No figure shows tiny_gpt, the block
    # or multi_head_attention, so the walk goes on through them to the tasks a figure does show.
    wrong = dict.fromkeys(("attention_weights", *TRAINING), "bad")
    assert _upstream(figures, wrong) == dict.fromkeys(TRAINING, FROM_ATTENTION)
    assert _upstream(figures, {"position_table": "bad", "attention_maps": "bad"}) == {"attention_maps": (
        f"may be caused by sinusoidal_positions, whose figure “{POSITIONS}” above shows ✗: fix that first")}
    assert _upstream(figures, {"position_curves": "bad", "attention_weights": "bad", "continuations": "error"}) == {
        "continuations": f"{FROM_ATTENTION} (also sinusoidal_positions, whose figure “{CURVES}” above shows ✗)"}
    assert _upstream(figures, {"heads": "bad", "loss_curve": "bad"})["loss_curve"].startswith("may be caused by "
                                                                                             "head_split")


def test_a_placeholder_from_an_error_is_a_cross_and_one_not_implemented_is_not(figures):
    assert _upstream(figures, {"attention_weights": "timeout", "projection_rows": "error"}) == \
        {"projection_rows": FROM_ATTENTION}
    assert _upstream(figures, {"attention_weights": "ok", "projection_rows": "ok"}) == \
        {"projection_rows": FROM_ATTENTION}  # outputs that could not be drawn
    assert _upstream(figures, {"attention_weights": "not implemented", "projection_rows": "bad"}) == {}
    assert _upstream(figures, {"attention_weights": "bad", "projection_rows": "not implemented"}) == {}


def test_an_upstream_figure_lower_on_the_page_is_said_to_be_below(figures):
    order = ("projection_rows", "attention_weights")
    assert _upstream(figures, {"attention_weights": "bad", "projection_rows": "bad"}, order) == \
        {"projection_rows": FROM_ATTENTION.replace(" above ", " below ")}


def test_every_view_lists_the_upstream_line_last_escaped(figures):
    panel = _panels(figures, {"projection_rows": "bad"}, ("projection_rows",))[0]
    panel.diagnosis = "a <known> mistake"  # the judge's line, set here to test the order
    panel.upstream = "may be caused by <x>"
    assert [kind for kind, _ in panel.lines()] == [NOTE_BAD, "diagnosis", "upstream"]
    page = render_page(PageInfo(assignment="assignment3", title="t", source="s", isolation="uid"), [panel], {})
    assert '<li class="upstream">↑ may be caused by &lt;x&gt;</li>' in page


@pytest.mark.slow
def test_a_broken_attention_puts_the_line_under_the_kv_cache_and_tiny_gpt_figures(tmp_path: Path):
    mistake = next(m for m in load_mutations(A3, "mistakes") if m.id == UPSTREAM_MISTAKE)
    package = apply_mutation(A3.reference, mistake, tmp_path / "work" / A3.package)
    rendered = render_figures(A3, package, tmp_path / "figures", expected=False, cache=False)
    panels = {panel.figure.name: panel for panel in rendered.panels}
    assert any(kind == NOTE_BAD for kind, _ in panels["attention_weights"].notes)
    assert any(kind == NOTE_BAD for kind, _ in panels["projection_rows"].notes)
    assert all(panels[name].shows_wrong for name in TRAINING)  # the maps see the next token; the loss drops to 0
    named = ("projection_rows", *TRAINING)
    for name in named:
        assert ("upstream", FROM_ATTENTION) in panels[name].lines()
    assert {name for name, panel in panels.items() if any(kind == "upstream" for kind, _ in panel.lines())} == \
        set(named)
    page = rendered.page.read_text(encoding="utf-8")
    for name in named:
        section = html.unescape(re.search(rf'<section id="{name}">(.*?)</section>', page, re.S).group(1))
        assert f"↑ {FROM_ATTENTION}" in section
    assert page.count("may be caused by") == len(named)
