"""Files a pull request can plant in the checkout: the state, its journal and
lock, a saved plan, the audit log and the manifest path itself, each made a
symbolic link (or something other than a file). Each is refused with one
clear paragraph, exit 1, before any call to the service, and nothing is
read or written through the link.

Every command runs through the real entry point against the quickstart
emulator served on 127.0.0.1, whose record of requests proves no call."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.emulator import Emulator
from reconciler.emulator.server import start_background_server
from reconciler.owned_files import MAX_JOURNAL_BYTES, MAX_STATE_BYTES
from tests.e2e.conftest import QUICKSTART, ROOT, TOKEN, run_cli

STATE = "reconciler.state.json"
SECRET = "AWS_SECRET_ACCESS_KEY=hunter2"


@pytest.fixture
def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, list[str], Emulator]]:
    """(manifest directory, connection flags, emulator): a copy of the
    quickstart, its emulator served over loopback HTTP."""
    root = tmp_path / "repo" / "manifests"
    shutil.copytree(QUICKSTART, root)
    emulator = Emulator.from_seed_file(QUICKSTART / "seed.yaml")
    monkeypatch.setenv("RECONCILER_TOKEN", TOKEN)
    base_url, stop = start_background_server(emulator)
    try:
        yield root, ["--base-url", base_url], emulator
    finally:
        stop()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the repository that must be neither read nor written."""
    path = tmp_path / "home" / ".bashrc"
    path.parent.mkdir()
    path.write_text(f"export {SECRET}\n", encoding="utf-8")
    return path


def _untouched(path: Path) -> bool:
    return path.read_text(encoding="utf-8") == f"export {SECRET}\n"


# --- the state file ---------------------------------------------------------------------------

def _plan_in_a_subprocess(root: Path, connect: list[str]) -> subprocess.CompletedProcess[str]:
    """``reconciler plan`` in its own process, with a hard cap: were a hostile
    file followed, it would exhaust memory or wait forever there, not here."""
    return subprocess.run([sys.executable, "-m", "reconciler", "plan", str(root), *connect],
                          capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, "RECONCILER_TOKEN": TOKEN})


def test_a_state_file_linked_to_dev_zero_is_refused_at_once_and_nothing_is_called(rig, tmp_path: Path) -> None:
    root, connect, emulator = rig
    (root / STATE).symlink_to("/dev/zero")
    done = _plan_in_a_subprocess(root, connect)
    assert done.returncode == 1, done.stderr
    assert f"The state file {root / STATE} is a symbolic link (to /dev/zero)" in done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert emulator.requests == []


def test_a_state_file_linked_outside_is_not_read(rig, outside: Path, capsys) -> None:
    root, connect, emulator = rig
    (root / STATE).symlink_to(outside)
    code, out, err = run_cli(["plan", str(root), *connect], capsys)
    assert code == 1
    assert f"The state file {root / STATE} is a symbolic link (to {outside})" in err
    assert "hunter2" not in out + err
    assert emulator.requests == []


def test_apply_refuses_a_linked_state_file_and_leaves_its_target_alone(rig, outside: Path, capsys) -> None:
    root, connect, emulator = rig
    (root / STATE).symlink_to(outside)
    code, _, err = run_cli(["apply", str(root), *connect, "--auto-approve"], capsys)
    assert code == 1 and "is a symbolic link" in err
    assert _untouched(outside) and (root / STATE).is_symlink()
    assert not (root / f"{STATE}.lock").exists()  # the lock taken before reading the state was released
    assert emulator.requests == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_state_file_that_is_a_named_pipe_is_refused_without_waiting(rig) -> None:
    root, connect, emulator = rig
    os.mkfifo(root / STATE)  # opened for reading, a pipe with no writer would wait forever
    done = _plan_in_a_subprocess(root, connect)
    assert done.returncode == 1, done.stderr
    assert f"The state file {root / STATE} is not a regular file (a named pipe)" in done.stderr
    assert emulator.requests == []


def test_a_state_file_over_the_bound_is_refused_unread(rig, capsys) -> None:
    root, connect, emulator = rig
    with open(root / STATE, "wb") as handle:
        handle.truncate(MAX_STATE_BYTES + 1)  # sparse: costs no disk, and would cost 2 GiB of memory to read
    code, _, err = run_cli(["plan", str(root), *connect], capsys)
    assert code == 1
    assert f"The state file {root / STATE} is {MAX_STATE_BYTES + 1:,} bytes or more, over the 2 GiB" in err
    assert emulator.requests == []


# --- the journal and the lock -----------------------------------------------------------------

def test_a_journal_linked_outside_is_refused(rig, outside: Path, capsys) -> None:
    root, connect, emulator = rig
    (root / f"{STATE}.journal").symlink_to(outside)
    code, out, err = run_cli(["plan", str(root), *connect], capsys)
    assert code == 1
    assert f"The state journal {root / STATE}.journal is a symbolic link" in err
    assert "hunter2" not in out + err
    assert emulator.requests == []


