"""What the commands share: the option groups (one decorator each, so a flag
is spelled and explained once), the exit codes, how output is written, and
how this run was pointed (for the commands that messages suggest)."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from reconciler.errors import StateError
from reconciler.suggest import Invocation, complete
from reconciler.text import printable

if TYPE_CHECKING:
    from reconciler.service import Service

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_ERROR, EXIT_CHANGES, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
# 128 + 15, as a shell reports SIGTERM.
EXIT_TERMINATED = 143


Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


# The connection flags that directory pull shares with the commands that talk to the Workspace service: each
# spelled, typed and explained here once; ``whose`` names the service in the help ("the service", "the SCIM
# service").
def page_size_option(items: str) -> Decorator:
    """``--page-size N``: how many ``items`` (e.g. "Items") each listing call asks for."""
    return click.option("--page-size", type=click.IntRange(1, 1000), default=100, show_default=True,
                        help=f"{items} asked for per page when listing.")


def timeout_option(whose: str, *, slow_notice: bool = False) -> Decorator:
    """``--timeout SECONDS``: how long each answer of ``whose`` may take in all; ``slow_notice`` when the
    command says so after 5 s of silence (the Workspace client's requester does, the SCIM pull does not)."""
    notice = " (a notice is printed after 5 s of silence)" if slow_notice else ""
    return click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=30.0, show_default=True,
                        metavar="SECONDS", help=f"How long to wait for each answer of {whose}{notice}.")


def connect_timeout_option(whose: str | None = None) -> Decorator:
    """``--connect-timeout SECONDS``; ``whose`` None for the commands whose only service goes unnamed."""
    to = f" to {whose}" if whose else ""
    return click.option("--connect-timeout", type=click.FloatRange(min=0, min_open=True), default=10.0,
                        show_default=True, metavar="SECONDS", help=f"How long to wait for a connection{to}.")


def ca_bundle_option(whose: str) -> Decorator:
    """``--ca-bundle FILE``: the certificates ``whose`` TLS certificate is verified with, instead of certifi's."""
    return click.option("--ca-bundle", type=click.Path(path_type=Path, dir_okay=False, exists=True), metavar="FILE",
                        help=f"Certificates to verify {whose}'s TLS certificate with (verification cannot be "
                             "turned off).")


# --directory of the commands that read the manifests' people (plan, apply, who, audit, report): one spelling.
directory_option = click.option(
    "--directory", "directory", type=click.Choice(["committed", "live"]), default="committed", show_default=True,
    help="Where the directory's leavers and groups come from: committed (the manifests' directory.yaml) or "
         "live (the directory kept with --state, as the identity provider pushed it). live never grants: "
         "its leavers and removals from groups apply, additions wait for 'reconciler directory sync'.")


# The flags every command that talks to the service takes, in the order --help lists them.
_CONNECTION_FLAGS: tuple[Decorator, ...] = (
    click.option("--base-url", envvar="RECONCILER_BASE_URL", metavar="URL",
                 help="Service address, with or without /v1 (env RECONCILER_BASE_URL). "
                      "Plain http:// only for loopback addresses."),
    click.option("--token-file", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
                 help="Read the token from FILE instead of RECONCILER_TOKEN. Never pass a token as an argument."),
    click.option("--emulator", "emulator_file", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
                 help="Run against the embedded emulator, its data kept in FILE (created from --seed, "
                      "or the built-in demo company, when missing). No account, no network."),
    click.option("--seed", "emulator_seed", type=click.Path(path_type=Path, dir_okay=False, exists=True),
                 metavar="SEED", help="Emulator seed YAML used when the --emulator FILE does not exist yet "
                                      "(ignored, with a warning, once it does: delete FILE to start afresh)."),
    page_size_option("Items"),
    click.option("--retries", type=click.IntRange(0, 10), default=3, show_default=True,
                 help="How many times a call is sent again after a 429 (after the wait the service "
                      "asks for) or, when repeating it is safe (reads, PATCHes, access-list "
                      "replacement), after a 5xx or a lost connection, with growing waits. "
                      "Creations are never repeated blindly."),
    click.option("--rate-limit", "rate_limits", multiple=True, metavar="CLASS=N",
                 help="Requests per minute this tool may use for a limit class (default, "
                      "workspace_creation, file_retrieval); lower it when other tools share the quota."),
    timeout_option("the service", slow_notice=True),
    connect_timeout_option(),
    click.option("--debug", is_flag=True,
                 help="Print every request and answer (method, address, status, rate-limit headers) on "
                      "stderr; the token and presigned upload signatures are never printed."),
    ca_bundle_option("the service"),
)


def connection_options(func: F) -> F:
    """The flags every command that talks to the service takes, handed to
    the command as one ``service`` (``reconciler.service.Service``)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _remember_invocation(kwargs)
        kwargs["service"] = _service_from(kwargs)
        return func(*args, **kwargs)

    decorated: Callable[..., Any] = wrapper
    for flag in reversed(_CONNECTION_FLAGS):  # a decorator list applies bottom-up
        decorated = flag(decorated)
    return decorated  # type: ignore[return-value]  # functools.wraps keeps the callable's signature; mypy sees Any


def _service_from(kwargs: dict[str, Any]) -> Service:
    """The ``Service`` the connection flags describe; the flags are taken out of ``kwargs``."""
    from reconciler.service import Service, parse_rate_limits, warn_if_seed_ignored

    base_url = kwargs.pop("base_url")
    if kwargs["emulator_file"] is not None and click.get_current_context().get_parameter_source(
            "base_url") is click.core.ParameterSource.ENVIRONMENT:
        base_url = None  # --emulator on the command line beats RECONCILER_BASE_URL from the environment
    service = Service(
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
    warn_if_seed_ignored(service)
    return service


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
                             token_file=params.get("token_file"), state_path=params.get("state_path"),
                             directory_live=params.get("directory") == "live")


def invocation() -> Invocation | None:
    """How this run was pointed, once a command that talks to the service has parsed its flags."""
    return _INVOCATION



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
    help="Refuse the plan if it removes more than N access entries, each a person or domain losing all access "
         "to one workspace (an entry of a list five workspaces hold is five).",
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


def color() -> bool:
    # no-color.org: only a NO_COLOR that is set and not empty turns colour off.
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def say(text: str, *, nl: bool = True, suggestions: bool = True) -> None:
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


def plan_options(func: F) -> F:
    """What plan and apply both take, beyond the connection: where the state is, what to
    plan (--target, --reassert), the refusals (--max-removals, --allow, --require-state) and
    the asset files' size limit; in the order --help lists them."""
    for option in reversed((state_option, target_option, max_removals_option, allow_option, reassert_option,
                            require_state_option, max_file_size_option)):
        func = option(func)
    return func
