"""Warnings for what the manifests declare but this version does not plan yet.

Group members, sections, pages, tasks and assets are validated (so a
manifest written today stays valid), but planning them is later work. A
silent skip would let a reviewer believe they are in force; each one is
named, with its location, in every plan instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from reconciler.manifest import Desired, DesiredMember, DesiredWorkspace, TaskSetting, VisibilitySetting


def unmanaged_warnings(desired: Desired, targeted: Callable[[str], bool]) -> tuple[str, ...]:
    """One warning per declared part that is not planned, in manifest order."""
    return tuple(_warnings(desired, targeted))


def _warnings(desired: Desired, targeted: Callable[[str], bool]) -> Iterator[str]:
    for group in desired.groups:
        for member in group.members:
            if targeted(member.address):
                yield (f"{member.location}: {member.address}: group members are not planned yet; "
                       "the workspace is neither created nor connected.")
                yield from _plan_item_warning(member.address, member)
    for workspace in desired.workspaces:
        if targeted(workspace.address):
            yield from _plan_item_warning(workspace.address, workspace)
    for asset in desired.assets:
        if targeted(asset.address):
            yield f"{asset.location}: {asset.address}: assets are not planned yet; nothing is uploaded."


def _plan_item_warning(address: str, node: DesiredMember | DesiredWorkspace) -> Iterator[str]:
    declared = {"sections": node.sections, "pages": node.pages, "tasks": node.tasks}
    parts = {name: items for name, items in declared.items() if items}
    if parts:
        first: Sequence[VisibilitySetting | TaskSetting] = next(iter(parts.values()))
        yield (f"{first[0].location}: {address}: {', '.join(parts)} are not planned yet; "
               "their visibility and task settings are left as they are in the service.")
