"""One way to read a state: every command outside reconciler/state goes
through the backend (``reconciler.state.backend``); the file-only loader
(``load_state``) is the file backend's own."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "reconciler"


def _names_imported(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names


def test_no_module_outside_the_state_package_reads_a_state_file_itself() -> None:
    readers = sorted(str(path.relative_to(PACKAGE.parent)) for path in PACKAGE.rglob("*.py")
                     if PACKAGE / "state" not in path.parents
                     and {"load_state", "FileBackend"} & _names_imported(ast.parse(path.read_text(encoding="utf-8"))))
    assert readers == []

