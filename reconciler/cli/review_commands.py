"""Access review campaigns: start, status, close, report, page."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.group import cli
from reconciler.cli.options import (
    EXIT_CHANGES, connection_options, manifest_argument, say,
    state_option,
)

if TYPE_CHECKING:
    import datetime

    from reconciler.service import Service


@cli.group()
def review() -> None:
    """Access review campaigns kept in git under PATH/reviews/NAME/: start one, follow it, close it,
    and write the evidence. The plan carries out the reviewers' revocations.

    \b
    Examples:
      reconciler review start q3-2026 manifests --due 2026-09-30
      reconciler review status q3-2026 manifests
    """


def _today() -> datetime.date:
    """Today (UTC), or the day SOURCE_DATE_EPOCH names (a reproducible run, a test)."""
    import datetime

    from reconciler.commands.report import source_date

    moment = source_date(os.environ)
    return (moment or datetime.datetime.now(datetime.UTC)).date()


@review.command("start")
@click.argument("name")
@manifest_argument
@connection_options
@state_option
@click.option("--due", type=click.DateTime(formats=["%Y-%m-%d"]), required=True, metavar="DATE",
              help="The date (YYYY-MM-DD) every reviewer must have decided by.")
@click.option("--scope-external", is_flag=True,
              help="Review only users and domains outside the policy's allowedDomains.")
@click.option("--reviewers", default="owners", show_default=True, metavar="owners|team:NAME",
              help="owners: each workspace's owners review it; team:NAME: the team's members, one per workspace "
                   "in turn.")
@click.option("--fallback", metavar="EMAIL", help="Reviews the workspaces that have no owner.")
@click.option("--on-due", type=click.Choice(["flag", "revoke", "keep"]), default="flag", show_default=True,
              help="What an item still undecided after the due date becomes: flagged by audit, revoked, or kept.")
def review_start(name: str, path: Path, service: Service, state_path: Path | str | None, due: datetime.datetime,
                 scope_external: bool, reviewers: str, fallback: str | None, on_due: str) -> None:
    """Start the access review NAME: read the company once (ceil(N/100) listing calls, nothing written
    to the service) and write PATH/reviews/NAME/campaign.yaml and one file per reviewer, each item an
    access entry (workspace, kind, key, role, why) with decision: null for the reviewer to set.

    \b
    Examples:
      reconciler review start q3-2026 manifests --due 2026-09-30
      reconciler review start q3-2026 manifests --due 2026-09-30 --scope-external --fallback ops@acme.com
    """
    from reconciler.commands.review import start

    say(start(name, path, service=service, due=due.date(), today=_today(), external=scope_external,
               reviewers=reviewers, fallback=fallback, on_due=on_due, state_path=state_path),
         nl=False, suggestions=False)


@review.command("status")
@click.argument("name")
@manifest_argument
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True,
              help="text for people, markdown for a job summary or a pull-request comment, json for machines.")
def review_status(name: str, path: Path, fmt: str) -> None:
    """How far the review NAME is: per reviewer, decided out of total, and the items still undecided
    after the due date. Reads the files only (no token, no network).

    Exit 0 when every item is decided, 2 when some are open, 1 on errors.

    \b
    Examples:
      reconciler review status q3-2026 manifests
      reconciler review status q3-2026 manifests --format markdown
    """
    from reconciler.commands.review import render_status, status

    result = status(name, path, today=_today())
    say(render_status(result, fmt), nl=False, suggestions=False)
    if not result.complete:
        sys.exit(EXIT_CHANGES)


@review.command("close")
@click.argument("name")
@manifest_argument
@state_option
@click.option("--accept-undecided", is_flag=True,
              help="Close even though some items were never decided, and record how many in campaign.yaml.")
def review_close(name: str, path: Path, state_path: Path | str | None, accept_undecided: bool) -> None:
    """Close the review NAME: remove the manifest lines its revoke decisions contradict (an explicit
    entry of the workspace's list; a team membership only where the item says removeFromTeam: true),
    keeping every other line and comment, and set closed: <today> in its campaign.yaml.

    Refused while items are undecided, unless --accept-undecided records that choice.
    Reads the files and the state only (no token, no network); commit the diff with the decisions.

    \b
    Examples:
      reconciler review close q3-2026 manifests
      reconciler review close q3-2026 manifests --accept-undecided
    """
    from reconciler.commands.review import close

    say(close(name, path, today=_today(), state_path=state_path, accept_undecided=accept_undecided), nl=False,
        suggestions=False)


@review.command("reassign")
@click.argument("name")
@manifest_argument
@click.option("--from", "source", required=True, metavar="EMAIL", help="The reviewer whose undecided items move.")
@click.option("--to", "target", required=True, metavar="EMAIL", help="The reviewer who receives them.")
@click.option("--reason", required=True, metavar="TEXT", help="Why they move; recorded in campaign.yaml.")
@click.option("--by", metavar="EMAIL", help="Who reassigns, for the record (default: git config user.email).")
def review_reassign(name: str, path: Path, source: str, target: str, reason: str, by: str | None) -> None:
    """Move the undecided items of one reviewer of the review NAME to another (someone away, or leaving),
    and record who did it, when (UTC), why and the new assignment under reassignments: in campaign.yaml.
    Decided items stay with their reviewer. Refused after close, for a --to who is being offboarded, and
    for items of --to's own access (no one reviews their own access).
    Reads and writes the campaign's files only (no token, no network); commit the diff.

    \b
    Examples:
      reconciler review reassign q3-2026 manifests --from joe@acme.com --to sec@acme.com --reason "joe left"
    """
    import datetime

    from reconciler.commands.report import source_date
    from reconciler.commands.review import reassign

    now = source_date(os.environ) or datetime.datetime.now(datetime.UTC)
    say(reassign(name, path, source=source, target=target, reason=reason, by=by, now=now), nl=False,
        suggestions=False)


@review.command("report")
@click.argument("name")
@manifest_argument
@state_option
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), required=True, metavar="DIR",
              help="Directory to write evidence.csv and evidence.html to (created when missing).")
def review_report(name: str, path: Path, state_path: Path | str | None, out_dir: Path) -> None:
    """Write the evidence of the review NAME to DIR: evidence.csv and one self-contained evidence.html,
    every item with its decision, reviewer and reason, when and in which commit it was decided (git
    blame of the reviewer's file), and whether each revocation was applied (from the state).

    Headline figures: items, decided, kept, revoked, revoked and applied, overdue. No network.

    \b
    Examples:
      reconciler review report q3-2026 manifests --out evidence
    """
    from reconciler.commands.review import report

    say(report(name, path, out=out_dir, today=_today(), state_path=state_path), nl=False, suggestions=False)


@review.command("page")
@click.argument("name")
@manifest_argument
@connection_options
@state_option
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), required=True, metavar="DIR",
              help="Directory to write review.html to (created when missing).")
def review_page(name: str, path: Path, service: Service, state_path: Path | str | None, out_dir: Path) -> None:
    """Write review.html to DIR: one self-contained page (no server, no network) where a reviewer of
    NAME filters their items, marks keep or revoke with a reason, sees their progress, and downloads
    their decisions as the YAML file to commit. The browser keeps the decisions made on the page
    until they are forgotten. Each item says what its decision does (the workspaces sharing its list,
    a rule that ensures it, a domain's reach): the company is read once for it (ceil(N/100) listing
    calls, nothing written to the service).

    \b
    Examples:
      reconciler review page q3-2026 manifests --out review-page
    """
    from reconciler.commands.review import page

    say(page(name, path, out=out_dir, service=service, today=_today(), state_path=state_path), nl=False,
        suggestions=False)
