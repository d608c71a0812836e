"""Two commands racing for one state's lock: the one refused always names the
holder (who, where, which command), for both backends.

The races are real (two sessions, or two threads on one lock file, released
together by a barrier); what is asserted is a count, never a time: in every
race exactly one wins and the other's refusal names it.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from reconciler.errors import StateError
from reconciler.state import StateLock
from reconciler.state.backend import StateBackend, open_backend
from tests.pg_cluster import Cluster
from tests.waiting import wait_until

RACES = 100
# A barrier or a thread that waits longer than this is a hung race: the test fails saying which.
DEADLINE = 30.0


@dataclass
class Race:
    """What each of the two racers saw in one race."""

    won: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)


def _race(lockers: list[Callable[[str], AbstractContextManager[object]]]) -> Race:
    """Start the racers together; a winner holds the lock until every racer has tried."""
    race = Race()
    start, tried = threading.Barrier(len(lockers), timeout=DEADLINE), threading.Barrier(len(lockers), timeout=DEADLINE)

    def racer(number: int) -> None:
        command = f"racer {number}"
        try:
            start.wait()
            try:
                with lockers[number](command):
                    race.won.append(command)
                    tried.wait()
                return
            except StateError as exc:
                race.refused.append(str(exc))
            tried.wait()
        except BaseException as exc:  # a broken barrier or an unexpected error: the race reports it
            race.errors.append(exc)

    threads = [threading.Thread(target=racer, args=(n,)) for n in range(len(lockers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE)
        assert not thread.is_alive(), f"a racer did not finish in {DEADLINE}s: {race}"
    return race


def _assert_refusal_names_the_winner(race: Race, number: int) -> None:
    assert not race.errors, f"race {number}: {race.errors!r}"
    assert len(race.won) == 1 and len(race.refused) == 1, f"race {number}: {race}"
    refusal = race.refused[0]
    assert f'is locked by "{race.won[0]}" (pid {os.getpid()} on {socket.gethostname()}, since ' in refusal, (
        f"race {number}: the refusal does not name the holder: {refusal}")


@pytest.fixture
def two_sessions(pg_state: str) -> Iterator[list[StateBackend]]:
    """Two backends on one PostgreSQL state, each with its own database session."""
    opened = [open_backend(pg_state), open_backend(pg_state)]
    yield opened
    for backend in opened:
        backend.close()


def test_of_two_sessions_racing_for_a_postgresql_lock_the_refused_one_names_the_holder_every_time(
        two_sessions: list[StateBackend]) -> None:
    for number in range(RACES):
        race = _race([backend.lock for backend in two_sessions])
        _assert_refusal_names_the_winner(race, number)


def test_a_postgresql_lock_taken_by_hand_is_refused_naming_its_session_not_a_command_just_starting(
        two_sessions: list[StateBackend], pg_cluster: Cluster, pg_state: str) -> None:
    from reconciler.state.postgres import LOCK_CLASS, PostgresBackend

    store = two_sessions[0]
    assert isinstance(store, PostgresBackend)
    name = f"{store.where.schema}.{store.where.key}"
    with pg_cluster.admin("states") as admin:
        admin.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (LOCK_CLASS, name))
        session = admin.execute("SELECT pg_backend_pid()").fetchone()
        with pytest.raises(StateError) as refused:
            with store.lock("reconciler apply"):
                pass
    assert session is not None
    assert str(refused.value).startswith(
        f"The PostgreSQL state {store.address} is locked by a database session (server pid {session[0]}) that did "
        "not say who it is: not a command of this reconciler version")
    assert "--lock-timeout DURATION" in str(refused.value)


def test_of_two_commands_racing_for_a_lock_file_the_refused_one_names_the_holder_every_time(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    for number in range(RACES):
        race = _race([lambda command: StateLock(state, command=command) for _ in range(2)])
        _assert_refusal_names_the_winner(race, number)


def test_a_lock_file_released_while_another_command_tries_is_taken_or_refused_naming_a_holder(tmp_path: Path) -> None:
    """One thread takes and releases the lock as fast as it can; every try of
    the other either takes it or names the holder it found, never "has just
    finished": a lock released between a failed take and the read of its
    holder is tried again at once."""
    state = tmp_path / "s.json"
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            try:
                with StateLock(state, command="churning apply"):
                    pass
            except StateError:
                pass  # the other one holds it: the churner only needs to keep taking and releasing

    churner = threading.Thread(target=churn)
    churner.start()
    outcomes: dict[str, int] = {"taken": 0, "named": 0}
    unnamed: list[str] = []
    try:
        for _ in range(1000):
            try:
                with StateLock(state, command="trying apply"):
                    outcomes["taken"] += 1
            except StateError as exc:
                if 'is locked by "churning apply" (pid ' in str(exc):
                    outcomes["named"] += 1
                else:
                    unnamed.append(str(exc))
    finally:
        stop.set()
        churner.join(DEADLINE)
    assert unnamed == [], unnamed[:3]
    assert outcomes["taken"] + outcomes["named"] == 1000


def test_a_lock_file_waited_for_says_once_who_holds_it_and_how_long_it_waits(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "s.json"
    held = StateLock(state, command="first apply").__enter__()
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 3:
            held.__exit__(None, None, None)

    with StateLock(state, command="second apply", timeout=60, pause=pause):
        pass
    err = capsys.readouterr().err
    assert err == (f'The state {state} is locked by "first apply" (pid {os.getpid()} on {socket.gethostname()}, '
                   f"since {held_since(state, err)}, lock ID {held.id}); waiting up to 60s for it (--lock-timeout).\n")
    assert pauses == [0.1, 0.2, 0.4]


def test_a_postgresql_lock_waited_for_says_once_who_holds_it_and_how_long_it_waits(
        two_sessions: list[StateBackend], capsys: pytest.CaptureFixture[str]) -> None:
    from reconciler.state.postgres import PostgresBackend
    from reconciler.state.postgres_lock import PostgresLock

    first, second = two_sessions
    assert isinstance(second, PostgresBackend)
    taking = first.lock("first apply")
    held = taking.__enter__()
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 2:
            taking.__exit__(None, None, None)

    with PostgresLock(second, "second apply", timeout=90, pause=pause):
        pass
    err = capsys.readouterr().err
    assert err.startswith(f'The state {second.address} is locked by "first apply" (pid {os.getpid()} on '
                          f"{socket.gethostname()}, since ")
    assert err.endswith(f", lock ID {held.id}); waiting up to 90s for it (--lock-timeout).\n")
    assert err.count("\n") == 1 and pauses == [0.1, 0.2]


def held_since(state: Path, said: str) -> str:
    """The ``since`` the message quoted, checked to be a UTC time of the form the lock file writes."""
    import re

    found = re.search(r"since (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ), lock ID", said)
    assert found is not None, said
    return found.group(1)


def test_a_postgresql_lock_taken_by_hand_over_a_dead_holders_row_does_not_name_the_dead_holder(
        pg_cluster: Cluster, pg_state: str) -> None:
    """The row a killed command left names nobody who holds the lock now: a
    session that took it outside the gate is named by its server pid."""
    from reconciler.state.postgres import LOCK_CLASS, PostgresBackend

    dead = open_backend(pg_state)
    dead.lock("reconciler apply (killed)").__enter__()
    dead.close()  # its session ends: the server releases the lock, the row stays
    store = open_backend(pg_state)
    assert isinstance(store, PostgresBackend)
    try:
        with pg_cluster.admin("states") as admin:
            admin.execute("SELECT pg_advisory_lock(%s, hashtext(%s))",
                          (LOCK_CLASS, f"{store.where.schema}.{store.where.key}"))
            session = admin.execute("SELECT pg_backend_pid()").fetchone()
            with pytest.raises(StateError) as refused:
                with store.lock("reconciler apply"):
                    pass
    finally:
        store.close()
    assert session is not None
    assert "killed" not in str(refused.value)
    assert f"is locked by a database session (server pid {session[0]}) that did not say who it is" in str(
        refused.value)


def test_a_command_waiting_for_an_empty_lock_file_says_an_unknown_process_holds_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "s.json"
    lock = state.with_name(state.name + ".lock")
    lock.write_bytes(b"")  # written by an older reconciler, or by hand: no holder to name
    with StateLock(state, command="second apply", timeout=60, pause=lambda seconds: lock.unlink()):
        pass
    assert capsys.readouterr().err == (f"The state {state} is locked by an unknown process; waiting up to 60s for it "
                                       "(--lock-timeout).\n")


def test_a_command_waiting_for_a_postgresql_lock_taken_by_hand_says_another_session_holds_it(
        two_sessions: list[StateBackend], pg_cluster: Cluster, capsys: pytest.CaptureFixture[str]) -> None:
    from reconciler.state.postgres import LOCK_CLASS, PostgresBackend
    from reconciler.state.postgres_lock import PostgresLock

    store = two_sessions[0]
    assert isinstance(store, PostgresBackend)
    keys = (LOCK_CLASS, f"{store.where.schema}.{store.where.key}")
    with pg_cluster.admin("states") as admin:
        admin.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", keys)  # no row says who holds it

        def pause(seconds: float) -> None:
            admin.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", keys)

        with PostgresLock(store, "second apply", timeout=60, pause=pause):
            pass
    assert capsys.readouterr().err == (f"The state {store.address} is locked by another session; waiting up to 60s "
                                       "for it (--lock-timeout).\n")


def test_a_postgresql_lock_let_go_by_hand_before_its_session_is_found_is_refused_without_a_server_pid(
        two_sessions: list[StateBackend], pg_cluster: Cluster) -> None:
    """Taken outside the gate, a lock can be let go between the refused try and
    the look for its session in pg_locks: the refusal then names no session.
    The superuser's lock on the ``locks`` table holds the refused command
    between the two until the lock taken by hand is let go."""
    from reconciler.state.postgres import LOCK_CLASS, PostgresBackend

    store = two_sessions[0]
    assert isinstance(store, PostgresBackend)
    store.load()  # the session and its tables, before the table is locked
    assert store._conn is not None
    command_pid = store._conn.info.backend_pid
    keys = (LOCK_CLASS, f"{store.where.schema}.{store.where.key}")
    refusals: list[BaseException] = []

    def take() -> None:
        try:
            with store.lock("reconciler apply"):
                pass
        except BaseException as exc:  # the refusal is the outcome looked for; anything else fails the test below
            refusals.append(exc)

    with pg_cluster.admin("states") as admin:
        admin.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", keys)
        with admin.transaction():
            admin.execute(f"LOCK TABLE {store.where.schema}.locks IN ACCESS EXCLUSIVE MODE")
            taker = threading.Thread(target=take)
            taker.start()
            wait_until(lambda: admin.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s",
                                             (command_pid,)).fetchone() == ("Lock",),
                       what=lambda: f"the command's session {command_pid} never waited for the locks table")
            admin.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", keys)
        taker.join(DEADLINE)
    assert not taker.is_alive()
    assert [str(exc) for exc in refusals] == [
        f"The PostgreSQL state {store.address} is locked by a database session that did not say who it is: not a "
        "command of this reconciler version, or someone's pg_advisory_lock by hand. Nothing was done. Find it in "
        "pg_stat_activity. --lock-timeout DURATION (e.g. --lock-timeout 5m) waits for it instead of stopping."]
