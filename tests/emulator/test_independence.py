"""The emulator is a second, independent reading of the service description."""

from __future__ import annotations

import ast
from pathlib import Path

import reconciler.emulator

FORBIDDEN = ("reconciler.api", "reconciler.plan", "reconciler.apply")


def test_emulator_imports_nothing_from_the_client_planner_or_apply():
    package = Path(reconciler.emulator.__file__).parent
    offenders = []
    for module in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{module.name}: {n}" for n in names if n.startswith(FORBIDDEN)]
    assert offenders == []
