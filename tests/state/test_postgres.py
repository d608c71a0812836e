"""The PostgreSQL backend against a real server (the session's throwaway cluster).

Each test has a state of its own (a fresh ``key=``) in the shared database;
the tests that need a database, a role or a schema of their own make it.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from reconciler.errors import StateError
from reconciler.state import State, StateWriteError
from reconciler.state.backend import StateBackend, open_backend
from reconciler.state.address import PostgresAddress
from reconciler.state.postgres import SCHEMA_VERSION, PostgresBackend
from reconciler.state.postgres_lock import PostgresLock
from tests.pg_cluster import DATABASE, PASSWORD, Cluster
from tests.waiting import DEADLINE, wait_until


@pytest.fixture
def backends(pg_state: str) -> Iterator[list[StateBackend]]:
    """Backends opened in the test, closed after it (each its own session)."""
    opened: list[StateBackend] = []
    yield opened
    for backend in opened:
        backend.close()


def _open(address: str, opened: list[StateBackend]) -> StateBackend:
    backend = open_backend(address)
    opened.append(backend)
    return backend


def _count(cluster: Cluster, query: str, *args: object) -> int:
    with cluster.admin() as conn:
        row = conn.execute(query, args).fetchone()
    assert row is not None and isinstance(row[0], int)
    return row[0]


def test_a_state_never_written_loads_empty_and_a_write_gets_a_lineage_and_serial_1(
        pg_state: str, backends: list[StateBackend]) -> None:
    store = _open(pg_state, backends)
    assert store.load() == State()
    assert not store.exists()
    written = store.write(State().with_resource("group.a", "ws_1"))
    assert written.serial == 1 and len(written.lineage) == 36
    assert _open(pg_state, backends).load() == written


def test_the_state_row_holds_the_files_json_exactly(pg_state: str, pg_cluster: Cluster,
                                                    backends: list[StateBackend]) -> None:
    store = _open(pg_state, backends)
    written = store.write(State().with_resource("group.a", "ws_1"))
    with pg_cluster.admin() as conn:
        row = conn.execute("SELECT body, serial, lineage, schema_version FROM reconciler.states WHERE key = %s",
                           (pg_state.rsplit("key=", 1)[1],)).fetchone()
    assert row == (written.model_dump_json(indent=2, exclude_none=True) + "\n", 1, written.lineage, SCHEMA_VERSION)


def test_of_two_writers_that_read_the_same_serial_only_the_first_wins(
        pg_state: str, backends: list[StateBackend]) -> None:
    first, second = _open(pg_state, backends), _open(pg_state, backends)
    base = first.write(State())
    a, b = first.load(), second.load()
    first.write(a.with_resource("group.a", "ws_1"))
    with pytest.raises(StateError, match=r"changed since this command read it: it holds serial 2 .* this command "
                                         r"read serial 1 .* Another writer won; nothing was written"):
        second.write(b.with_resource("group.b", "ws_2"))
    final = second.load()
    assert final.serial == base.serial + 1 and set(final.resources) == {"group.a"}


def test_two_first_writes_at_once_create_one_state(pg_state: str, backends: list[StateBackend]) -> None:
    stores = [_open(pg_state, backends) for _ in range(4)]
    for store in stores:
        store.load()  # connected, tables ready: the race is on the first write alone
    outcomes: list[str] = []
    barrier = threading.Barrier(len(stores))

    def write(store: StateBackend, n: int) -> None:
        barrier.wait()
        try:
            store.write(State().with_resource(f"group.g{n}", f"ws_{n}"))
            outcomes.append("won")
        except StateError:
            outcomes.append("refused")

    threads = [threading.Thread(target=write, args=(s, n)) for n, s in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE)
    assert not any(t.is_alive() for t in threads), f"a write still runs after {DEADLINE:g} s; outcomes: {outcomes}"
    assert sorted(outcomes) == ["refused", "refused", "refused", "won"]
    final = stores[0].load()
    assert final.serial == 1 and len(final.resources) == 1


def test_journal_rows_are_replayed_by_a_read_and_folded_by_the_next_writer(
        pg_state: str, pg_cluster: Cluster, backends: list[StateBackend]) -> None:
    store = _open(pg_state, backends)
    base = store.write(State().with_resource("group.a", "ws_1"))
    journal = store.journal(base)
    journal.append({"set": {"group.b": {"id": "ws_2"}}})
    journal.append({"remove": ["group.a"]})
    store.close()  # the apply stops here: its rows stay

    reader = _open(pg_state, backends)
    replayed = reader.load()
    assert replayed.serial == base.serial + 1 and replayed.lineage == base.lineage
    assert {a: r.id for a, r in replayed.resources.items()} == {"group.b": "ws_2"}
    assert reader.fold_leftover(replayed) == replayed
    assert _count(pg_cluster, "SELECT count(*) FROM reconciler.journal WHERE key = %s",
                  pg_state.rsplit("key=", 1)[1]) == 0
    assert reader.load() == replayed


def test_a_fold_over_a_state_another_writer_moved_is_refused(pg_state: str, backends: list[StateBackend]) -> None:
    store, other = _open(pg_state, backends), _open(pg_state, backends)
    base = store.write(State())
    journal = store.journal(base)
    other.replace(base.model_copy(update={"serial": 7}))  # a push --force meanwhile
    with pytest.raises(StateWriteError, match="holds serial 7"):
        journal.fold(base.with_resource("group.a", "ws_1"))
    assert other.load().serial == 7 and not other.load().resources


def test_a_second_lock_is_refused_naming_the_holder(pg_state: str, backends: list[StateBackend]) -> None:
    holder, second = _open(pg_state, backends), _open(pg_state, backends)
    with holder.lock("reconciler apply") as lock:
        with pytest.raises(StateError) as refused:
            with second.lock("reconciler apply"):
                pass
    message = str(refused.value)
    assert 'is locked by "reconciler apply" (pid ' in message and f"lock ID {lock.id})" in message
    assert f"'reconciler force-unlock {lock.id} --state \"{holder.address}\"'" in message
    with second.lock("reconciler apply"):  # released on the way out
        pass


def test_a_lock_whose_session_ended_is_free_with_no_manual_step(
        pg_state: str, backends: list[StateBackend]) -> None:
    holder = _open(pg_state, backends)
    holder.lock("reconciler apply").__enter__()
    holder.close()  # the session ends without releasing anything, as a kill -9 ends it
    with _open(pg_state, backends).lock("reconciler apply"):
        pass


def test_plan_warns_of_a_lock_whose_holder_stopped(pg_state: str, backends: list[StateBackend]) -> None:
    holder = _open(pg_state, backends)
    holder.lock("reconciler apply").__enter__()
    assert _open(pg_state, backends).stopped_warning() is None  # a live holder: plan reads as always
    holder.close()
    warning = _open(pg_state, backends).stopped_warning()
    assert warning is not None and 'was last locked by "reconciler apply"' in warning
    assert "whose session ended without releasing it" in warning


def test_force_unlock_ends_the_holders_session_and_its_next_write_fails(
        pg_state: str, backends: list[StateBackend]) -> None:
    holder = _open(pg_state, backends)
    lock = holder.lock("reconciler apply").__enter__()
    journal = holder.journal(holder.load())
    message = _open(pg_state, backends).force_unlock(lock.id)
    assert message.startswith(f"Removed the lock {lock.id} of {holder.address}")
    assert "Its database session (server pid" in message
    with pytest.raises(StateWriteError, match="The connection to the PostgreSQL state .* was lost"):
        journal.append({"set": {"group.a": {"id": "ws_1"}}})
    with _open(pg_state, backends).lock("reconciler apply"):
        pass


def test_force_unlock_with_another_id_is_refused(pg_state: str, backends: list[StateBackend]) -> None:
    holder = _open(pg_state, backends)
    with holder.lock("reconciler apply") as lock:
        with pytest.raises(StateError, match=f"has ID {lock.id}, not 0123; it was not removed"):
            _open(pg_state, backends).force_unlock("0123")
        holder.load()  # still connected: nothing was ended


def test_one_database_keeps_states_apart_by_key(pg_cluster: Cluster, pg_state: str,
                                                 backends: list[StateBackend]) -> None:
    one, two = _open(pg_cluster.url(key="acme"), backends), _open(pg_cluster.url(key="globex"), backends)
    with one.lock("reconciler apply"), two.lock("reconciler apply"):  # two states: two locks
        one.write(one.load().with_resource("group.a", "ws_1"))
    assert two.load() == State()


def test_tables_are_created_on_first_use_in_the_schema_named(pg_cluster: Cluster, pg_state: str,
                                                             backends: list[StateBackend]) -> None:
    schema = f"s_{uuid.uuid4().hex[:8]}"
    _open(pg_cluster.url(schema=schema), backends).load()
    tables = pg_cluster.admin_sql(f"SELECT tablename FROM pg_tables WHERE schemaname = '{schema}' ORDER BY 1",
                                  DATABASE)
    assert tables == [("journal",), ("locks",), ("meta",), ("states",)]
    assert pg_cluster.admin_sql(f"SELECT schema_version FROM {schema}.meta", DATABASE) == [(SCHEMA_VERSION,)]


def test_tables_of_a_newer_schema_version_are_refused(pg_cluster: Cluster, pg_state: str,
                                                      backends: list[StateBackend]) -> None:
    schema = f"s_{uuid.uuid4().hex[:8]}"
    _open(pg_cluster.url(schema=schema), backends).load()
    pg_cluster.admin_sql(f"UPDATE {schema}.meta SET schema_version = {SCHEMA_VERSION + 1}", DATABASE)
    with pytest.raises(StateError, match=f"uses table schema version {SCHEMA_VERSION + 1}; this reconciler knows "
                                         f"version {SCHEMA_VERSION}. It was written by a newer reconciler"):
        _open(pg_cluster.url(schema=schema), backends).load()


def test_a_state_row_of_a_newer_schema_version_is_refused(pg_cluster: Cluster, pg_state: str,
                                                          backends: list[StateBackend]) -> None:
    store = _open(pg_state, backends)
    store.write(State())
    pg_cluster.admin_sql(f"UPDATE reconciler.states SET schema_version = 9 WHERE key = "
                         f"'{pg_state.rsplit('key=', 1)[1]}'", DATABASE)
    with pytest.raises(StateError, match=r"was written by a newer reconciler \(schema version 9; this one knows 1\)"):
        _open(pg_state, backends).load()
    with pytest.raises(StateError, match="newer reconciler"):
        store.write(State())


def test_a_role_that_may_not_create_the_schema_is_refused_clearly(pg_cluster: Cluster, pg_state: str,
                                                                  backends: list[StateBackend]) -> None:
    role = f"r_{uuid.uuid4().hex[:8]}"
    pg_cluster.admin_sql(f"CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}'")
    pg_cluster.admin_sql(f"REVOKE CREATE ON DATABASE {DATABASE} FROM PUBLIC", DATABASE)
    url = pg_cluster.url(user=role, schema=f"s_{uuid.uuid4().hex[:8]}")
    with pytest.raises(StateError, match=r"do not exist yet, and this role may not create them \(permission denied "
                                         r"for database states\)\. Grant the role CREATE"):
        _open(url, backends).load()


def test_an_unreachable_server_is_refused_clearly(pg_state: str, backends: list[StateBackend]) -> None:
    with pytest.raises(StateError, match=r"^Cannot connect to the PostgreSQL state postgresql://team@127\.0\.0\.1:1/"
                                         r"states\?key=x: .*Connection refused.*accepting TCP/IP connections\? Check the address.*Nothing "
                                         r"was done\.$"):
        _open("postgresql://team@127.0.0.1:1/states?key=x", backends).load()


def test_a_wrong_password_is_refused_without_showing_any_password(
        pg_state: str, monkeypatch: pytest.MonkeyPatch, backends: list[StateBackend]) -> None:
    monkeypatch.setenv("PGPASSWORD", "not-the-password")
    with pytest.raises(StateError) as refused:
        _open(pg_state, backends).load()
    message = str(refused.value)
    assert 'password authentication failed for user "team"' in message
    assert "The password comes from PGPASSWORD, a password file" in message
    assert "not-the-password" not in message and PASSWORD not in message


def test_a_missing_database_is_refused_clearly(pg_cluster: Cluster, pg_state: str,
                                               backends: list[StateBackend]) -> None:
    with pytest.raises(StateError, match=r'database "nowhere" does not exist\. Create the database first'):
        _open(pg_cluster.url(dbname="nowhere"), backends).load()


def test_an_address_with_a_password_is_refused_and_the_password_not_repeated() -> None:
    with pytest.raises(StateError) as refused:
        open_backend("postgresql://team:hunter2@db.example.com/states?key=acme")
    message = str(refused.value)
    assert message.startswith("The state address postgresql://team:***@db.example.com/states?key=acme holds a "
                              "password")
    assert "hunter2" not in message


def test_a_password_parameter_is_refused_too() -> None:
    with pytest.raises(StateError, match=r"password=\*\*\*") as refused:
        open_backend("postgresql://team@db.example.com/states?password=hunter2")
    assert "hunter2" not in str(refused.value)


def test_a_session_cut_by_the_server_stops_the_journal_with_a_clear_error(
        pg_state: str, pg_cluster: Cluster, backends: list[StateBackend]) -> None:
    store = _open(pg_state, backends)
    assert isinstance(store, PostgresBackend)
    store.lock("reconciler apply").__enter__()
    journal = store.journal(store.load())
    journal.append({"set": {"group.a": {"id": "ws_1"}}})
    pg_cluster.admin_sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = "
                         "'reconciler' AND usename = 'team' AND pid <> pg_backend_pid()")
    with pytest.raises(StateWriteError, match=r"was lost \(.*\); the server released the state's lock with it\. "
                                              "Every change recorded before is in the state's journal rows"):
        journal.append({"set": {"group.b": {"id": "ws_2"}}})
    resumed = _open(pg_state, backends).load()
    assert {a: r.id for a, r in resumed.resources.items()} == {"group.a": "ws_1"}


def test_psycopg_is_not_imported_for_a_file_state(tmp_path: object) -> None:
    import subprocess
    import sys

    code = ("import sys; from reconciler.state.backend import open_backend; "
            "open_backend('s.json'); print('psycopg' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_the_connection_error_class_is_psycopgs() -> None:
    # The backend maps psycopg.OperationalError (a lost connection) to a clear message: keep it the base.
    assert issubclass(psycopg.errors.AdminShutdown, psycopg.OperationalError)


def test_a_role_that_may_only_select_reads_the_state(pg_cluster: Cluster, pg_state: str,
                                                     backends: list[StateBackend]) -> None:
    """What the GitOps example gives a pull request's plan job: SELECT on the tables, nothing else."""
    written = _open(pg_state, backends).write(State().with_resource("group.a", "ws_1"))
    role = f"r_{uuid.uuid4().hex[:8]}"
    pg_cluster.admin_sql(f"CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}'")
    pg_cluster.admin_sql(f"GRANT USAGE ON SCHEMA reconciler TO {role}; "
                         f"GRANT SELECT ON ALL TABLES IN SCHEMA reconciler TO {role}", DATABASE)
    reader = _open(pg_cluster.url(user=role, key=pg_state.rsplit("key=", 1)[1]), backends)
    assert reader.load() == written
    assert reader.stopped_warning() is None
    with pytest.raises(StateError, match="permission denied for table states"):
        reader.write(written)


