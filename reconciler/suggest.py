"""Commands suggested in messages, completed so they run as printed.

Messages deep in plan and apply know the address and the id to suggest
(``'reconciler import group.x.workspace.y ID'``) but not how this run was
invoked: the manifests' PATH, ``--emulator FILE``, ``--state FILE``.  A
suggestion that leaves those out sends the user to another state file or to
the real service.  So messages write the canonical form, and the command line
completes every quoted ``'reconciler …'`` in what it prints with the PATH and
the options of the run (:func:`complete`).  Never the token: only
``--token-file`` is a word, and the token is never in one.

Single quotes mean "run this": a command named for another reason (the
holder of a lock, ``"reconciler apply"``) is written in double quotes.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Invocation:
    """How the running command was pointed at its manifests, service and state."""

    path: Path | None = None  # the manifests' PATH as given (None: the default, the current directory)
    emulator_file: Path | None = None
    base_url: str | None = None  # only when given on the command line (the environment carries it anyway)
    token_file: Path | None = None
    state_path: Path | str | None = None
    # plan/apply --directory live: a plan or apply suggested again must read the same directory.
    directory_live: bool = False

    def connection_words(self) -> list[str]:
        words: list[str] = []
        if self.emulator_file is not None:
            words += ["--emulator", str(self.emulator_file)]
        if self.base_url:
            words += ["--base-url", self.base_url]
        if self.token_file is not None:
            words += ["--token-file", str(self.token_file)]
        return words

    def state_words(self) -> list[str]:
        return ["--state", str(self.state_path)] if self.state_path is not None else []

    def path_words(self) -> list[str]:
        return [str(self.path)] if self.path is not None and self.path != Path(".") else []


# Which words each suggested command needs, besides its own arguments: the
# manifests (plan, apply, import, state), the service (plan, apply, import),
# the state (all of them).
_NEEDS_SERVICE = {"plan", "apply", "import"}
_QUOTED = re.compile(r"'reconciler (plan|apply|import|state rm|state show|state list)((?: [^'\s]+)*)'")
_CONNECTION_FLAGS = {"--emulator", "--base-url", "--token-file"}


def complete(text: str, invocation: Invocation | None) -> str:
    """``text`` with every quoted suggestion completed for ``invocation``."""
    if invocation is None or "'reconciler " not in text:
        return text

    def completed(match: re.Match[str]) -> str:
        command, rest = match.group(1), shlex.split(match.group(2))
        # A suggestion whose author already gave the state or the service keeps them.
        state = [] if "--state" in rest else invocation.state_words()
        connection = [] if _CONNECTION_FLAGS & set(rest) else invocation.connection_words()
        if command in ("plan", "apply"):
            if rest[-1:] == ["--out"]:
                rest.append("plan.json")
            directory = ["--directory", "live"] if invocation.directory_live and "--directory" not in rest else []
            words = [*invocation.path_words(), *connection, *state, *directory, *rest]
        else:
            words = [*rest, *invocation.path_words(), *state, *(connection if command in _NEEDS_SERVICE else [])]
        line = shlex.join(["reconciler", *command.split(), *words])
        # A word the shell needs quoted ('my project') would end a single-quoted suggestion early.
        return f'"{line}"' if "'" in line else f"'{line}'"

    return _QUOTED.sub(completed, text)
