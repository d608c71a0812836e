"""Whole applies and the state journal, on the emulator.

An apply appends one journal line per change and writes the whole state
file once, at the end, whatever the number of changes; an apply stopped
before that (the fold made to fail, as a kill -9 would) leaves a journal
that every command reads, and the next command that writes folds it in.
Counts only, never times.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import reconciler.state.atomic as state_module
from reconciler.apply import apply_plan
from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator
from reconciler.errors import ApplyError, StateError
from reconciler.plan import Plan
from reconciler.state import State, StateBuilder, StateJournal, journal_path, load_state
from tests.e2e.conftest import TOKEN, EmulatorRig, run_cli, seed_company

LISTS = 50


class Killed(BaseException):
    """The process dying where it is raised: nothing after it runs, not even a fold."""


def _manifest(root: Path, role: str) -> None:
    """50 lists, each adding one person with ``role`` to the owner already there."""
    lines = ["version: 1", "workspaces:"]
    lines += [f"  client-{i}: {{id: ws_{i:02d}, access: {{users: [{{email: jane@acme.com, role: owner}}, "
              f"{{email: new{i}@acme.com, role: {role}}}]}}}}" for i in range(LISTS)]
    (root / "manifest.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def rig(tmp_path: Path, clock: VirtualClock, write_seed: Any) -> EmulatorRig:
    workspaces = [{"id": f"ws_{i:02d}", "name": f"Client {i}", "published": True,
                   "users": [{"email": "jane@acme.com", "role": "owner"}]} for i in range(LISTS)]
    seed = write_seed(seed_company(workspaces))
    root = tmp_path / "project"
    root.mkdir()
    _manifest(root, "viewer")
    return EmulatorRig(Emulator.from_seed_file(seed, clock=clock), clock, root)


class WholeWrites:
    """Every ``os.replace`` onto the state file (one whole write each), with
    the journal's lines at that moment: what the fold is folding."""

    def __init__(self, state_path: Path) -> None:
        self.state_path = state_path
        self.journal_lines: list[list[dict[str, Any]]] = []

    @property
    def count(self) -> int:
        return len(self.journal_lines)

    def replace(self, real: Any) -> Any:
        def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
            if Path(dst) == self.state_path:
                journal = journal_path(self.state_path)
                text = journal.read_text(encoding="utf-8") if journal.exists() else ""
                self.journal_lines.append([json.loads(line) for line in text.splitlines()])
            real(src, dst)
        return replace


@pytest.fixture
def whole_writes(rig: EmulatorRig, monkeypatch: pytest.MonkeyPatch) -> WholeWrites:
    writes = WholeWrites(rig.state_path)
    monkeypatch.setattr(os, "replace", writes.replace(os.replace))
    return writes


@pytest.fixture
def no_state_copies(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Apply never records through ``State``'s copying methods (a copy of the
    whole map per change); the builder's one copy is counted."""
    def copying(*_args: object, **_kwargs: object) -> State:
        raise AssertionError("apply copied the whole state for one change")

    for name in ("with_resource", "with_setting", "without"):
        monkeypatch.setattr(State, name, copying)
    copies: list[int] = []
    real_state = StateBuilder.state

    def counted(self: StateBuilder) -> State:
        copies.append(1)
        return real_state(self)

    monkeypatch.setattr(StateBuilder, "state", counted)
    yield copies


