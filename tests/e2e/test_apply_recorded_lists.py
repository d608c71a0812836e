"""What apply records of each list it manages: the entries as applied, each
with the date (UTC, on the client's clock) it was first managed, kept across
later applies; and, for an address the manifest moves to another workspace,
the new workspace, managed from the day of the move.

A two-workspace company on the in-process emulator; days pass on the shared
virtual clock.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator
from reconciler.state import load_state
from tests.e2e.conftest import EmulatorRig, seed_company

DAY = 86_400.0
CLIENT = """\
version: 1
workspaces:
  client:
    id: WORKSPACE
    access:
      users:
        - {email: jane@acme.com, role: owner}
        - {email: new@acme.com, role: viewer}
"""
LATE = "        - {email: late@acme.com, role: viewer}\n"


@pytest.fixture
def rig(tmp_path: Path, clock: VirtualClock, write_seed: Any) -> EmulatorRig:
    seed = write_seed(seed_company([{"id": w, "name": w, "published": True,
                                     "users": [{"email": "jane@acme.com", "role": "owner"}]} for w in ("ws_a", "ws_b")]))
    root = tmp_path / "project"
    root.mkdir()
    return EmulatorRig(Emulator.from_seed_file(seed, clock=clock), clock, root)


def manifest(rig: EmulatorRig, text: str) -> None:
    (rig.root / "manifest.yaml").write_text(text, encoding="utf-8")


def test_an_entry_keeps_the_day_it_was_first_managed_when_its_list_changes_later(
        rig: EmulatorRig, clock: VirtualClock) -> None:
    manifest(rig, CLIENT.replace("WORKSPACE", "ws_a"))
    rig.apply()
    clock.advance(3 * DAY)
    manifest(rig, CLIENT.replace("WORKSPACE", "ws_a") + LATE)

    rig.apply()
    access = load_state(rig.state_path).resources["workspace.client"].access
    assert access is not None
    assert access.since == {"user:jane@acme.com": "2027-01-15", "user:new@acme.com": "2027-01-15",
                            "user:late@acme.com": "2027-01-18"}


def test_an_address_moved_to_another_workspace_records_that_workspace_managed_since_the_move(
        rig: EmulatorRig, clock: VirtualClock) -> None:
    manifest(rig, CLIENT.replace("WORKSPACE", "ws_a"))
    rig.apply()
    clock.advance(3 * DAY)
    manifest(rig, CLIENT.replace("WORKSPACE", "ws_b"))

    rig.apply()
    recorded = load_state(rig.state_path).resources["workspace.client"]
    assert recorded.id == "ws_b" and recorded.access is not None
    assert recorded.access.since == {"user:jane@acme.com": "2027-01-18", "user:new@acme.com": "2027-01-18"}
