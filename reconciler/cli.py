"""The command line: parse, call one function, render, exit with a fixed code.

Exit codes: 0 success, 1 error (any ReconcilerError, bad arguments; also an
apply that did everything else while resources need a person), 2 changes or
resources that need a person (only with ``plan --detailed-exitcode``), 130 interrupted
(Ctrl-C, SIGINT), 143 terminated (SIGTERM, what CI sends when a job is
cancelled: handled like Ctrl-C, so the state lock is released and the state
keeps every change recorded so far; 128 + 15, as a shell reports it),
3 an internal error (a bug: the message says where the details went).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from reconciler import __version__
from reconciler.errors import ConfigError, PlanRefused, ReconcilerError, StateError
from reconciler.suggest import Invocation, complete
from reconciler.text import printable

# Start-up: `--help` and `validate` must not pay for httpx, pydantic's state
# models, the API client or the emulator, so the commands, the state and the
# service are imported by the commands that use them (bench/README.md); so are
# tempfile and traceback, which only a crash needs.
if TYPE_CHECKING:
    import datetime

    from reconciler.service import Service

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_ERROR, EXIT_CHANGES, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def connection_options(func: F) -> F:
    """The flags every command that talks to the service takes."""

    @click.option("--base-url", envvar="RECONCILER_BASE_URL", metavar="URL",
                  help="Service address, with or without /v1 (env RECONCILER_BASE_URL). "
                       "Plain http:// only for loopback addresses.")
    @click.option("--token-file", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
                  help="Read the token from FILE instead of RECONCILER_TOKEN. Never pass a token as an argument.")
    @click.option("--emulator", "emulator_file", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
                  help="Run against the embedded emulator, its data kept in FILE (created from --seed, "
                       "or the built-in demo company, when missing). No account, no network.")
    @click.option("--seed", "emulator_seed", type=click.Path(path_type=Path, dir_okay=False, exists=True),
                  metavar="SEED", help="Emulator seed YAML used when the --emulator FILE does not exist yet "
                                       "(ignored, with a warning, once it does: delete FILE to start afresh).")
    @click.option("--page-size", type=click.IntRange(1, 1000), default=100, show_default=True,
                  help="Items asked for per page when listing.")
    @click.option("--retries", type=click.IntRange(0, 10), default=3, show_default=True,
                  help="How many times a call is sent again after a 429 (after the wait the service "
                       "asks for) or, when repeating it is safe (reads, PATCHes, access-list "
                       "replacement), after a 5xx or a lost connection, with growing waits. "
                       "Creations are never repeated blindly.")
    @click.option("--rate-limit", "rate_limits", multiple=True, metavar="CLASS=N",
                  help="Requests per minute this tool may use for a limit class (default, "
                       "workspace_creation, file_retrieval); lower it when other tools share the quota.")
    @click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=30.0, show_default=True,
                  metavar="SECONDS", help="How long to wait for each answer of the service (a notice is "
                                          "printed after 5 s of silence).")
    @click.option("--connect-timeout", type=click.FloatRange(min=0, min_open=True), default=10.0,
                  show_default=True, metavar="SECONDS", help="How long to wait for a connection.")
    @click.option("--debug", is_flag=True,
                  help="Print every request and answer (method, address, status, rate-limit headers) on "
                       "stderr; the token and presigned upload signatures are never printed.")
    @click.option("--ca-bundle", type=click.Path(path_type=Path, dir_okay=False, exists=True), metavar="FILE",
                  help="Certificates to verify the service's TLS certificate with (verification cannot be "
                       "turned off).")
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from reconciler.service import Service, parse_rate_limits, warn_if_seed_ignored

        _remember_invocation(kwargs)
        base_url = kwargs.pop("base_url")
        if kwargs["emulator_file"] is not None and click.get_current_context().get_parameter_source(
                "base_url") is click.core.ParameterSource.ENVIRONMENT:
            base_url = None  # --emulator on the command line beats RECONCILER_BASE_URL from the environment
        kwargs["service"] = Service(
            base_url=base_url,
            token_file=kwargs.pop("token_file"),
            emulator_file=kwargs.pop("emulator_file"),
            emulator_seed=kwargs.pop("emulator_seed"),
            page_size=kwargs.pop("page_size"),
            retries=kwargs.pop("retries"),
            rate_limits=parse_rate_limits(kwargs.pop("rate_limits")),
            timeout=kwargs.pop("timeout"),
            connect_timeout=kwargs.pop("connect_timeout"),
            ca_bundle=kwargs.pop("ca_bundle"),
            notice=lambda line: click.echo(complete(line, _INVOCATION), err=True),
            trace=(lambda line: click.echo(f"debug: {printable(line)}", err=True)) if kwargs.pop("debug") else None,
        )
        warn_if_seed_ignored(kwargs["service"])
        return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]  # functools.wraps keeps the callable's signature; mypy sees Any


_INVOCATION: Invocation | None = None


def _remember_invocation(params: dict[str, Any]) -> None:
    """How this run was pointed (PATH, service, state), so the commands that
    messages suggest are printed complete (reconciler.suggest)."""
    global _INVOCATION
    from_command_line = click.get_current_context().get_parameter_source("base_url") \
        is click.core.ParameterSource.COMMANDLINE
    path = params.get("path")
    _INVOCATION = Invocation(path=path if isinstance(path, Path) else None,
                             emulator_file=params.get("emulator_file"),
                             base_url=params.get("base_url") if from_command_line else None,
                             token_file=params.get("token_file"), state_path=params.get("state_path"))



manifest_argument = click.argument(
    "path", type=click.Path(path_type=Path), default=Path("."), required=False, metavar="[PATH]"
)
if TYPE_CHECKING:  # click 8.2+ types ParamType by its value; 8.1 (also supported) cannot subscript it at run time
    _StateParamType = click.ParamType[Path | str, Any]
else:
    _StateParamType = click.ParamType


class StateAddressType(_StateParamType):
    """``--state``: a file path (a ``Path``), or a ``postgresql://`` URL (a ``str``), one
    holding a password refused here, before it could be echoed in any message."""

    name = "state"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path | str:
        if isinstance(value, Path):
            return value
        text = str(value)
        from reconciler.commands.state import check_state_address, names_postgres

        if names_postgres(text):  # any letter case, or key=value: never a file path
            try:
                return check_state_address(text)
            except StateError as exc:
                self.fail(str(exc), param, ctx)
        return Path(text)


state_option = click.option(
    "--state", "state_path", type=StateAddressType(), metavar="FILE|URL", envvar="RECONCILER_STATE",
    help="Where the state is kept (env RECONCILER_STATE): a file (default: reconciler.state.json beside the "
         "manifests), or postgresql://USER@HOST:PORT/DB?schema=NAME&key=NAME, the password from PGPASSWORD, "
         "~/.pgpass or a service file (never in the address).",
)
if TYPE_CHECKING:
    _DurationParamType = click.ParamType[float, Any]
else:
    _DurationParamType = click.ParamType


class DurationType(_DurationParamType):
    """``--lock-timeout``: Terraform's spelling of a duration (``30s``, ``5m``, ``1h30m``, ``500ms``),
    or plain seconds (``90``), as seconds."""

    name = "duration"
    _UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, int | float):
            return float(value)
        import re

        text = str(value).strip()
        if re.fullmatch(r"\d+(\.\d+)?", text):
            return float(text)
        parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
        if not parts or "".join(n + u for n, u in parts) != text:
            self.fail(f"{text!r} is not a duration: write it as 30s, 5m, 1h30m, 500ms, or a number of seconds.",
                      param, ctx)
        return sum(float(n) * self._UNITS[u] for n, u in parts)


lock_timeout_option = click.option(
    "--lock-timeout", type=DurationType(), default="0s", show_default=True, metavar="DURATION",
    help="How long to wait for the state's lock when another command holds it (e.g. 30s, 5m), before "
         "refusing as without it; the wait ends as soon as the lock is released. A lock whose holder is "
         "gone on this host is taken over at once, and said so.",
)
max_removals_option = click.option(
    "--max-removals", type=click.IntRange(0), metavar="N",
    help="Refuse the plan if it removes more than N access entries.",
)
allow_option = click.option(
    "--allow", "allow", multiple=True, metavar="CLASS=N",
    help="Raise a cap of the manifests' policy for this run: revocations=N, escalations=N or notified=N "
         "(repeatable). A deliberate act on the command line, visible in the CI log.",
)


target_option = click.option(
    "--target", "targets", multiple=True, metavar="ADDRESS",
    help="Limit the plan to ADDRESS (e.g. group.acme-onboarding); repeatable.",
)
max_file_size_option = click.option(
    "--max-file-size", "max_file_mib", type=click.IntRange(1), default=100, show_default=True, metavar="MiB",
    help="Refuse asset files larger than this many MiB (checked when the manifests are read, before any call).",
)
require_state_option = click.option(
    "--require-state", is_flag=True, envvar="RECONCILER_REQUIRE_STATE",
    help="Refuse to run, before any call, when there is no state file (env RECONCILER_REQUIRE_STATE=1): for "
         "CI once the first apply has committed the state, as a checkout without it cannot know which entries "
         "of non-authoritative lists reconciler granted, and would silently leave a removal undone.",
)
reassert_option = click.option(
    "--reassert", is_flag=True,
    help="Send every write-only value again (group membership, section/page visibility, task completion, "
         "asset name/description/tags/internal), even those the state records as applied: repairs changes "
         "made in the web app, which the API cannot read back.",
)


# What each command is for, in the order a newcomer meets them: the one list
# ``reconciler --help`` shows (a command missing here is listed after these,
# by click's own short help, so none is ever left out or shown twice).
COMMAND_SUMMARIES: dict[str, str] = {
    "validate": "check manifests (no token, no network)",
    "fmt": "rewrite manifests in one canonical layout, comments kept (--check for CI)",
    "plan": "show what differs from the live service",
    "apply": "make the service match the manifests",
    "demo": "validate, plan, apply and re-plan an example (company, gitops, onboarding, quickstart) or PATH "
            "on the embedded emulator",
    "schema": "print the JSON Schema of a manifest (for editors) or of a JSON plan",
    "import": "bind a manifest address to an existing workspace",
    "state": "list, show, move or forget what the state records; push or pull it",
    "force-unlock": "remove a lock left by a killed apply (by its lock ID)",
    "export": "write manifests from the live service (to adopt an existing setup)",
    "who": "where a person or a domain has access now, and why",
    "audit": "check every workspace of the company against the policy and the rules",
    "report": "the access review: access.csv, access.json and one HTML page",
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


@cli.command()
@manifest_argument
@max_file_size_option
@click.option("--strict", is_flag=True,
              help="Treat warnings (lint: redundant or risky grants; grants already expired) as errors.")
def validate(path: Path, max_file_mib: int, strict: bool) -> None:
    """Check the manifests in PATH (a file or directory) and report every problem with file:line.

    Needs no token and makes no network call. Warnings follow the summary; --strict makes them errors.
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
    """
    from reconciler.commands.fmt import fmt as fmt_command
    from reconciler.commands.fmt import render

    out, refusal = render(fmt_command(path, check=check), check=check, path=path)
    click.echo(out, nl=False)
    if refusal is not None:
        raise ConfigError(refusal)


@cli.command()
@manifest_argument
@connection_options
@state_option
@target_option
@max_removals_option
@allow_option
@reassert_option
@require_state_option
@max_file_size_option
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
@click.option("--detailed-exitcode", is_flag=True,
              help="Exit 0 when there are no changes, 1 on error, 2 when there are changes or resources "
                   "that need a person (an asset whose creation got no answer).")
def plan(path: Path, service: Service, state_path: Path | str | None, targets: tuple[str, ...],
         max_removals: int | None, allow: tuple[str, ...], reassert: bool, max_file_mib: int, fmt: str,
         out: Path | None, expiry_warning_days: int, show_unmanaged: bool, by_person: bool,
         detailed_exitcode: bool, require_state: bool) -> None:
    """Show what differs between the manifests in PATH and the live service."""
    from reconciler.commands.plan import parse_allow, render
    from reconciler.commands.plan import plan as plan_command

    try:
        result = plan_command(path, service=service, state_path=state_path, targets=targets,
                               max_removals=max_removals, out=out, reassert=reassert,
                               max_file_bytes=max_file_mib * 2**20, show_unmanaged=show_unmanaged,
                               allow=parse_allow(allow), expiry_warning_days=expiry_warning_days,
                               require_state=require_state)
    except PlanRefused as refused:
        # A refused plan is still shown, so the reviewer sees what was refused.
        _say(render(refused.plan, fmt=fmt, color=_color(), by_person=by_person), nl=False)  # type: ignore[arg-type]  # PlanRefused.plan is an object: errors.py imports nothing of plan/
        raise
    _say(render(result, fmt=fmt, color=_color(), by_person=by_person), nl=False)
    if out is not None:
        click.echo(_saved_plan_notice(out, path, targets, reassert), err=True)
    if detailed_exitcode and not result.settled:
        sys.exit(EXIT_CHANGES)


@cli.command()
@click.argument("subject", metavar="EMAIL|DOMAIN")
@manifest_argument
@connection_options
@state_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for people, json for machines.")
def who(subject: str, path: Path, service: Service, state_path: Path | str | None, fmt: str) -> None:
    """Where EMAIL (or everyone of DOMAIN) has access now, across every workspace of the company,
    each with its role and why: the manifest line in PATH, the team, the rule, or not managed.

    A person reached through a domain entry of their email's domain is listed too, said so.
    Reads the company once (one listing); never writes anything, not even the state.
    """
    from reconciler.commands.who import who as who_command

    _say(who_command(subject, path, service=service, state_path=state_path, fmt=fmt), nl=False, suggestions=False)


@cli.command()
@manifest_argument
@connection_options
@state_option
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json", "csv"]), default="text",
              show_default=True,
              help="text for people, markdown for an issue or a pull-request comment, json for machines, "
                   "csv for a spreadsheet (cells a spreadsheet would run as a formula start with ').")
def audit(path: Path, service: Service, state_path: Path | str | None, fmt: str) -> None:
    """Check every workspace of the company, managed or not, against the policy of the manifests in
    PATH (allowedDomains, maxRoleOutside, protectedOwners), and list what their rules would change.

    Exit 0 when all is clean, 2 when anything violates the policy or differs from the rules, 1 on
    errors. Reads the company once (one listing); never writes anything, not even the state.
    """
    from reconciler.commands.audit import audit as audit_command
    from reconciler.commands.audit import render

    report = audit_command(path, service=service, state_path=state_path)
    _say(render(report, fmt), nl=False, suggestions=False)
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
              help="An earlier report's access.json, or a state file: list the grants, revocations, "
                   "escalations and downgrades since then (on the page and in changes.csv).")
def report(path: Path, service: Service, state_path: Path | str | None, out_dir: Path, internal_domains: tuple[str, ...],
           since: Path | None) -> None:
    """Write the quarterly access review of the whole company to DIR: access.csv and access.json
    (one row per workspace and person or domain, with the role and how it is managed: the manifest
    line in PATH, the team, the rule, or not managed) and index.html, one self-contained page with
    the headline figures, pictures, and a person and a workspace view.

    Reads the company once (one listing, ceil(N/100) calls); never writes to the service or the state.
    With SOURCE_DATE_EPOCH set (seconds since 1970, UTC) the report is dated then instead of now.
    """
    from reconciler.commands.report import report as run
    from reconciler.commands.report import source_date

    _say(run(path, service=service, out=out_dir, state_path=state_path, internal_domains=internal_domains,
             since=since, now=source_date(os.environ)), nl=False, suggestions=False)


def _saved_plan_notice(out: Path, path: Path, targets: tuple[str, ...], reassert: bool) -> str:
    """Where ``plan --out`` saved the plan, and the command that applies exactly it
    (on stderr, so stdout stays the rendered plan, e.g. a PR comment): the same
    PATH, --target and --reassert, which apply --plan requires."""
    import shlex

    run = _INVOCATION or Invocation()
    flags = [*(w for t in targets for w in ("--target", t)), *(["--reassert"] if reassert else [])]
    words = ["reconciler", "apply", "--plan", str(out), str(path), *run.connection_words(), *run.state_words(),
             *flags]
    return (f"Saved the plan to {out} (a saved plan, not the --format json document: see the README).\n"
            f"To apply exactly this plan (refused if the manifests, the service or the state move first):\n"
            f"  {shlex.join(words)}")


@cli.command()
@click.argument("path", type=click.Path(path_type=Path), required=False, metavar="[PATH]")
@connection_options
@state_option
@target_option
@max_removals_option
@allow_option
@reassert_option
@require_state_option
@max_file_size_option
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
@lock_timeout_option
def apply(path: Path | None, service: Service, state_path: Path | str | None, targets: tuple[str, ...],
          max_removals: int | None, allow: tuple[str, ...], reassert: bool, max_file_mib: int, wait: bool,
          plan_file: Path | None, auto_approve: bool, audit_log: Path | None, require_state: bool,
          expect_digest: str | None, lock_timeout: float) -> None:
    """Make the live service match the manifests in PATH (default: the current directory), after
    showing the plan. With --plan, PATH is required and must be the manifests the plan was made
    from, and --target and --reassert must be the ones it was made with: the file decides nothing."""
    def confirm(text: str) -> bool:
        _say(text, nl=False)
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
    from reconciler.commands.plan import parse_allow, render

    # A bar on a terminal, one plain line per finished change otherwise (both on stderr).
    shown = progress_for(sys.stderr, lambda line: click.echo(line, err=True))
    with AuditLog(audit_log) if audit_log is not None else contextlib.nullcontext() as audit:
        try:
            outcome = apply_command(path, service=dataclasses.replace(service, audit=audit), state_path=state_path,
                                     targets=targets, max_removals=max_removals, plan_file=plan_file,
                                     confirm=confirm, color=_color(), progress=shown, reassert=reassert, wait=wait,
                                     allow=parse_allow(allow), require_state=require_state,
                                     expect_digest=expect_digest or None,
                                     max_file_bytes=max_file_mib * 2**20, lock_timeout=lock_timeout)
        except PlanRefused as refused:
            # Shown before the refusal, as plan does: the reviewer sees what was refused.
            _say(render(refused.plan, fmt="text", color=_color()), nl=False)  # type: ignore[arg-type]  # as above
            raise
        finally:
            shown.close()
    _say(outcome)


@cli.command()
@click.argument("path", type=click.Path(path_type=Path), required=False, metavar="[NAME|PATH]")
def demo(path: Path | None) -> None:
    """Validate, plan, apply and plan again PATH on the embedded emulator.

    NAME is one of the examples shipped with reconciler (company, gitops, onboarding, quickstart),
    found from any directory: 'reconciler demo company'. Without NAME or PATH: examples/quickstart
    when the current directory has it (a checkout of reconciler), else the shipped quickstart.
    Then someone changes access in the web app
    (straight on the emulator), and the plan shows that drift and the apply repairs it. Uses a fresh
    emulator and state in a temporary directory each time, so the demo always starts from the seed
    beside the manifest (seed.yaml) or the built-in demo company.

    examples/review (a directory with review-demo.yaml) runs a quarterly access review instead: a
    campaign over the company example, two reviewers' decisions, the plan and apply of the
    revocations, the evidence, and a last plan with no changes.
    """
    from reconciler.commands.demo import demo as run_demo

    run_demo(path=path, color=_color(), show_title=lambda title: click.echo(click.style(f"$ {title}", bold=True)),
             show=click.echo)


@cli.command()
@click.argument("kind", type=click.Choice(["manifest", "plan", "report"]), default="manifest", required=False,
                metavar="[manifest|plan|report]")
def schema(kind: str) -> None:
    """Print the JSON Schema of a manifest file ('schema manifest', the default), of the plan
    that 'plan --format json' writes ('schema plan'), or of the access.json of 'report' ('schema report').

    Generated from the models this version of reconciler checks against, so it always matches it;
    write it again after an upgrade. For completion and checking in an editor that uses
    yaml-language-server (VS Code's YAML extension, among others), write it beside the manifests:

    \b
      reconciler schema manifest > manifest.schema.json

    and make this the first line of each manifest:

    \b
      # yaml-language-server: $schema=manifest.schema.json
    """
    from reconciler.commands.schema import schema as schema_text

    click.echo(schema_text(kind="report" if kind == "report" else "plan" if kind == "plan" else "manifest"), nl=False)


@cli.command("export")
@connection_options
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), required=True, metavar="DIR",
              help="Directory to write the manifests to; created when missing, refused when it holds manifests.")
def export(service: Service, out_dir: Path) -> None:
    """Write manifests from the live service into DIR: one file per account, every workspace standalone.

    For adopting reconciler where everything was set up by hand: validate and plan DIR afterwards
    should report no changes. Group membership cannot be read from the API; write groups by hand.
    """
    from reconciler.commands.export import export as export_command

    click.echo(export_command(service=service, out_dir=out_dir), nl=False)


@cli.group()
def state() -> None:
    """Read, check and edit the state file; the service is never written to (verify reads it).

    The state file (default reconciler.state.json beside the manifests in PATH) records what the
    API cannot read back: the workspaces this tool created or adopted, group membership, the
    section, page and task values it wrote, and the access entries it manages.
    """


@state.command("list")
@manifest_argument
@state_option
def state_list(path: Path, state_path: Path | str | None) -> None:
    """List every address the state records, with its workspace id."""
    from reconciler.commands.state import state_list as list_state

    click.echo(list_state(path=path, state_path=state_path), nl=False)


@state.command("show")
@click.argument("address")
@manifest_argument
@state_option
def state_show(address: str, path: Path, state_path: Path | str | None) -> None:
    """Show everything the state records for ADDRESS, as JSON."""
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
    """
    from reconciler.commands.state import state_verify as verify_state

    text, ok = verify_state(path=path, state_path=state_path, service=service)
    _say(text, nl=False, suggestions=False)  # it quotes the service's names: nothing is completed
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
    would create TO afresh (a credit for a template member) and drop FROM. Refused when TO is already
    recorded, when FROM is not, and between an asset.* address and a workspace's. A manifest can say
    the same with a moved: list, which the plan carries out (Terraform's moved blocks).
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
    """
    from reconciler.commands.state import force_unlock as unlock

    click.echo(unlock(path=path, state_path=state_path, lock_id=lock_id), nl=False)


@cli.group()
def review() -> None:
    """Access review campaigns kept in git under PATH/reviews/NAME/: start one, follow it, close it,
    and write the evidence. The plan carries out the reviewers' revocations.
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
    """
    from reconciler.commands.review import start

    _say(start(name, path, service=service, due=due.date(), today=_today(), external=scope_external,
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
    """
    from reconciler.commands.review import render_status, status

    result = status(name, path, today=_today())
    _say(render_status(result, fmt), nl=False, suggestions=False)
    if not result.complete:
        sys.exit(EXIT_CHANGES)


@review.command("close")
@click.argument("name")
@manifest_argument
@state_option
def review_close(name: str, path: Path, state_path: Path | str | None) -> None:
    """Close the review NAME: remove the manifest lines its revoke decisions contradict (an explicit
    entry of the workspace's list; a team membership only where the item says removeFromTeam: true),
    keeping every other line and comment, and set closed: <today> in its campaign.yaml.

    Reads the files and the state only (no token, no network); commit the diff with the decisions.
    """
    from reconciler.commands.review import close

    _say(close(name, path, today=_today(), state_path=state_path), nl=False, suggestions=False)


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
    """
    from reconciler.commands.review import report

    _say(report(name, path, out=out_dir, today=_today(), state_path=state_path), nl=False, suggestions=False)


@review.command("page")
@click.argument("name")
@manifest_argument
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), required=True, metavar="DIR",
              help="Directory to write review.html to (created when missing).")
def review_page(name: str, path: Path, out_dir: Path) -> None:
    """Write review.html to DIR: one self-contained page (no server, no network) where a reviewer of
    NAME filters their items, marks keep or revoke with a reason, sees their progress, and downloads
    their decisions as the YAML file to commit.
    """
    from reconciler.commands.review import page

    _say(page(name, path, out=out_dir), nl=False, suggestions=False)


@cli.group()
def emulator() -> None:
    """The embedded service emulator."""


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
    """
    from reconciler.commands.emulator import serve_emulator

    serve_emulator(host=host, port=port, seed=seed, data=data, faults=faults, fault_seed=fault_seed,
                            time_scale=time_scale, announce=lambda line: click.echo(line, nl=True),
                            warn=lambda line: click.echo(line, err=True))


def _color() -> bool:
    # no-color.org: only a NO_COLOR that is set and not empty turns colour off.
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


EXIT_TERMINATED = 143


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised wherever the program is, so that ``with`` blocks
    unwind (the state lock is released) exactly as for Ctrl-C."""


def _say(text: str, *, nl: bool = True, suggestions: bool = True) -> None:
    """Write to stdout; once the reader has gone (``apply | head -3``), drop
    the rest quietly.  A closed pipe is the reader's choice, not a failure of
    the command: it must neither stop an apply halfway nor turn a successful
    one into exit 1.  stdout is pointed at /dev/null so the interpreter's own
    flush at exit does not fail on it either."""
    try:
        # Views of the company (who, audit) print service data and suggest no
        # command: a workspace named "'reconciler plan'" is shown as it is.
        click.echo(complete(text, _INVOCATION) if suggestions else text, nl=nl)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _raise_terminated(signum: int, frame: object) -> None:
    raise _Terminated()


def main(argv: list[str] | None = None) -> None:
    """Entry point: every error becomes one paragraph and a fixed exit code.

    SIGTERM is handled like Ctrl-C for the duration of the call (exit 143);
    the previous handler is restored afterwards, for callers in-process.
    """
    import signal

    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread, where Python cannot handle signals
        previous = _raise_terminated
    try:
        _run(argv)
    finally:
        if previous is not _raise_terminated:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _interrupted(cause: BaseException | None) -> None:
    terminated = isinstance(cause, _Terminated)
    click.echo("Terminated (SIGTERM)." if terminated else "Interrupted.", err=True)
    sys.exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED)


# click 8.2+ reports a group given no command as a usage error; older click printed the help itself.
_NO_COMMAND_GIVEN: tuple[type[click.UsageError], ...] = tuple(
    getattr(click.exceptions, name) for name in ("NoArgsIsHelpError",) if hasattr(click.exceptions, name)
)


def _run(argv: list[str] | None) -> None:
    """The command line, each outcome mapped to its exit code."""
    try:
        cli.main(args=argv, prog_name="reconciler", standalone_mode=False)
    except click.exceptions.Abort as exc:
        _interrupted(exc.__cause__)  # click turns KeyboardInterrupt into Abort, keeping it as the cause
    except KeyboardInterrupt as exc:
        _interrupted(exc)
    except _NO_COMMAND_GIVEN as exc:
        # `reconciler` alone (or `reconciler state`): the help on stdout and exit 0, as click did before 8.2.
        click.echo(exc.ctx.get_help() if exc.ctx is not None else exc.format_message())
    except click.ClickException as exc:
        # Usage errors exit 1, not click's 2: 2 means "changes" with --detailed-exitcode.
        click.echo(f"Error: {exc.format_message()}", err=True)
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            click.echo(f"Run '{exc.ctx.command_path} --help' for usage.", err=True)
        sys.exit(EXIT_ERROR)
    except ReconcilerError as exc:
        # Messages quote manifests and answers: nothing in them may drive the terminal.
        click.echo(f"Error: {complete(printable(str(exc), multiline=True), _INVOCATION)}", err=True)
        sys.exit(EXIT_ERROR)
    except SystemExit:
        raise
    except Exception:  # noqa: BLE001 - the last line of defence: a bug, not bad input
        click.echo(f"Internal error in reconciler (a bug). Details were written to {_crash_log()}.", err=True)
        sys.exit(EXIT_INTERNAL)


def _crash_log() -> Path:
    """The traceback in a file of its own (two crashes never overwrite each
    other's), readable by this user only."""
    import tempfile
    import traceback

    fd, name = tempfile.mkstemp(prefix="reconciler-crash-", suffix=".log")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(traceback.format_exc())
    return Path(name)
