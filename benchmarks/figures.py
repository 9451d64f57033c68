"""What every benchmark prints: a figure beside its target, with the load it was measured under.

A figure measured while the load average (one minute) was above LOADED is marked as such and never counted as a
target met: on a shared machine it says how the machine was, not how fast the grader is.
"""

from __future__ import annotations

import os
import statistics

LOADED = 2.0


def load_now() -> float:
    """The one-minute load average."""
    return os.getloadavg()[0]


def verdict(value: float, target: float | None, load: float, higher_is_better: bool = False) -> str:
    """``target met``, ``target missed``, or why the figure cannot say (no target, or measured under load)."""
    if target is None:
        return ""
    if load > LOADED:
        return f"not comparable with the target: measured under load {load:.1f} > {LOADED:g}"
    met = value >= target if higher_is_better else value <= target
    return "target met" if met else "target MISSED"


def figure(name: str, value: float, unit: str, target: float | None, load: float,
           higher_is_better: bool = False) -> str:
    """One line: the figure, its target and the verdict, with the load it was measured under."""
    sign = ">=" if higher_is_better else "<="
    aim = f" (target {sign} {target:g}{unit})" if target is not None else ""
    said = verdict(value, target, load, higher_is_better)
    return f"{name}: {value:.3g}{unit}{aim}, load {load:.1f}{'; ' + said if said else ''}"


def median(values: list[float]) -> float:
    """The median (a benchmark's figure of several runs)."""
    return statistics.median(values)
