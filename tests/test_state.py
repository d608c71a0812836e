"""The state file: atomic writes, serial, lineage, and the lock."""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from reconciler.emulator import Emulator
from reconciler.emulator.server import start_background_server
from reconciler.errors import StateError
from reconciler.state import (
    AccessRecord,
    ResourceState,
    State,
    StateLock,
    StateWriteError,
    load_state,
    write_state,
)
from reconciler.state.lock import LockHolder
from tests.e2e.conftest import QUICKSTART, TOKEN, run_cli


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
    assert 'locked by "reconciler apply" (pid' in str(err.value)


def test_lock_is_released_on_exit(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    with StateLock(path, command="x"):
        pass
    with StateLock(path, command="y"):
        assert (tmp_path / "s.json.lock").exists()
    assert not (tmp_path / "s.json.lock").exists()


def test_a_lock_file_with_an_empty_lock_id_is_refused_as_held_by_an_unknown_process(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    lock = tmp_path / "s.json.lock"
    lock.write_text(json.dumps({"id": "", "pid": 4242, "host": "elsewhere", "command": "reconciler apply",
                                "since": "2027-01-15T08:00:00Z"}), encoding="utf-8")
    with pytest.raises(StateError) as err:
        with StateLock(path, command="reconciler apply"):
            pass
    assert str(err.value) == (
        f"The state {path} is locked by an unknown process: the lock file {lock} is empty or unreadable (written by "
        "an older reconciler, or by hand), and has no lock ID. If no reconciler command is running against this "
        f"state, delete {lock}.")


def test_a_lock_files_fields_that_are_empty_or_of_another_type_are_read_as_not_known(tmp_path: Path) -> None:
    lock = tmp_path / "s.json.lock"
    lock.write_text(json.dumps({"id": "", "pid": "4242", "host": 7, "command": "", "since": ["2027-01-15"]}),
                    encoding="utf-8")
    assert LockHolder.read(lock) == LockHolder(id=None, pid=None, host=None, command=None, since=None)


# -- a full disk (the disk_full fixture is in tests/conftest.py) --------------------


def test_a_failed_state_write_leaves_the_previous_file_byte_for_byte(tmp_path: Path,
                                                                     disk_full: Callable[[], None]) -> None:
    path = tmp_path / "s.json"
    previous = write_state(path, State(resources={"workspace.p": ResourceState(id="ws_p")}))
    before = path.read_bytes()
    disk_full()
    with pytest.raises(StateWriteError) as err:
        write_state(path, previous.with_resource("workspace.q", "ws_q"))
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"], "the half-written temp file is removed"
    assert err.value.path == path and err.value.errno == errno.ENOSPC
    assert isinstance(err.value, StateError)
    message = str(err.value)
    assert str(path) in message and "No space left on device" in message
    assert f"still holds serial {previous.serial}" in message


def test_a_state_write_error_names_the_error_code(tmp_path: Path) -> None:
    error = StateWriteError(tmp_path / "s.json", errno.EIO, previous_serial=None)
    assert error.errno == errno.EIO and "Input/output error (EIO)" in str(error)


# -- where the state lives ---------------------------------------------------------------


@pytest.fixture
def served_quickstart() -> Iterator[tuple[str, Emulator]]:
    emulator = Emulator.from_seed_file(QUICKSTART / "seed.yaml")
    base_url, stop = start_background_server(emulator)
    try:
        yield base_url, emulator
    finally:
        stop()


def _apply_with_state(state: Path, project: Path, base_url: str, capsys: pytest.CaptureFixture[str],
                      monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.setenv("RECONCILER_TOKEN", TOKEN)
    return run_cli(["apply", str(project), "--base-url", base_url, "--auto-approve", "--state", str(state)], capsys)


def test_a_state_directory_that_cannot_be_created_is_exit_1_before_any_call(
        tmp_path: Path, served_quickstart: tuple[str, Emulator], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    base_url, emulator = served_quickstart
    project = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, project)
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    state = tmp_path / "a-file" / "states" / "s.json"
    code, _out, err = _apply_with_state(state, project, base_url, capsys, monkeypatch)
    assert code == 1, err
    assert f"the directory {state.parent} does not exist and cannot be created" in err
    assert "Nothing was changed" in err
    assert emulator.request_count() == 0


def test_a_read_only_state_directory_is_exit_1_before_any_call(
        tmp_path: Path, served_quickstart: tuple[str, Emulator], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-only filesystem (EROFS refuses even root, which a chmod does
    not), simulated for the state's directory only."""
    base_url, emulator = served_quickstart
    project = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, project)
    read_only = tmp_path / "ro"
    read_only.mkdir()
    real_open = os.open

    def open_(path: str | os.PathLike[str], flags: int, *args: object, **kwargs: object) -> int:
        if str(path).startswith(str(read_only)) and flags & (os.O_CREAT | os.O_WRONLY | os.O_RDWR):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", open_)
    state = read_only / "s.json"
    code, _out, err = _apply_with_state(state, project, base_url, capsys, monkeypatch)
    assert code == 1, err
    assert f"the directory {read_only} is not writable (Read-only file system)" in err
    assert "Nothing was changed" in err
    assert emulator.request_count() == 0
    assert list(read_only.iterdir()) == []


def test_a_missing_state_directory_is_created(tmp_path: Path) -> None:
    state = tmp_path / "new" / "deeper" / "s.json"
    with StateLock(state, command="x"):
        write_state(state, State())
    assert load_state(state).serial == 1


def test_recorded_id_is_the_id_bound_to_an_address_and_none_for_an_unknown_address_or_an_empty_id() -> None:
    state = State().with_resource("group.g.workspace.new", "ws_new").with_resource("workspace.x", "")
    assert [state.recorded_id(a) for a in ("group.g.workspace.new", "workspace.x", "workspace.unknown")] == [
        "ws_new", None, None]
