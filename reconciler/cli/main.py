"""Entry point: every outcome of a command mapped to one paragraph and a fixed exit code."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from reconciler.cli.group import cli
from reconciler.cli.options import EXIT_ERROR, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_TERMINATED, invocation
from reconciler.errors import ReconcilerError
from reconciler.suggest import complete
from reconciler.text import printable


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised wherever the program is, so that ``with`` blocks
    unwind (the state lock is released) exactly as for Ctrl-C."""


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


def console_main() -> None:
    """The ``reconciler`` program (the console script, ``python -m reconciler``): one command, then exit.
    What its big builders make (manifests, listing, plan) lives to the end, so the cyclic collector is told
    never to walk it again (``reconciler.gcpause.freeze_after_pauses``). Tests call ``main`` in-process,
    where nothing is frozen."""
    from reconciler.gcpause import freeze_after_pauses

    freeze_after_pauses()
    main()


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
        click.echo(f"Error: {complete(printable(str(exc), multiline=True), invocation())}", err=True)
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