def test_a_journal_over_the_bound_is_refused_unread(rig, capsys) -> None:
    root, connect, emulator = rig
    with open(root / f"{STATE}.journal", "wb") as handle:
        handle.truncate(MAX_JOURNAL_BYTES + 1)
    code, _, err = run_cli(["state", "list", str(root)], capsys)
    assert code == 1
    assert "over the 4 GiB reconciler reads for it" in err
    assert emulator.requests == []


def test_a_lock_that_is_a_link_is_refused_and_its_target_kept(rig, outside: Path, capsys) -> None:
    root, connect, emulator = rig
    (root / f"{STATE}.lock").symlink_to(outside)
    code, out, err = run_cli(["apply", str(root), *connect, "--auto-approve"], capsys)
    assert code == 1
    assert f"The state lock {root / STATE}.lock is a symbolic link" in err
    assert "hunter2" not in out + err
    assert _untouched(outside)
    assert emulator.requests == []


# --- the saved plan ---------------------------------------------------------------------------

def test_plan_out_through_a_planted_link_is_refused_and_the_target_kept(rig, outside: Path, capsys) -> None:
    root, connect, emulator = rig
    out_file = root.parent / "plan.json"
    out_file.symlink_to(outside)
    code, _, err = run_cli(["plan", str(root), *connect, "--out", str(out_file)], capsys)
    assert code == 1
    assert f"The plan file {out_file} is a symbolic link (to {outside})" in err
    assert _untouched(outside) and out_file.is_symlink()


def test_plan_out_writes_the_file_whole_readable_by_its_owner_only(rig, capsys) -> None:
    root, connect, _ = rig
    out_file = root.parent / "plan.json"
    out_file.write_text("an older plan\n", encoding="utf-8")
    out_file.chmod(0o644)
    code, _, err = run_cli(["plan", str(root), *connect, "--out", str(out_file)], capsys)
    assert code == 0, err
    assert json.loads(out_file.read_text(encoding="utf-8"))["kind"] == "reconciler-plan"
    assert stat.S_IMODE(out_file.stat().st_mode) == 0o600
    assert sorted(p.name for p in root.parent.iterdir()) == ["manifests", "plan.json"]  # no temp file left


def test_apply_refuses_a_saved_plan_that_is_a_link(rig, capsys) -> None:
    root, connect, emulator = rig
    real = root.parent / "real-plan.json"
    code, _, err = run_cli(["plan", str(root), *connect, "--out", str(real)], capsys)
    assert code == 0, err
    link = root.parent / "plan.json"
    link.symlink_to(real)
    before = len(emulator.requests)
    code, _, err = run_cli(["apply", "--plan", str(link), str(root), *connect, "--auto-approve"], capsys)
    assert code == 1
    assert f"The saved plan {link} is a symbolic link" in err
    assert len(emulator.requests) == before


# --- the audit log ----------------------------------------------------------------------------

def test_an_audit_log_that_is_a_planted_link_is_refused_before_any_call(rig, outside: Path, capsys) -> None:
    root, connect, emulator = rig
    log = root.parent / "audit.jsonl"
    log.symlink_to(outside)
    code, _, err = run_cli(["apply", str(root), *connect, "--auto-approve", "--audit-log", str(log)], capsys)
    assert code == 1
    assert f"The audit log {log} is a symbolic link (to {outside})" in err
    assert _untouched(outside)
    assert emulator.requests == []


# --- the manifest path ------------------------------------------------------------------------

def _manifests_elsewhere(tmp_path: Path) -> Path:
    """A manifest directory outside the repository whose keys must not be printed."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "leak.yaml").write_text("version: 1\nworkspaces:\n  hunter2-secret-key: {id: 42}\n",
                                         encoding="utf-8")
    return elsewhere


@pytest.mark.parametrize("command", [["validate"], ["plan"], ["apply", "--auto-approve"], ["state", "list"]])
def test_a_manifest_path_that_is_a_link_outside_is_refused_unread(rig, tmp_path: Path, capsys,
                                                                 command: list[str]) -> None:
    _, connect, emulator = rig
    link = tmp_path / "repo" / "linked"
    link.symlink_to(_manifests_elsewhere(tmp_path))
    extra = connect if command[0] in ("plan", "apply") else []
    code, out, err = run_cli([*command, str(link), *extra], capsys)
    assert code == 1
    assert f"{link}" in err and "is a symbolic link" in err
    assert "hunter2" not in out + err
    assert list((tmp_path / "elsewhere").iterdir()) == [tmp_path / "elsewhere" / "leak.yaml"]  # no lock, no state
    assert emulator.requests == []
