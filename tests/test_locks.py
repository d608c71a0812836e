"""The state lock: an id per lock, a dead holder on this host named as such,
``force-unlock ID``, a lock file that is complete or absent, SIGTERM."""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from reconciler.errors import StateError
from reconciler.state import StateLock
from tests.e2e.conftest import ROOT, TOKEN, run_cli

LOCK_HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from reconciler.state import StateLock
    with StateLock(Path(sys.argv[1]), command="reconciler apply") as lock:
        print(lock.id, flush=True)
        time.sleep(60)
""")


def _lock_file(state: Path) -> Path:
    return state.with_name(state.name + ".lock")


def leave_lock_of_killed_process(state: Path) -> tuple[int, str]:
    """Take the lock of ``state`` in a process killed with SIGKILL on this
    host, as ``kill -9`` leaves it: (dead pid, lock id)."""
    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(state)], stdout=subprocess.PIPE, text=True,
                              cwd=ROOT)
    try:
        assert holder.stdout is not None
        lock_id = holder.stdout.readline().strip()
    finally:
        holder.kill()
        holder.wait()  # reaped: a zombie would still answer os.kill(pid, 0)
    return holder.pid, lock_id


@pytest.fixture
def killed_holder(tmp_path: Path) -> tuple[Path, int, str]:
    """(state path, dead pid, lock id) of a lock left by ``kill -9``."""
    state = tmp_path / "s.json"
    return (state, *leave_lock_of_killed_process(state))


def test_each_lock_has_its_own_id_written_in_the_lock_file(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    ids = []
    for _ in range(2):
        with StateLock(state, command="reconciler apply") as lock:
            info = json.loads(_lock_file(state).read_text(encoding="utf-8"))
            assert info["id"] == lock.id and info["pid"] == os.getpid() and info["host"] == socket.gethostname()
            ids.append(lock.id)
    assert ids[0] != ids[1] and all(len(i) >= 8 for i in ids)


def test_a_lock_left_by_a_killed_process_on_this_host_is_named_as_dead(
        killed_holder: tuple[Path, int, str]) -> None:
    state, pid, lock_id = killed_holder
    assert _lock_file(state).exists()
    with pytest.raises(StateError) as err:
        with StateLock(state, command="reconciler apply"):
            pass
    message = str(err.value)
    assert f"held by pid {pid} on this host, which is no longer running" in message
    assert f"reconciler force-unlock {lock_id}" in message
    assert _lock_file(state).exists(), "a dead holder's lock is reported, never broken silently"


def test_a_running_holder_is_not_called_dead_and_force_unlock_is_offered(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    with StateLock(state, command="reconciler apply") as held:
        with pytest.raises(StateError) as err:
            with StateLock(state, command="reconciler apply"):
                pass
    message = str(err.value)
    assert 'locked by "reconciler apply" (pid' in message and "no longer running" not in message
    assert f"reconciler force-unlock {held.id}" in message


def test_a_holder_on_another_host_is_never_called_dead(tmp_path: Path,
                                                       killed_holder: tuple[Path, int, str]) -> None:
    state, pid, lock_id = killed_holder
    lock = _lock_file(state)
    info = json.loads(lock.read_text(encoding="utf-8"))
    lock.write_text(json.dumps({**info, "host": "ci-runner-elsewhere"}), encoding="utf-8")
    with pytest.raises(StateError) as err:
        with StateLock(state, command="reconciler apply"):
            pass
    assert "no longer running" not in str(err.value)
    assert f"pid {pid} on ci-runner-elsewhere" in str(err.value)


def test_release_leaves_a_lock_that_is_no_longer_its_own(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    with StateLock(state, command="slow apply"):
        # Someone force-unlocked this holder and another command took the lock.
        _lock_file(state).write_text(json.dumps({"id": "someone-else", "pid": 1, "host": "h"}), encoding="utf-8")
    assert json.loads(_lock_file(state).read_text(encoding="utf-8"))["id"] == "someone-else"


# -- force-unlock --------------------------------------------------------------


def test_force_unlock_with_the_lock_id_removes_a_dead_holders_lock(
        killed_holder: tuple[Path, int, str], capsys: pytest.CaptureFixture[str]) -> None:
    state, pid, lock_id = killed_holder
    code, out, err = run_cli(["force-unlock", lock_id, "--state", str(state)], capsys)
    assert (code, err) == (0, "")
    assert f"Removed the lock {lock_id}" in out and f"pid {pid}" in out
    assert not _lock_file(state).exists()
    with StateLock(state, command="reconciler apply"):
        pass


def test_force_unlock_with_another_id_keeps_the_lock(killed_holder: tuple[Path, int, str],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    state, _pid, lock_id = killed_holder
    code, out, err = run_cli(["force-unlock", "0123abcd", "--state", str(state)], capsys)
    assert code == 1 and out == ""
    assert f"has ID {lock_id}, not 0123abcd" in err and "was not removed" in err
    assert _lock_file(state).exists()


def test_force_unlock_without_a_lock_says_there_is_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "s.json"
    code, _out, err = run_cli(["force-unlock", "0123abcd", "--state", str(state)], capsys)
    assert code == 1
    assert f"The state {state} is not locked" in err


def test_force_unlock_finds_the_default_state_beside_the_manifests(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "reconciler.state.json"
    _pid, lock_id = leave_lock_of_killed_process(state)
    code, out, _err = run_cli(["force-unlock", lock_id, str(tmp_path)], capsys)
    assert code == 0 and f"Removed the lock {lock_id}" in out
    assert not _lock_file(state).exists()


def test_force_unlock_refuses_while_the_holder_runs_on_this_host(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "s.json"
    with StateLock(state, command="reconciler apply") as lock:
        code, _out, err = run_cli(["force-unlock", lock.id, "--state", str(state)], capsys)
        assert code == 1
        assert f"pid {os.getpid()} on this host is still running" in err
        assert _lock_file(state).exists()


def test_force_unlock_of_a_lock_without_id_says_to_delete_it_by_hand(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "s.json"
    _lock_file(state).write_text("", encoding="utf-8")  # as left by an older reconciler on a full disk
    code, _out, err = run_cli(["force-unlock", "0123abcd", "--state", str(state)], capsys)
    assert code == 1 and "has no lock ID" in err and f"delete {_lock_file(state)}" in err


# -- a lock file is complete or absent -------------------------------------------------


def test_a_full_disk_while_taking_the_lock_leaves_no_lock_file(tmp_path: Path,
                                                               disk_full: Callable[[], None]) -> None:
    state = tmp_path / "s.json"
    disk_full()
    with pytest.raises(StateError) as err:
        with StateLock(state, command="reconciler apply"):
            pass
    assert "No space left on device" in str(err.value) and str(_lock_file(state)) in str(err.value)
    assert list(tmp_path.iterdir()) == [], "neither an empty lock nor a temp file is left"


def test_a_lock_write_cut_short_by_a_real_write_error_leaves_no_lock_file(tmp_path: Path) -> None:
    """The file-size limit makes the kernel refuse the write (EFBIG), as a
    full disk refuses it (ENOSPC): no mock involved."""
    state = tmp_path / "s.json"
    script = textwrap.dedent("""
        import resource, signal, sys
        from pathlib import Path
        from reconciler.errors import StateError
        from reconciler.state import StateLock
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
        try:
            with StateLock(Path(sys.argv[1]), command="reconciler apply"):
                print("locked")
        except StateError as exc:
            print("refused:", exc)
    """)
    result = subprocess.run([sys.executable, "-c", script, str(state)], capture_output=True, text=True, cwd=ROOT,
                            timeout=60)
    assert result.stdout.startswith("refused:"), result.stdout + result.stderr
    assert not _lock_file(state).exists()
    with StateLock(state, command="next apply"):  # the next command is not blocked by "an unknown process"
        pass


def test_the_lock_works_where_the_filesystem_has_no_hard_links(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    def no_links(src: object, dst: object, **kwargs: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    state = tmp_path / "s.json"
    with StateLock(state, command="a") as lock:
        assert json.loads(_lock_file(state).read_text(encoding="utf-8"))["id"] == lock.id
        with pytest.raises(StateError, match='locked by "a"'):
            with StateLock(state, command="b"):
                pass
    assert list(tmp_path.iterdir()) == []


# -- SIGTERM ---------------------------------------------------------------------


def test_sigterm_during_apply_releases_the_lock_and_exits_143(tmp_path: Path) -> None:
    """What CI sends when a job is cancelled: the apply hangs inside the lock
    on an answer that takes 30 s, and is terminated."""
    import shutil

    project = tmp_path / "quickstart"
    shutil.copytree(ROOT / "examples" / "quickstart", project)
    state = tmp_path / "s.json"
    reconciler = [sys.executable, "-m", "reconciler"]
    server = subprocess.Popen([*reconciler, "emulator", "serve", "--port", "0", "--seed",
                               str(project / "seed.yaml"), "--fault", "method=*,path=.*,kind=latency,seconds=30"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()  # the first line names the address
        found = re.search(r"http://[\w.:\[\]-]+", line)
        assert found, f"emulator serve printed no address first: {line!r}"
        base_url = found.group(0)
        env = {**os.environ, "RECONCILER_TOKEN": TOKEN}
        apply = subprocess.Popen([*reconciler, "apply", str(project), "--base-url", base_url, "--auto-approve",
                                  "--state", str(state)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, env=env, cwd=ROOT)
        deadline = time.monotonic() + 20
        while not _lock_file(state).exists() and time.monotonic() < deadline and apply.poll() is None:
            time.sleep(0.02)
        assert _lock_file(state).exists(), "the apply never took the lock"
        time.sleep(0.5)  # well into the 30 s answer
        apply.send_signal(signal.SIGTERM)
        out, err = apply.communicate(timeout=20)
    finally:
        server.kill()  # a graceful stop would wait for the 30 s answer still being served
        server.communicate(timeout=20)
    assert apply.returncode == 143, (apply.returncode, err)
    assert not _lock_file(state).exists()
    assert "Terminated" in err and "Traceback" not in err


def test_main_restores_the_sigterm_handler_it_installs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = signal.getsignal(signal.SIGTERM)
    run_cli(["state", "list", "--state", str(tmp_path / "s.json")], capsys)
    assert signal.getsignal(signal.SIGTERM) is before
