"""`grader show`: declarations, graceful drawing, the page, real runs in the sandbox opened in a headless browser."""

from __future__ import annotations

import ast
import math
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from autograder.cli import main
from autograder.errors import AssignmentError
from autograder.judge.verdict import Judge
from autograder.judge.transport import Foreign
from autograder.show import figures as api
from autograder.show.catalog import load_catalog
from autograder.show.draw import draw_panel
from autograder.show.figures import NOTE_OK
from autograder.show.page import PageInfo, render_page
from autograder.show.panel import DRAWN, PLACEHOLDER
from autograder.show.render import render_expected, render_figures
from autograder.show.outcome import ProbeResult
from autograder.probe import derive_seed
from autograder.spec.assignment import load_assignment
from autograder.spec.mutation import load_mutations
from tests.assignments.in_process import InProcess

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
A3_FIGURES = ["attention_weights", "heads", "position_table", "position_curves", "projection_rows", "cache_size",
              "loss_curve", "attention_maps", "continuations"]


@pytest.fixture(scope="module")
def a3():
    return load_assignment("assignment3")


@pytest.fixture(scope="module")
def a3_catalog(a3):
    return load_catalog(a3)


def _figure(catalog, name):
    return next(f for f in catalog.figures if f.name == name)


# -- declarations ------------------------------------------------------------------------------------------


def test_assignments_declare_their_figures(a3_catalog):
    assert [f.name for f in a3_catalog.figures] == A3_FIGURES
    assert a3_catalog.show_expected
    training = [f for f in a3_catalog.figures if f.probe.name == "short_training"]
    assert [f.name for f in training] == ["loss_curve", "attention_maps", "continuations"]  # one run, three figures
    a2 = load_catalog(load_assignment("assignment2"))
    assert [f.name for f in a2.figures] == ["soft_attention_weights", "self_attention_weights", "dropout_weights",
                                            "stacked_and_split"]
    for figure in a3_catalog.figures + a2.figures:
        assert figure.caption and figure.title and api.check_name(figure.name) is None


