"""TODO docstring for judge.verdict"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

REFERENCE_LOCK = threading.RLock()


class LazyOutputs(Mapping):
    """The reference's outputs, computed only if a verifier reads them (some verifiers never do)."""

    def __init__(self, compute: Callable[[], dict[str, Any]]) -> None:
        self._compute = compute
        self._values: dict[str, Any] | None = None

    def _loaded(self) -> dict[str, Any]:
        if self._values is None:
            self._values = self._compute()
        return self._values

    def __getitem__(self, key: str) -> Any:
        return self._loaded()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())
