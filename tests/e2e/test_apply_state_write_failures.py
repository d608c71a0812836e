"""What apply says when the state cannot record what the service did: a
full disk between an asset's steps, and a fold that fails once every change
is made (with the changes in the journal, and with none journaled at all).
Each message word for word: it is what a person reads to know what was made
and what the state holds.

The disk is the one thing faked (``os``-level writes, as a full disk or a
failing rename would answer); the service is the in-process emulator.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import reconciler.state.atomic as state_module
from reconciler.apply import apply_plan
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator
from reconciler.errors import ApplyError
from reconciler.plan.model import Change
from reconciler.state import journal_path, load_state
from tests.e2e.conftest import EmulatorRig, onboarding_rig, seed_company

PRICING_SHEET = "asset.pricing-sheet"
REPLAN = ("then run 'reconciler plan': access lists are read live, and a workspace created here is found again by "
          "the intent recorded before its creation, and adopted.")


def test_a_full_disk_between_an_assets_steps_says_it_was_partly_made_and_what_the_state_records(
        tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> None:
    rig = onboarding_rig(tmp_path, clock)
    plan = rig.plan()
    before = [c.address for c in plan.changes].index(PRICING_SHEET)
    after = len(plan.changes) - before - 1
    assert before > 1 and after > 1
    real_write_all = state_module.write_all

    def disk_full_once_the_file_is_made(fd: int, data: bytes) -> None:  # the disk, not our code
        if any(r.method == "POST" and r.path == "/v1/files" for r in rig.emulator.requests):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write_all(fd, data)

    monkeypatch.setattr(state_module, "write_all", disk_full_once_the_file_is_made)
    with pytest.raises(ApplyError) as stopped:
        rig.apply(plan)
    journal = journal_path(rig.state_path)
    cannot = (f"Cannot append to the state journal {journal}: No space left on device (ENOSPC). The journal keeps "
              "every change recorded before this one, and the state file is unchanged.")
    lines = len(journal.read_text(encoding="utf-8").splitlines()) - 1  # after its header
    assert str(stopped.value) == (
        f"Apply stopped: {PRICING_SHEET} ({rig.root / 'assets.yaml'}:9) was partly made in the service (an asset's "
        f"steps), but the state file could not record it. {cannot} The state records the {before} changes before "
        f"it; the {after} changes after it were not attempted. Free the space (or fix the error), {REPLAN} Folding "
        f"the journal into the state file failed too ({cannot}); the journal {journal} keeps the {lines} changes "
        "recorded, and every command reads it with the state file.")
    monkeypatch.undo()
    recorded = load_state(rig.state_path).resources  # the file does not exist: the journal holds them
    assert not rig.state_path.exists() and PRICING_SHEET not in recorded
    assert {a for a in recorded if a.startswith("asset.")} == set()


def failing_rename_onto(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.replace`` onto ``path`` fails (an I/O error): no whole write of the state file succeeds."""
    real_replace = os.replace

    def replace(src: Any, dst: Any) -> None:
        if Path(dst) == path:
            raise OSError(errno.EIO, "Input/output error")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)


