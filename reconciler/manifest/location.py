"""Where a manifest node was written, and a problem found there."""

from __future__ import annotations

from typing import NamedTuple

from reconciler.text import printable

# NamedTuples, like the Desired nodes (see desired.py): one is made for every
# node of a manifest, and ordering by (file, line) is the tuple's own.


class SourceLocation(NamedTuple):
    """A place in a manifest file; ``str()`` gives ``file:line`` (line is 1-based).

    The file name comes from the manifest directory, which a pull request
    controls, so it is shown through ``printable``.
    """

    file: str
    line: int

    def __str__(self) -> str:
        return f"{printable(self.file)}:{self.line}"


class Problem(NamedTuple):
    """One thing wrong with the manifests, at the place a user should edit.

    ``str()`` gives ``file:line: message`` on one line.  Messages quote
    manifest values and keys; the code that writes them passes those through
    ``printable``, and ``str()`` does it once more for the whole message, so
    no control character written in a manifest reaches the terminal.
    """

    location: SourceLocation
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {printable(self.message)}"