def test_engine_names_no_assignment():
    """The engine only runs, transports and lays out: no assignment's name in its code (docstrings may give one
    as an example)."""
    for path in (REPO / "autograder" / "show").glob("*.py"):
        tree = ast.parse(path.read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body
                      and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                assert not re.search(r"assignment\d", node.value), (path, node.value)
            if isinstance(node, ast.Name):
                assert not re.search(r"assignment\d", node.id), (path, node.id)


def test_names_that_the_release_would_refuse_are_rejected():
    assert "key" in api.check_name("key_rows")
    assert api.check_name("_private")
    assert api.check_name("cache_size") is None


def test_a_probe_is_a_check_of_the_figures_pseudo_task():
    declared = api.probe(timeout=3)(lambda impl, ctx: {"x": impl})
    check = declared.__check__
    assert check.task == api.TASK and not check.compare_reference and not check.diagnose
    assert check.probe("impl", "ref", None) == {"x": "impl"}  # the worker's signature; no reference reaches it


def test_an_assignment_without_figures_is_a_one_line_error(a3, tmp_path):
    root = tmp_path / "assignments" / "plain"
    root.mkdir(parents=True)
    (root / "assignment.toml").write_text((a3.root / "assignment.toml").read_text().split("[figures]")[0])
    with pytest.raises(AssignmentError, match="declares no figures"):
        load_catalog(load_assignment("plain", tmp_path / "assignments"))


# -- drawing, without the sandbox: odd outputs are drawn or explained, never raised --------------------------


def test_nan_outputs_are_drawn_with_a_note(a3_catalog, tmp_path):
    weights = torch.full((1, 3, 6, 6), 1 / 6)
    causal = torch.tril(torch.ones(6, 6)).div(torch.arange(1, 7)[:, None]).expand(1, 3, 6, 6).clone()
    causal[0, 0, 3, 1] = math.nan
    result = ProbeResult("ok", outputs={"weights": weights, "causal weights": causal})
    panel = draw_panel(_figure(a3_catalog, "attention_weights"), result, tmp_path)
    assert panel.status == DRAWN and (tmp_path / panel.image).stat().st_size > 1000
    assert ("bad", "causal weights: 1 of 108 values are NaN (magenta cells in maps, gaps in curves)") in panel.notes


def test_an_all_nan_table_earns_no_check_mark(a3_catalog, tmp_path):
    table = ProbeResult("ok", outputs={"sinusoidal_positions(50, 64)": torch.full((50, 64), math.nan)})
    for name in ("position_table", "position_curves"):
        panel = draw_panel(_figure(a3_catalog, name), table, tmp_path)
        assert panel.status == DRAWN
        assert [kind for kind, text in panel.notes if "NaN" in text] and \
            not [text for kind, text in panel.notes if "lies in [-1, 1]" in text or "within ±" in text], panel.notes


def test_a_size_that_is_not_a_number_is_named_by_the_probe(a3_catalog):
    probe = next(p for f in a3_catalog.files for p in f.probes if p.name == "cache_sizes")
    kv_cache = type("KV", (), {"kv_cache_bytes": staticmethod(lambda *args: "lots")})
    with pytest.raises(TypeError, match=r"kv_cache_bytes\(32, 32, 128, 1\) returned 'lots' \(str\); expected a number"):
        probe.function(type("Impl", (), {"kv_cache": kv_cache}), None)


def _six_tokens(scale: float) -> ProbeResult:
    """The six-token probe's outputs (three heads), the weights computed with the scores divided by ``scale``."""
    generator = torch.Generator().manual_seed(0)
    q, k = (torch.randn(1, 3, 6, 8, generator=generator) for _ in range(2))
    v = torch.randn(1, 3, 6, 5, generator=generator)
    scores = q @ k.transpose(-2, -1) / scale
    weights = torch.softmax(scores, dim=-1)
    causal = torch.softmax(scores.masked_fill(torch.ones(6, 6, dtype=torch.bool).triu(1), -math.inf), dim=-1)
    return ProbeResult("ok", outputs={"weights": weights, "causal weights": causal, "out": weights @ v,
                                      "causal out": causal @ v, "q": q, "k": k, "v": v})


def test_the_docstring_formula_is_checked_on_the_probe_inputs(a3_catalog, tmp_path):
    figure = _figure(a3_catalog, "attention_weights")
    right = draw_panel(figure, _six_tokens(math.sqrt(8)), tmp_path)
    assert not [text for kind, text in right.notes if kind == "bad"], right.notes
    assert (NOTE_OK, "without mask: the weights are softmax(q kᵀ / √d_k) in each of the three heads, as the "
                     "docstring says") in right.notes
    unscaled = draw_panel(figure, _six_tokens(1.0), tmp_path)
    scale_notes = [(kind, text) for kind, text in unscaled.notes if "√d_k" in text]
    assert [kind for kind, _ in scale_notes] == ["bad"] and "differ from softmax" in scale_notes[0][1]
    assert "divided by" not in scale_notes[0][1]  # the figure states what differs; only the judge names a cause


def test_a_mask_that_lets_queries_see_the_future_is_named(a3_catalog, tmp_path):
    leaky = torch.full((1, 3, 6, 6), 1 / 6)
    panel = draw_panel(_figure(a3_catalog, "attention_weights"), ProbeResult(
        "ok", outputs={"weights": leaky, "causal weights": leaky}), tmp_path)
    assert any(kind == "bad" and "largest weight above the diagonal 0.17" in text and "see the future" in text
               for kind, text in panel.notes)


# -- known mistakes' own code, probed here (no sandbox): what the notes say of it is true ----------------------


@pytest.fixture(scope="module")
def a3_here(a3):
    return InProcess(a3, "show")


def _probed(a3, a3_catalog, a3_here, name: str, mistake: str | None, tmp_path: Path):
    """Figure ``name`` drawn from its probe run here on the reference, or on it with the known ``mistake``."""
    figure = _figure(a3_catalog, name)
    tmp_path.mkdir(parents=True, exist_ok=True)
    package = a3_here.reference
    if mistake is not None:
        package = a3_here.package(next(m for m in load_mutations(a3, "mistakes") if m.id == mistake), tmp_path)
    check = figure.probe.__check__
    outputs = Judge(a3, a3_here.reference, {}, [], tmp_path / "judge").run_reference_probe(
        check, derive_seed(a3.seed, check.name), package)
    return draw_panel(figure, ProbeResult("ok", outputs=outputs), tmp_path)


@pytest.mark.parametrize("mistake, says", [
    ("causal_mask_diagonal_0", "causal: 3 of 18 rows are NaN: a query whose keys are all masked — its own key, on "
                               "the diagonal, must stay visible — or an overflow; the other rows are exactly zero "
                               "above the diagonal"),
    ("causal_mask_diagonal_2", "causal: largest weight above the diagonal 0.98 — queries see the future"),
], ids=["diagonal_0", "diagonal_2"])
def test_a_mask_hiding_the_diagonal_is_told_from_one_showing_the_future(a3, a3_catalog, a3_here, tmp_path, mistake,
                                                                         says):
    """triu(diagonal=0) leaves query 0 no key: its softmax row is NaN, which is no weight above the diagonal."""
    panel = _probed(a3, a3_catalog, a3_here, "attention_weights", mistake, tmp_path)
    diagonal = [(kind, text) for kind, text in panel.notes if "diagonal" in text]
    assert diagonal == [("bad", says)], panel.notes
    if mistake == "causal_mask_diagonal_0":
        assert ("bad", "causal: 3 of 18 rows are NaN, the others sum to 1") in panel.notes
        assert (NOTE_OK, "causal: out = weights v") in panel.notes  # NaN in the same rows of both: no difference


def test_a_nan_in_both_outputs_compared_is_no_difference(a3, a3_catalog, a3_here, tmp_path):
    """triu(diagonal=0) makes row 0 of layer(tokens, causal=True) NaN, and decode_without_cache's too (it runs the
    layer causally on each prefix), while decode_with_cache attends over the cache without a mask."""
    panel = _probed(a3, a3_catalog, a3_here, "projection_rows", "causal_mask_diagonal_0", tmp_path)
    assert (NOTE_OK, "decode_without_cache equals layer(tokens, causal=True)") in panel.notes
    assert ("bad", "decode_with_cache differs from layer(tokens, causal=True) by up to 0.25; 16 of 192 values are "
                   "NaN in one and a number in the other") in panel.notes


def test_assignment2s_dropout_figure_says_nan_rows_are_nan(tmp_path):
    """assignment2's own figure had the same trap: a mask hiding the diagonal read as a weight above it."""
    a2 = load_assignment("assignment2")
    here = InProcess(a2, "show_a2")
    mistake = next(m for m in load_mutations(a2, "mistakes") if m.id == "csa_mask_hides_diagonal")
    figure = _figure(load_catalog(a2), "dropout_weights")
    check = figure.probe.__check__
    outputs = Judge(a2, here.reference, {}, [], tmp_path / "judge").run_reference_probe(
        check, derive_seed(a2.seed, check.name), here.package(mistake, tmp_path))
    notes = draw_panel(figure, ProbeResult("ok", outputs=outputs), tmp_path).notes
    diagonal = [text for kind, text in notes if kind == "bad" and "diagonal" in text]
    assert len(diagonal) == 1 and "rows are NaN (a query whose keys are all masked" in diagonal[0], notes
    assert "above the diagonal up to" not in diagonal[0], notes


def test_nan_rows_beside_a_future_leak_still_show_the_leak(a3_catalog, tmp_path):
    leaky = torch.full((1, 3, 6, 6), 1 / 6)
    leaky[0, 1, 2] = math.nan
    panel = draw_panel(_figure(a3_catalog, "attention_weights"), ProbeResult(
        "ok", outputs={"weights": leaky, "causal weights": leaky}), tmp_path)
    assert ("bad", "causal: largest weight above the diagonal 0.17 — queries see the future") in panel.notes
    assert ("bad", "causal: 1 of 18 rows are NaN, the others sum to 1") in panel.notes


@pytest.mark.slow
def test_a_model_reading_the_future_gets_no_check_mark_for_a_loss_below_the_floor(a3, a3_catalog, a3_here, tmp_path):
    """TinyGPT.forward calling its blocks without causal=True: the loss falls to 0.00, which no model predicting
    each token from the earlier ones reaches (the caption's floor, ln 10 / 11); the reference's loss, just above
    the floor, keeps its ✓."""
    cheat = _probed(a3, a3_catalog, a3_here, "loss_curve", "gpt_not_causal", tmp_path / "cheat")
    loss = [(kind, text) for kind, text in cheat.notes if text.startswith("the loss")]
    assert len(loss) == 1 and loss[0][0] == "bad", cheat.notes
    assert re.fullmatch(r"the loss falls from 2\.\d\d to 0\.00 in 150 steps, below the floor ln 10 / 11 ≈ 0\.21: "
                        r"the predictions see the tokens they predict — the model reads the future, or the loss "
                        r"does not score the next token", loss[0][1]), loss
    right = _probed(a3, a3_catalog, a3_here, "loss_curve", None, tmp_path / "reference")
    assert [kind for kind, text in right.notes if text.startswith("the loss falls from 2.")] == [NOTE_OK], right.notes


@pytest.mark.slow
def test_a_model_whose_mask_hides_the_diagonal_has_nan_maps_not_a_future(a3, a3_catalog, a3_here, tmp_path):
    panel = _probed(a3, a3_catalog, a3_here, "attention_maps", "causal_mask_diagonal_0", tmp_path)
    assert ("bad", "all 8 maps: 96 of 96 rows are NaN: a query whose keys are all masked — its own key, on the "
                   "diagonal, must stay visible — or an overflow") in panel.notes
    assert not [text for kind, text in panel.notes if "future" in text], panel.notes


@pytest.mark.parametrize("outputs, reason", [
    ({"weights": torch.ones(6, 6), "causal weights": torch.ones(6, 6)}, "expected shape (1, 3, 6, 6), got (6, 6)"),
    ({"weights": Foreign("numpy.ndarray", "object")}, "expected a tensor, got numpy.ndarray (object)"),
    ({}, "no such output came back"),
])
def test_unusable_outputs_give_a_placeholder_with_the_reason(a3_catalog, tmp_path, outputs, reason):
    panel = draw_panel(_figure(a3_catalog, "attention_weights"), ProbeResult("ok", outputs=outputs), tmp_path)
    assert panel.status == PLACEHOLDER and reason in panel.reason
    assert (tmp_path / panel.image).stat().st_size > 1000


def test_too_many_values_are_refused_before_drawing(a3_catalog, tmp_path):
    panel = draw_panel(_figure(a3_catalog, "loss_curve"), ProbeResult("ok", outputs={"losses": torch.zeros(2_000_000)}),
                       tmp_path)
    assert panel.status == PLACEHOLDER and "2,000,000 values, more than a figure draws" in panel.reason


def test_huge_values_are_drawn_or_explained(a3_catalog, tmp_path):
    figure = _figure(a3_catalog, "cache_size")
    large = draw_panel(figure, ProbeResult("ok", outputs={"kv_cache_bytes": torch.full((3, 16), 1e30)}), tmp_path)
    assert large.status == DRAWN
    assert any(kind == "bad" and "not 2" in text for kind, text in large.notes)
    huge = draw_panel(figure, ProbeResult("ok", outputs={"kv_cache_bytes": torch.full((3, 16), 1e300,
                                                                                      dtype=torch.float64)}), tmp_path)
    assert huge.status == PLACEHOLDER and "values as large as 1e+300 are beyond what a plot can show" in huge.reason
    assert huge.notes  # the notes still say what is wrong


def test_a_failed_probe_gives_a_placeholder(a3_catalog, tmp_path):
    figure = _figure(a3_catalog, "heads")
    stub = draw_panel(figure, ProbeResult("not implemented", "NotImplementedError (assignment3/attention.py, line 67, "
                                          "in split_heads)"), tmp_path)
    assert stub.reason == "not implemented yet: split_heads (assignment3/attention.py, line 67)"
    hang = draw_panel(figure, ProbeResult("timeout", "did not finish within 10 s"), tmp_path)
    assert hang.status == PLACEHOLDER and "did not finish within 10 s" in hang.reason


def test_the_page_escapes_what_the_student_controls(a3_catalog, tmp_path):
    figure = _figure(a3_catalog, "heads")
    panel = draw_panel(figure, ProbeResult("error", "ValueError: <script>alert(1)</script>"), tmp_path)
    info = PageInfo("assignment3", "T", "<b>path</b>", "uid", notes=("<i>note</i>",), printed="<img src=x>")
    text = render_page(info, [panel], {})
    assert "<script>alert" not in text and "<b>path" not in text and "<img src=x>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert text.count("<script>") == 1 and "Content-Security-Policy" in text


# the sandbox's own words, which a student does not know: none is in what show says to them
JARGON = re.compile(r"isolation|\b(?:rlimits|landlock|namespaces|uid|tier|probes?|workers?|zygotes?|jobs?|pseudo)\b",
                    re.I)


def _intro(page: str) -> str:
    """The page's paragraph about the run (the figures' captions and notes are the course's, not show's)."""
    return re.search(r"<p>Code: .*?</p>", page, re.S).group(0)


@pytest.mark.parametrize("tier", ["rlimits", "landlock", "namespaces", "uid", "none"])
def test_the_page_says_how_the_code_ran_in_plain_words(tier):
    intro = _intro(render_page(PageInfo("assignment3", "T", "work", tier, seconds=1.25), [], {}))
    assert "It ran as grading runs it, in a separate process" in intro and "(1.2 s)" in intro, intro
    assert not JARGON.search(intro), intro


def test_shows_help_speaks_plainly():
    result = CliRunner().invoke(main, ["show", "--help"])
    assert result.exit_code == 0 and not JARGON.search(result.output), result.output


def test_a_figure_whose_code_did_not_run_says_so_plainly(a3_catalog, tmp_path):
    panel = draw_panel(_figure(a3_catalog, "heads"), None, tmp_path)
    assert panel.reason == "the code of this figure did not run" and not JARGON.search(panel.reason)


# -- the command line: bad input is one line, exit 2 ----------------------------------------------------------


@pytest.mark.parametrize("arguments, message", [
    (["show", "nosuch"], "no assignment named 'nosuch'"),
    (["show", "assignment3", "/no/such/folder"], "does not exist"),
])
def test_bad_input_is_one_line_with_exit_2(arguments, message):
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_open_says_so_when_no_browser_can_be_opened(monkeypatch, capsys, tmp_path):
    """On a server or in a container ``grader show --open`` did nothing, silently."""
    import importlib
    import webbrowser

    show_command = importlib.import_module("autograder.cli.show")  # the module, not the click command
    monkeypatch.setattr(webbrowser, "open", lambda uri: False)
    show_command._open(tmp_path / "index.html")
    assert "no web browser could be opened here (--open)" in capsys.readouterr().out
    monkeypatch.setattr(webbrowser, "open", lambda uri: True)
    show_command._open(tmp_path / "index.html")
    assert capsys.readouterr().out == ""


# -- real runs in the sandbox, opened in a browser --------------------------------------------------------------


def _browse(page: Path, scratch: Path) -> tuple[list[int], int, Path]:
    """Open the page in headless Chromium: the loaded width of every image, the script errors, a screenshot."""
    profile = scratch / "profile"
    profile.mkdir(parents=True)
    base = [CHROMIUM, *BROWSER_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=5000"]
    dom = subprocess.run(base + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120,
                         check=False).stdout
    tag = re.search(r"<html[^>]*>", dom)
    assert tag, f"no page in the browser's DOM: {dom[:200]!r}"
    widths = re.search(r'data-images="([0-9,]*)"', tag.group(0))
    errors = re.search(r'data-errors="(\d+)"', tag.group(0))
    assert widths and errors, f"the page's script did not run: {tag.group(0)}"
    shot = scratch / "screenshot.png"
    subprocess.run(base + [f"--screenshot={shot}", "--window-size=1200,1600", page.as_uri()], capture_output=True,
                   timeout=120, check=False)
    return [int(w) for w in widths.group(1).split(",") if w], int(errors.group(1)), shot


def _assert_page_renders(page: Path, scratch: Path, images: int) -> None:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    from PIL import Image

    widths, errors, shot = _browse(page, scratch)
    assert len(widths) == images and all(w > 0 for w in widths), widths
    assert errors == 0
    with Image.open(shot) as picture:
        extrema = picture.convert("L").getextrema()
        colours = picture.convert("RGB").getcolors(maxcolors=1 << 20)
    assert extrema[0] < extrema[1] and (colours is None or len(colours) > 50), "the screenshot is blank"


@pytest.fixture(scope="module")
def reference_page(a3, tmp_path_factory):
    return render_figures(a3, a3.reference, tmp_path_factory.mktemp("reference") / "figures", expected=False)


@pytest.mark.slow
def test_reference_page_draws_every_figure_as_the_notes_describe(reference_page, tmp_path):
    assert [p.figure.name for p in reference_page.panels] == A3_FIGURES
    assert reference_page.drawn == len(A3_FIGURES)
    notes = [text for panel in reference_page.panels for kind, text in panel.notes]
    assert not [text for panel in reference_page.panels for kind, text in panel.notes if kind == "bad"]
    assert not [panel.upstream for panel in reference_page.panels if panel.upstream]  # no ✗, nothing upstream
    assert "may be caused by" not in reference_page.page.read_text(encoding="utf-8")
    for expected in ("causal: above the diagonal exactly zero — no query sees the future",
                     "continuation of 3 5: 7 9 1 3 5 7 9 1", "continuation of 8 1: 4 7 0 3 6 9",
                     "without the cache: n(n+1)/2 rows (78 for 12 tokens)",
                     "4096 tokens with 32 key-value heads: 2 GiB",
                     "all 8 maps: above the diagonal exactly zero — no query sees the future"):
        assert expected in notes
    assert reference_page.outcome.isolation
    _assert_page_renders(reference_page.page, tmp_path, len(A3_FIGURES))


@pytest.mark.slow
def test_without_fork_the_reference_page_is_drawn_the_same(a3, reference_page, tmp_path, monkeypatch):
    """The path Windows takes (and macOS, where spawn is the default), forced on Linux: each zygote and each job is a
    fresh interpreter, at the weakest tier, and every figure is drawn with the notes a forked run gives."""
    from autograder.sandbox import spawned

    started = []
    original = spawned.SpawnedZygote.__init__
    monkeypatch.setattr(spawned.SpawnedZygote, "__init__", lambda self, *args: (started.append(args),
                                                                              original(self, *args))[1])
    monkeypatch.setenv("GRADER_START_METHOD", "spawn")
    rendered = render_figures(a3, a3.reference, tmp_path / "figures", expected=False)
    assert started and rendered.outcome.isolation == "rlimits"

    def said(page):
        return [(p.figure.name, p.probe_status, sorted(text for _, text in p.notes)) for p in page.panels]

    assert rendered.drawn == len(A3_FIGURES) and said(rendered) == said(reference_page)


@pytest.mark.slow
def test_untouched_template_gives_placeholders_saying_not_implemented(a3, tmp_path, monkeypatch):
    scratch = tmp_path / "tmp"  # this test's own temporary folder: tests running beside it make their own
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    rendered = render_figures(a3, REPO / "student_template" / "assignment3", tmp_path / "figures", expected=False)
    assert not list(scratch.iterdir())  # no scratch folder left behind
    assert rendered.drawn == 0
    assert all(p.probe_status == "not implemented" and p.reason.startswith("not implemented yet")
               for p in rendered.panels)
    assert "9 not implemented" in rendered.summary()
    assert any(p.reason.startswith("not implemented yet: MultiHeadAttention.__init__ (") for p in rendered.panels)
    _assert_page_renders(rendered.page, tmp_path / "browser", len(A3_FIGURES))


def _broken_submission(reference: Path, folder: Path) -> Path:
    """The reference with three faults: a hang in the six-token attention, a NaN in the position table and a
    wrongly shaped output of decode_with_cache."""
    package = folder / "assignment3"
    shutil.copytree(reference, package)
    edits = {
        "attention.py": ("    n, m = q.shape[-2], k.shape[-2]\n",
                         "    n, m = q.shape[-2], k.shape[-2]\n    while q.shape[-3:] == (3, 6, 8):\n        pass\n"),
        "positions.py": ("    return table.to(torch.float32)",
                         ("    table[7, 5] = float('nan')\n    return table.to(torch.float32)")),
        "kv_cache.py": ("    return torch.cat(outputs, dim=1)\n    ### END SOLUTION\n\n\ndef decode_without_cache",
                        ("    return torch.cat(outputs, dim=1)[:, -1:]\n    ### END SOLUTION\n\n\n"
                         "def decode_without_cache")),
    }
    for name, (old, new) in edits.items():
        text = (package / name).read_text()
        assert text.count(old) == 1, name
        (package / name).write_text(text.replace(old, new))
    return package


@pytest.mark.slow
def test_broken_submission_costs_each_fault_its_own_figure(a3, reference_page, tmp_path):
    package = _broken_submission(a3.reference, tmp_path / "work")
    rendered = render_figures(a3, package, expected=True, expected_folder=reference_page.folder)
    assert rendered.folder == tmp_path / "work" / "assignment3-figures"  # beside the work by default
    panels = {p.figure.name: p for p in rendered.panels}
    hung = panels["attention_weights"]
    assert hung.status == PLACEHOLDER and hung.probe_status == "timeout"
    assert panels["heads"].status == DRAWN  # ran after the hang, in the same figure file, in a fresh job
    assert panels["position_table"].status == DRAWN
    assert any("1 of 3200 values are NaN" in text for _, text in panels["position_table"].notes)
    rows = panels["projection_rows"]
    assert rows.status == DRAWN
    assert any(kind == "bad" and "expected shape (1, 12, 16), got (1, 1, 16)" in text for kind, text in rows.notes)
    assert panels["cache_size"].status == DRAWN and not [k for k, _ in panels["cache_size"].notes if k == "bad"]
    assert all(p.status in (DRAWN, PLACEHOLDER) for p in rendered.panels)
    assert all((rendered.folder / "expected" / f"{name}.png").is_file() for name in A3_FIGURES)
    page = rendered.page.read_text()
    assert page.count('src="expected/') == len(A3_FIGURES) and "Traceback" not in page
    _assert_page_renders(rendered.page, tmp_path / "browser", 2 * len(A3_FIGURES))


@pytest.mark.slow
def test_the_terminal_says_which_module_cannot_be_imported_and_how_many_figures_show_a_cross(a3, tmp_path):
    """``grader show`` printed only counts ("2 error"): the syntax error and the ✗ were on the page alone, where a
    student at a terminal does not look first; the error's place was said twice there."""
    package = tmp_path / "work" / "assignment3"
    shutil.copytree(a3.reference, package, ignore=shutil.ignore_patterns("__pycache__"))
    attention = package / "attention.py"
    scaled = "scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])"
    assert attention.read_text().count(scaled) == 1
    attention.write_text(attention.read_text().replace(scaled, "scores = q @ k.transpose(-2, -1)"))  # no 1/sqrt(d_k)
    (package / "positions.py").write_text((package / "positions.py").read_text() + "\n)\n")
    result = subprocess.run([sys.executable, "-m", "autograder.cli", "show", "assignment3", str(package), "--out",
                             str(tmp_path / "figures")], capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    note = re.search(r"^note: positions\.py could not be imported: SyntaxError: .*$", result.stdout, re.M)
    assert note and len(re.findall(r"positions\.py, line \d+", note.group(0))) == 1, result.stdout
    assert re.search(r"^assignment3: \d of 9 figures drawn, \d with a ✗ \(", result.stdout, re.M), result.stdout
    page = (tmp_path / "figures" / "index.html").read_text(encoding="utf-8")
    assert len(re.findall(r"positions\.py, line \d+\)", page)) == page.count("SyntaxError"), page
    assert not JARGON.search(result.stdout) and not JARGON.search(_intro(page)), (result.stdout, _intro(page))


@pytest.mark.slow
def test_render_expected_writes_only_images(tmp_path):
    written = render_expected("assignment2", tmp_path / "expected")
    assert sorted(p.name for p in written) == sorted(f"{name}.png" for name in (
        "soft_attention_weights", "self_attention_weights", "dropout_weights", "stacked_and_split"))
    assert sorted(p.name for p in (tmp_path / "expected").iterdir()) == sorted(p.name for p in written)
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in written)
    assert not (tmp_path / ".expected-rendering").exists()


def test_release_figures_carries_the_figure_files_and_the_expected_images(monkeypatch, tmp_path):
    from autograder.show import render

    rendered_into = []
    monkeypatch.setattr(render, "render_expected", lambda spec, folder: rendered_into.append(folder) or [])
    target = tmp_path / "assignments" / "assignment3"
    written = render.release_figures("assignment3", target)
    names = sorted(p.relative_to(target).as_posix() for p in written)
    assert names == ["figures/_drawing.py", "figures/attention.py", "figures/kv_cache.py", "figures/positions.py",
                     "figures/tiny_gpt.py"]
    assert rendered_into == [target / "figures" / "expected"]
