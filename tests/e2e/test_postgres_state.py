"""A state shared by a team in PostgreSQL, end to end: ``reconciler`` in
subprocesses against ``reconciler emulator serve`` and the session's
throwaway PostgreSQL cluster (tests/pg_cluster.py).

The crash harness of tests/e2e/test_crash.py is reused: the same manifests,
emulator faults and recovery, with ``--state postgresql://...``.
"""

from __future__ import annotations

import random
import signal
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from reconciler.state import AccessRecord, ResourceState, State, write_state
from reconciler.state.backend import StateBackend, open_backend
from tests.e2e.test_crash import (
    RECONCILER,
    Run,
    Workdir,
    _apply_until_done,
    _check_service,
    TIME_SCALE,
    _calibrate,
    _crash_run,
    _env,
    emulator_serving,
    recover,
)
from tests.pg_cluster import PASSWORD, Cluster
from tests.waiting import said, wait_until

KILLS = 20
SEED = 20261126
WORKERS = 4


def _backend(url: str) -> StateBackend:
    return open_backend(url)


def pg_workdir(cluster: Cluster) -> type[Workdir]:
    """A crash-test work directory whose state is a fresh key in the cluster."""

    class PgWorkdir(Workdir):
        def __init__(self, root: Path) -> None:
            super().__init__(root)
            self.url = cluster.url()

        def state_arg(self) -> str:
            return self.url

        def load(self) -> State | None:
            store = _backend(self.url)
            try:
                return store.load() if store.exists() else None
            finally:
                store.close()

        def break_stale_lock(self, run: Run, killed_pid: int) -> None:
            """Nothing to break: the server released the lock with the killed session."""
            key = self.url.rsplit("key=", 1)[1]
            rows = cluster.admin_sql(f"SELECT pid FROM reconciler.locks WHERE key = '{key}'", "states")
            run.lock_left = bool(rows)
            assert rows in ([], [(killed_pid,)]), rows
            store = _backend(self.url)
            try:
                with store.lock("tests: the lock is free"):
                    pass
            finally:
                store.close()

        def assert_unlocked(self) -> None:
            key = self.url.rsplit("key=", 1)[1]
            assert cluster.admin_sql(f"SELECT count(*) FROM reconciler.locks WHERE key = '{key}'", "states") == [(0,)]

        def locked_by(self, pid: int) -> bool:
            """Whether process ``pid`` holds the state's lock now (its row names it)."""
            return _lock_row(cluster, self.url, pid) is not None

    return PgWorkdir


@pytest.fixture
def pg_work(pg_cluster: Cluster, pg_state: str) -> type[Workdir]:
    return pg_workdir(pg_cluster)


def _no_password(*outputs: str) -> None:
    for output in outputs:
        assert PASSWORD not in output


def _popen_apply(work: Workdir) -> subprocess.Popen[str]:
    return subprocess.Popen([*RECONCILER, *work.apply_args()], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env(), cwd=work.root)


def _lock_row(cluster: Cluster, url: str, pid: int) -> int | None:
    """The server pid of the session of process ``pid`` when it holds the lock of ``url``'s state."""
    import psycopg

    key = url.rsplit("key=", 1)[1]
    try:
        rows = cluster.admin_sql(f"SELECT backend_pid FROM reconciler.locks WHERE key = '{key}' AND pid = {pid}",
                                 "states")
    except psycopg.errors.UndefinedTable:
        return None  # no command has created the tables yet
    return int(str(rows[0][0])) if rows else None


def _wait_for_lock(cluster: Cluster, url: str, pid: int, apply: subprocess.Popen[str]) -> int:
    """The server pid of ``pid``'s session, once it holds the lock; fails, with what the apply
    printed, when it exits first or takes no lock within the deadline."""
    return wait_until(lambda: _lock_row(cluster, url, pid) or _still_running(apply), every=0.025,
                      what=lambda: f"the apply never took the lock: {said(apply)}")


