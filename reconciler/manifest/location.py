"""Where a manifest node was written, and a problem found there."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class SourceLocation:
    """A place in a manifest file; ``str()`` gives ``file:line`` (line is 1-based)."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with the manifests, at the place a user should edit."""

    location: SourceLocation
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"