# -- compare-and-swap: lineage, FOR UPDATE (issue 26) -------------------------------


def test_a_write_over_a_row_of_another_lineage_with_the_same_serial_is_refused(
        pg_state: str, backends: list[StateBackend]) -> None:
    store, other = _open(pg_state, backends), _open(pg_state, backends)
    read = store.write(State())  # serial 1 of our lineage
    theirs = State(lineage="another-lineage", serial=read.serial).with_resource("group.x", "ws_9")
    other.replace(theirs)  # a push --force of another state, same serial
    with pytest.raises(StateError) as refused:
        store.write(read.with_resource("group.a", "ws_1"))
    assert str(refused.value) == (
        f"The PostgreSQL state {store.address} changed since this command read it: it holds serial 1 of lineage "
        f"another-lineage, this command read serial 1 of lineage {read.lineage}. Another writer won; nothing was "
        "written. Run the command again.")
    assert other.load() == theirs


def test_a_fold_over_a_row_of_another_lineage_with_the_same_serial_is_refused(
        pg_state: str, backends: list[StateBackend]) -> None:
    store, other = _open(pg_state, backends), _open(pg_state, backends)
    read = store.write(State())
    journal = store.journal(read)
    theirs = State(lineage="another-lineage", serial=read.serial)
    other.replace(theirs)
    with pytest.raises(StateWriteError, match="it holds serial 1 of lineage another-lineage, this command read "
                                              f"serial 1 of lineage {read.lineage}"):
        journal.fold(read.with_resource("group.a", "ws_1"))
    assert other.load() == theirs


