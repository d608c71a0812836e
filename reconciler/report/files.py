"""Writing the report's files: access.csv, access.json, index.html and, with ``--since``, changes.csv."""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

from reconciler.errors import ConfigError
from reconciler.gcpause import gc_paused
from reconciler.report.diff import ChangeSet
from reconciler.report.figures import Tally
from reconciler.report.model import MadeReport, utf8

ACCESS_CSV, ACCESS_JSON, INDEX_HTML, CHANGES_CSV = "access.csv", "access.json", "index.html", "changes.csv"


class ReportFiles(NamedTuple):
    """What ``write_report`` wrote, for the summary."""

    out: Path
    names: tuple[str, ...]


@gc_paused()
def write_report(out: Path, made: MadeReport, *, changes: ChangeSet | None, today: datetime.date,
                 counted: Tally | None = None) -> ReportFiles:
    """Write the files, each atomically and never through a link planted at its name (``counted``:
    the report's ``figures.tally``, when made already)."""
    from reconciler.owned_files import write_owned
    from reconciler.report.html import page_parts
    from reconciler.report.spreadsheet import access_csv_parts, changes_csv

    # Made and written one at a time, each a part at a time, so no file's text is whole in memory
    # (30 to 105 MiB each at 10,000 workspaces).
    files: dict[str, Callable[[], Iterable[bytes]]] = {
        ACCESS_CSV: lambda: map(utf8, access_csv_parts(made)),
        ACCESS_JSON: lambda: itertools.chain(made.json_parts(), (b"\n",)),
        INDEX_HTML: lambda: map(utf8, page_parts(made, today=today, changes=changes, counted=counted)),
    }
    if changes is not None:
        files[CHANGES_CSV] = lambda: (utf8(changes_csv(changes.changes)),)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"Cannot create the report directory {out}: {exc.strerror or exc}.") from exc
    for name, render in files.items():
        write_owned(out / name, render(), what="report file", error=ConfigError, mode=0o644)
    return ReportFiles(out, tuple(files))
