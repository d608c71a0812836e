"""The state: list, show, verify, rm, mv, push, pull; import and force-unlock."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.group import cli
from reconciler.cli.options import (
    EXIT_ERROR, connection_options, lock_timeout_option,
    manifest_argument, say,
    state_option,
)
from reconciler.errors import ConfigError

if TYPE_CHECKING:

    from reconciler.service import Service


@cli.group()
def state() -> None:
    """Read, check and edit the state file; the service is never written to (verify reads it).

    The state file (default reconciler.state.json beside the manifests in PATH) records what the
    API cannot read back: the workspaces this tool created or adopted, group membership, the
    section, page and task values it wrote, and the access entries it manages.

    \b
    Examples:
      reconciler state list manifests
      reconciler state mv workspace.portal workspace.partner-portal manifests
    """


@state.command("list")
@manifest_argument
@state_option
def state_list(path: Path, state_path: Path | str | None) -> None:
    """List every address the state records, with its workspace id.

    \b
    Examples:
      reconciler state list manifests
      reconciler state list --state 'postgresql://ci@db.example.com/reconciler?key=acme'
    """
    from reconciler.commands.state import state_list as list_state

    click.echo(list_state(path=path, state_path=state_path), nl=False)


@state.command("show")
@click.argument("address")
@manifest_argument
@state_option
def state_show(address: str, path: Path, state_path: Path | str | None) -> None:
    """Show everything the state records for ADDRESS, as JSON.

    \b
    Examples:
      reconciler state show workspace.partner-portal manifests
    """
    from reconciler.commands.state import state_show as show_state

    click.echo(show_state(path=path, state_path=state_path, address=address), nl=False)


@state.command("verify")
@manifest_argument
@connection_options
@state_option
def state_verify(path: Path, service: Service, state_path: Path | str | None) -> None:
    """Check every record of the state against the service, and list each that does not hold.

    A workspace's name, account and template as recorded, the group it is recorded as connected to,
    and records that cannot be explained (an id under two addresses, a reason for an entry never
    recorded). Exit 1 when any does not hold; plan refuses such a state. Reads the service once;
    writes nothing.

    \b
    Examples:
      reconciler state verify manifests
    """
    from reconciler.commands.state import state_verify as verify_state

    text, ok = verify_state(path=path, state_path=state_path, service=service)
    say(text, nl=False, suggestions=False)  # it quotes the service's names: nothing is completed
    if not ok:
        sys.exit(EXIT_ERROR)


@state.command("rm")
@click.argument("address")
@manifest_argument
@state_option
@lock_timeout_option
def state_rm(address: str, path: Path, state_path: Path | str | None, lock_timeout: float) -> None:
    """Forget ADDRESS without touching the service.

    The next plan treats it as new: a workspace made from a template is created again (a credit),
    and write-only values are sent again. To adopt an existing workspace instead, use import.

    \b
    Examples:
      reconciler state rm group.acme-onboarding.workspace.kickoff manifests
    """
    from reconciler.commands.state import state_rm as rm_state

    click.echo(rm_state(path=path, state_path=state_path, address=address, lock_timeout=lock_timeout), nl=False)


@state.command("mv")
@click.argument("source", metavar="FROM")
@click.argument("destination", metavar="TO")
@manifest_argument
@state_option
@lock_timeout_option
def state_mv(source: str, destination: str, path: Path, state_path: Path | str | None, lock_timeout: float) -> None:
    """Record what the state knows of FROM under TO, without touching the service.

    For an address renamed in the manifest (workspace.a became workspace.b): without it the next plan
    would create TO afresh (a credit for a template member) and drop FROM. Rename in the manifests first:
    refused when no manifest in PATH declares TO, when TO is already recorded, when FROM is not, and
    between an asset.* address and a workspace's. A manifest can say
    the same with a moved: list, which the plan carries out (Terraform's moved blocks).

    \b
    Examples:
      reconciler state mv workspace.portal workspace.partner-portal manifests --lock-timeout 30s
    """
    from reconciler.commands.state import state_mv as mv

    click.echo(mv(path=path, state_path=state_path, source=source, destination=destination,
                  lock_timeout=lock_timeout), nl=False)


@state.command("push")
@click.argument("source", metavar="FILE")
@state_option
@click.option("--force", is_flag=True, help="Replace the state even if it holds another lineage or a newer serial.")
@lock_timeout_option
def state_push(source: str, state_path: Path | str | None, force: bool, lock_timeout: float) -> None:
    """Copy the state file FILE to where --state (or RECONCILER_STATE) keeps the state.

    Moves a state between backends: 'reconciler state push reconciler.state.json --state
    postgresql://ci@db.example.com/reconciler?key=acme'. Lineage and serial are kept. Refused,
    without --force, when the destination holds another lineage, a newer serial, or the same
    serial with other contents. The service is never touched.

    \b
    Examples:
      reconciler state push manifests/reconciler.state.json --state 'postgresql://ci@db.example.com/reconciler?key=acme'
    """
    from reconciler.commands.state import state_push as push

    if state_path is None:
        raise ConfigError("state push needs --state (or RECONCILER_STATE): where to copy FILE to.")
    click.echo(push(Path(source), state_path, force=force, lock_timeout=lock_timeout), nl=False)


@state.command("pull")
@click.argument("out", metavar="[FILE]", required=False, type=click.Path(path_type=Path, dir_okay=False))
@state_option
@click.option("--force", is_flag=True, help="Overwrite FILE even if it holds another lineage or a newer serial.")
@lock_timeout_option
def state_pull(out: Path | None, state_path: Path | str | None, force: bool, lock_timeout: float) -> None:
    """Print the state kept at --state (or RECONCILER_STATE) as a state file's JSON, or write it to FILE.

    'reconciler state pull --state postgresql://... > reconciler.state.json'. With FILE, refused
    without --force when FILE holds another lineage or a newer serial. The service is never touched.

    \b
    Examples:
      reconciler state pull --state 'postgresql://ci@db.example.com/reconciler?key=acme' > reconciler.state.json
      reconciler state pull backup.state.json --state 'postgresql://ci@db.example.com/reconciler?key=acme'
    """
    from reconciler.commands.state import state_pull as pull

    if state_path is None:
        raise ConfigError("state pull needs --state (or RECONCILER_STATE): where to read the state from.")
    click.echo(pull(state_path, out, force=force, lock_timeout=lock_timeout), nl=False)


@cli.command("import")
@click.argument("address")
@click.argument("workspace_id", metavar="ID")
@manifest_argument
@connection_options
@state_option
@lock_timeout_option
def import_(address: str, workspace_id: str, path: Path, service: Service, state_path: Path | str | None,
            lock_timeout: float) -> None:
    """Bind ADDRESS (a group member or a standalone workspace of the manifests in PATH) to the
    existing workspace ID, after checking that it exists and fits (same id as the manifest, same
    template, same account as the group's homepage); or an asset.* address to the asset ID.

    Use it to adopt a workspace an interrupted apply created, so the next plan connects it rather
    than spending a second credit; or an asset whose creation answer was lost. Assets cannot be
    read back, so an asset id is taken as given and its fields are PATCHed by the next apply.

    \b
    Examples:
      reconciler import group.acme-onboarding.workspace.kickoff ws_8f2k manifests
      reconciler import asset.price-list ast_91c manifests
    """
    from reconciler.commands.import_ import import_workspace

    click.echo(import_workspace(path, address, workspace_id, service=service, state_path=state_path,
                                lock_timeout=lock_timeout), nl=False)


@cli.command("force-unlock")
@click.argument("lock_id", metavar="ID")
@manifest_argument
@state_option
def force_unlock(lock_id: str, path: Path, state_path: Path | str | None) -> None:
    """Remove the state's lock when its lock ID is ID (Terraform's force-unlock LOCK_ID).

    For a lock left by a command that is gone: killed (kill -9), a cancelled CI job, a machine
    that went away. The message of a locked state names the ID. Refused when the lock has another
    ID, or its holder still runs on this host. The service is not touched; run plan afterwards, as
    the command that held the lock may have changed the service without recording it.

    \b
    Examples:
      reconciler force-unlock 6c1f0e9a manifests
    """
    from reconciler.commands.state import force_unlock as unlock

    click.echo(unlock(path=path, state_path=state_path, lock_id=lock_id), nl=False)
