"""The state lock: an id per lock, a dead holder on this host named as such,
``force-unlock ID``, a lock file that is complete or absent, SIGTERM."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from reconciler.errors import StateError
from reconciler.state import StateLock
from reconciler.state.lock import dead_lock_warning, wait_for
from tests.e2e.conftest import ROOT, TOKEN, run_cli
from tests.e2e.counted_emulator import counted_emulator, in_flight
from tests.waiting import read_line, said, wait_until

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
    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(state)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        lock_id = read_line(holder).strip()  # printed once the lock is taken
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


def test_the_lock_file_names_the_holder_its_command_its_start_in_utc_and_its_python(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    with StateLock(state, command="reconciler apply") as lock:
        info = json.loads(_lock_file(state).read_text(encoding="utf-8"))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", info.pop("since"))
    assert info == {"id": lock.id, "pid": os.getpid(), "host": socket.gethostname(), "command": "reconciler apply",
                    "python": sys.executable}


def test_a_state_directory_that_cannot_be_created_is_refused_before_the_lock(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    state = tmp_path / "a-file" / "states" / "s.json"
    with pytest.raises(StateError) as refused:
        with StateLock(state, command="reconciler apply"):
            pass
    assert str(refused.value) == (
        f"Cannot use the state file {state}: the directory {state.parent} does not exist and cannot be created (Not "
        "a directory). Choose another place with --state FILE. Nothing was changed.")


def test_plan_is_told_of_a_lock_left_by_a_killed_process_word_for_word(killed_holder: tuple[Path, int, str]) -> None:
    state, pid, lock_id = killed_holder
    since = json.loads(_lock_file(state).read_text(encoding="utf-8"))["since"]
    assert dead_lock_warning(state) == (
        f'The state {state} is still locked by "reconciler apply" (lock ID {lock_id}, since {since}), held by pid '
        f"{pid} on this host, which is no longer running: it was killed or crashed, and a change it made may be "
        "missing from the state, so this plan may show it as still to do. Once you are sure that command is gone, "
        f"remove the lock with 'reconciler force-unlock {lock_id} --state {state}' and apply again: the apply "
        "converges on the manifests.")


def test_plan_says_nothing_of_a_lock_without_a_dead_holder(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    assert dead_lock_warning(state) is None  # no lock
    _lock_file(state).write_bytes(b"")
    assert dead_lock_warning(state) is None  # a lock that names no holder
    _lock_file(state).unlink()
    with StateLock(state, command="reconciler apply"):
        assert dead_lock_warning(state) is None  # a holder that runs


def test_a_lock_left_by_a_killed_process_on_this_host_is_taken_over_and_said_so(
        killed_holder: tuple[Path, int, str]) -> None:
    state, pid, lock_id = killed_holder
    since = json.loads(_lock_file(state).read_text(encoding="utf-8"))["since"]
    with StateLock(state, command="reconciler apply") as lock:
        assert json.loads(_lock_file(state).read_text(encoding="utf-8"))["id"] == lock.id
    assert lock.taken_over == (
        f'Took over the lock of the state {state} left by "reconciler apply" (lock ID {lock_id}, since {since}): '
        f"pid {pid} on this host is no longer running, so it was killed or crashed. A change it was making may be "
        "missing from the state; this command goes on from what the state records.")
    assert list(state.parent.iterdir()) == [], "neither the dead lock nor the new one is left behind"


def test_a_lock_taken_without_a_dead_holder_says_nothing_of_a_takeover(tmp_path: Path) -> None:
    with StateLock(tmp_path / "s.json", command="reconciler apply") as lock:
        pass
    assert lock.taken_over is None


def _before_the_flock(monkeypatch: pytest.MonkeyPatch, meanwhile: Callable[[], object]) -> None:
    """Run ``meanwhile`` once, just before the lock's next ``flock`` is taken: another command's step
    landing between this one's first read of the lock and its takeover."""
    real_flock = fcntl.flock
    pending: list[Callable[[], object]] = [meanwhile]

    def flock(fd: int, operation: int) -> None:
        if pending:
            pending.pop()()
        real_flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", flock)


