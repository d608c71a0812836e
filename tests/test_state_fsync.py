"""The state file survives a power loss: its new content is fsynced before it
replaces the old, and the rename is fsynced with the directory after.

A crash between a rename and the data reaching the disk can leave an empty or
partial state file on many filesystems (ext4 without ``auto_da_alloc``, XFS);
the order of the calls is the whole defence, so the tests observe it.  They
wrap the ``os`` module's functions (not reconciler's) to record each call with
the file its descriptor is open on, and let every call through.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reconciler.state import AccessRecord, ResourceState, load_state, write_state

Call = tuple[str, str]  # (the os function, the file it acted on)


@pytest.fixture
def os_calls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Call]:
    """The write, fsync and replace calls made on files under ``tmp_path``, in order."""
    calls: list[Call] = []
    root = str(tmp_path.resolve())

    def on_fd(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(fd: int, *args: Any) -> Any:
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith(root):
                calls.append((name, target))
            return real(fd, *args)
        return call

    real_replace = os.replace

    def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if str(Path(dst).resolve()).startswith(root):
            calls.append(("replace", f"{Path(src).resolve()} -> {Path(dst).resolve()}"))
        real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "write", on_fd("write", os.write))
    monkeypatch.setattr(os, "fsync", on_fd("fsync", os.fsync))
    monkeypatch.setattr(os, "replace", replace)
    return calls


def state_with_a_list(path: Path) -> None:
    state = load_state(path).model_copy(update={"resources": {"workspace.portal": ResourceState(
        id="ws_portal", access=AccessRecord(users={"ops@acme.com": "owner"}, domains={},
                                            since={"user:ops@acme.com": "2026-01-01"}))}})
    write_state(path, state)


def the_rename(calls: list[Call], state_file: Path) -> tuple[int, Path]:
    """Where the one rename onto ``state_file`` is in ``calls``, and the temp file it renamed."""
    (index,) = [i for i, (name, what) in enumerate(calls) if name == "replace"]
    temp, _, target = calls[index][1].partition(" -> ")
    assert target == str(state_file.resolve())
    return index, Path(temp)


def test_the_new_state_is_fsynced_in_its_temp_file_before_it_replaces_the_old(
        tmp_path: Path, os_calls: list[Call]) -> None:
    state_file = tmp_path / "reconciler.state.json"
    state_with_a_list(state_file)
    rename, temp = the_rename(os_calls, state_file)
    on_temp = [name for name, what in os_calls[:rename] if what == str(temp)]
    assert on_temp[-1] == "fsync" and "write" in on_temp  # written, then fsynced, then renamed
    assert load_state(state_file).resources["workspace.portal"].id == "ws_portal"


def test_the_rename_of_the_state_file_is_fsynced_with_its_directory(tmp_path: Path, os_calls: list[Call]) -> None:
    state_file = tmp_path / "reconciler.state.json"
    state_with_a_list(state_file)
    rename, _ = the_rename(os_calls, state_file)
    assert ("fsync", str(tmp_path.resolve())) in os_calls[rename + 1:]