def _still_running(apply: subprocess.Popen[str]) -> None:
    """Nothing while ``apply`` runs; an AssertionError with what it printed once it has exited."""
    if apply.poll() is not None:
        raise AssertionError(f"the apply exited while it was waited for: {said(apply)}")


def _session_gone(cluster: Cluster, session: int) -> bool:
    return cluster.admin_sql(f"SELECT count(*) FROM pg_stat_activity WHERE pid = {session}") == [(0,)]


def test_an_apply_is_refused_while_another_holds_the_lock_naming_it(
        pg_work: type[Workdir], tmp_path: Path) -> None:
    work = pg_work(tmp_path / "ci")
    holder = _backend(work.state_arg())
    with emulator_serving(work), holder.lock("reconciler apply") as lock:
        refused = work.reconciler(*work.apply_args())
    holder.close()
    assert refused.returncode == 1
    assert f'is locked by "reconciler apply" (pid {__import__("os").getpid()} on ' in refused.stderr
    assert f"lock ID {lock.id}): another command is running against it. Wait for it to finish." in refused.stderr
    assert "Traceback" not in refused.stderr
    assert work.load() is None  # nothing was recorded, nothing applied


def test_two_applies_from_two_directories_at_once_make_each_change_once(
        pg_work: type[Workdir], tmp_path: Path) -> None:
    laptop, ci = pg_work(tmp_path / "laptop"), pg_work(tmp_path / "ci")
    ci.url = laptop.url  # one state, two checkouts
    run = Run(delay=0)
    with emulator_serving(laptop):
        ci.base_url = laptop.base_url
        applies = {"laptop": _popen_apply(laptop), "ci": _popen_apply(ci)}
        outcomes = {name: (apply.wait(timeout=120), *apply.communicate()) for name, apply in applies.items()}
        for name, (code, out, err) in outcomes.items():
            other = applies["ci" if name == "laptop" else "laptop"]
            # One waits its turn: refused with the holder named, never both writing.
            assert code == 0 or f'is locked by "reconciler apply" (pid {other.pid} on ' in err, err
            _no_password(out, err)
        assert any(code == 0 for code, _, _ in outcomes.values())
        _apply_until_done(ci, run)  # the refused one runs again, as a person would
        plan = ci.reconciler("plan", str(ci.project), "--base-url", ci.base_url, "--state", ci.state_arg())
        assert plan.returncode == 0 and "No changes." in plan.stdout, plan.stdout + plan.stderr
        _check_service(laptop, run)  # one workspace per entry, two credits spent, each asset once
    assert run.imports == []


def test_kill_9_of_the_holder_frees_the_lock_for_the_next_apply(
        pg_work: type[Workdir], pg_cluster: Cluster, tmp_path: Path) -> None:
    work = pg_work(tmp_path / "ci")
    with emulator_serving(work):
        apply = _popen_apply(work)
        _wait_for_lock(pg_cluster, work.url, apply.pid, apply)  # type: ignore[attr-defined]
        apply.kill()
        apply.communicate()
        again = work.reconciler(*work.apply_args())  # no force-unlock, no waiting
        assert again.returncode == 0, again.stderr
        plan = work.reconciler("plan", str(work.project), "--base-url", work.base_url, "--state", work.state_arg())
        assert "No changes." in plan.stdout, plan.stdout + plan.stderr


# Every write answered after 0.3 s of wall time: an apply spends seconds between its first journal
# row and its fold, so a kill made once a row is committed always lands in that window.
SLOW_WRITES = tuple(f"method={m},path=.*,kind=latency,seconds={0.3 * TIME_SCALE},times=always"
                    for m in ("PUT", "PATCH"))


def _journal_rows(cluster: Cluster, key: str) -> int:
    import psycopg

    try:
        return int(str(cluster.admin_sql(f"SELECT count(*) FROM reconciler.journal WHERE key = '{key}'",
                                         "states")[0][0]))
    except psycopg.errors.UndefinedTable:
        return 0  # the apply has not created the tables yet


