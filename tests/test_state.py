"""The state file: atomic writes, serial, lineage, and the lock."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconciler.errors import StateError
from reconciler.state import AccessRecord, ResourceState, State, StateLock, load_state, write_state


def test_missing_state_loads_the_same_empty_state_every_time(tmp_path: Path) -> None:
    a, b = load_state(tmp_path / "s.json"), load_state(tmp_path / "s.json")
    assert a.resources == {} and a.serial == 0
    assert a == b


def test_first_write_gives_the_state_a_lineage_that_later_writes_keep(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    first = write_state(path, load_state(path))
    second = write_state(path, load_state(path))
    assert first.lineage != ""
    assert second.lineage == first.lineage and second.serial == 2


def test_write_bumps_the_serial_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    state = State(resources={"workspace.p": ResourceState(id="ws_p", access=AccessRecord(users={"a@b.co": "owner"}))})
    written = write_state(path, state)
    assert written.serial == 1
    assert load_state(path) == written


def test_write_leaves_no_temp_files_behind(tmp_path: Path) -> None:
    write_state(tmp_path / "s.json", State())
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_corrupt_state_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(StateError, match=f"Cannot read the state file {path}"):
        load_state(path)


def test_newer_state_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"version": 9}), encoding="utf-8")
    with pytest.raises(StateError, match="has version 9"):
        load_state(path)


def test_lock_refuses_a_second_holder_and_names_the_first(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    with StateLock(path, command="reconciler apply"):
        with pytest.raises(StateError) as err:
            with StateLock(path, command="reconciler apply"):
                pass
    assert "locked by 'reconciler apply' (pid" in str(err.value)


def test_lock_is_released_on_exit(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    with StateLock(path, command="x"):
        pass
    with StateLock(path, command="y"):
        assert (tmp_path / "s.json.lock").exists()
    assert not (tmp_path / "s.json.lock").exists()
