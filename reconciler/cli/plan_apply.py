"""plan and apply: show what differs, then make the service match."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.group import cli
from reconciler.cli.options import (
    EXIT_CHANGES, color, connection_options, directory_option, invocation, lock_timeout_option, plan_options,
    manifest_argument, say,
)
from reconciler.errors import ConfigError, PlanRefused
from reconciler.suggest import Invocation

if TYPE_CHECKING:

    from reconciler.service import Service


@cli.command()
@manifest_argument
@connection_options
@plan_options
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text",
              show_default=True,
              help="text for people, markdown for a pull-request comment, json for machines "
                   "(documented, versioned shape: format_version).")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Save the plan to FILE for 'apply --plan FILE'.")
@click.option("--expiry-warning-days", type=click.IntRange(0), default=14, show_default=True, metavar="DAYS",
              help="List the grants (expires: on an access entry) that expire within DAYS days.")
@click.option("--show-unmanaged", is_flag=True,
              help="List the workspaces of the company that no manifest names (the plan always counts them).")
@click.option("--by-person", is_flag=True,
              help="After the plan, list each user and domain with the workspaces it gains, loses or changes "
                   "role in (a group's list expanded to every workspace of the group).")
@directory_option
@click.option("--detailed-exitcode", is_flag=True,
              help="Exit 0 when there are no changes, 1 on error, 2 when there are changes or resources "
                   "that need a person (an asset whose creation got no answer).")
def plan(path: Path, service: Service, state_path: Path | str | None, targets: tuple[str, ...],
         max_removals: int | None, allow: tuple[str, ...], reassert: bool, max_file_mib: int, fmt: str,
         out: Path | None, expiry_warning_days: int, show_unmanaged: bool, by_person: bool,
         detailed_exitcode: bool, require_state: bool, directory: str) -> None:
    """Show what differs between the manifests in PATH and the live service.

    \b
    Examples:
      reconciler plan manifests
      reconciler plan manifests --format markdown --out plan.json
      reconciler plan examples/quickstart --emulator emulator.yaml --seed examples/quickstart/seed.yaml
    """
    from reconciler.commands.plan import parse_allow, render
    from reconciler.commands.plan import plan as plan_command

    try:
        result = plan_command(path, service=service, state_path=state_path, targets=targets,
                               max_removals=max_removals, out=out, reassert=reassert,
                               max_file_bytes=max_file_mib * 2**20, show_unmanaged=show_unmanaged,
                               allow=parse_allow(allow), expiry_warning_days=expiry_warning_days,
                               require_state=require_state, directory=directory)
    except PlanRefused as refused:
        # A refused plan is still shown, so the reviewer sees what was refused.
        say(render(refused.plan, fmt=fmt, color=color(), by_person=by_person), nl=False)  # type: ignore[arg-type]  # PlanRefused.plan is an object: errors.py imports nothing of plan/
        raise
    say(render(result, fmt=fmt, color=color(), by_person=by_person), nl=False)
    if out is not None:
        click.echo(_saved_plan_notice(out, path, targets, reassert), err=True)
    if detailed_exitcode and not result.settled:
        sys.exit(EXIT_CHANGES)


def _saved_plan_notice(out: Path, path: Path, targets: tuple[str, ...], reassert: bool) -> str:
    """Where ``plan --out`` saved the plan, and the command that applies exactly it
    (on stderr, so stdout stays the rendered plan, e.g. a PR comment): the same
    PATH, --target and --reassert, which apply --plan requires."""
    import shlex

    run = invocation() or Invocation()
    flags = [*(w for t in targets for w in ("--target", t)), *(["--reassert"] if reassert else [])]
    words = ["reconciler", "apply", "--plan", str(out), str(path), *run.connection_words(), *run.state_words(),
             *flags]
    return (f"Saved the plan to {out} (a saved plan, not the --format json document: see the README).\n"
            f"To apply exactly this plan (refused if the manifests, the service or the state move first):\n"
            f"  {shlex.join(words)}")


@cli.command()
@click.argument("path", type=click.Path(path_type=Path), required=False, metavar="[PATH]")
@connection_options
@plan_options
@click.option("--wait", is_flag=True,
              help="Follow the conversion of docx/ppt/xlsx assets to PDF until it ends (polls the file "
                   "within the file-retrieval rate limit, 60/min); without it apply says which are still running.")
@click.option("--plan", "plan_file", type=click.Path(path_type=Path, dir_okay=False, exists=True), metavar="FILE",
              help="Apply exactly this saved plan; refused if the manifests, the service or the state moved since, "
                   "or if it was made with another PATH, --target or --reassert than this command line's.")
@click.option("--expect-digest", envvar="RECONCILER_EXPECT_DIGEST", metavar="DIGEST",
              help="Apply only if the plan made now has this digest (the 'Plan digest:' of the reviewed plan; env "
                   "RECONCILER_EXPECT_DIGEST); otherwise refuse before any write.")
@click.option("--auto-approve", is_flag=True, help="Do not ask for confirmation (needed without a terminal).")
@click.option("--audit-log", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Append one JSON line per HTTP call to FILE: time, address, method, path, status, privilege "
                   "class, and the CI commit, branch and pull request (and a line for a dead holder's lock "
                   "taken over). Never the token or an upload signature.")
@directory_option
@lock_timeout_option
def apply(path: Path | None, service: Service, state_path: Path | str | None, targets: tuple[str, ...],
          max_removals: int | None, allow: tuple[str, ...], reassert: bool, max_file_mib: int, wait: bool,
          plan_file: Path | None, auto_approve: bool, audit_log: Path | None, require_state: bool,
          expect_digest: str | None, lock_timeout: float, directory: str) -> None:
    """Make the live service match the manifests in PATH (default: the current directory), after
    showing the plan. With --plan, PATH is required and must be the manifests the plan was made
    from, and --target and --reassert must be the ones it was made with: the file decides nothing.

    \b
    Examples:
      reconciler apply manifests
      reconciler apply --plan plan.json manifests --auto-approve
    """
    def confirm(text: str) -> bool:
        say(text, nl=False)
        if auto_approve:
            return True
        if not sys.stdin.isatty():
            raise ConfigError(
                "apply needs a 'yes' to go ahead, and there is no terminal to ask on. "
                "Review the plan and run again with --auto-approve."
            )
        return click.prompt("Apply these changes? Only 'yes' is accepted", default="", show_default=False) == "yes"

    import contextlib
    import dataclasses

    from reconciler.apply.audit import AuditLog
    from reconciler.apply.progress import progress_for
    from reconciler.commands.apply import apply as apply_command
    from reconciler.commands.apply import given_digest
    from reconciler.commands.plan import parse_allow, render

    # A bar on a terminal, one plain line per finished change otherwise (both on stderr).
    shown = progress_for(sys.stderr, lambda line: click.echo(line, err=True))
    with AuditLog(audit_log) if audit_log is not None else contextlib.nullcontext() as audit:
        try:
            outcome = apply_command(path, service=dataclasses.replace(service, audit=audit), state_path=state_path,
                                     targets=targets, max_removals=max_removals, plan_file=plan_file,
                                     confirm=confirm, color=color(), progress=shown, reassert=reassert, wait=wait,
                                     allow=parse_allow(allow), require_state=require_state,
                                     expect_digest=given_digest(expect_digest, os.environ),
                                     max_file_bytes=max_file_mib * 2**20, lock_timeout=lock_timeout,
                                     directory=directory)
        except PlanRefused as refused:
            # Shown before the refusal, as plan does: the reviewer sees what was refused.
            say(render(refused.plan, fmt="text", color=color()), nl=False)  # type: ignore[arg-type]  # as above
            raise
        finally:
            shown.close()
    say(outcome)
