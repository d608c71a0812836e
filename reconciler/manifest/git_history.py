"""What git knows of a campaign's files: the last committed copy of a reviewer's file that is gone
from the working tree, and the commit that last changed one.

Every call is local (``git`` in the file's folder, no network), bounded by a timeout, and answers
None instead of failing: outside a git checkout, without git, or in a shallow clone that lacks the
history, the callers say what is not known.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

_TIMEOUT = 30


class Commit(NamedTuple):
    """A commit that changed a file: its id, author time (UTC, YYYY-MM-DDTHH:MM:SSZ) and author email."""

    sha: str
    when: str
    author: str


def _git(folder: Path, *argv: str) -> bytes | None:
    try:
        done = subprocess.run(["git", *argv], cwd=folder, capture_output=True, check=False, timeout=_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def last_commit(path: Path) -> Commit | None:
    """The commit that last changed ``path`` (``git log -1``), or None when git does not know it."""
    if not path.parent.is_dir():
        return None
    out = _git(path.parent, "log", "-1", "--format=%H%x09%aI%x09%ae", "--", path.name)
    parts = out.decode("utf-8", "replace").strip().split("\t") if out else []
    if len(parts) != 3 or len(parts[0]) != 40:
        return None
    try:
        when = datetime.fromisoformat(parts[1]).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None
    return Commit(parts[0], when, parts[2])


def committed_copy(path: Path) -> tuple[str, bytes] | None:
    """(commit, bytes) of the last committed version of ``path``, a file missing from the working tree:
    from HEAD when its deletion is not committed yet, else from the parent of the commit that deleted it.
    None when git holds no copy (not a checkout, never committed, or history not fetched)."""
    folder = path.parent
    if not folder.is_dir():
        return None
    found = last_commit(path)
    if found is None:
        return None
    for revision in (found.sha, f"{found.sha}^"):
        data = _git(folder, "show", f"{revision}:./{path.name}")
        if data is not None:
            sha = _git(folder, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
            return (sha.decode().strip() if sha else found.sha), data
    return None
