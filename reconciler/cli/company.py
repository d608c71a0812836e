"""The views of the whole company: who, audit, report (they read; they never write)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.group import cli
from reconciler.cli.options import (
    EXIT_CHANGES, connection_options, directory_option, manifest_argument, say,
    state_option,
)

if TYPE_CHECKING:

    from reconciler.service import Service


@cli.command()
@click.argument("subject", metavar="EMAIL|DOMAIN")
@manifest_argument
@connection_options
@state_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for people, json for machines.")
@directory_option
def who(subject: str, path: Path, service: Service, state_path: Path | str | None, fmt: str, directory: str) -> None:
    """Where EMAIL (or everyone of DOMAIN) has access now, across every workspace of the company,
    each with its role and why: the manifest line in PATH, the team, the rule, why the next apply
    removes it (a rule's revoke:, a leaver of the directory, a list that does not list it), or not
    managed.

    A person reached through a domain entry of their email's domain is listed too, said so.
    Reads the company once (one listing); never writes anything, not even the state.

    \b
    Examples:
      reconciler who ana@acme.com manifests
      reconciler who customer.com manifests --format json
    """
    from reconciler.commands.who import who as who_command

    say(who_command(subject, path, service=service, state_path=state_path, fmt=fmt, directory=directory), nl=False,
        suggestions=False)


@cli.command()
@manifest_argument
@connection_options
@state_option
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json", "csv"]), default="text",
              show_default=True,
              help="text for people, markdown for an issue or a pull-request comment, json for machines, "
                   "csv for a spreadsheet (cells a spreadsheet would run as a formula start with ').")
@directory_option
def audit(path: Path, service: Service, state_path: Path | str | None, fmt: str, directory: str) -> None:
    """Check every workspace of the company, managed or not, against the policy of the manifests in
    PATH (allowedDomains, maxRoleOutside, protectedOwners), and list what their rules would change.

    Exit 0 when all is clean, 2 when anything violates the policy or differs from the rules, 1 on
    errors. Reads the company once (one listing); never writes anything, not even the state.

    \b
    Examples:
      reconciler audit manifests
      reconciler audit manifests --format markdown
    """
    from reconciler.commands.audit import audit as audit_command
    from reconciler.commands.audit import render

    report = audit_command(path, service=service, state_path=state_path, directory=directory)
    say(render(report, fmt), nl=False, suggestions=False)
    if not report.clean:
        sys.exit(EXIT_CHANGES)


@cli.command()
@manifest_argument
@connection_options
@state_option
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), required=True, metavar="DIR",
              help="Directory to write access.csv, access.json and index.html to (created when missing).")
@click.option("--internal-domain", "internal_domains", multiple=True, metavar="DOMAIN",
              help="A domain whose people are internal (repeatable; its subdomains too), "
                   "added to the manifests' policy allowedDomains.")
@click.option("--since", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="An earlier report's access.json: list the grants, revocations, escalations and "
                   "downgrades since then (on the page and in changes.csv). A state file is refused: it "
                   "records only what the last apply put on the managed lists.")
@directory_option
def report(path: Path, service: Service, state_path: Path | str | None, out_dir: Path, internal_domains: tuple[str, ...],
           since: Path | None, directory: str) -> None:
    """Write the quarterly access review of the whole company to DIR: access.csv and access.json
    (one row per workspace and person or domain, with the role and how it is managed: the manifest
    line in PATH, the team, the rule, or not managed) and index.html, one self-contained page with
    the headline figures, pictures, and a person and a workspace view.

    Reads the company once (one listing, ceil(N/100) calls); never writes to the service or the state.
    With SOURCE_DATE_EPOCH set (seconds since 1970, UTC) the report is dated then instead of now.

    \b
    Examples:
      reconciler report manifests --out access-review
      reconciler report manifests --out access-review --since last-quarter/access.json
    """
    from reconciler.commands.report import report as run
    from reconciler.commands.report import source_date

    say(run(path, service=service, out=out_dir, state_path=state_path, internal_domains=internal_domains,
             since=since, now=source_date(os.environ), directory=directory), nl=False, suggestions=False)
