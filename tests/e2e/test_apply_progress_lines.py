"""The line apply gives its progress before each change: the change's calls,
or, for an access list that sends no call of its own, the change that makes
it (a connect, a creation) or carries it (the group's list, sent with the
group's first creation).

The examples/onboarding company on the in-process emulator, applied whole.
"""

from __future__ import annotations

from pathlib import Path

from reconciler.clock import VirtualClock
from tests.e2e.conftest import onboarding_rig

GROUP = "group.customer-inc"
QBR = f"{GROUP}.workspace.quarterly-review"
KICKOFF = f"{GROUP}.workspace.kickoff"
RENEWAL = f"{GROUP}.workspace.renewal"


def test_a_joining_members_list_is_said_to_be_made_by_its_connect_and_the_groups_carried_by_the_first_creation(
        tmp_path: Path, clock: VirtualClock) -> None:
    rig = onboarding_rig(tmp_path, clock)
    lines: list[str] = []
    rig.apply(progress=lines)
    connect = f"{QBR}: POST /workspaces/ws_home/connected-workspaces"
    assert lines[lines.index(connect) + 1] == f"{QBR}: made by the connect of {QBR}"
    assert f"{GROUP}: carried by the creation of {KICKOFF}" in lines


def test_the_list_a_creation_gives_its_new_workspace_is_said_to_be_made_by_that_creation(
        tmp_path: Path, clock: VirtualClock) -> None:
    rig = onboarding_rig(tmp_path, clock)
    lines: list[str] = []
    rig.apply(progress=lines)
    made_by = [line for line in lines if ": made by the creation of " in line]
    assert made_by == [f"{KICKOFF}: made by the creation of {KICKOFF}", f"{RENEWAL}: made by the creation of {RENEWAL}"]
