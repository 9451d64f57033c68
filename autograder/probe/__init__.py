"""The instructor's API for hidden checks: ``@check``, ``Context`` (seeded inputs), helpers and ready verifiers.

Hidden checks files import everything from here (``from autograder.probe import check, raised``); the modules
below are the implementation.
"""

from autograder.errors import CheckFailed
from autograder.probe.checks import (
    Check,
    Outputs,
    Probe,
    Verifier,
    check,
    collect_checks,
    helper_sources,
    load_checks_file,
    run_checks_file,
)
from autograder.probe.context import (
    Context,
    canonical_parameters,
    derive_seed,
    pin_torch_state,
)
from autograder.probe.gating import gate_failures, gate_values, gate_values_of, gated
from autograder.probe.helpers import kind_of, raised, recording, rows_counter, state_dict_outputs
from autograder.probe.repeat import called_twice, same_as_fresh
from autograder.probe.verifiers import (
    all_of,
    close_to,
    dtype_is,
    exact_values,
    future_unchanged,
    kind_is,
    rows_sum_to_one,
    select,
    tensor_is,
    unchanged,
)

__all__ = [
    "called_twice", "same_as_fresh",  # state kept between calls (repeat.py)
    "Check", "CheckFailed", "Context", "Outputs", "Probe", "Verifier", "canonical_parameters", "check",
    "collect_checks", "derive_seed", "helper_sources", "kind_of", "load_checks_file", "pin_torch_state", "raised",
    "recording", "rows_counter", "run_checks_file", "state_dict_outputs",
    # ready-made verifiers, and the gate that makes a property count only with the right values
    "gate_failures", "gate_values", "gate_values_of", "gated",
    "all_of", "close_to", "dtype_is", "exact_values", "future_unchanged", "kind_is", "rows_sum_to_one", "select",
    "tensor_is", "unchanged",
]