def test_an_apply_of_50_lists_writes_the_state_once_and_journals_one_line_per_change(
        rig: EmulatorRig, whole_writes: WholeWrites, no_state_copies: list[int]) -> None:
    plan = rig.apply()
    assert len(plan.changes) == LISTS
    assert whole_writes.count == 1, "one whole write, not one per change"
    header, *changes, fold = whole_writes.journal_lines[0]
    assert header["journal"] == 1 and header["serial"] == 0
    assert len(changes) == LISTS, "one journal line per change"
    assert all(set(line) == {"set"} and len(line["set"]) == 1 for line in changes), "only what changed"
    assert [next(iter(line["set"])) for line in changes] == [c.address for c in plan.changes]
    state = load_state(rig.state_path)
    assert fold == {"fold": {"lineage": state.lineage, "serial": 1}}
    assert state.serial == 1 and len(no_state_copies) == 1
    assert not journal_path(rig.state_path).exists(), "no journal is left after a successful apply"

    _manifest(rig.root, "commenter")  # every list changes again
    assert len(rig.apply().changes) == LISTS
    assert whole_writes.count == 2 and len(whole_writes.journal_lines[1]) == 1 + LISTS + 1
    assert load_state(rig.state_path).serial == 2, "the serial moves by one per apply"
    assert not journal_path(rig.state_path).exists()
    assert not rig.plan().has_changes


def _stop_at(rig: EmulatorRig, plan: Plan, change_number: int, stop: type[BaseException]) -> None:
    """Apply ``plan``, stopped by ``stop`` raised as change ``change_number`` (1-based) starts."""
    started = []

    def on_change(change: object) -> None:
        started.append(change)
        if len(started) == change_number:
            raise stop()

    with pytest.raises(stop):
        apply_plan(plan, client=rig.client(), state=load_state(rig.state_path), state_path=rig.state_path,
                   on_change=on_change)


def test_an_apply_killed_before_its_fold_leaves_a_journal_every_command_reads(
        rig: EmulatorRig, whole_writes: WholeWrites, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    rig.apply(plan=_first_lists(rig, 10))  # a state file to continue: serial 1, ten lists recorded
    plan = rig.plan()
    assert len(plan.changes) == LISTS - 10

    with monkeypatch.context() as patched:
        patched.setattr(StateJournal, "fold", _killed)
        _stop_at(rig, plan, 21, Killed)  # 20 changes made and journaled, then the process dies
    journal = journal_path(rig.state_path)
    assert journal.exists() and len(journal.read_text(encoding="utf-8").splitlines()) == 1 + 20
    assert TOKEN not in journal.read_text(encoding="utf-8")

    files = {p: p.read_bytes() for p in rig.root.iterdir()}
    replayed = load_state(rig.state_path)
    assert replayed.serial == 2, "the serial the fold will write: a plan saved before is stale"
    recorded = {a for a, r in replayed.resources.items() if r.access and len(r.access.users) == 2}
    assert recorded == {c.address for c in plan.changes[:20]} | {f"workspace.client-{i}" for i in range(10)}
    assert len(rig.plan().changes) == LISTS - 30, "plan sees what the stopped apply recorded"
    code, out, err = run_cli(["state", "list", str(rig.root)], capsys)
    assert code == 0 and len(out.splitlines()) == 30, err
    assert {p: p.read_bytes() for p in rig.root.iterdir()} == files, "reading wrote nothing"

    writes_before = whole_writes.count
    rig.apply()  # folds the journal first (one write), then its own changes (one write)
    assert whole_writes.count - writes_before == 2
    assert not journal.exists() and not rig.plan().has_changes
    assert load_state(rig.state_path).serial == 3


def test_a_corrupt_or_foreign_journal_stops_the_next_apply_before_any_call(
        rig: EmulatorRig, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = rig.plan()
    with monkeypatch.context() as patched:
        patched.setattr(StateJournal, "fold", _killed)
        _stop_at(rig, plan, 6, Killed)
    journal = journal_path(rig.state_path)
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:3]) + b"{garbage\n" + b"".join(lines[3:]))
    requests = rig.emulator.request_count()
    with pytest.raises(StateError, match=rf"{journal.name}:4 is not a valid journal line"):
        rig.apply(plan)
    assert rig.emulator.request_count() == requests