def test_a_fold_that_fails_after_every_change_says_the_journal_keeps_them_and_nothing_is_lost(
        tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> None:
    rig = onboarding_rig(tmp_path, clock)
    plan = rig.plan()
    failing_rename_onto(rig.state_path, monkeypatch)
    with pytest.raises(ApplyError) as stopped:
        rig.apply(plan)
    journal = journal_path(rig.state_path)
    assert str(stopped.value) == (
        f"Apply made every change and recorded each in the journal {journal}, but could not fold it into the state "
        f"file: Cannot write the state file {rig.state_path}: Input/output error (EIO). There was no state file "
        "before, and none was written. Nothing is lost: every command reads the journal with the state file, and "
        "the next apply, import or 'state rm' folds it in. Free the space (or fix the error), then run "
        "'reconciler plan'.")
    monkeypatch.undo()
    assert not rig.state_path.exists() and journal.exists()
    assert rig.plan().changes == (), "the journal read with the (absent) file holds every change"


def test_a_state_file_that_cannot_be_written_after_an_apply_with_nothing_to_change_says_so(
        tmp_path: Path, clock: VirtualClock, write_seed: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The service already holds the manifest's list; the state does not know it yet: nothing is
    # changed or journaled, and the fold records the list as managed, in one whole write.
    seed = write_seed(seed_company([{"id": "ws_client", "name": "Client", "published": True,
                                     "users": [{"email": "jane@acme.com", "role": "owner"}]}]))
    root = tmp_path / "project"
    root.mkdir()
    (root / "manifest.yaml").write_text(
        "version: 1\nworkspaces:\n  client: {id: ws_client, access: {users: [{email: jane@acme.com, role: owner}]}}\n",
        encoding="utf-8")
    rig = EmulatorRig(Emulator.from_seed_file(seed, clock=clock), clock, root)
    plan = rig.plan()
    assert plan.changes == () and [m.address for m in plan.managed] == ["workspace.client"]
    failing_rename_onto(rig.state_path, monkeypatch)
    with pytest.raises(ApplyError) as stopped:
        rig.apply(plan)
    assert str(stopped.value) == (
        f"Apply made every change, but the state file could not be written: Cannot write the state file "
        f"{rig.state_path}: Input/output error (EIO). There was no state file before, and none was written.")
    assert not rig.state_path.exists() and not journal_path(rig.state_path).exists()


KICKOFF = "group.customer-inc.workspace.kickoff"


def disk_full_from(monkeypatch: pytest.MonkeyPatch, full: Callable[[], bool]) -> None:
    """Every write to the state (its journal or the file) fails once ``full()`` is true."""
    real_write_all = state_module.write_all

    def write_all(fd: int, data: bytes) -> None:  # the disk, not our code
        if full():
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write_all(fd, data)

    monkeypatch.setattr(state_module, "write_all", write_all)


def test_a_full_disk_before_a_creation_is_sent_stops_it_unsent_naming_the_intent_not_recorded(
        tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> None:
    rig = onboarding_rig(tmp_path, clock)
    plan = rig.plan()
    reached: list[Change] = []
    disk_full_from(monkeypatch, lambda: any(c.address == KICKOFF for c in reached))

    with pytest.raises(ApplyError) as stopped:
        apply_plan(plan, client=rig.client(), state=load_state(rig.state_path), state_path=rig.state_path,
                   on_change=lambda change: reached.append(change) if change is not None else None)
    journal = journal_path(rig.state_path)
    cannot = (f"Cannot append to the state journal {journal}: No space left on device (ENOSPC). The journal keeps "
              "every change recorded before this one, and the state file is unchanged.")
    assert str(stopped.value) == (
        f"Apply stopped at {KICKOFF} ({rig.root / 'groups.yaml'}:31) before its creation was sent: the state file "
        f"could not record the intent to create it. {cannot} Free the space (or fix the error), then run "
        f"'reconciler apply' again. Folding the journal into the state file failed too ({cannot}); the journal "
        f"{journal} keeps the 2 changes recorded, and every command reads it with the state file.")
    # (the two connects; the join before the kickoff records nothing of its own), and nothing was created:
    assert [w.name for w in rig.company.workspaces if w.name == "Customer Inc – Kickoff"] == []


def test_a_journal_left_by_an_earlier_apply_that_cannot_be_folded_stops_the_next_before_any_call(
        tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> None:
    rig = onboarding_rig(tmp_path, clock)
    failing_rename_onto(rig.state_path, monkeypatch)
    with pytest.raises(ApplyError):
        rig.apply()  # every change made and journaled; the fold failed, and fails again
    plan = rig.plan()
    start = len(rig.emulator.requests)

    with pytest.raises(ApplyError) as stopped:
        rig.apply(plan)
    assert str(stopped.value) == (
        "Nothing was changed: the journal an earlier apply left could not be folded into the state file. Cannot "
        f"write the state file {rig.state_path}: Input/output error (EIO). There was no state file before, and none "
        "was written. Free the space (or fix the error), then run the apply again.")
    assert rig.emulator.requests[start:] == []


def test_a_refused_creation_whose_intent_cannot_be_removed_says_nothing_was_created(
        tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> None:
    """The service refuses the creation (403) and the disk is full when the intent recorded before it is
    removed: the stop says the creation was refused and nothing was created, not that something "was partly
    made in the service (an asset's steps)", and keeps the service's reason (found by the mutation tests)."""
    rig = onboarding_rig(tmp_path, clock)
    plan = rig.plan()
    refused: list[Any] = []
    real_write_all = state_module.write_all

    def disk_full_once_refused(fd: int, data: bytes) -> None:  # the disk, not our code
        if refused and refused[0].fired:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write_all(fd, data)

    def on_change(change: Change | None) -> None:
        if change is not None and change.kind == "create" and not refused:
            refused.append(rig.emulator.faults.inject("POST", "/workspaces/ws_home/connected-workspaces$",
                                                      status=403))

    monkeypatch.setattr(state_module, "write_all", disk_full_once_refused)
    with pytest.raises(ApplyError) as stopped:
        apply_plan(plan, client=rig.client(), state=load_state(rig.state_path), state_path=rig.state_path,
                   on_change=on_change)
    message = str(stopped.value)
    kickoff = "group.customer-inc.workspace.kickoff"
    assert message.startswith(f"Apply stopped at {kickoff} ({rig.root / 'groups.yaml'}:31): "), message
    assert "403" in message and "partly made" not in message, message
    assert (" Nothing was created, but the state file could not remove the intent recorded before the creation "
            "was sent. Cannot append to the state journal ") in message, message
    assert ("Free the space (or fix the error), then run 'reconciler apply' again: the intent finds no such "
            "workspace, and is closed. Folding the journal into the state file failed too") in message, message
    assert [w.name for w in rig.company.workspaces if w.name.startswith("Customer Inc – Kickoff")] == []


WELCOME = "group.customer-inc.workspace.welcome"


@pytest.mark.parametrize(("last_call", "address", "line", "before", "after"), [
    ("/v1/workspace-pages/pg_welcome_faq", f"{WELCOME}.page.pg_welcome_faq", 22, "1 change",
     "the 1 change after it was not attempted"),
    ("/v1/workspace-plan-tasks/task_welcome_intro", f"{WELCOME}.task.task_welcome_intro", 24, "2 changes",
     "no change came after it"),
])
def test_a_full_disk_after_a_change_was_made_names_it_and_what_came_after_it(
        tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch, last_call: str, address: str,
        line: int, before: str, after: str) -> None:
    """The welcome member's connect, its page and its task; the disk fills once ``last_call`` is answered."""
    rig = onboarding_rig(tmp_path, clock)
    plan = rig.plan(targets=[WELCOME])
    assert [c.address for c in plan.changes] == [WELCOME, f"{WELCOME}.page.pg_welcome_faq",
                                                 f"{WELCOME}.task.task_welcome_intro"]
    disk_full_from(monkeypatch, lambda: any(r.path == last_call for r in rig.emulator.requests))

    with pytest.raises(ApplyError) as stopped:
        rig.apply(plan)
    journal = journal_path(rig.state_path)
    cannot = (f"Cannot append to the state journal {journal}: No space left on device (ENOSPC). The journal keeps "
              "every change recorded before this one, and the state file is unchanged.")
    assert str(stopped.value) == (
        f"Apply stopped: {address} ({rig.root / 'groups.yaml'}:{line}) was made in the service, but the state file "
        f"could not record it. {cannot} The state records the {before} before it; {after}. Free the space (or fix "
        f"the error), {REPLAN} Folding the journal into the state file failed too ({cannot}); the journal {journal} "
        f"keeps the {before} recorded, and every command reads it with the state file.")
