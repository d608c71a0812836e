"""Checks of ``moved:`` entries, which read all the manifests at once.

An entry ``{from: workspace.a, to: workspace.b}`` says an address was renamed:
the plan moves what the state knows of ``from`` to ``to`` without any call
(Terraform's ``moved`` block).  So ``to`` must be declared by a manifest and
``from`` must not be any more; an address moves to one place, and one place
receives one address; a workspace's address never becomes an asset's.
Each problem is ``file:line: message`` at the entry.
"""

from __future__ import annotations

from reconciler.addresses import is_asset
from reconciler.manifest.desired import Desired
from reconciler.manifest.location import SourceLocation


def moved_problems(desired: Desired) -> list[str]:
    """Every problem of the manifests' ``moved:`` entries, sorted by place."""
    if not desired.moves:
        return []
    declared = declared_addresses(desired)
    problems: list[tuple[SourceLocation, str]] = []
    sources: dict[str, SourceLocation] = {}
    destinations: dict[str, SourceLocation] = {}
    for move in desired.moves:
        here, source, destination = move.location, move.source, move.destination
        problem = _problem(source, destination, declared, sources, destinations)
        if problem is not None:
            problems.append((here, f"moved: {source} to {destination}: {problem}"))
        sources.setdefault(source, here)
        destinations.setdefault(destination, here)
    return [f"{where}: {text}" for where, text in sorted(problems)]


def _problem(source: str, destination: str, declared: dict[str, SourceLocation],
             sources: dict[str, SourceLocation], destinations: dict[str, SourceLocation]) -> str | None:
    if source == destination:
        return "an address cannot move to itself; remove this entry"
    if is_asset(source) != is_asset(destination):
        return "an asset.* address holds an asset and any other address a workspace, so one cannot become the other"
    if destination not in declared:
        return (f"no manifest declares {destination}; a move's 'to' is the address the manifests use now "
                "(declare it, or correct the entry)")
    if source in declared:
        return (f"{source} is still declared at {declared[source]}; a move's 'from' is the address the "
                "manifests no longer use (remove or rename that entry)")
    if source in sources:
        return f"{source} already moves at {sources[source]}; an address moves to one place only"
    if destination in destinations:
        return f"{destination} already receives the move at {destinations[destination]}; keep one of the two"
    return None


def declared_addresses(desired: Desired) -> dict[str, SourceLocation]:
    """Every address a manifest declares, and where."""
    found: dict[str, SourceLocation] = {}
    for group in desired.groups:
        found[group.address] = group.location
        found.update((m.address, m.location) for m in group.members)
    found.update((w.address, w.location) for w in desired.workspaces)
    found.update((a.address, a.location) for a in desired.assets)
    return found
