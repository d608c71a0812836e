"""The directory of people and groups from the identity provider (SCIM 2.0)."""

from __future__ import annotations

from pathlib import Path

import click

from reconciler.cli.group import cli
from reconciler.cli.options import (
    StateAddressType, ca_bundle_option, connect_timeout_option, page_size_option, say, state_option, timeout_option,
)

# serve and pull have no manifests to find a state beside: the state is required.
_required_state = click.option(
    "--state", "state_path", type=StateAddressType(), metavar="FILE|URL", envvar="RECONCILER_STATE", required=True,
    help="The state the directory is kept with (env RECONCILER_STATE): a state file (the directory is "
         "FILE.directory.json beside it), or postgresql://USER@HOST:PORT/DB?schema=NAME&key=NAME (the table "
         "directory in that schema), the password from PGPASSWORD, ~/.pgpass or a service file (never in the "
         "address).")


@cli.group()
def directory() -> None:
    """People and groups from your identity provider, over SCIM 2.0 (Okta, Entra ID, ...).

    The directory is kept in the state backend (--state): beside a state file, or in the
    state's PostgreSQL schema.

    \b
    Examples:
      reconciler directory serve --state reconciler.state.json --token-file scim-token
      reconciler directory sync manifests
      reconciler plan manifests --directory live
    """


@directory.command("serve")
@_required_state
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on: loopback by default; put a TLS proxy in front rather than exposing it.")
@click.option("--port", type=click.IntRange(0, 65535), default=8766, show_default=True,
              help="Port; 0 picks a free one (the first line printed says which).")
@click.option("--token-file", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="File holding the bearer token the identity provider sends (else env "
                   "RECONCILER_DIRECTORY_TOKEN; never on the command line).")
@click.option("--forwarded-allow-ips", default="127.0.0.1", show_default=True, metavar="IPS",
              help="Comma-separated addresses of the TLS proxies whose X-Forwarded-Proto/-For headers are "
                   "believed ('*' for any), so the URLs in answers are the proxy's https:// ones.")
def directory_serve(state_path: Path | str, host: str, port: int, token_file: Path | None,
                    forwarded_allow_ips: str) -> None:
    """Serve the directory as a SCIM 2.0 service provider until interrupted.

    Endpoints under /scim/v2: Users (enterprise extension included), Groups,
    ServiceProviderConfig, Schemas, ResourceTypes. Every request needs the bearer
    token; the first line printed is the base URL to give the identity provider.
    A user deactivated (active: false) or deleted is a leaver from that day.

    \b
    Examples:
      reconciler directory serve --state reconciler.state.json --token-file scim-token
      reconciler directory serve --state 'postgresql://scim@db/reconciler?key=acme' --token-file /run/secrets/scim
      reconciler directory serve --state reconciler.state.json --port 0   # token in RECONCILER_DIRECTORY_TOKEN
    """
    from reconciler.commands.directory_serve import serve_directory

    serve_directory(state=state_path, host=host, port=port, token_file=token_file,
                    forwarded_allow_ips=forwarded_allow_ips, announce=lambda line: click.echo(line),
                    warn=lambda line: click.echo(line, err=True))


@directory.command("pull")
@click.argument("url", metavar="URL")
@_required_state
@click.option("--token-file", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="File holding the SCIM service's bearer token (else env RECONCILER_DIRECTORY_PULL_TOKEN; "
                   "never on the command line).")
@page_size_option("Users and groups (SCIM's count)")
@timeout_option("the SCIM service")
@connect_timeout_option("the SCIM service")
@ca_bundle_option("the SCIM service")
def directory_pull(url: str, state_path: Path | str, token_file: Path | None, page_size: int, timeout: float,
                   connect_timeout: float, ca_bundle: Path | None) -> None:
    """Read every User and Group of the SCIM 2.0 service at URL into the directory of the state.

    URL is the SCIM base address, the part before /Users (https://, or http:// to this
    machine only). Pages are read with startIndex and count, rate-limited, and retried after a
    429 (Retry-After) or a 5xx. Everything is read before anything is written: on any error
    the directory is left as it was. A user the service no longer lists, or lists inactive,
    is a leaver from the day of the pull. Then run 'reconciler directory sync'.

    \b
    Examples:
      reconciler directory pull https://idp.example.com/scim/v2 --state reconciler.state.json --token-file scim-token
      reconciler directory pull https://idp.example.com/scim/v2 --state 'postgresql://ci@db/reconciler?key=acme'
      reconciler directory pull https://idp.corp.example/scim/v2 --state reconciler.state.json --ca-bundle corp-ca.pem
    """
    from reconciler.commands.directory import directory_pull as pull

    say(pull(url=url, state_path=state_path, token_file=token_file, ca_bundle=ca_bundle, timeout=timeout,
             connect_timeout=connect_timeout, page_size=page_size), nl=False, suggestions=False)


@directory.command("sync")
@click.argument("manifests", metavar="MANIFESTS_DIR", type=click.Path(path_type=Path, file_okay=False))
@state_option
def directory_sync(manifests: Path, state_path: Path | str | None) -> None:
    """Write MANIFESTS_DIR/directory.yaml from the directory of the state, for review.

    The file lists every group's active members and every leaver (deactivated or deleted)
    with the day they left and their successor (their manager, while active), sorted, so a
    change of the directory is a change of the file in a pull request. It is written only
    when it changes; the lines printed say what changed, or "no changes".

    \b
    Examples:
      reconciler directory sync manifests
      reconciler directory sync manifests --state 'postgresql://ci@db/reconciler?key=acme'
    """
    from reconciler.commands.directory import directory_sync as sync

    report = sync(manifests=manifests, state_path=state_path)
    for line in report.warnings():
        click.echo(line, err=True)
    say(report.text(), nl=False, suggestions=False)