def _wait_for_journal_rows(cluster: Cluster, key: str, apply: subprocess.Popen[str]) -> None:
    """Until the apply has committed a journal row (a change recorded); fails, with what the apply
    printed, when it exits first or records none within the deadline."""
    wait_until(lambda: _journal_rows(cluster, key) or _still_running(apply),
               what=lambda: f"the apply never recorded a change: {said(apply)}")


def test_kill_9_once_a_journal_row_is_committed_always_resumes_from_the_serial_after_it(
        pg_work: type[Workdir], pg_cluster: Cluster, tmp_path: Path) -> None:
    """Not at a random moment: the kill lands after the apply committed a
    change to the journal rows and before it folded them, every run, so a
    replay or fold off by one serial is caught each time."""
    work = pg_work(tmp_path / "ci")
    assert isinstance(work.url, str)  # type: ignore[attr-defined]
    key = work.url.rsplit("key=", 1)[1]  # type: ignore[attr-defined]
    with emulator_serving(work, SLOW_WRITES):
        apply = _popen_apply(work)
        _wait_for_journal_rows(pg_cluster, key, apply)
        apply.kill()
        apply.communicate()
        stored = pg_cluster.admin_sql(f"SELECT serial FROM reconciler.states WHERE key = '{key}'", "states")
        serial = int(str(stored[0][0])) if stored else 0
        bases = pg_cluster.admin_sql(f"SELECT DISTINCT base_serial FROM reconciler.journal WHERE key = '{key}'",
                                     "states")
        assert bases == [(serial,)], "the journal rows continue the stored serial"
        replayed = work.load()
        assert replayed is not None and replayed.serial == serial + 1 and replayed.resources
        run = Run(delay=0, killed=True)
        recover(work, run, apply.pid)
        assert run.serials[0] == serial + 1 and run.serials[-1] >= serial + 1


def test_a_session_cut_mid_apply_stops_it_and_the_next_apply_resumes(
        pg_work: type[Workdir], pg_cluster: Cluster, tmp_path: Path) -> None:
    work = pg_work(tmp_path / "ci")
    key = work.url.rsplit("key=", 1)[1]  # type: ignore[attr-defined]
    with emulator_serving(work):
        apply = _popen_apply(work)
        session = _wait_for_lock(pg_cluster, work.url, apply.pid, apply)  # type: ignore[attr-defined]
        _wait_for_journal_rows(pg_cluster, key, apply)  # a change in
        # Frozen while its session is cut, so the cut lands mid-apply, not after an apply that ran on.
        apply.send_signal(signal.SIGSTOP)
        try:
            assert work.locked_by(apply.pid), f"the apply ended before the cut: {said(apply)}"
            pg_cluster.admin_sql(f"SELECT pg_terminate_backend({session})")
            wait_until(lambda: _session_gone(pg_cluster, session), what=lambda: f"session {session} still there")
        finally:
            apply.send_signal(signal.SIGCONT)
        out, err = apply.communicate(timeout=120)
        assert apply.returncode == 1, out + err
        assert "The connection to the PostgreSQL state" in err and "was lost" in err, err
        assert "Traceback" not in err and "Internal error" not in err
        _no_password(out, err)
        run = Run(delay=0)
        _apply_until_done(work, run)
        plan = work.reconciler("plan", str(work.project), "--base-url", work.base_url, "--state", work.state_arg())
        assert "No changes." in plan.stdout, plan.stdout + plan.stderr
        _check_service(work, run)


