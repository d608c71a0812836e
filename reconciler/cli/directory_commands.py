"""The directory of people and groups from the identity provider (SCIM 2.0)."""

from __future__ import annotations

from pathlib import Path

import click

from reconciler.cli.group import cli
from reconciler.cli.options import StateAddressType


@cli.group()
def directory() -> None:
    """People and groups from your identity provider, over SCIM 2.0 (Okta, Entra ID, ...).

    The directory is kept in the state backend (--state): beside a state file, or in the
    state's PostgreSQL schema.

    \b
    Examples:
      reconciler directory serve --state reconciler.state.json --token-file scim-token
    """


@directory.command("serve")
@click.option("--state", "state_path", type=StateAddressType(), metavar="FILE|URL", envvar="RECONCILER_STATE",
              required=True,
              help="The state the directory is kept with (env RECONCILER_STATE): a state file (the directory is "
                   "FILE.directory.json beside it), or postgresql://USER@HOST:PORT/DB?schema=NAME&key=NAME (the "
                   "table directory in that schema), the password from PGPASSWORD, ~/.pgpass or a service file.")
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
