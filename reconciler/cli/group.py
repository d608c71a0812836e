"""The top-level ``reconciler`` group and the order ``--help`` lists its commands in."""

from __future__ import annotations

import click

from reconciler import __version__



# What each command is for, in the order a newcomer meets them: the one list
# ``reconciler --help`` shows (a command missing here is listed after these,
# by click's own short help, so none is ever left out or shown twice).
COMMAND_SUMMARIES: dict[str, str] = {
    "validate": "check manifests (no token, no network)",
    "fmt": "rewrite manifests in one canonical layout, comments kept (--check for CI)",
    "plan": "show what differs from the live service",
    "apply": "make the service match the manifests",
    "demo": "validate, plan, apply and re-plan an example (company, gitops, onboarding, quickstart) or PATH "
            "on the embedded emulator; 'demo review' runs an access review, 'demo directory' people from an "
            "identity provider",
    "schema": "print the JSON Schema of a manifest (for editors), a JSON plan, a report or a review (--list)",
    "import": "bind a manifest address to an existing workspace",
    "state": "list, show, move or forget what the state records; push or pull it",
    "force-unlock": "remove a lock left by a killed apply (by its lock ID)",
    "export": "write manifests from the live service (to adopt an existing setup)",
    "who": "where a person or a domain has access now, and why",
    "audit": "check every workspace of the company against the policy and the rules",
    "report": "the access review: access.csv, access.json and one HTML page",
    "review": "access review campaigns kept in git: start, status, close, evidence, the reviewers' page",
    "directory": "people and teams from the identity provider (SCIM 2.0): serve, pull, sync into directory.yaml",
    "emulator": "run the service emulator as a local HTTP server",
}


class _Commands(click.Group):
    """The top-level group: its commands listed once, in ``COMMAND_SUMMARIES``' order and words."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        known = [name for name in COMMAND_SUMMARIES if name in self.commands]
        return known + sorted(name for name in self.commands if name not in COMMAND_SUMMARIES)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMAND_SUMMARIES.get(name) or self.commands[name].get_short_help_str(80))
                for name in self.list_commands(ctx) if not self.commands[name].hidden]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="reconciler")
def cli() -> None:
    """Keep Workspace Collaboration Service workspaces as YAML in git.

    Connection: RECONCILER_BASE_URL (or --base-url) and RECONCILER_TOKEN (or --token-file),
    or --emulator FILE to rehearse against the embedded emulator.
    """