def _session_waits_for_a_lock(pg_cluster: Cluster, backend: StateBackend, finished: threading.Event) -> None:
    """Until ``backend``'s session is blocked on a lock inside the server, or its write finished."""
    server_pid = backend._conn.info.backend_pid  # type: ignore[attr-defined]
    query = "SELECT count(*) FROM pg_stat_activity WHERE pid = %s AND wait_event_type = 'Lock'"
    seen = f"SELECT state, wait_event_type, wait_event, query FROM pg_stat_activity WHERE pid = {server_pid}"
    wait_until(lambda: finished.is_set() or _count(pg_cluster, query, server_pid), every=0.02,
               what=lambda: f"session {server_pid} neither waits on a lock nor finished its write: "
                            f"{pg_cluster.admin_sql(seen)}")


def test_two_writes_interleaved_inside_the_server_let_only_the_first_win(
        pg_state: str, pg_cluster: Cluster, backends: list[StateBackend], monkeypatch: pytest.MonkeyPatch) -> None:
    """The first writer has read the row and not yet written it when the
    second writes: the second must wait on the row lock (SELECT ... FOR
    UPDATE) and then see the first's serial; a read without FOR UPDATE lets
    it read the old serial and both "win".  Interleaved by a hook, not by
    timing: the first writes only once the second waits or has finished."""
    first, second = _open(pg_state, backends), _open(pg_state, backends)
    base = first.write(State())
    a, b = first.load(), second.load()
    second.load()  # connected before the hook runs
    outcome: dict[str, object] = {}
    finished = threading.Event()

    def write_second() -> None:
        try:
            outcome["second"] = second.write(b.with_resource("group.b", "ws_2"))
        except StateError as exc:
            outcome["second"] = exc
        finished.set()

    real_put = PostgresBackend._put

    def put_after_the_second_tried(self: PostgresBackend, *args: object, **kwargs: object) -> None:
        if self is first and "thread" not in outcome:
            outcome["thread"] = thread = threading.Thread(target=write_second)
            thread.start()
            _session_waits_for_a_lock(pg_cluster, second, finished)
        real_put(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(PostgresBackend, "_put", put_after_the_second_tried)
    first.write(a.with_resource("group.a", "ws_1"))
    thread = outcome["thread"]
    assert isinstance(thread, threading.Thread)
    thread.join(timeout=60)
    assert not thread.is_alive(), f"the second write still runs after 60 s: {outcome}"
    assert isinstance(outcome["second"], StateError), "both writers won"
    assert "Another writer won; nothing was written" in str(outcome["second"])
    final = first.load()
    assert final.serial == base.serial + 1 and set(final.resources) == {"group.a"}


# -- --lock-timeout ----------------------------------------------------------------


def test_a_lock_timeout_waits_for_the_holder_then_takes_the_advisory_lock(
        pg_state: str, backends: list[StateBackend]) -> None:
    holder, second = _open(pg_state, backends), _open(pg_state, backends)
    taking = holder.lock("first apply")
    held = taking.__enter__()
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 2:
            taking.__exit__(None, None, None)

    assert isinstance(second, PostgresBackend)
    with PostgresLock(second, "second apply", timeout=60, pause=pause) as lock:
        assert lock.id != held.id
    assert pauses == [0.1, 0.2]


def test_when_the_lock_timeout_runs_out_the_refusal_names_the_holder_as_without_it(
        pg_state: str, backends: list[StateBackend]) -> None:
    holder, second = _open(pg_state, backends), _open(pg_state, backends)
    with holder.lock("reconciler apply") as held:
        with pytest.raises(StateError) as at_once:
            with second.lock("reconciler apply"):
                pass
        with pytest.raises(StateError) as waited:
            with second.lock("reconciler apply", timeout=0.3):
                pass
    assert str(waited.value) == str(at_once.value)
    assert f"lock ID {held.id}): another command is running against it. Wait for it to finish." in str(waited.value)


def test_state_mv_moves_an_address_in_the_postgresql_state(pg_state: str, backends: list[StateBackend],
                                                           tmp_path: Path) -> None:
    from reconciler.commands.state import state_mv

    store = _open(pg_state, backends)
    written = store.write(State().with_resource("workspace.a", "ws_1"))
    # TO must be an address the manifests declare (issue 41 item 6).
    (tmp_path / "m.yaml").write_text("version: 1\nworkspaces:\n  b: {id: ws_1}\n", encoding="utf-8")
    out = state_mv(path=tmp_path, state_path=pg_state, source="workspace.a", destination="workspace.b")
    assert out == (f"Moved workspace.a (workspace ws_1) to workspace.b in the state {store.address}. The service was "
                   "not changed. The next plan manages it as workspace.b; it should not create or remove anything "
                   "for this move.\n")
    moved = store.load()
    assert (moved.serial, {a: r.id for a, r in moved.resources.items()}) == (written.serial + 1,
                                                                              {"workspace.b": "ws_1"})


def test_a_unix_socket_address_keeps_its_empty_host_for_libpq() -> None:
    address = PostgresAddress.parse("postgresql:///reconciler?host=/var/run/postgresql&key=acme")
    assert (address.conninfo, address.schema, address.key) == (
        "postgresql:///reconciler?host=/var/run/postgresql", "reconciler", "acme")


def test_a_state_reached_over_the_servers_unix_socket(pg_cluster: Cluster, pg_state: str,
                                                      backends: list[StateBackend]) -> None:
    """As the README shows it: no host in the address, the socket's directory as host=."""
    url = f"postgresql:///{DATABASE}?host={pg_cluster.root}&port={pg_cluster.port}&user=admin&key=socket-{uuid.uuid4().hex[:8]}"
    store = _open(url, backends)
    written = store.write(State().with_resource("group.a", "ws_1"))
    assert _open(url, backends).load() == written


def test_the_refusal_names_the_holders_command_pid_host_since_and_lock_id_word_for_word(
        pg_state: str, backends: list[StateBackend]) -> None:
    holder, second = _open(pg_state, backends), _open(pg_state, backends)
    with holder.lock("reconciler apply") as lock:
        with pytest.raises(StateError) as refused:
            with second.lock("reconciler plan"):
                pass
    address = holder.address
    expected = (
        f"The PostgreSQL state {address} is locked by \"reconciler apply\" (pid {os.getpid()} on "
        f"{socket.gethostname()}, since SINCE, lock ID {lock.id}): another command is running against it. Wait for "
        "it to finish. --lock-timeout DURATION (e.g. --lock-timeout 5m) waits for it instead of stopping. A command "
        "that was killed or lost its connection released the lock with its session; if this one hangs, "
        f"'reconciler force-unlock {lock.id} --state \"{address}\"' ends its session.")
    pattern = re.escape(expected).replace("SINCE", r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
    assert re.fullmatch(pattern, str(refused.value)), str(refused.value)


def test_a_lock_whose_backend_was_closed_while_held_lets_go_quietly(pg_state: str,
                                                                      backends: list[StateBackend]) -> None:
    holder = _open(pg_state, backends)
    lock = holder.lock("reconciler apply")
    lock.__enter__()
    holder.close()  # the session is gone: the server released the lock with it
    lock.__exit__(None, None, None)  # raises if it tried to use the closed session
    with _open(pg_state, backends).lock("reconciler apply"):
        pass


def test_without_a_lock_timeout_a_held_lock_is_refused_without_waiting(pg_state: str,
                                                                         backends: list[StateBackend]) -> None:
    holder, second = _open(pg_state, backends), _open(pg_state, backends)
    assert isinstance(second, PostgresBackend)

    def no_wait(seconds: float) -> None:
        raise AssertionError(f"waited {seconds} s without a --lock-timeout")

    with holder.lock("reconciler apply"):
        with pytest.raises(StateError, match="is locked by"):
            with PostgresLock(second, "reconciler plan", pause=no_wait):
                pass
    assert second.lock("reconciler plan", timeout=300).timeout == 300  # --lock-timeout reaches the lock


# -- a lock whose holder's row cannot be written -----------------------------------


def _on_insert_into_locks(pg_cluster: Cluster, store: PostgresBackend, body: str) -> None:
    """A trigger (made by the superuser) running ``body`` before each row the
    lock writes into this state's ``locks`` table: a fault of the server's."""
    schema = store.where.schema
    pg_cluster.admin_sql(f"CREATE FUNCTION {schema}.fault() RETURNS trigger LANGUAGE plpgsql AS "
                         f"$$ BEGIN {body}; RETURN NEW; END $$", DATABASE)
    pg_cluster.admin_sql(f"CREATE TRIGGER fault BEFORE INSERT ON {schema}.locks FOR EACH ROW "
                         f"EXECUTE FUNCTION {schema}.fault()", DATABASE)


def test_a_lock_whose_row_cannot_be_written_is_refused_and_left_free_for_another_session(
        pg_cluster: Cluster, pg_state: str, backends: list[StateBackend]) -> None:
    """The advisory lock is taken before the row naming its holder is written:
    a failed write lets go of it too, though the session goes on."""
    url = pg_cluster.url(schema=f"fault_{uuid.uuid4().hex[:8]}")
    store = _open(url, backends)
    assert isinstance(store, PostgresBackend)
    store.load()  # the tables exist before the fault is put in
    _on_insert_into_locks(pg_cluster, store, "RAISE EXCEPTION 'the locks table refuses rows'")
    with pytest.raises(StateError) as refused:
        with store.lock("reconciler apply"):
            pass
    assert str(refused.value) == (f"Cannot read the PostgreSQL state {store.address}: the locks table refuses rows "
                                  f"CONTEXT: PL/pgSQL function {store.where.schema}.fault() line 1 at RAISE.")
    assert store.load() == State()  # the session of the refused command is still open
    pg_cluster.admin_sql(f"DROP TRIGGER fault ON {store.where.schema}.locks", DATABASE)
    with _open(url, backends).lock("reconciler apply"):  # another session takes it at once
        pass


def test_a_session_cut_while_the_lock_row_is_written_is_refused_as_a_lost_connection(
        pg_cluster: Cluster, pg_state: str, backends: list[StateBackend]) -> None:
    """Letting go of the advisory lock then fails too (the session is gone, and
    the lock with it): the refusal is the lost connection's, not that failure's."""
    url = pg_cluster.url(schema=f"fault_{uuid.uuid4().hex[:8]}")
    store = _open(url, backends)
    assert isinstance(store, PostgresBackend)
    store.load()
    _on_insert_into_locks(pg_cluster, store, "PERFORM pg_terminate_backend(pg_backend_pid())")
    with pytest.raises(StateError) as refused:
        with store.lock("reconciler apply"):
            pass
    assert str(refused.value) == (
        f"The connection to the PostgreSQL state {store.address} was lost (terminating connection due to "
        'administrator command CONTEXT: SQL statement "SELECT pg_terminate_backend(pg_backend_pid())" PL/pgSQL '
        f"function {store.where.schema}.fault() line 1 at PERFORM); the server released the state's lock with it. "
        "Every change recorded before is in the state's journal rows, and the next apply folds them in and resumes; "
        "run 'reconciler plan' to see where things stand.")
    pg_cluster.admin_sql(f"DROP TRIGGER fault ON {store.where.schema}.locks", DATABASE)
    with _open(url, backends).lock("reconciler apply"):
        pass
