"""``reconciler report``: read the company once, write the access review's files.

The ``--since`` file is read and checked before any call, and the output
directory is checked too, so a mistake costs no request.  The company is read
by ``reconciler.company.read`` (one complete listing, ceil(N/100) calls);
nothing is written to the service or the state.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from reconciler.errors import ConfigError
from reconciler.text import plural

if TYPE_CHECKING:
    from reconciler.report.diff import ChangeSet
    from reconciler.report.model import AccessReport
    from reconciler.target import Target

ACCESS_CSV, ACCESS_JSON, INDEX_HTML, CHANGES_CSV = "access.csv", "access.json", "index.html", "changes.csv"


class ReportFiles(NamedTuple):
    """What ``write_report`` wrote, for the summary."""

    out: Path
    names: tuple[str, ...]


def report(path: Path, *, target: Target, out: Path, state_path: Path | None = None,
           internal_domains: tuple[str, ...] = (), since: Path | None = None,
           now: datetime.datetime | None = None) -> str:
    """Write access.csv, access.json and index.html (and changes.csv with ``since``) to ``out``;
    return the summary to print.

    Internal domains are ``internal_domains`` when given, else the manifests'
    ``policy.allowedDomains``; with neither, everyone counts as external (the
    summary says so)."""
    from reconciler.company.read import load_and_read
    from reconciler.report.diff import changes_since, load_baseline
    from reconciler.report.model import make_report

    check_out_dir(out)
    baseline = load_baseline(since) if since is not None else None
    read = load_and_read(path, target=target, state_path=state_path)
    policy = read.desired.policy
    allowed = policy.allowed_domains if policy is not None else None
    domains = internal_domains or tuple(str(v.value) for v in allowed or ())
    moment = now or datetime.datetime.now(datetime.UTC)
    made = make_report(read.company, generated_at=moment, internal_domains=domains)
    calls = read.company.calls
    del read  # the company read is in the report now: its memory is free for the files' text
    changes = changes_since(baseline, made) if baseline is not None else None
    written = write_report(out, made, changes=changes, today=moment.date())
    return summary(made, written, calls=calls, changes=changes)


def source_date(env: Mapping[str, str]) -> datetime.datetime | None:
    """The moment ``SOURCE_DATE_EPOCH`` names (reproducible builds' convention), so two reports
    of an unchanged company are the same bytes; None when it is unset."""
    value = env.get("SOURCE_DATE_EPOCH", "").strip()
    if not value:
        return None
    if not value.isdigit():
        raise ConfigError(f"SOURCE_DATE_EPOCH={value!r} is not a number of seconds since 1970-01-01 UTC.")
    return datetime.datetime.fromtimestamp(int(value), tz=datetime.UTC)


def check_out_dir(out: Path) -> None:
    """``--out`` must be a directory or not exist yet (it is created)."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a directory (created when missing) for the report's files.")


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


def summary(made: AccessReport, written: ReportFiles, *, calls: int, changes: ChangeSet | None) -> str:
    people = {r.key for r in made.rows if r.kind == "user"}
    external = {r.key for r in made.rows if r.kind == "user" and r.external}
    lines = [
        f"Wrote {', '.join(written.names)} to {written.out}: {plural(len(made.workspaces), 'workspace')}, "
        f"{plural(len(people), 'person', 'people')} ({len(external)} external), "
        f"{plural(len(made.rows), 'access row')}; the company was read in {plural(calls, 'call')}.",
    ]
    if changes is not None:
        from reconciler.report.diff import CHANGE_ORDER

        counts = ", ".join(plural(changes.count(c), c) for c in CHANGE_ORDER)
        lines.append(f"Since {changes.baseline.label}: {counts}.")
    if not made.internal_domains:
        lines.append("No internal domain is known (no policy allowedDomains, no --internal-domain): "
                     "everyone is counted as external.")
    return "\n".join(lines) + "\n"
