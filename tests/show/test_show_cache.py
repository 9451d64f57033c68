"""`grader show`'s figure cache: kept by the digest of the code each probe ran, invalidated by what changes it."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest

from autograder.judge.transport import encode_outputs
from autograder.show import cache as cache_module
from autograder.show._jobs import FigureJobs
from autograder.show.cache import CACHE_FOLDER, FigureCache
from autograder.show.catalog import load_catalog
from autograder.show.outcome import OK, ProbeResult
from autograder.show.render import render_figures
from autograder.spec.assignment import load_assignment

A2_PROBES = {"notes_example", "five_tokens", "train_and_eval", "two_layouts"}
SOFTMAX_USERS = {"notes_example", "five_tokens"}  # soft_attention and self_attention use softmax (manifest `uses`)


@pytest.fixture(scope="module")
def a2():
    return load_assignment("assignment2")


@pytest.fixture(scope="module")
def a2_catalog(a2):
    return load_catalog(a2)


@pytest.fixture
def package(a2, tmp_path):
    copy = tmp_path / "work" / a2.package
    shutil.copytree(a2.reference, copy)
    return copy


def _edit_softmax(package: Path, line: str) -> None:
    """Insert ``line`` as the first statement of softmax's body (after its docstring)."""
    _edit(package / "numpy_attention.py", "softmax", line)


def _edit(path: Path, function: str, line: str) -> None:
    """Insert ``line`` as the first statement of ``function``'s body (after its docstring) in ``path``."""
    source = path.read_text()
    start = source.index(f"def {function}(")
    docstring_end = source.index('"""', source.index('"""', start) + 3) + 3
    path.write_text(source[:docstring_end] + f"\n    {line}" + source[docstring_end:])


def _keys(a2, catalog, package, tmp_path) -> dict[str, str]:
    kept = FigureCache.beside(tmp_path / "page", a2, catalog, package)
    return {probe.name: kept.key(probe, {}) for file in catalog.files for probe in file.probes}


def test_a_changed_function_changes_only_the_keys_of_the_probes_reaching_it(a2, a2_catalog, package, tmp_path):
    before = _keys(a2, a2_catalog, package, tmp_path)
    assert set(before) == A2_PROBES and len(set(before.values())) == len(A2_PROBES)
    _edit_softmax(package, "# a comment changes no figure")
    assert _keys(a2, a2_catalog, package, tmp_path) == before
    _edit_softmax(package, "x = np.asarray(x)")
    after = _keys(a2, a2_catalog, package, tmp_path)
    assert {name for name in before if before[name] != after[name]} == SOFTMAX_USERS
    (package / "modules.py").write_text((package / "modules.py").read_text() + "\nLIMIT = 3\n")
    everything = _keys(a2, a2_catalog, package, tmp_path)  # code outside the functions may reach anything
    assert all(everything[name] != after[name] for name in A2_PROBES)


def test_assignment3s_training_probe_declares_no_tasks_and_is_keyed_on_what_it_reaches(tmp_path):
    # short_training declares `reaches` and no `tasks` (no diagnosis reruns): its key follows what
    # tiny_gpt_training reaches through `uses` (the mask, through TinyGPT and its blocks), never all the code
    a3 = load_assignment("assignment3")
    catalog = load_catalog(a3)
    package = tmp_path / "work" / a3.package
    shutil.copytree(a3.reference, package)
    training = next(probe for file in catalog.files for probe in file.probes if probe.name == "short_training")
    assert training.tasks == () and training.calls == ("tiny_gpt_training",)
    before = _keys(a3, catalog, package, tmp_path)
    _edit(package / "kv_cache.py", "kv_cache_bytes", "layers = int(layers)")
    after = _keys(a3, catalog, package, tmp_path)
    assert {name for name in before if before[name] != after[name]} == {"cache_sizes"}
    _edit(package / "attention.py", "causal_mask", "n = int(n)")
    last = _keys(a3, catalog, package, tmp_path)
    assert {name for name in after if after[name] != last[name]} == {"six_tokens", "decoding_rows", "short_training"}


