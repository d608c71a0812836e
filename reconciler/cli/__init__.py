"""The command line: parse, call one function, render, exit with a fixed code.

Exit codes: 0 success, 1 error (any ReconcilerError, bad arguments; also an
apply that did everything else while resources need a person), 2 changes or
resources that need a person (only with ``plan --detailed-exitcode``), 130 interrupted
(Ctrl-C, SIGINT), 143 terminated (SIGTERM, what CI sends when a job is
cancelled: handled like Ctrl-C, so the state lock is released and the state
keeps every change recorded so far; 128 + 15, as a shell reports it),
3 an internal error (a bug: the message says where the details went).

The package keeps parsing only: ``options`` holds the option groups every
command shares (one decorator each), ``group`` the top-level group, one
module per family of commands registers them on it, and ``main`` maps every
outcome to its exit code.  Each command calls one function of
``reconciler.commands`` and renders what it returns.

Start-up: `--help` and `validate` must not pay for httpx, pydantic's state
models, the API client or the emulator, so the commands, the state and the
service are imported by the commands that use them (bench/README.md); so are
tempfile and traceback, which only a crash needs.
"""

from __future__ import annotations

# Importing each family registers its commands on ``cli``.
from reconciler.cli import company, emulator_commands, manifests, plan_apply, review_commands, state_commands
from reconciler.cli import directory_commands
from reconciler.cli.group import COMMAND_SUMMARIES, cli
from reconciler.cli.main import console_main, main
from reconciler.cli.options import (
    EXIT_CHANGES, EXIT_ERROR, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, DurationType,
    StateAddressType,
)

__all__ = ["COMMAND_SUMMARIES", "EXIT_CHANGES", "EXIT_ERROR", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_OK",
           "EXIT_TERMINATED", "DurationType", "StateAddressType", "cli", "company", "directory_commands",
           "console_main", "emulator_commands", "main",
           "manifests", "plan_apply", "review_commands", "state_commands"]
