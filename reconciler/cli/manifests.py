"""The commands on the manifests themselves: validate, fmt, schema, demo, export."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.group import cli
from reconciler.cli.options import (
    color, connection_options, manifest_argument, max_file_size_option,
)
from reconciler.commands.schema import SCHEMAS
from reconciler.errors import ConfigError

if TYPE_CHECKING:

    from reconciler.service import Service


@cli.command()
@manifest_argument
@max_file_size_option
@click.option("--strict", is_flag=True,
              help="Treat warnings (lint: redundant or risky grants; grants already expired) as errors.")
def validate(path: Path, max_file_mib: int, strict: bool) -> None:
    """Check the manifests in PATH (a file or directory) and report every problem with file:line.

    Needs no token and makes no network call. Warnings follow the summary; --strict makes them errors.

    \b
    Examples:
      reconciler validate manifests
      reconciler validate manifests --strict
    """
    from reconciler.commands.validate import validate as validate_command

    click.echo(validate_command(path, max_file_bytes=max_file_mib * 2**20, strict=strict), nl=False)


@cli.command("fmt")
@manifest_argument
@click.option("--check", is_flag=True,
              help="Write nothing; list the files that are not in the canonical layout and exit 1 if there "
                   "are any (for CI).")
def fmt(path: Path, check: bool) -> None:
    """Rewrite the manifests in PATH (a file or directory) in one canonical layout, comments kept.

    \b
    The layout: mappings indented by 2 spaces; a list's dash by 2 under its key;
    a flow entry such as {email: ana@acme.com, role: owner} on one line, evenly
    spaced; no line wrapped; quotes as written; no trailing spaces; one final newline.
    Comments (each on its line, at its column), key order, and block or flow style stay as
    written. The result always means what the file meant, or nothing is
    written. Emulator seed and data files beside the manifests are left alone.

    Exit 0 when every file is (or now is) in the layout; with --check, exit 1 when
    some file would change, listing it, and nothing is written. Like terraform fmt.

    \b
    Examples:
      reconciler fmt manifests
      reconciler fmt --check manifests
    """
    from reconciler.commands.fmt import fmt as fmt_command
    from reconciler.commands.fmt import render

    out, refusal = render(fmt_command(path, check=check), check=check, path=path)
    click.echo(out, nl=False)
    if refusal is not None:
        raise ConfigError(refusal)


@cli.command()
@click.argument("path", type=click.Path(path_type=Path), required=False, metavar="[NAME|PATH]")
def demo(path: Path | None) -> None:
    """Validate, plan, apply and plan again PATH on the embedded emulator.

    NAME is one of the examples shipped with reconciler (company, directory, gitops, onboarding,
    quickstart, review), found from any directory: 'reconciler demo company'. Without NAME or PATH: examples/quickstart
    when the current directory has it (a checkout of reconciler), else the shipped quickstart.
    Then someone changes access in the web app
    (straight on the emulator), and the plan shows that drift and the apply repairs it. Uses a fresh
    emulator and state in a temporary directory each time, so the demo always starts from the seed
    beside the manifest (seed.yaml) or the built-in demo company.

    review (examples/review, a directory with review-demo.yaml) runs a quarterly access review
    instead: a campaign over the company example, two reviewers' decisions, the plan and apply of
    the revocations, the evidence, and a last plan with no changes. Its directory is kept, not
    removed: the review page and the evidence it writes are there to open, and its last lines say where.

    directory (examples/directory, a directory with directory-demo.yaml beside its manifests/) plays an
    identity provider against 'reconciler directory serve' over SCIM: twenty people and three groups,
    directory sync, then one person deactivated and one added to a group; the live plan revokes at once
    and grants nothing, the synced and reviewed plan revokes and grants, and the last plan is clean.

    \b
    Examples:
      reconciler demo
      reconciler demo company
      reconciler demo directory
    """
    from reconciler.commands.demo import demo as run_demo

    run_demo(path=path, color=color(), show_title=lambda title: click.echo(click.style(f"$ {title}", bold=True)),
             show=click.echo)


@cli.command()
@click.argument("kind", type=click.Choice(list(SCHEMAS)), default="manifest", required=False,
                metavar="[" + "|".join(SCHEMAS) + "]")
@click.option("--list", "list_kinds", is_flag=True, help="List the schemas (name, file in schemas/, what it describes).")
def schema(kind: str, list_kinds: bool) -> None:
    """Print the JSON Schema of a manifest file ('schema manifest', the default), of the plan
    that 'plan --format json' writes ('schema plan'), of the access.json of 'report' ('schema report'),
    or of a review's files ('schema review-campaign', 'schema review-decisions'); --list lists them.

    Generated from the models this version of reconciler checks against, so it always matches it;
    write it again after an upgrade. For completion and checking in an editor that uses
    yaml-language-server (VS Code's YAML extension, among others), write it beside the manifests:

    \b
      reconciler schema manifest > manifest.schema.json

    and make this the first line of each manifest:

    \b
      # yaml-language-server: $schema=manifest.schema.json

    \b
    Examples:
      reconciler schema manifest > manifests/manifest.schema.json
      reconciler schema plan
    """
    from reconciler.commands.schema import schema as schema_text
    from reconciler.commands.schema import schema_list

    click.echo(schema_list() if list_kinds else schema_text(kind=kind), nl=False)


@cli.command("export")
@connection_options
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), required=True, metavar="DIR",
              help="Directory to write the manifests to; created when missing, refused when it holds manifests.")
def export(service: Service, out_dir: Path) -> None:
    """Write manifests from the live service into DIR: one file per account, every workspace standalone.

    For adopting reconciler where everything was set up by hand: validate and plan DIR afterwards
    should report no changes. Group membership cannot be read from the API; write groups by hand.

    \b
    Examples:
      reconciler export --out adopted
      reconciler validate adopted
    """
    from reconciler.commands.export import export as export_command

    click.echo(export_command(service=service, out_dir=out_dir), nl=False)