def test_a_changed_figure_file_or_grader_version_invalidates(a2, a2_catalog, package, tmp_path, monkeypatch):
    before = _keys(a2, a2_catalog, package, tmp_path)
    first = a2_catalog.files[0]
    edited = dataclasses.replace(a2_catalog, files=(dataclasses.replace(first, source=first.source + "\n# edited\n"),
                                                    *a2_catalog.files[1:]))
    after = _keys(a2, edited, package, tmp_path)
    assert {name for name in before if before[name] != after[name]} == {p.name for p in first.probes}
    monkeypatch.setattr(cache_module, "grader_version", lambda: "99.0")
    newer = _keys(a2, a2_catalog, package, tmp_path)
    assert all(newer[name] != before[name] for name in A2_PROBES)


def test_only_a_probe_that_gave_outputs_and_printed_nothing_is_kept(a2, a2_catalog, package, tmp_path):
    kept = FigureCache.beside(tmp_path / "page", a2, a2_catalog, package)
    probe = a2_catalog.files[0].probes[0]
    values, tensors = encode_outputs({"loss": 0.25})
    assert not tensors
    for status, printed in (("timeout", False), ("error", False), (OK, True)):
        kept.keep(probe, {}, ProbeResult(status, "", {}, 1.0, (values, None)), printed)
        assert kept.lookup(probe, {}) is None, (status, printed)
    kept.keep(probe, {}, ProbeResult(OK, "", {"loss": 0.25}, 1.0, (values, None)), False)
    assert kept.lookup(probe, {}).outputs == {"loss": 0.25}
    assert kept.lookup(probe, {"numpy_attention": "it raised"}) is None  # a broken module is part of the key


def _page(folder: Path) -> tuple[str, dict[str, bytes]]:
    """The page with its timings blanked, and every PNG's bytes."""
    text = re.sub(r"\d+\.\d s\)", "_ s)", (folder / "index.html").read_text())
    return text, {png.name: png.read_bytes() for png in sorted(folder.glob("*.png"))}


@pytest.mark.slow
def test_a_rerun_runs_only_the_probes_whose_code_changed_and_draws_the_cold_page(a2, package, tmp_path,
                                                                                 monkeypatch):
    ran: list[str] = []
    imports: list[int] = []
    run_task, probe_imports = FigureJobs.run_task, FigureJobs.probe_imports

    def counted(self, task, prepared, broken, printed, zygote, on_result=None, only=None):
        results = run_task(self, task, prepared, broken, printed, zygote, on_result, only)
        ran.extend(results)
        return results

    def counted_imports(self, prepared, printed):
        imports.append(1)
        return probe_imports(self, prepared, printed)

    monkeypatch.setattr(FigureJobs, "run_task", counted)
    monkeypatch.setattr(FigureJobs, "probe_imports", counted_imports)
    out = tmp_path / "figures"
    cold = render_figures(a2, package, out, expected=False)
    assert sorted(ran) == sorted(A2_PROBES) and imports == [1] and cold.drawn == 4
    assert (out / CACHE_FOLDER).is_dir()
    first = _page(out)

    ran.clear(), imports.clear()
    again = render_figures(a2, package, out, expected=False)
    assert ran == [] and imports == [] and again.drawn == 4  # nothing changed: no probe, no import check
    assert _page(out) == first

    _edit_softmax(package, "x = np.asarray(x)")
    ran.clear(), imports.clear()
    render_figures(a2, package, out, expected=False)
    assert sorted(ran) == sorted(SOFTMAX_USERS) and imports == [1]
    ran.clear()
    render_figures(a2, package, tmp_path / "cold", expected=False, cache=False)
    assert sorted(ran) == sorted(A2_PROBES) and not (tmp_path / "cold" / CACHE_FOLDER).exists()
    assert _page(out) == _page(tmp_path / "cold")
