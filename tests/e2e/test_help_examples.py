"""Every command's --help ends with examples a person can copy: each names a real command (and,
for a group, a real subcommand) and only options that command has."""

from __future__ import annotations

import shlex

import click
import pytest

from reconciler.cli import cli
from tests.e2e.conftest import run_cli


def _command_paths(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in group.commands.items():
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found += _command_paths(command, (*prefix, name))
    return found


COMMANDS = _command_paths(cli)


def examples(help_text: str) -> list[str]:
    """The lines of the help's Examples: block."""
    lines = help_text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "Examples:")
    block = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        block.append(line.strip())
    return block


def resolve(words: list[str]) -> tuple[click.Command, list[str]]:
    """The command an example's words name (``reconciler state mv ...``), and the words after it."""
    assert words[0] == "reconciler", words
    command: click.Command = cli
    rest = words[1:]
    while isinstance(command, click.Group):
        assert rest and rest[0] in command.commands, f"{rest[:1]} is not a command of {command.name}"
        command, rest = command.commands[rest[0]], rest[1:]
    return command, rest


def test_every_command_is_found() -> None:
    assert {("validate",), ("plan",), ("state", "mv"), ("review", "start"), ("emulator", "serve")} <= set(COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) for p in COMMANDS])
def test_help_lists_examples_of_real_commands(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli([*path, "--help"], capsys)
    assert code == 0, err
    assert "Examples:" in out, f"reconciler {' '.join(path)} --help has no Examples: block"
    lines = examples(out)
    assert 1 <= len(lines) <= 3, lines
    for line in lines:
        words = shlex.split(line)
        if ">" in words:  # a redirection: the shell's, not the command's
            words = words[: words.index(">")]
        command, rest = resolve(words)
        options = {name for param in command.params for name in (*param.opts, *param.secondary_opts)}
        unknown = [w for w in rest if w.startswith("--") and w not in options]
        assert not unknown, f"{line}: {unknown} are not options of {command.name}"
