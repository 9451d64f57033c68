"""Regenerate hidden/assets/tiny_gpt_trained.safetensors: the reference TinyGPT trained with train(300, seed=0).

The tiny_gpt_training checks load these weights into the reference TinyGPT() (default sizes) to grade
predictable_accuracy and generate on a trained model. The student's and the reference's functions are both
run on the same weights, so any weights that load into TinyGPT() keep the checks valid; rerun this script
whenever TinyGPT's default sizes or parameter names change.

Usage (from the repository root):  python assignments/assignment3/hidden/make_assets.py
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import torch
from safetensors.torch import save_file

REPO = Path(__file__).resolve().parents[3]
REFERENCE = REPO / "reference_solutions" / "assignment3"
OUTPUT = Path(__file__).resolve().parent / "assets" / "tiny_gpt_trained.safetensors"
STEPS, SEED = 300, 0


def load_reference_tiny_gpt():
    """Import the reference package under a private name and return its tiny_gpt module."""
    name = "_make_assets_reference"
    spec = importlib.util.spec_from_file_location(name, REFERENCE / "__init__.py",
                                                  submodule_search_locations=[str(REFERENCE)])
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
    return importlib.import_module(f"{name}.tiny_gpt")


def main() -> None:
    torch.set_num_threads(1)
    tiny_gpt = load_reference_tiny_gpt()
    model, losses = tiny_gpt.train(steps=STEPS, seed=SEED)
    ids = tiny_gpt.progression_batch(512, generator=torch.Generator().manual_seed(1))
    accuracy = tiny_gpt.predictable_accuracy(model, ids)
    state = {key: value.detach().contiguous().clone() for key, value in model.state_dict().items()}
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    save_file(state, str(OUTPUT), metadata={"made_by": "make_assets.py", "steps": str(STEPS), "seed": str(SEED)})
    print(f"wrote {OUTPUT.relative_to(REPO)}: final training loss {losses[-1]:.4f}, "
          f"predictable accuracy {accuracy:.4f} on 512 fresh progressions")


if __name__ == "__main__":
    main()
