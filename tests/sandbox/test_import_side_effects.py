"""A module's import-time changes to global state (default dtype, grad mode, seeds, ...) stay in its import."""

from __future__ import annotations

import random
import shutil

import numpy as np
import pytest
import torch

from autograder.grading.grader import Grader
from autograder.sandbox import globalstate
from autograder.submission.imports import unneeded_modules

SIDE_EFFECTS = {
    "positions.py": "torch.set_default_dtype(torch.float64)\n",
    "kv_cache.py": ("torch.use_deterministic_algorithms(True)\ntorch.set_printoptions(precision=1)\n"
                    "torch.manual_seed(1234)\n_ = torch.randn(1000)\n"),
    "attention.py": "torch.set_grad_enabled(False)\ntorch.autograd.set_detect_anomaly(True)\n",
}


def test_capture_and_restore_undo_every_setting_and_random_state():
    before = globalstate.capture()
    expected = (torch.randn(3), np.random.rand(), random.random())
    globalstate.restore(before)
    torch.set_default_dtype(torch.float64)
    torch.set_grad_enabled(False)
    torch.use_deterministic_algorithms(True)
    torch.set_printoptions(precision=1)
    np.seterr(all="raise")
    torch.manual_seed(99)
    np.random.seed(99)
    random.seed(99)
    torch.set_default_device("meta")
    try:
        globalstate.restore(before)
    finally:
        torch.set_default_device(None)
    assert torch.get_default_dtype() == torch.float32 and torch.is_grad_enabled()
    assert not torch.are_deterministic_algorithms_enabled()
    assert torch._tensor_str.PRINT_OPTS.precision == before.print_options.precision
    assert np.geterr()["divide"] == before.values["numpy_errors"]["divide"]
    assert torch.ones(1).device.type == "cpu"
    assert torch.equal(torch.randn(3), expected[0])
    assert np.random.rand() == expected[1] and random.random() == expected[2]


def test_a_module_whose_every_use_is_substituted_is_not_imported(assignment3, tmp_path):
    package = tmp_path / "assignment3"
    shutil.copytree(assignment3.reference, package)
    tiny_gpt = next(t for t in assignment3.tasks if t.id == "tiny_gpt")
    args = (package, "assignment3", assignment3.modules, tiny_gpt.modules, tiny_gpt.uses)
    assert unneeded_modules(*args) == ["attention", "positions", "kv_cache"]
    source = package / "tiny_gpt.py"
    source.write_text(source.read_text() + "\nfrom .positions import _my_helper  # noqa\n")
    assert unneeded_modules(*args) == ["attention", "kv_cache"]  # a name the task does not use: imported
    source.write_text(source.read_text() + "\nfrom . import attention\n")
    assert unneeded_modules(*args) == ["kv_cache"]  # a whole-module import
    source.write_text(source.read_text() + "\nimport importlib\n")
    assert unneeded_modules(*args) == []  # dynamic imports defeat the analysis: everything is imported


@pytest.mark.slow
def test_import_time_side_effects_cost_no_task_a_point(assignment3, tmp_path):
    package = tmp_path / "assignment3"
    shutil.copytree(assignment3.reference, package, ignore=shutil.ignore_patterns("__pycache__"))
    for name, effect in SIDE_EFFECTS.items():
        path = package / name
        path.write_text(path.read_text() + "\n" + effect)
    with Grader(assignment3, workers=2) as grader:
        report = grader.grade(package, only={t.id for t in assignment3.tasks})
    lost = {t.id: (t.score, t.feedback) for t in report.tasks if t.score < t.max_score}
    assert not lost
