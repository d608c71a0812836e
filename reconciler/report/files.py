"""Writing the report's files: access.csv, access.json, index.html and, with ``--since``, changes.csv."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from reconciler.errors import ConfigError
from reconciler.report.diff import ChangeSet
from reconciler.report.model import AccessReport

ACCESS_CSV, ACCESS_JSON, INDEX_HTML, CHANGES_CSV = "access.csv", "access.json", "index.html", "changes.csv"


class ReportFiles(NamedTuple):
    """What ``write_report`` wrote, for the summary."""

    out: Path
    names: tuple[str, ...]


def write_report(out: Path, made: AccessReport, *, changes: ChangeSet | None, today: datetime.date) -> ReportFiles:
    """Write the files, each atomically and never through a link planted at its name."""
    from reconciler.owned_files import write_owned
    from reconciler.report.html import render_page
    from reconciler.report.spreadsheet import access_csv, changes_csv

    # Made and written one at a time, so only one file's text is in memory (30-100 MiB each at
    # 10,000 workspaces).
    files: dict[str, Callable[[], str]] = {
        ACCESS_CSV: lambda: access_csv(made),
        # Compact: at 10,000 workspaces an indented document is twice the size, for machines that do not care.
        ACCESS_JSON: lambda: made.model_dump_json() + "\n",
        INDEX_HTML: lambda: render_page(made, today=today, changes=changes),
    }
    if changes is not None:
        files[CHANGES_CSV] = lambda: changes_csv(changes.changes)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"Cannot create the report directory {out}: {exc.strerror or exc}.") from exc
    for name, render in files.items():
        # A value the service sent may hold a lone surrogate, which UTF-8 cannot carry: replaced, not fatal.
        write_owned(out / name, render().encode("utf-8", errors="replace"), what="report file", error=ConfigError,
                    mode=0o644)
    return ReportFiles(out, tuple(files))