def test_a_server_restarted_while_the_lock_is_held_stops_the_apply_cleanly(
        pg_work: type[Workdir], pg_cluster: Cluster, tmp_path: Path) -> None:
    work = pg_work(tmp_path / "ci")
    with emulator_serving(work):
        apply = _popen_apply(work)
        _wait_for_lock(pg_cluster, work.url, apply.pid, apply)  # type: ignore[attr-defined]
        # Frozen during the restart, so it comes while the lock is held, not after an apply that ran on.
        apply.send_signal(signal.SIGSTOP)
        try:
            assert work.locked_by(apply.pid), f"the apply ended before the restart: {said(apply)}"
            pg_cluster.restart()
        finally:
            apply.send_signal(signal.SIGCONT)
        out, err = apply.communicate(timeout=120)
        assert apply.returncode == 1, out + err
        assert "The connection to the PostgreSQL state" in err and "was lost" in err, err
        assert "Traceback" not in err and "Internal error" not in err
        run = Run(delay=0)
        _apply_until_done(work, run)
        plan = work.reconciler("plan", str(work.project), "--base-url", work.base_url, "--state", work.state_arg())
        assert "No changes." in plan.stdout, plan.stdout + plan.stderr
        _check_service(work, run)


def test_an_apply_killed_at_random_moments_with_the_state_in_postgresql_always_recovers(
        pg_work: type[Workdir], tmp_path: Path) -> None:
    """20 kills at seeded random moments; each run recovers with no manual
    step on the lock (the server released it), and converges without a
    workspace or an asset made twice (``_kill_and_recover`` checks)."""
    full = _calibrate(pg_work(tmp_path / "calibration"))
    rng = random.Random(SEED)
    delays = [rng.uniform(0.0, 0.9) * full for _ in range(KILLS)]
    with ThreadPoolExecutor(WORKERS) as pool:
        runs = list(pool.map(lambda i: _crash_run(tmp_path / f"run-{i:02d}", delays[i], pg_work), range(KILLS)))
    print(f"\npostgres crash test: {KILLS} kills, each while the apply held the lock, "
          f"{sum(r.attempts == 1 for r in runs)} of them at the first try (an apply holds the lock {full:.2f} s); "
          f"{sum(r.lock_left for r in runs)} left a lock row (the lock itself freed by the server); "
          f"{sum(bool(r.imports) for r in runs)} needed an import")
    assert len(runs) == KILLS and all(run.killed for run in runs)


# -- moving state -------------------------------------------------------------------


def _big_state(lists: int) -> State:
    resources = {
        f"group.g{n}.workspace.w": ResourceState(
            id=f"ws_{n}", access=AccessRecord(users={f"user{n}@example.com": "editor"},
                                              since={f"user:user{n}@example.com": "2026-11-25"}))
        for n in range(lists)
    }
    return State(resources=resources)


@pytest.fixture
def state_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "reconciler.state.json"
    yield path


def _cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*RECONCILER, *args], capture_output=True, env=_env(), timeout=120)


def test_push_then_pull_round_trips_a_10000_list_state_byte_for_byte(pg_state: str, state_file: Path) -> None:
    write_state(state_file, _big_state(10_000))
    pushed = _cli("state", "push", str(state_file), "--state", pg_state)
    assert pushed.returncode == 0, pushed.stderr
    assert pushed.stdout.decode().startswith("Pushed serial 1 of lineage ")
    pulled = _cli("state", "pull", "--state", pg_state)
    assert pulled.returncode == 0, pulled.stderr
    assert pulled.stdout == state_file.read_bytes()


def test_push_over_a_newer_serial_is_refused_without_force(pg_state: str, state_file: Path) -> None:
    older = write_state(state_file, State())
    store = _backend(pg_state)
    store.replace(older.model_copy(update={"serial": 5}))
    refused = _cli("state", "push", str(state_file), "--state", pg_state)
    assert refused.returncode == 1
    assert b"holds a newer serial of this state (5) than " in refused.stderr
    assert store.load().serial == 5
    forced = _cli("state", "push", str(state_file), "--state", pg_state, "--force")
    assert forced.returncode == 0, forced.stderr
    assert store.load() == older
    store.close()


