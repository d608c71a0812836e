"""The embedded emulator served over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.group import cli

if TYPE_CHECKING:

    pass


@cli.group()
def emulator() -> None:
    """The embedded service emulator.

    \b
    Examples:
      reconciler emulator serve
    """


@emulator.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (loopback by default).")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port; 0 picks a free one (the first line printed says which).")
@click.option("--seed", type=click.Path(path_type=Path, dir_okay=False, exists=True), metavar="SEED",
              help="Seed YAML (default: the built-in demo company).")
@click.option("--data", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Persist the emulator's data in FILE (loaded from it when it exists).")
@click.option("--fault", "--faults", "faults", multiple=True, metavar="SPEC",
              help="Inject a fault, repeatable. SPEC is comma-separated key=value pairs: method (default *), "
                   "path (regex searched in the path), kind (status, drop, after_commit, latency), "
                   "status (default 500), times (default 1, or 'always'), rate (0-1), seconds (latency). "
                   "E.g. 'method=POST,path=/access$,kind=after_commit'.")
@click.option("--fault-seed", type=int, default=0, show_default=True,
              help="Seed for faults with rate below 1, so a run can be repeated.")
@click.option("--time-scale", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="Run the emulator's clock this many times faster than the wall clock: rate-limit windows, "
                   "upload expiry (1 h) and embed addresses (2 min) pass sooner. 60 makes a minute a second.")
def emulator_serve(host: str, port: int, seed: Path | None, data: Path | None, faults: tuple[str, ...],
                   fault_seed: int, time_scale: float) -> None:
    """Serve the emulator over HTTP until interrupted.

    Tokens are the companies' tokens from the seed; the first line printed is the address to use
    as RECONCILER_BASE_URL. A --host other than loopback while a company still has the built-in
    demo token (publicly known) prints a warning on stderr.

    \b
    Examples:
      reconciler emulator serve
      reconciler emulator serve --port 0 --seed examples/quickstart/seed.yaml --time-scale 60
    """
    from reconciler.commands.emulator import serve_emulator

    serve_emulator(host=host, port=port, seed=seed, data=data, faults=faults, fault_seed=fault_seed,
                            time_scale=time_scale, announce=lambda line: click.echo(line, nl=True),
                            warn=lambda line: click.echo(line, err=True))
