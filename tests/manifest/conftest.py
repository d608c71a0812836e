"""Helpers for manifest tests: write YAML, load it, read back the problems."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from reconciler.errors import ManifestError
from reconciler.manifest import load_desired


@pytest.fixture
def problems_of() -> Callable[[Path], list[str]]:
    """The problem strings ``load_desired`` raises for ``path`` (fails if it loads)."""

    def problems(path: Path) -> list[str]:
        with pytest.raises(ManifestError) as caught:
            load_desired(path)
        return caught.value.problems

    return problems
