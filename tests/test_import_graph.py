"""The map of packages holds: no import circle, and no arrow the design forbids.

Every import of every module of ``reconciler`` counts, wherever it is
written: at the top, inside ``if TYPE_CHECKING:``, inside a function body (the
lazy imports that keep start-up fast are still dependencies).  ``ALLOWED`` is
the one table of arrows between the packages (and top-level modules);
docs/design.md opens with the same table, and a test below keeps the two
equal.  A new package or top-level module fails here until it has a row.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "reconciler"
DESIGN = ROOT / "docs" / "design.md"

# What each part of reconciler may import from the others (besides itself).
# A part is a package (reconciler/plan/) or a top-level module (reconciler/text.py);
# "reconciler" is the package's own __init__ (the version).
ALLOWED: dict[str, frozenset[str]] = {
    "__main__": frozenset({"cli"}),
    "cli": frozenset({"commands", "service", "apply", "suggest", "gcpause", "text", "errors", "reconciler"}),
    "commands": frozenset({"manifest", "plan", "state", "service", "api", "apply", "live", "export", "emulator",
                           "company", "report", "review", "directory", "tokens", "owned_files", "addresses", "clock", "text",
                           "errors"}),
    "directory": frozenset({"manifest", "state", "api", "serving", "owned_files", "clock", "text", "errors"}),
    "review": frozenset({"manifest", "company", "report", "state", "models", "domains", "text", "errors"}),
    "report": frozenset({"company", "vocabulary", "owned_files", "gcpause", "models", "domains", "text",
                         "errors"}),
    "company": frozenset({"manifest", "plan", "state", "service", "api", "live", "models", "text", "errors"}),
    "apply": frozenset({"plan", "state", "api", "live", "owned_files", "addresses", "text", "errors"}),
    "service": frozenset({"api", "emulator", "apply", "tokens", "errors"}),
    "export": frozenset({"api", "live", "manifest", "text", "errors"}),
    "live": frozenset({"api", "vocabulary", "gcpause"}),
    "plan": frozenset({"manifest", "state", "live", "vocabulary", "gcpause", "models", "domains", "addresses", "text",
                       "errors"}),
    "manifest": frozenset({"vocabulary", "gcpause", "domains", "addresses", "text", "errors"}),
    "state": frozenset({"owned_files", "text", "errors"}),
    "api": frozenset({"vocabulary", "clock", "text", "errors", "reconciler"}),
    "emulator": frozenset({"vocabulary", "clock", "gcpause", "serving", "text", "errors"}),
    "serving": frozenset({"errors"}),
    "tokens": frozenset({"errors"}),
    "owned_files": frozenset({"errors"}),
    "errors": frozenset({"text"}),
    "suggest": frozenset(),
    "text": frozenset(),
    "clock": frozenset(),
    "gcpause": frozenset(),
    "vocabulary": frozenset(),
    "models": frozenset(),
    "domains": frozenset(),
    "addresses": frozenset(),
    "reconciler": frozenset(),
}

# Libraries only some parts may import.  click: the command line is cli's alone.
ONLY_FROM: dict[str, frozenset[str]] = {"click": frozenset({"cli"})}
# The network: manifest/ reads files (validate needs no network), plan/ is pure.
NETWORK = ("httpx", "socket", "ssl", "urllib.request", "http.client", "http.server", "starlette", "uvicorn",
           "requests", "respx")
NO_NETWORK = frozenset({"manifest", "plan"})


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its __init__)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """Each module ``name`` imports (a dotted name; a submodule when a
    ``from`` import names one), with the line, from anywhere in the file."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if is_package else name.split(".")[:-1]
                package = package[:len(package) - node.level + 1]
                base = ".".join(package + ([base] if base else []))
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                yield (submodule if submodule in known else base), node.lineno


