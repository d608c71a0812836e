"""What plan, apply and ``state list`` say about the state they find, or do
not find: ``--require-state`` (and RECONCILER_REQUIRE_STATE=1), a manifest
path that does not exist, no state file at all, and a lock a killed apply
left behind.  Through the real entry point, against the quickstart emulator
served on 127.0.0.1, whose record of requests proves when no call was made."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.emulator import Emulator
from reconciler.state import StateLock
from tests.e2e.conftest import quickstart_served, run_cli
from tests.test_locks import leave_lock_of_killed_process

STATE = "reconciler.state.json"


@pytest.fixture
def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, list[str], Emulator]]:
    """(manifest directory, connection flags, emulator)."""
    root = tmp_path / "manifests"
    with quickstart_served(root, monkeypatch) as (connect, emulator):
        yield root, connect, emulator


# --- --require-state ----------------------------------------------------------------------------

def test_plan_with_require_state_and_no_state_file_stops_before_any_call(rig, capsys) -> None:
    root, connect, emulator = rig
    code, out, err = run_cli(["plan", str(root), *connect, "--require-state"], capsys)
    assert code == 1 and out == ""
    assert f"There is no state file at {root / STATE}, and --require-state" in err
    assert "commit it beside the manifests" in err and "pull it from where it is kept" in err
    assert "Before the first apply there is none yet" in err
    assert emulator.requests == []


def test_the_environment_variable_requires_the_state_as_the_flag_does(rig, capsys,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    root, connect, emulator = rig
    monkeypatch.setenv("RECONCILER_REQUIRE_STATE", "1")
    code, _, err = run_cli(["plan", str(root), *connect], capsys)
    assert code == 1
    assert f"There is no state file at {root / STATE}" in err
    assert emulator.requests == []


def test_apply_with_require_state_and_no_state_file_stops_before_the_lock_and_any_call(rig, capsys) -> None:
    root, connect, emulator = rig
    code, _, err = run_cli(["apply", str(root), *connect, "--auto-approve", "--require-state"], capsys)
    assert code == 1
    assert f"There is no state file at {root / STATE}" in err
    assert sorted(p.name for p in root.iterdir()) == ["README.md", "manifest.schema.json", "manifest.yaml", "seed.yaml"]  # no lock, no state
    assert emulator.requests == []


def test_require_state_plans_as_usual_once_the_state_exists(rig, capsys) -> None:
    root, connect, _ = rig
    code, _, err = run_cli(["apply", str(root), *connect, "--auto-approve"], capsys)  # the first apply
    assert code == 0, err
    code, out, err = run_cli(["plan", str(root), *connect, "--require-state"], capsys)
    assert code == 0, err
    assert "No changes." in out


# --- state list -------------------------------------------------------------------------------

def test_state_list_of_a_directory_that_does_not_exist_is_an_error_naming_it(rig, tmp_path: Path, capsys) -> None:
    root, _, _ = rig
    missing = root / "no-such-dir"
    code, out, err = run_cli(["state", "list", str(missing)], capsys)
    assert code == 1 and out == ""
    assert f"{missing}: no such file or directory" in err


def test_state_list_without_a_state_file_says_there_is_none_at_its_path(rig, capsys) -> None:
    root, _, _ = rig
    code, out, err = run_cli(["state", "list", str(root)], capsys)
    assert code == 0, err
    assert out.startswith(f"There is no state file at {root / STATE}")
    assert "records nothing yet" not in out


# --- a lock left behind -------------------------------------------------------------------------

def test_plan_names_a_lock_a_killed_apply_left_and_the_way_out(rig, capsys) -> None:
    root, connect, _ = rig
    pid, lock_id = leave_lock_of_killed_process(root / STATE)
    code, out, err = run_cli(["plan", str(root), *connect], capsys)
    assert code == 0, err
    assert (f"is still locked by \"reconciler apply\" (lock ID {lock_id}, since 20" in out
            and f"held by pid {pid} on this host, which is no longer running" in out)
    assert "a change it made may be missing from the state" in out
    assert f"reconciler force-unlock {lock_id}" in out and "apply again" in out


def test_plan_against_a_lock_held_by_a_running_apply_says_nothing_of_it(rig, capsys) -> None:
    root, connect, _ = rig
    with StateLock(root / STATE, command="reconciler apply") as held:  # held by this process, which runs
        code, out, err = run_cli(["plan", str(root), *connect], capsys)
    assert code == 0, err
    assert held.id not in out + err and "locked" not in out + err
