"""A creation interrupted after the service made the workspace: the intent
apply recorded before sending it (its time, in UTC), and the next apply
adopting the workspace by it: recorded bound to its group and template,
without a call; and stopped before any change when even that cannot be
recorded.

The process is "killed" in-process: the transport raises a ``BaseException``
right after the emulator made the workspace, so the answer never reaches the
apply, which only folds what it had recorded (as ``test_crash.py`` shows a
real kill -9 leaves it, in a subprocess).
"""

from __future__ import annotations

import datetime
import errno
from pathlib import Path

import httpx
import pytest

import reconciler.state.atomic as state_module
from reconciler.api.client import WorkspaceClient
from reconciler.api.connection import make_http_client
from reconciler.apply import apply_plan
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator, emulator_transport
from reconciler.errors import ApplyError
from reconciler.state import journal_path, load_state
from tests.e2e.conftest import TOKEN, EmulatorRig, onboarding_rig

KICKOFF = "group.customer-inc.workspace.kickoff"
CREATION = "/v1/workspaces/ws_home/connected-workspaces"


class Killed(BaseException):
    """The process dying where it is raised."""


class KilledAfter(httpx.BaseTransport):
    """The emulator, and the process killed right after the service answered
    a POST to ``path``: the answer never reaches the apply."""

    def __init__(self, emulator: Emulator, path: str) -> None:
        self.inner, self.path = emulator_transport(emulator), path

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        answer = self.inner.handle_request(request)
        if request.method == "POST" and request.url.path == self.path:
            raise Killed
        return answer


def killed_after_the_kickoff_was_created(rig: EmulatorRig, clock: VirtualClock) -> str:
    """Apply the kickoff's creation alone, killed once the service made it; the new workspace's id."""
    client = WorkspaceClient(make_http_client("http://emulator.invalid", TOKEN,
                                              transport=KilledAfter(rig.emulator, CREATION)), clock=clock)
    with pytest.raises(Killed):
        apply_plan(rig.plan(targets=[KICKOFF]), client=client, state=load_state(rig.state_path),
                   state_path=rig.state_path)
    made: list[str] = [w.id for w in rig.company.workspaces if w.name == "Customer Inc – Kickoff"]
    assert len(made) == 1
    return made[0]


def test_the_intent_to_create_records_when_in_utc_to_the_second(tmp_path: Path, clock: VirtualClock) -> None:
    rig = onboarding_rig(tmp_path, clock)
    clock.advance(0.75)  # a fraction of a second is not written
    sent_at = datetime.datetime.fromtimestamp(clock.now(), datetime.UTC)
    killed_after_the_kickoff_was_created(rig, clock)
    intent = load_state(rig.state_path).resources[KICKOFF].intent
    assert intent is not None and intent.at == sent_at.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_the_next_apply_records_the_adopted_workspace_bound_to_its_group_and_template_without_a_call(
        tmp_path: Path, clock: VirtualClock) -> None:
    rig = onboarding_rig(tmp_path, clock)
    made = killed_after_the_kickoff_was_created(rig, clock)
    plan = rig.plan(targets=[KICKOFF])
    assert [(a.address, a.workspace_id) for a in plan.adopted] == [(KICKOFF, made)] and plan.changes == ()
    progress: list[str] = []
    start = len(rig.emulator.requests)

    rig.apply(plan, progress=progress)
    recorded = load_state(rig.state_path).resources[KICKOFF]
    assert (recorded.id, recorded.connected_to, recorded.template, recorded.intent) == (
        made, "ws_home", "tpl_kickoff", None)
    assert [r.method for r in rig.emulator.requests[start:] if r.method != "GET"] == []
    assert f"{KICKOFF}: {plan.adopted[0].reason}" in progress


def test_a_full_disk_while_recording_an_adoption_stops_before_any_change(
        tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> None:
    rig = onboarding_rig(tmp_path, clock)
    killed_after_the_kickoff_was_created(rig, clock)
    plan = rig.plan()
    assert [a.address for a in plan.adopted] == [KICKOFF]

    def disk_full(_fd: int, _data: bytes) -> None:  # the disk, not our code
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(state_module, "write_all", disk_full)
    start = len(rig.emulator.requests)
    with pytest.raises(ApplyError) as stopped:
        rig.apply(plan)
    journal = journal_path(rig.state_path)
    assert str(stopped.value) == (
        f"Apply stopped before any call: {KICKOFF} ({rig.root / 'groups.yaml'}:31) could not be recorded as "
        f"adopted. Cannot append to the state journal {journal}: No space left on device (ENOSPC). The journal "
        "keeps every change recorded before this one, and the state file is unchanged. Free the space (or fix "
        "the error), then run 'reconciler apply' again.")
    assert [r.method for r in rig.emulator.requests[start:] if r.method != "GET"] == []