def test_an_interrupted_apply_folds_what_it_recorded_on_the_way_out(
        rig: EmulatorRig, whole_writes: WholeWrites) -> None:
    """Ctrl-C or SIGTERM (a KeyboardInterrupt): the fold still runs."""
    _stop_at(rig, rig.plan(), 13, KeyboardInterrupt)
    assert whole_writes.count == 1 and len(whole_writes.journal_lines[0]) == 1 + 12 + 1
    assert not journal_path(rig.state_path).exists()
    assert load_state(rig.state_path).serial == 1
    assert len(rig.plan().changes) == LISTS - 12


def test_state_rm_folds_the_journal_it_read(rig: EmulatorRig, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    plan = rig.plan()
    with monkeypatch.context() as patched:
        patched.setattr(StateJournal, "fold", _killed)
        _stop_at(rig, plan, 9, Killed)
    code, out, err = run_cli(["state", "rm", "workspace.client-0", str(rig.root)], capsys)
    assert code == 0, err
    assert not journal_path(rig.state_path).exists()
    state = load_state(rig.state_path)
    assert set(state.resources) == {c.address for c in plan.changes[1:8]}
    assert state.serial == 2  # the replayed state was serial 1, and rm wrote the next


def test_a_full_disk_while_journaling_is_exit_1_naming_what_was_not_recorded(
        rig: EmulatorRig, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write_all = state_module.write_all
    appended = {"n": 0}

    def disk_fills_up_after_three_changes(fd: int, data: bytes) -> None:  # simulates the disk, not our code
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".journal"):
            appended["n"] += 1
            if appended["n"] > 3:
                raise OSError(errno.ENOSPC, "No space left on device")
        real_write_all(fd, data)

    monkeypatch.setattr(state_module, "write_all", disk_fills_up_after_three_changes)
    plan = rig.plan()
    with pytest.raises(ApplyError) as stopped:
        rig.apply(plan)
    message = str(stopped.value)
    assert f"Apply stopped: {plan.changes[3].address}" in message and "could not record it" in message
    assert f"Cannot append to the state journal {journal_path(rig.state_path)}: No space left on device" in message
    assert (f"The state records the 3 changes before it; the {LISTS - 4} changes after it were not attempted. "
            in message)
    assert ("then run 'reconciler plan': access lists are read live, and a workspace created here is found again "
            "by the intent recorded before its creation, and adopted.") in message
    assert "journal" in message and "keeps the 3 changes recorded" in message  # the fold failed too
    monkeypatch.undo()
    recorded = {a for a, r in load_state(rig.state_path).resources.items() if r.access is not None}
    assert recorded == {c.address for c in plan.changes[:3]}, "nothing recorded is forgotten"
    # The fourth was made in the service, not recorded: its list is read live, and needs nothing.
    assert len(rig.plan().changes) == LISTS - 4
    rig.apply()
    assert not rig.plan().has_changes and not journal_path(rig.state_path).exists()


def test_a_full_disk_through_the_cli_is_exit_1_without_a_traceback(
        served: tuple[str, Emulator], project: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    base_url, _ = served
    real_write_all = state_module.write_all

    def journal_refused(fd: int, data: bytes) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".journal"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write_all(fd, data)

    monkeypatch.setattr(state_module, "write_all", journal_refused)
    monkeypatch.setenv("RECONCILER_TOKEN", TOKEN)
    code, _, err = run_cli(["apply", str(project), "--base-url", base_url, "--auto-approve"], capsys)
    assert code == 1, err
    assert "Cannot append to the state journal" in err and "No space left on device (ENOSPC)" in err
    assert "Traceback" not in err and "Internal error" not in err
    assert not journal_path(project / "reconciler.state.json").exists()


def _killed(*_args: object, **_kwargs: object) -> State:
    """A fold that never happens: the process died first."""
    raise Killed()


def _first_lists(rig: EmulatorRig, count: int) -> Plan:
    """The plan, targeted at the first ``count`` lists."""
    return rig.plan(targets=[f"workspace.client-{i}" for i in range(count)])