def part(module: str) -> str:
    """The part of reconciler a module belongs to (see ``ALLOWED``)."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else pieces[0]


def graph() -> dict[str, dict[str, int]]:
    """module -> {imported reconciler module: first line}."""
    known = modules()
    edges: dict[str, dict[str, int]] = {}
    for name, path in known.items():
        edges[name] = {}
        for target, line in imports(name, path, known):
            if target.split(".")[0] == "reconciler" and target != name:
                edges[name].setdefault(_owning_module(target, known), line)
    return edges


def _owning_module(target: str, known: dict[str, Path]) -> str:
    """``target`` itself, or the nearest enclosing module that exists
    (``import reconciler.plan.model.Plan`` is not a thing, but be safe)."""
    while target not in known and "." in target:
        target = target.rsplit(".", 1)[0]
    return target


def find_cycle(edges: dict[str, dict[str, int]]) -> list[str] | None:
    """One import circle, as the modules along it (first repeated last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(edges.get(module, {})):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found is not None:
                    return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(edges):
        if module not in state:
            found = visit(module)
            if found is not None:
                return found
    return None


def _said(cycle: list[str], edges: dict[str, dict[str, int]]) -> str:
    return " -> ".join(f"{a} (line {edges[a][b]})" for a, b in zip(cycle, cycle[1:], strict=False)) + f" -> {cycle[-1]}"


def test_no_module_imports_itself_through_others() -> None:
    edges = graph()
    cycle = find_cycle(edges)
    assert cycle is None, f"import circle: {_said(cycle, edges)}"


def test_every_part_of_the_package_has_a_row_in_the_table() -> None:
    parts = {part(name) for name in modules()}
    assert sorted(parts - set(ALLOWED)) == []


def test_no_part_imports_another_the_table_does_not_allow() -> None:
    edges = graph()
    forbidden = sorted(
        f"{source} (line {line}) imports {target}: {part(source)}/ may not import {part(target)}/"
        for source, targets in edges.items() for target, line in targets.items()
        if part(source) != part(target) and part(target) not in ALLOWED.get(part(source), frozenset())
    )
    assert forbidden == []


def test_no_row_allows_a_part_it_never_imports() -> None:
    """The table says what each part needs, not what it might: an arrow no
    import uses is taken out, so a new dependency is a decision, seen here."""
    used: dict[str, set[str]] = {}
    for source, targets in graph().items():
        used.setdefault(part(source), set()).update(part(t) for t in targets if part(t) != part(source))
    unused = sorted(f"{p}/ never imports {q}/" for p, allowed in ALLOWED.items()
                    for q in allowed - used.get(p, set()))
    assert unused == []


def _libraries() -> Iterator[tuple[str, int, str]]:
    known = modules()
    for name, path in known.items():
        for target, line in imports(name, path, known):
            if target.split(".")[0] != "reconciler":
                yield name, line, target


def test_only_the_cli_imports_click() -> None:
    found = sorted(f"{name} (line {line}) imports {target}" for name, line, target in _libraries()
                   if target.split(".")[0] in ONLY_FROM and part(name) not in ONLY_FROM[target.split(".")[0]])
    assert found == []


def test_manifest_and_plan_import_nothing_of_the_network() -> None:
    found = sorted(f"{name} (line {line}) imports {target}" for name, line, target in _libraries()
                   if part(name) in NO_NETWORK and any(target == n or target.startswith(n + ".") for n in NETWORK))
    assert found == []


def test_the_checker_sees_a_circle_and_names_it() -> None:
    edges = {"reconciler.a": {"reconciler.b": 3}, "reconciler.b": {"reconciler.c": 5},
             "reconciler.c": {"reconciler.a": 7}}
    cycle = find_cycle(edges)
    assert cycle == ["reconciler.a", "reconciler.b", "reconciler.c", "reconciler.a"]
    assert _said(cycle, edges) == ("reconciler.a (line 3) -> reconciler.b (line 5) -> reconciler.c (line 7) "
                                   "-> reconciler.a")


def test_the_checker_counts_imports_under_type_checking_and_in_functions(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from reconciler.plan import Plan\n"
                      "def f():\n    import reconciler.api.client\n", encoding="utf-8")
    found = {target for target, _ in imports("reconciler.mod", source, {})}
    assert {"reconciler.plan", "reconciler.api.client"} <= found


def _design_table() -> dict[str, frozenset[str]]:
    """The table of docs/design.md's map: | part | may import |."""
    rows: dict[str, frozenset[str]] = {}
    for line in DESIGN.read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(r"\|\s*`([\w_]+)/?`\s*\|\s*(.*?)\s*\|(?:.*\|)?", line.strip())
        if match:
            allowed = re.findall(r"`([\w_]+)/?`", match.group(2))
            rows[match.group(1)] = frozenset(allowed)
    return rows


def test_the_design_document_shows_the_same_table() -> None:
    assert _design_table() == ALLOWED
