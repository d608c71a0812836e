"""The state kept in PostgreSQL: ``--state postgresql://user@host:port/db?schema=S&key=K``.

For a team: a laptop, a CI runner and a scheduled job plan and apply against
one state, which a file in one checkout cannot be.  The guarantees are the
file's, enforced by the server:

- One row per state (``states``, keyed by ``key``: one database serves
  several companies or directories) holds the lineage, the serial and the
  state's JSON, exactly as the file holds it.  A write is a compare-and-swap
  on the serial inside one transaction (the row locked ``FOR UPDATE``): a
  write that does not continue what was read, or carries another lineage, is
  refused, so two writers can never both win.
- An apply appends each change as a row of ``journal`` (one short
  transaction each: once committed, a kill -9 or a lost connection does not
  lose it) and folds them into the state row at the end, in one transaction
  that checks the serial, writes the row and deletes the journal rows.  A
  stopped apply's rows are replayed by every read and folded by the next
  writer, as the file's journal is.
- The lock is an advisory lock held on the apply's own session: the server
  releases it when the session ends, so a killed process, a lost connection
  or a restarted server never leaves a stale lock.  A row of ``locks``
  names the holder (host, pid, command, time, lock ID) so a second command
  says who holds it.  The journal is written on that same session: an apply
  whose session was lost (and with it the lock) cannot write another row,
  and stops.
- Tables are created on first use, ``IF NOT EXISTS`` in their own schema,
  and ``meta`` records their schema version so a later release can migrate
  them; a newer version (of the tables, or of a state row) is refused.

The password never comes from the URL (refused): libpq reads it from
``PGPASSWORD``, ``PGPASSFILE``/``~/.pgpass`` or a service file, so it is in
no command line, message, log or plan.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from pydantic import ValidationError

from reconciler.text import parse_json
from reconciler.errors import StateError
from reconciler.state.atomic import StateWriteError
from reconciler.state.postgres_lock import GATE, Holder, PostgresLock
from reconciler.state.address import PostgresAddress
from reconciler.state.model import ResourceState, State

# Bumped (with a migration) when the tables change; a state row carries the
# version that wrote it.
SCHEMA_VERSION = 1
# The first of the two keys of every advisory lock this tool takes ("Reco"),
# so its locks are told apart from an application's in pg_locks.
LOCK_CLASS = 0x5265636F


class StateServerError(StateWriteError):
    """A write to the PostgreSQL state failed (the connection was lost, the
    server restarted, a privilege is missing): what was committed before
    stays, what was not is not there."""

    noun = "the PostgreSQL state"
    remedy = "Once the server can be reached again (or the error is fixed)"

    def __init__(self, message: str) -> None:
        StateError.__init__(self, message)
        self.path = None
        self.errno = None
        self.previous_serial = None
        self.journal = True


class PostgresBackend:
    """One state in a PostgreSQL database (``StateBackend``).

    One session (connection) per backend, opened on first use: the lock is
    held on it and the journal written on it, so losing it stops the apply."""

    kind = "postgresql"

    def __init__(self, address: PostgresAddress) -> None:
        self.where = address
        self._conn: psycopg.Connection[Any] | None = None
        self._ready = False  # the tables were checked (or created) on this session

    @classmethod
    def from_url(cls, url: str) -> PostgresBackend:
        return cls(PostgresAddress.parse(url))

    @property
    def address(self) -> str:
        return self.where.display

    # -- the session -----------------------------------------------------------------

    def _session(self) -> psycopg.Connection[Any]:
        """The session, connected (and the tables ready) on first use."""
        if self._conn is not None:
            if self._conn.broken or self._conn.closed:
                raise StateServerError(self._lost("the connection was closed"))
            return self._conn
        kwargs: dict[str, Any] = {"autocommit": True, "application_name": "reconciler"}
        if "connect_timeout" not in self.where.conninfo and "PGCONNECT_TIMEOUT" not in os.environ:
            kwargs["connect_timeout"] = 10  # an unreachable server is an error in seconds, not minutes
        try:
            self._conn = psycopg.connect(self.where.conninfo, **kwargs)
        except psycopg.Error as exc:
            raise StateError(self._cannot_connect(exc)) from None
        self._ensure_tables(self._conn)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _cannot_connect(self, exc: psycopg.Error) -> str:
        reason = _reason(exc)
        hint = "Check the address, that the server runs and accepts connections from here, and the credentials."
        if "password authentication failed" in reason or "no password supplied" in reason:
            hint = ("The password comes from PGPASSWORD, a password file (PGPASSFILE or ~/.pgpass) or a service "
                    "file, never from the address: check the one you use.")
        elif "does not exist" in reason and "database" in reason:
            hint = "Create the database first (createdb), or name an existing one in the address."
        return f"Cannot connect to the PostgreSQL state {self.address}: {_sentence(reason)} {hint} Nothing was done."

    def _lost(self, reason: str) -> str:
        return (f"The connection to the PostgreSQL state {self.address} was lost ({reason}); the server released "
                "the state's lock with it. Every change recorded before is in the state's journal rows, and the "
                "next apply folds them in and resumes; run 'reconciler plan' to see where things stand.")

    def _tables(self) -> dict[str, sql.Composable]:
        s = sql.Identifier(self.where.schema)
        return {name: sql.SQL("{}.{}").format(s, sql.Identifier(name))
                for name in ("meta", "states", "journal", "locks")}

    def _ensure_tables(self, conn: psycopg.Connection[Any]) -> None:
        """Create the schema and its tables when missing (the only DDL ever
        run), and refuse tables a newer reconciler made."""
        t = self._tables()
        try:
            version = self._schema_version(conn)
            if version is None:
                with conn.transaction():
                    # Two first uses at once: the second waits here, then finds the tables.
                    conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (LOCK_CLASS,))
                    conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.where.schema)))
                    for statement in _DDL:
                        conn.execute(sql.SQL(statement).format(**t))
                    conn.execute(sql.SQL("INSERT INTO {meta} (schema_version) VALUES (%s) ON CONFLICT DO NOTHING")
                                 .format(**t), (SCHEMA_VERSION,))
                version = self._schema_version(conn)
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StateError(
                f"Cannot use the PostgreSQL state {self.address}: the schema {self.where.schema} and its tables "
                f"do not exist yet, and this role may not create them ({_reason(exc)}). Grant the role CREATE on "
                "the database, or have its owner run one apply (or 'reconciler state list') once. "
                "Nothing was done.") from None
        except psycopg.Error as exc:
            raise StateError(f"Cannot prepare the PostgreSQL state {self.address}: {_reason(exc)}. "
                             "Nothing was done.") from None
        if version is not None and version > SCHEMA_VERSION:
            raise StateError(
                f"The PostgreSQL state {self.address} uses table schema version {version}; this reconciler knows "
                f"version {SCHEMA_VERSION}. It was written by a newer reconciler: upgrade this one. Nothing "
                "was done.")

    def _schema_version(self, conn: psycopg.Connection[Any]) -> int | None:
        found = conn.execute("SELECT to_regclass(%s)", (f'"{self.where.schema}"."meta"',)).fetchone()
        if found is None or found[0] is None:
            return None
        row = conn.execute(sql.SQL("SELECT schema_version FROM {meta}").format(**self._tables())).fetchone()
        return None if row is None else int(row[0])

    @contextmanager
    def _reading(self) -> Iterator[psycopg.Connection[Any]]:
        """A read on the session; a failure is a ``StateError``."""
        conn = self._session()
        try:
            yield conn
        except psycopg.OperationalError as exc:
            raise StateError(self._lost(_reason(exc))) from None
        except psycopg.Error as exc:
            raise StateError(f"Cannot read the PostgreSQL state {self.address}: {_reason(exc)}.") from None

    @contextmanager
    def _writing(self) -> Iterator[psycopg.Connection[Any]]:
        """A transaction on the session; a failure is a ``StateServerError``
        (the transaction was rolled back: nothing of it was written)."""
        conn = self._session()
        try:
            with conn.transaction():
                yield conn
        except psycopg.OperationalError as exc:
            raise StateServerError(self._lost(_reason(exc))) from None
        except psycopg.Error as exc:
            raise StateServerError(f"Cannot write the PostgreSQL state {self.address}: {_reason(exc)}. Nothing "
                                   "of this write was committed.") from None

    # -- reading -----------------------------------------------------------------------

    def exists(self) -> bool:
        t = self._tables()
        with self._reading() as conn:
            row = conn.execute(sql.SQL("SELECT EXISTS (SELECT 1 FROM {states} WHERE key = %(k)s) "
                                       "OR EXISTS (SELECT 1 FROM {journal} WHERE key = %(k)s)").format(**t),
                               {"k": self.where.key}).fetchone()
        return bool(row and row[0])

    def require(self) -> None:
        from reconciler.state.file import REQUIRE_STATE_ENV

        if self.exists():
            return
        raise StateError(
            f"There is no state {self.where.key!r} in {self.address}, and --require-state (or {REQUIRE_STATE_ENV}=1) "
            "says there must be one: without it reconciler cannot know which entries of non-authoritative lists "
            "it granted. Check the address (its key= names the state), or push the state there first "
            "('reconciler state push FILE --state ...'). Before the first apply there is none yet: run that one "
            "without --require-state. Nothing was called.")

    def load(self) -> State:
        return self._read()[0]

    def _read(self) -> tuple[State, _Stored]:
        """The state with its journal replayed, and what is stored, in one snapshot."""
        t = self._tables()
        with self._reading() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            row = conn.execute(sql.SQL("SELECT schema_version, lineage, serial, body FROM {states} WHERE key = %s")
                               .format(**t), (self.where.key,)).fetchone()
            rows = conn.execute(sql.SQL("SELECT lineage, base_serial, entry FROM {journal} WHERE key = %s "
                                        "ORDER BY seq").format(**t), (self.where.key,)).fetchall()
        base = self._parse_row(row)
        stored = _Stored(exists=row is not None, lineage=base.lineage, serial=base.serial,
                         journal=None if not rows else (str(rows[0][0]), int(rows[0][1])))
        if not rows:
            return base, stored
        lineage, serial = stored.journal or ("", 0)
        if rows[0][0] is None or any(r[1] != serial or r[0] not in (None, lineage) for r in rows) or not (
                base.serial == serial and base.lineage in (lineage, "")):
            raise StateError(
                f"The journal rows of the PostgreSQL state {self.address} do not continue its state row (the row "
                f"has serial {base.serial} of lineage {base.lineage or '(none)'}; the rows continue serial {serial} "
                f"of lineage {lineage}): they were edited by hand. Nothing was changed. Delete the rows of key "
                f"{self.where.key!r} from {self.where.schema}.journal to keep the state row as it is.")
        resources = dict(base.resources)
        for number, (_, _, entry) in enumerate(rows, start=1):
            sets, removes = self._parse_entry(number, str(entry))
            resources.update(sets)
            for address in removes:
                resources.pop(address, None)
        return base.model_copy(update={"lineage": lineage, "serial": serial + 1, "resources": resources}), stored

    def _parse_row(self, row: tuple[Any, ...] | None) -> State:
        if row is None:
            return State()
        version, _, _, body = row
        if int(version) > SCHEMA_VERSION:
            raise StateError(
                f"The state {self.where.key!r} in {self.address} was written by a newer reconciler (schema version "
                f"{version}; this one knows {SCHEMA_VERSION}). Upgrade reconciler. Nothing was done.")
        try:
            return State.model_validate_json(body)
        except ValidationError as exc:
            raise StateError(f"The state {self.where.key!r} in {self.address} is not a valid state: "
                             f"{exc.errors()[0]['msg']}.") from None

    def _parse_entry(self, number: int, text: str) -> tuple[dict[str, ResourceState], list[str]]:
        try:
            value = parse_json(text)
            sets = {a: ResourceState.model_validate(r) for a, r in value.get("set", {}).items()}
            removes = [str(a) for a in value.get("remove", [])]
        except (ValueError, AttributeError, ValidationError) as exc:
            raise StateError(f"Journal row {number} of the PostgreSQL state {self.address} is not a change "
                             f"({exc}). Nothing was changed.") from None
        return sets, removes

    # -- writing -----------------------------------------------------------------------

    def write(self, state: State) -> State:
        """``state`` with its serial bumped, if what is stored is what ``state`` was read from."""
        new = state.model_copy(update={"serial": state.serial + 1, "lineage": state.lineage or str(uuid.uuid4())})
        with self._writing() as conn:
            stored = self._stored_for_update(conn)
            if stored.journal is not None:
                read_from = (stored.journal[0], stored.journal[1] + 1)
            else:
                read_from = (stored.lineage, stored.serial)
            if (state.lineage, state.serial) != read_from and not (state.lineage == "" and read_from[1] == 0):
                raise StateError(self._moved(stored, state))
            self._put(conn, new, exists=stored.exists)
        return new

    def replace(self, state: State) -> State:
        with self._writing() as conn:
            stored = self._stored_for_update(conn)
            self._put(conn, state, exists=stored.exists)
        return state

    def fold_leftover(self, state: State) -> State:
        """Fold a stopped apply's journal rows: ``state`` is them replayed (``load``)."""
        with self._writing() as conn:
            stored = self._stored_for_update(conn)
            if stored.journal is None:
                return state
            if (state.lineage, state.serial) != (stored.journal[0], stored.journal[1] + 1):
                raise StateError(self._moved(stored, state))
            self._put(conn, state, exists=stored.exists)
        return state

    def _stored_for_update(self, conn: psycopg.Connection[Any]) -> _Stored:
        """What is stored, the state row locked until the transaction ends."""
        t = self._tables()
        row = conn.execute(sql.SQL("SELECT schema_version, lineage, serial, body FROM {states} WHERE key = %s "
                                   "FOR UPDATE").format(**t), (self.where.key,)).fetchone()
        if row is not None and int(row[0]) > SCHEMA_VERSION:
            self._parse_row(row)  # refuses it
        journal = conn.execute(sql.SQL("SELECT lineage, base_serial FROM {journal} WHERE key = %s ORDER BY seq "
                                       "LIMIT 1").format(**t), (self.where.key,)).fetchone()
        return _Stored(exists=row is not None, lineage=str(row[1]) if row else "", serial=int(row[2]) if row else 0,
                       journal=None if journal is None else (str(journal[0]), int(journal[1])))

    def _put(self, conn: psycopg.Connection[Any], state: State, *, exists: bool) -> None:
        """Write the state row (inside the caller's transaction) and drop the journal rows it now holds."""
        t = self._tables()
        body = state.model_dump_json(indent=2, exclude_none=True) + "\n"
        params = {"k": self.where.key, "v": SCHEMA_VERSION, "l": state.lineage, "s": state.serial, "b": body}
        if exists:
            conn.execute(sql.SQL("UPDATE {states} SET schema_version = %(v)s, lineage = %(l)s, serial = %(s)s, "
                                 "body = %(b)s, updated_at = now() WHERE key = %(k)s").format(**t), params)
        else:
            # Two first writers: the row lock cannot serialise what is not there, the primary key does.
            inserted = conn.execute(sql.SQL("INSERT INTO {states} (key, schema_version, lineage, serial, body) "
                                            "VALUES (%(k)s, %(v)s, %(l)s, %(s)s, %(b)s) ON CONFLICT (key) "
                                            "DO NOTHING").format(**t), params)
            if inserted.rowcount != 1:
                raise StateError(f"The PostgreSQL state {self.address} was created by another command while this "
                                 "one wrote it; nothing was written. Run the command again.")
        conn.execute(sql.SQL("DELETE FROM {journal} WHERE key = %s").format(**t), (self.where.key,))

    def _moved(self, stored: _Stored, state: State) -> str:
        now = (f"serial {stored.journal[1] + 1} of lineage {stored.journal[0]} (with an apply's journal rows)"
               if stored.journal else f"serial {stored.serial} of lineage {stored.lineage or '(none)'}")
        return (f"The PostgreSQL state {self.address} changed since this command read it: it holds {now}, this "
                f"command read serial {state.serial} of lineage {state.lineage or '(none)'}. Another writer won; "
                "nothing was written. Run the command again.")

    def journal(self, state: State) -> PostgresJournal:
        return PostgresJournal(self, state)

    # -- the lock ----------------------------------------------------------------------

    def lock(self, command: str, *, timeout: float = 0.0) -> PostgresLock:
        return PostgresLock(self, command, timeout=timeout)

    def _lock_keys(self) -> dict[str, Any]:
        return {"c": LOCK_CLASS, "n": f"{self.where.schema}.{self.where.key}", "k": self.where.key}

    def _holder_session(self, conn: psycopg.Connection[Any]) -> int | None:
        """The server pid of the session holding the advisory lock, if one does."""
        row = conn.execute("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 "
                           "AND classid = (%(c)s::int4)::oid AND objid = (hashtext(%(n)s))::oid "
                           "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                           self._lock_keys()).fetchone()
        return None if row is None else int(row[0])

    def _holder(self, conn: psycopg.Connection[Any]) -> Holder | None:
        row = conn.execute(sql.SQL("SELECT lock_id, host, pid, command, to_char(since AT TIME ZONE 'UTC', "
                                   "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), backend_pid FROM {locks} WHERE key = %s")
                           .format(**self._tables()), (self.where.key,)).fetchone()
        if row is None:
            return None
        return Holder(id=str(row[0]), host=row[1], pid=row[2], command=row[3], since=row[4],
                       backend_pid=int(row[5]))

    def stopped_warning(self) -> str | None:
        with self._reading() as conn, conn.transaction():
            conn.execute(GATE, self._lock_keys())  # not a holder between its row and its lock
            holder = self._holder(conn)
            if holder is None or self._holder_session(conn) is not None:
                return None
        return (f"The PostgreSQL state {self.address} was last locked by {holder.describe()}, whose session ended "
                "without releasing it: it was killed or lost its connection. The server released the lock; what "
                "it recorded is in the journal rows, which this plan read, but a change it was making when it "
                "stopped may be missing, so this plan may show it as still to do. The next apply converges on "
                "the manifests.")

    def force_unlock(self, lock_id: str) -> str:
        """Break the lock ``lock_id``: end the session holding it (the server
        releases the lock with it), and remove the row naming the holder."""
        t = self._tables()
        with self._reading() as conn:
            holder = self._holder(conn)
            if holder is None:
                raise StateError(f"The PostgreSQL state {self.address} is not locked; nothing was removed.")
            if holder.id != lock_id:
                raise StateError(f"The lock of the PostgreSQL state {self.address} has ID {holder.id}, not "
                                 f"{lock_id}; it was not removed. It is held by {holder.describe()}.")
            session = self._holder_session(conn)
            if session is not None and session != holder.backend_pid:
                raise StateError(f"The lock {lock_id} of {self.address} was released meanwhile and is held by "
                                 "another command now; nothing was removed.")
            ended = ""
            if session is not None:
                try:
                    conn.execute("SELECT pg_terminate_backend(%s)", (session,))
                except psycopg.errors.InsufficientPrivilege as exc:
                    raise StateError(f"The lock {lock_id} was not removed: this role may not end the session "
                                     f"(server pid {session}) holding it ({_reason(exc)}). Stop "
                                     f"{holder.describe()} instead, or ask the database's owner.") from None
                # The session ends, and releases the lock, a moment after it is told to.
                deadline = time.monotonic() + 10
                while self._holder_session(conn) == session and time.monotonic() < deadline:
                    time.sleep(0.05)
                ended = (f" Its database session (server pid {session}) was ended, which released the lock: the "
                         "command stops at its next state write.")
            conn.execute(sql.SQL("DELETE FROM {locks} WHERE key = %s AND lock_id = %s").format(**t),
                         (self.where.key, lock_id))
        return (f"Removed the lock {lock_id} of {self.address}, held by {holder.describe()}.{ended} That command "
                "may have changed the service without recording it: run 'reconciler plan' to see where things "
                "stand.\n")


@dataclass(frozen=True)
class _Stored:
    """What the state row and the journal rows hold."""

    exists: bool
    lineage: str
    serial: int
    journal: tuple[str, int] | None  # the lineage and serial the journal rows continue


class PostgresJournal:
    """An apply's journal as rows: one short transaction per change, on the locked session."""

    def __init__(self, backend: PostgresBackend, state: State) -> None:
        self.backend = backend
        self.serial = state.serial
        self.lineage = state.lineage or str(uuid.uuid4())
        self._lines = 0

    @property
    def started(self) -> bool:
        return self._lines > 0

    @property
    def lines(self) -> int:
        return self._lines

    @property
    def where(self) -> str:
        w = self.backend.where
        return f"the journal rows of the state {w.key!r} ({w.schema}.journal)"

    def append(self, entry: Mapping[str, object]) -> None:
        text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
        with self.backend._writing() as conn:
            # The lineage on the first row only: the rows after it continue it (fewer bytes per change).
            conn.execute(sql.SQL("INSERT INTO {journal} (key, lineage, base_serial, entry) VALUES (%s, %s, %s, %s)")
                         .format(**self.backend._tables()),
                         (self.backend.where.key, None if self._lines else self.lineage, self.serial, text))
        self._lines += 1

    def fold(self, state: State) -> State:
        """The state row written with serial + 1 and the journal rows deleted,
        in one transaction, if the row still holds the serial this apply read."""
        new = state.model_copy(update={"lineage": self.lineage, "serial": self.serial + 1})
        b = self.backend
        with b._writing() as conn:
            stored = b._stored_for_update(conn)
            if stored.journal not in (None, (self.lineage, self.serial)) or stored.serial != self.serial or (
                    stored.exists and stored.lineage not in (self.lineage, "")):
                raise StateServerError(b._moved(stored, state.model_copy(update={"lineage": self.lineage,
                                                                                 "serial": self.serial})))
            b._put(conn, new, exists=stored.exists)
        return new

    def close(self) -> None:
        """The rows stay until folded; the session is the backend's."""


def _sentence(text: str) -> str:
    """``text`` ended as a sentence (libpq's hints end in a question mark)."""
    return text if text.endswith(("?", "!", ".")) else text + "."


def _reason(exc: psycopg.Error) -> str:
    """The server's or libpq's words, on one line."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text.rstrip(".")


# The tables, created once (IF NOT EXISTS): the only DDL this tool runs.
_DDL = (
    "CREATE TABLE IF NOT EXISTS {meta} (one boolean PRIMARY KEY DEFAULT true CHECK (one), "
    "schema_version integer NOT NULL)",
    "CREATE TABLE IF NOT EXISTS {states} (key text PRIMARY KEY, schema_version integer NOT NULL, "
    "lineage text NOT NULL, serial bigint NOT NULL, body text NOT NULL, "
    "updated_at timestamptz NOT NULL DEFAULT now())",
    # lineage: on an apply's first row only (the others continue it), as the file's journal header.
    "CREATE TABLE IF NOT EXISTS {journal} (key text NOT NULL, seq bigserial NOT NULL, lineage text, "
    "base_serial bigint NOT NULL, entry text NOT NULL, PRIMARY KEY (key, seq))",
    "CREATE TABLE IF NOT EXISTS {locks} (key text PRIMARY KEY, lock_id text NOT NULL, host text, pid integer, "
    "command text, since timestamptz NOT NULL DEFAULT now(), backend_pid integer NOT NULL)",
)