def test_a_dead_holders_lock_taken_over_meanwhile_by_a_live_one_is_not_taken(
        killed_holder: tuple[Path, int, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Two commands take over one dead lock at once: the slower, reading the
    lock again under the flock, finds the faster's and is refused as by any
    live holder; the faster's lock stays."""
    state, _pid, _lock_id = killed_holder
    live = {"id": "faster", "pid": os.getpid(), "host": socket.gethostname(), "command": "reconciler apply",
            "since": "now"}
    _before_the_flock(monkeypatch, lambda: _lock_file(state).write_text(json.dumps(live), encoding="utf-8"))
    with pytest.raises(StateError, match="locked by \"reconciler apply\" \\(pid"):
        with StateLock(state, command="slower apply"):
            pass
    assert json.loads(_lock_file(state).read_text(encoding="utf-8"))["id"] == "faster"
    assert [p.name for p in state.parent.iterdir()] == [_lock_file(state).name]


def test_a_dead_holders_lock_removed_meanwhile_is_taken_as_a_free_one(
        killed_holder: tuple[Path, int, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Someone removes the dead lock (force-unlock) between this command's
    read of it and its takeover: the lock is free, and taken as such."""
    state, _pid, _lock_id = killed_holder
    _before_the_flock(monkeypatch, _lock_file(state).unlink)
    with StateLock(state, command="reconciler apply") as lock:
        assert json.loads(_lock_file(state).read_text(encoding="utf-8"))["id"] == lock.id
    assert lock.taken_over is None and list(state.parent.iterdir()) == []


def test_of_three_commands_meeting_a_dead_lock_exactly_one_holds_it(
        killed_holder: tuple[Path, int, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A takes the dead lock over while B, which read the dead lock first,
    waits for the flock; then C tries. The old takeover renamed the lock
    aside, so C could take the free name and B then removed A's lock: two
    holders. Now B and C are refused naming A, and A's lock stays."""
    state, _pid, _lock_id = killed_holder
    held: list[StateLock] = []
    _before_the_flock(monkeypatch, lambda: held.append(StateLock(state, command="A").__enter__()))
    with pytest.raises(StateError) as b_refused:
        with StateLock(state, command="B"):
            pass
    with pytest.raises(StateError) as c_refused:
        with StateLock(state, command="C"):
            pass
    (a,) = held
    assert a.taken_over is not None
    for refused in (b_refused, c_refused):
        assert str(refused.value).startswith(f'The state {state} is locked by "A" (pid {os.getpid()}'), refused.value
    assert json.loads(_lock_file(state).read_text(encoding="utf-8"))["id"] == a.id
    a.__exit__(None, None, None)
    assert list(state.parent.iterdir()) == []


def test_an_apply_takes_over_a_dead_holders_lock_and_says_so_on_stderr_and_in_the_audit_log(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    project = tmp_path / "quickstart"
    shutil.copytree(ROOT / "examples" / "quickstart", project)
    state = tmp_path / "s.json"
    pid, lock_id = leave_lock_of_killed_process(state)
    since = json.loads(_lock_file(state).read_text(encoding="utf-8"))["since"]
    log = tmp_path / "audit.jsonl"
    code, _out, err = run_cli(["apply", str(project), "--emulator", str(tmp_path / "emu.json"), "--seed",
                               str(project / "seed.yaml"), "--state", str(state), "--auto-approve",
                               "--audit-log", str(log)], capsys)
    said = (f'Took over the lock of the state {state} left by "reconciler apply" (lock ID {lock_id}, since {since}): '
            f"pid {pid} on this host is no longer running, so it was killed or crashed. A change it was making may be "
            "missing from the state; this command goes on from what the state records.")
    assert code == 0 and said in err.splitlines()
    first = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    assert (first["event"], first["message"], first["method"]) == ("lock-taken-over", said, None)
    assert not _lock_file(state).exists()


def test_state_rm_after_a_killed_command_says_it_took_the_lock_over(
        killed_holder: tuple[Path, int, str], capsys: pytest.CaptureFixture[str]) -> None:
    state, pid, lock_id = killed_holder
    state.write_text(json.dumps({"version": 1, "lineage": "l", "serial": 3,
                                 "resources": {"workspace.a": {"id": "ws_1"}}}), encoding="utf-8")
    code, out, _err = run_cli(["state", "rm", "workspace.a", "--state", str(state)], capsys)
    assert code == 0
    assert out.splitlines()[0].startswith(f'Took over the lock of the state {state} left by "reconciler apply" '
                                          f"(lock ID {lock_id}, since ")
    assert out.splitlines()[1].startswith("Removed workspace.a (workspace ws_1)")


# -- --lock-timeout ----------------------------------------------------------------


def test_a_lock_timeout_waits_for_the_holder_to_release_then_takes_the_lock(tmp_path: Path) -> None:
    """The wait is observed through the pauses it makes (no clock read by
    the test): the holder releases during the second pause."""
    state = tmp_path / "s.json"
    holder = StateLock(state, command="first apply").__enter__()
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 2:
            holder.__exit__(None, None, None)

    with StateLock(state, command="second apply", timeout=60, pause=pause) as second:
        assert json.loads(_lock_file(state).read_text(encoding="utf-8"))["id"] == second.id
    assert pauses == [0.1, 0.2]


class _Clock:
    """A clock that moves only when the waiting pauses, by what it pauses."""

    def __init__(self) -> None:
        self.now = 0.0
        self.pauses: list[float] = []

    def __call__(self) -> float:
        return self.now

    def pause(self, seconds: float) -> None:
        assert len(self.pauses) < 20, f"still pausing at the deadline: {self.pauses}"
        self.pauses.append(seconds)
        self.now += seconds


def test_a_lock_timeout_asks_often_at_first_then_every_2_s_and_stops_at_the_deadline() -> None:
    clock, said = _Clock(), []
    assert wait_for(lambda: False, timeout=8.5, pause=clock.pause, clock=clock,
                    waiting=lambda: said.append("waiting")) is False
    assert clock.pauses == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0, 1.4])
    assert (clock.now, said) == (8.5, ["waiting"])


def test_without_a_lock_timeout_the_lock_is_tried_once() -> None:
    clock, tries = _Clock(), []

    def take() -> bool:
        tries.append("tried")
        return False

    assert wait_for(take, timeout=0, pause=clock.pause, clock=clock) is False
    assert (tries, clock.pauses) == (["tried"], [])


def test_without_a_lock_timeout_a_held_lock_is_refused_at_once(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    pauses: list[float] = []
    with StateLock(state, command="first apply"):
        with pytest.raises(StateError):
            with StateLock(state, command="second apply", pause=pauses.append):
                pass
    assert pauses == []


def test_when_the_lock_timeout_runs_out_the_refusal_is_the_one_without_it(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    with StateLock(state, command="first apply") as held:
        with pytest.raises(StateError) as at_once:
            with StateLock(state, command="second apply"):
                pass
        with pytest.raises(StateError) as waited:
            with StateLock(state, command="second apply", timeout=0.3):
                pass
    assert str(waited.value) == str(at_once.value)
    assert str(waited.value).startswith(f'The state {state} is locked by "first apply" (pid {os.getpid()} on ')
    assert f"lock ID {held.id}): another command is running against it." in str(waited.value)


@pytest.mark.parametrize(("given", "seconds"), [("30s", 30.0), ("5m", 300.0), ("1h30m", 5400.0),
                                                ("500ms", 0.5), ("90", 90.0), ("0s", 0.0)])
def test_lock_timeout_durations_are_read_as_terraform_writes_them(given: str, seconds: float) -> None:
    from reconciler.cli import DurationType

    assert DurationType().convert(given, None, None) == seconds


def test_a_lock_timeout_that_is_no_duration_is_refused_in_one_line(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["state", "rm", "workspace.a", "--state", str(tmp_path / "s.json"),
                              "--lock-timeout", "soon"], capsys)
    assert (code, out) == (1, "")
    assert err == ("Error: Invalid value for '--lock-timeout': 'soon' is not a duration: write it as 30s, 5m, "
                   "1h30m, 500ms, or a number of seconds.\nRun 'reconciler state rm --help' for usage.\n")


@pytest.mark.parametrize("argv", [
    ["apply"], ["import", "workspace.a", "ws_1"], ["state", "rm", "workspace.a"],
    ["state", "mv", "workspace.a", "workspace.b"], ["state", "push", "FILE"], ["state", "pull"]])
def test_every_command_that_takes_the_lock_has_lock_timeout(argv: list[str]) -> None:
    from click.testing import CliRunner

    from reconciler.cli import cli

    words = [w for w in argv if w in ("apply", "import", "state", "rm", "mv", "push", "pull")]
    result = CliRunner().invoke(cli, [*words, "--help"])
    assert "--lock-timeout DURATION" in result.output, result.output


def test_state_rm_waits_with_lock_timeout_then_refuses_as_without_it(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "s.json"
    with StateLock(state, command="reconciler apply") as held:
        code, out, err = run_cli(["state", "rm", "workspace.a", "--state", str(state), "--lock-timeout", "200ms"],
                                 capsys)
    assert (code, out) == (1, "")
    assert f"lock ID {held.id}): another command is running against it." in err


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
    # Counting its requests: the signal is sent once the apply's request is seen held there.
    with counted_emulator("--seed", str(project / "seed.yaml"), "--fault",
                          "method=*,path=.*,kind=latency,seconds=30", cwd=ROOT) as base_url:
        env = {**os.environ, "RECONCILER_TOKEN": TOKEN}
        apply = subprocess.Popen([*reconciler, "apply", str(project), "--base-url", base_url, "--auto-approve",
                                  "--state", str(state)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, env=env, cwd=ROOT)
        try:
            wait_until(lambda: _lock_file(state).exists() and in_flight(base_url) > 0 or apply.poll() is not None,
                       what=lambda: f"the apply neither took the lock nor asked the emulator: {said(apply)}")
            assert apply.poll() is None, f"the apply exited before it was signalled: {said(apply)}"
            assert _lock_file(state).exists(), "the apply never took the lock"
            apply.send_signal(signal.SIGTERM)  # in the lock, waiting on an answer the emulator holds for 30 s
            out, err = apply.communicate(timeout=120)
        finally:
            apply.kill()  # only when something above failed: reaped already otherwise
    assert apply.returncode == 143, (apply.returncode, err)
    assert not _lock_file(state).exists()
    assert "Terminated" in err and "Traceback" not in err


def test_main_restores_the_sigterm_handler_it_installs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = signal.getsignal(signal.SIGTERM)
    run_cli(["state", "list", "--state", str(tmp_path / "s.json")], capsys)
    assert signal.getsignal(signal.SIGTERM) is before


# -- the refusals, word for word ------------------------------------------------------


def test_a_full_disk_while_taking_the_lock_is_said_with_the_errno_name(tmp_path: Path,
                                                                      disk_full: Callable[[], None]) -> None:
    state = tmp_path / "s.json"
    disk_full()
    with pytest.raises(StateError) as err:
        with StateLock(state, command="reconciler apply"):
            pass
    assert str(err.value) == (f"Cannot take the lock {_lock_file(state)}: No space left on device (ENOSPC); no lock "
                              "file was left behind. Nothing was changed.")


def test_a_directory_the_lock_cannot_be_written_in_is_said_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(src: object, dst: object, **kwargs: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "link", refused)
    state = tmp_path / "s.json"
    with pytest.raises(StateError) as err:
        with StateLock(state, command="reconciler apply"):
            pass
    assert str(err.value) == (
        f"Cannot use the state file {state}: the directory {tmp_path} is not writable (Permission denied); the "
        "state and its lock are written there. Choose a writable place with --state FILE. Nothing was changed.")
    assert list(tmp_path.iterdir()) == []


def test_a_lock_taken_without_hard_links_is_readable_by_all_and_writable_by_its_owner(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_links(src: object, dst: object, **kwargs: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    old = os.umask(0o022)
    try:
        with StateLock(tmp_path / "s.json", command="a"):
            assert _lock_file(tmp_path / "s.json").stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(old)


def test_an_empty_lock_file_is_refused_as_an_unknown_process(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    _lock_file(state).write_bytes(b"")
    with pytest.raises(StateError) as err:
        with StateLock(state, command="b"):
            pass
    lock = _lock_file(state)
    assert str(err.value) == (
        f"The state {state} is locked by an unknown process: the lock file {lock} is empty or unreadable (written "
        "by an older reconciler, or by hand), and has no lock ID. If no reconciler command is running against this "
        f"state, delete {lock}.")


def test_the_force_unlock_offered_quotes_a_state_path_with_a_space(tmp_path: Path) -> None:
    state = tmp_path / "my state.json"
    with StateLock(state, command="a") as held:
        with pytest.raises(StateError) as err:
            with StateLock(state, command="b"):
                pass
    assert str(err.value).endswith(
        f"remove the lock with 'reconciler force-unlock {held.id} --state '{tmp_path}/my state.json''.")


def test_a_command_waiting_under_lock_timeout_says_who_holds_the_lock_then_names_it_when_it_gives_up(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 41 item 9: --lock-timeout used to wait without a word. The waiting
    line comes once, at once, on stderr; the refusal after it is the one without
    --lock-timeout."""
    state = tmp_path / "s.json"
    (tmp_path / "m.yaml").write_text("version: 1\nworkspaces:\n  a:\n    id: ws_a\n", encoding="utf-8")
    with StateLock(state, command="reconciler apply") as held:
        code, out, err = run_cli(["state", "rm", "workspace.a", str(tmp_path), "--state", str(state),
                                  "--lock-timeout", "300ms"], capsys)
    holder = f'"reconciler apply" (pid {os.getpid()} on {socket.gethostname()}, since '
    lines = err.splitlines()
    assert (code, out, len(lines)) == (1, "", 2), err
    assert lines[0].startswith(f"The state {state} is locked by {holder}")
    assert lines[0].endswith(f", lock ID {held.id}); waiting up to 0.3s for it (--lock-timeout).")
    assert lines[1].startswith(f"Error: The state {state} is locked by {holder}")
    assert "another command is running against it. Wait for it to finish." in lines[1]