def test_push_over_another_lineage_is_refused(pg_state: str, state_file: Path) -> None:
    write_state(state_file, State())
    store = _backend(pg_state)
    theirs = store.write(State())
    refused = _cli("state", "push", str(state_file), "--state", pg_state)
    assert refused.returncode == 1 and b"a different lineage, so not an older copy of it" in refused.stderr
    assert store.load() == theirs
    store.close()


def test_pull_into_a_file_with_a_newer_serial_is_refused(pg_state: str, state_file: Path) -> None:
    store = _backend(pg_state)
    ours = store.write(State())
    store.close()
    state_file.write_text(ours.model_copy(update={"serial": 9}).model_dump_json(), encoding="utf-8")
    before = state_file.read_bytes()
    refused = _cli("state", "pull", str(state_file), "--state", pg_state)
    assert refused.returncode == 1 and b"holds a newer serial of this state (9)" in refused.stderr
    assert state_file.read_bytes() == before


def test_a_state_address_with_a_password_is_refused_on_the_command_line(tmp_path: Path) -> None:
    refused = _cli("state", "list", "--state", "postgresql://team:hunter2@127.0.0.1:1/states?key=acme")
    assert refused.returncode == 1
    assert b"Invalid value for '--state': The state address postgresql://team:***@127.0.0.1:1/states?key=acme holds a password" in refused.stderr and b"hunter2" not in refused.stderr + refused.stdout


def test_the_state_address_comes_from_reconciler_state(pg_state: str, state_file: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    write_state(state_file, State().with_resource("group.a", "ws_1"))
    assert _cli("state", "push", str(state_file), "--state", pg_state).returncode == 0
    monkeypatch.setenv("RECONCILER_STATE", pg_state)
    listed = _cli("state", "list")
    assert listed.returncode == 0 and listed.stdout == b"group.a  ws_1\n"


def test_push_of_a_diverged_state_with_the_same_serial_is_refused_not_called_the_same(
        pg_state: str, state_file: Path) -> None:
    from reconciler.commands.state import state_push
    from reconciler.errors import StateError

    ours = write_state(state_file, State().with_resource("group.a", "ws_1"))
    store = _backend(pg_state)
    theirs = ours.with_resource("group.b", "ws_2")  # same lineage and serial, another apply's contents
    store.replace(theirs)
    with pytest.raises(StateError) as refused:
        state_push(state_file, pg_state)
    assert str(refused.value) == (
        f"{store.address} and {state_file} both hold serial {ours.serial} of lineage {ours.lineage} with different "
        "contents: they diverged. Nothing was changed. Check which is right; --force replaces it anyway.")
    assert store.load() == theirs
    store.close()


def test_pull_of_a_diverged_state_with_the_same_serial_is_refused_not_called_the_same(
        pg_state: str, state_file: Path) -> None:
    from reconciler.commands.state import state_pull
    from reconciler.errors import StateError

    store = _backend(pg_state)
    theirs = store.write(State().with_resource("group.b", "ws_2"))
    store.close()
    write_state(state_file, theirs.model_copy(update={"serial": theirs.serial - 1, "resources": {}}))
    before = state_file.read_bytes()  # same lineage and serial as the server's, other contents
    with pytest.raises(StateError) as refused:
        state_pull(pg_state, state_file)
    assert str(refused.value) == (
        f"{state_file} and {store.address} both hold serial {theirs.serial} of lineage {theirs.lineage} with "
        "different contents: they diverged. Nothing was changed. Check which is right; --force replaces it anyway.")
    assert state_file.read_bytes() == before


def test_push_of_the_very_same_state_says_nothing_changed(pg_state: str, state_file: Path) -> None:
    from reconciler.commands.state import state_push

    ours = write_state(state_file, State().with_resource("group.a", "ws_1"))
    store = _backend(pg_state)
    store.replace(ours)
    assert state_push(state_file, pg_state) == (
        f"{store.address} already holds serial {ours.serial} of lineage {ours.lineage}, exactly as {state_file}; "
        "nothing was changed.\n")
    store.close()
