"""``reconciler fmt [--check] PATH``: rewrite the manifests in one canonical layout, comments kept.

The layout is ``reconciler.manifest.layout``'s.  Emulator seed and data
files beside the manifests are not manifests, and are left alone, as
``validate`` leaves them.  Each file is rewritten atomically, keeping its
permissions; ``--check`` writes nothing and lists the files that would change.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import NamedTuple

from reconciler.errors import ConfigError, ManifestError
from reconciler.text import plural


class Formatted(NamedTuple):
    """What ``fmt`` found: every manifest file read, and those not in the layout."""

    files: tuple[Path, ...]
    changed: tuple[Path, ...]


def fmt(path: Path, *, check: bool) -> Formatted:
    """Rewrite (or, with ``check``, only find) the manifest files under ``path`` not in the layout."""
    from reconciler.manifest.layout import canonical
    from reconciler.manifest.load import is_emulator_data, manifest_files
    from reconciler.owned_files import write_owned

    _, paths = manifest_files(path)
    files: list[Path] = []
    pending: list[tuple[Path, str]] = []
    problems: list[str] = []
    for file in paths:
        try:
            text = file.read_text(encoding="utf-8")
            result, document = canonical(text, str(file))
        except ManifestError as exc:
            problems += exc.problems
            continue
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{file}:1: cannot read the file: {getattr(exc, 'strerror', None) or exc}")
            continue
        if path.is_dir() and is_emulator_data(document):
            continue
        files.append(file)
        if result != text:
            pending.append((file, result))
    if problems:
        raise ManifestError(problems)  # nothing is written while any file cannot be formatted
    if not files:
        raise ManifestError([f"{path}: no manifest files here, only emulator seed or data files"])
    if not check:
        for file, result in pending:
            write_owned(file, result.encode("utf-8"), what="manifest", error=ConfigError,
                        mode=stat.S_IMODE(file.stat().st_mode))
    return Formatted(tuple(files), tuple(file for file, _ in pending))


def render(result: Formatted, *, check: bool, path: Path) -> tuple[str, str | None]:
    """(stdout, the error for exit 1 or None): each file changed (or that would be), then a summary."""
    listed = "".join(f"{file}\n" for file in result.changed)
    if not result.changed:
        every = "The manifest file" if len(result.files) == 1 else f"All {len(result.files)} manifest files"
        verb = "is" if len(result.files) == 1 else "are"
        return f"{every} in {path} {verb} in the canonical layout; nothing was changed.\n", None
    if check:
        n = len(result.changed)
        return listed, (f"{plural(n, 'manifest file')} of {len(result.files)} {'is' if n == 1 else 'are'} not in "
                        f"the canonical layout (listed above). Run 'reconciler fmt {path}' to rewrite "
                        f"{'it' if n == 1 else 'them'}; nothing was changed.")
    return listed + f"Rewrote {plural(len(result.changed), 'manifest file')} of {len(result.files)} in {path}.\n", None
