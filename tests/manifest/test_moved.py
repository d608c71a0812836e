"""``moved:`` in the manifests: its shape, its checks (each at the entry's file:line), its Desired nodes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reconciler.manifest import SourceLocation, load_desired
from reconciler.manifest.desired import DesiredMove

Write = Callable[..., Path]
Problems = Callable[[Path], list[str]]

DECLARED = """
    version: 1
    groups:
      customer-inc:
        homepage: ws_home
        workspaces:
          kick-off: {template: tpl_kickoff, name: Kickoff}
    workspaces:
      portal: {id: ws_portal}
    moved:
"""


def _with(write: Write, *entries: str) -> Path:
    return write(DECLARED + "".join(f"      - {e}\n" for e in entries))


def test_moved_entries_become_located_desired_moves(write_manifest: Write) -> None:
    path = _with(write_manifest, "{from: workspace.partner-portal, to: workspace.portal}",
                 "{from: group.customer-inc.workspace.kickoff, to: group.customer-inc.workspace.kick-off}")
    assert load_desired(path).moves == (
        DesiredMove(source="workspace.partner-portal", destination="workspace.portal",
                    location=SourceLocation(str(path), 10)),
        DesiredMove(source="group.customer-inc.workspace.kickoff", destination="group.customer-inc.workspace.kick-off",
                    location=SourceLocation(str(path), 11)),
    )


def test_a_move_to_an_address_no_manifest_declares_is_refused(write_manifest: Write, problems_of: Problems) -> None:
    path = _with(write_manifest, "{from: workspace.portal-old, to: workspace.portl}")
    assert problems_of(path) == [
        f"{path}:10: moved: workspace.portal-old to workspace.portl: no manifest declares workspace.portl; a move's "
        "'to' is the address the manifests use now (declare it, or correct the entry)"]


def test_a_move_from_an_address_still_declared_is_refused(write_manifest: Write, problems_of: Problems) -> None:
    path = _with(write_manifest, "{from: workspace.portal, to: group.customer-inc.workspace.kick-off}")
    assert problems_of(path) == [
        f"{path}:10: moved: workspace.portal to group.customer-inc.workspace.kick-off: workspace.portal is still "
        f"declared at {path}:8; a move's 'from' is the address the manifests no longer use (remove or rename that "
        "entry)"]


def test_one_address_moved_twice_is_refused_at_the_second(write_manifest: Write, problems_of: Problems) -> None:
    path = _with(write_manifest, "{from: workspace.old, to: workspace.portal}",
                 "{from: workspace.old, to: group.customer-inc.workspace.kick-off}")
    assert problems_of(path) == [
        f"{path}:11: moved: workspace.old to group.customer-inc.workspace.kick-off: workspace.old already moves at "
        f"{path}:10; an address moves to one place only"]


def test_two_addresses_moved_to_one_are_refused_at_the_second(write_manifest: Write, problems_of: Problems) -> None:
    path = _with(write_manifest, "{from: workspace.old, to: workspace.portal}",
                 "{from: workspace.older, to: workspace.portal}")
    assert problems_of(path) == [
        f"{path}:11: moved: workspace.older to workspace.portal: workspace.portal already receives the move at "
        f"{path}:10; keep one of the two"]


def test_a_move_to_itself_is_refused(write_manifest: Write, problems_of: Problems) -> None:
    path = _with(write_manifest, "{from: workspace.portal, to: workspace.portal}")
    assert problems_of(path) == [
        f"{path}:10: moved: workspace.portal to workspace.portal: an address cannot move to itself; remove this entry"]


def test_an_asset_cannot_move_to_a_workspace_address(write_manifest: Write, problems_of: Problems) -> None:
    path = _with(write_manifest, "{from: asset.pricing, to: workspace.portal}")
    assert problems_of(path) == [
        f"{path}:10: moved: asset.pricing to workspace.portal: an asset.* address holds an asset and any other "
        "address a workspace, so one cannot become the other"]


def test_a_moved_value_that_is_not_an_address_is_refused_with_the_forms(write_manifest: Write,
                                                                         problems_of: Problems) -> None:
    path = _with(write_manifest, "{from: portal, to: workspace.portal}")
    assert problems_of(path) == [
        f"{path}:10: moved[0].from: 'portal' is not an address: write workspace.KEY, group.KEY, "
        "group.KEY.workspace.KEY or asset.KEY, as plan and 'reconciler state list' show them"]


def test_a_moved_entry_without_from_is_refused(write_manifest: Write, problems_of: Problems) -> None:
    path = _with(write_manifest, "{to: workspace.portal}")
    assert problems_of(path) == [f"{path}:10: moved[0]: missing required key 'from'"]
