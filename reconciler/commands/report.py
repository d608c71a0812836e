"""``reconciler report``: read the company once, write the access review's files
(``reconciler.report.files``).

The ``--since`` file is read and checked before any call, and the output
directory is checked too, so a mistake costs no request.  The company is read
by ``reconciler.company.read`` (one complete listing, ceil(N/100) calls);
nothing is written to the service or the state.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.errors import ConfigError
from reconciler.text import plural

if TYPE_CHECKING:
    from reconciler.report.diff import ChangeSet
    from reconciler.report.files import ReportFiles
    from reconciler.report.figures import Tally
    from reconciler.report.model import MadeReport
    from reconciler.service import Service


def report(path: Path, *, service: Service, out: Path, state_path: Path | str | None = None,
           internal_domains: tuple[str, ...] = (), since: Path | None = None,
           now: datetime.datetime | None = None, directory: str = "committed") -> str:
    """Write access.csv, access.json and index.html (and changes.csv with ``since``) to ``out``;
    return the summary to print.

    Internal domains are the manifests' ``policy.allowedDomains`` and
    ``internal_domains`` (added to them, not instead); with neither, everyone
    counts as external (the summary says so)."""
    from reconciler.company.build import attributed, leavers
    from reconciler.commands.plan import chosen_directory
    from reconciler.company.read import ATTRIBUTION_PROPERTIES, load_and_list
    from reconciler.report.diff import changes_since, load_baseline
    from reconciler.report.figures import tally
    from reconciler.report.files import write_report
    from reconciler.report.model import report_of_parts

    check_out_dir(out)
    baseline = load_baseline(since) if since is not None else None
    # The report never shows lint's warnings (the plan and validate do): not looked for.
    listing = load_and_list(path, service=service, state_path=state_path, lint_notes=False,
                            properties=ATTRIBUTION_PROPERTIES,  # it plans nothing: no creation fields
                            people=chosen_directory(directory, state_path, path))
    policy = listing.desired.policy
    allowed = policy.allowed_domains if policy is not None else None
    domains = (*(str(v.value) for v in allowed or ()), *internal_domains)
    min_owners = policy.min_owners.value if policy is not None and policy.min_owners is not None else 1
    moment = now or datetime.datetime.now(datetime.UTC)
    # Each workspace's rows go into the report as they are attributed: the company's own rows
    # (CompanyAccess) are never made, so the company is held once, as the report's rows.
    made = report_of_parts(attributed(listing.desired, listing.live, listing.state, moment.date()), generated_at=moment,
                           internal_domains=domains, leavers=leavers(listing.desired), min_owners=min_owners)
    calls = listing.live.pages_read
    del listing  # the listing is in the report now: its memory is free for the files' text
    changes = changes_since(baseline, made) if baseline is not None else None
    counted = tally(made)  # the page's figures and the summary's, counted once
    written = write_report(out, made, changes=changes, today=moment.date(), counted=counted)
    return summary(made, written, calls=calls, changes=changes, counted=counted)


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


def summary(made: MadeReport, written: ReportFiles, *, calls: int, changes: ChangeSet | None,
            counted: Tally | None = None) -> str:
    from reconciler.report.figures import tally

    counted = counted or tally(made)
    people, external = counted.people, counted.external_people
    lines = [
        f"Wrote {', '.join(written.names)} to {written.out}: {plural(len(made.workspaces), 'workspace')}, "
        f"{plural(people, 'person', 'people')} ({external} external), "
        f"{plural(len(made.rows), 'access row')}; the company was read in {plural(calls, 'call')}.",
    ]
    if changes is not None:
        from reconciler.report.diff import CHANGE_ORDER

        counts = ", ".join(plural(changes.count(c), c) for c in CHANGE_ORDER)
        lines.append(f"Since {changes.baseline.label}: {counts}.")
    leavers = counted.leavers
    if leavers:
        held = ", ".join(f"{a.key} on {a.workspace_id}" + (f" through domain {a.through}" if a.through else "")
                         for a in leavers[:5])
        more = f" and {len(leavers) - 5} more" if len(leavers) > 5 else ""
        lines.append(f"{plural(len({a.key for a in leavers}), 'leaver')} (revoked by a rule) still "
                     f"{'holds' if len({a.key for a in leavers}) == 1 else 'hold'} access: {held}{more}.")
    if not made.internal_domains:
        lines.append("No internal domain is known (no policy allowedDomains, no --internal-domain): "
                     "everyone is counted as external.")
    return "\n".join(lines) + "\n"
