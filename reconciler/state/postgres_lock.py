"""The lock of a state kept in PostgreSQL: an advisory lock held on the
apply's own session (the server releases it when the session ends, so a
killed command never leaves a stale lock), and a row of ``locks`` naming
the holder, so a second command says who holds it."""

from __future__ import annotations

import contextlib
import os
import socket
import time
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

import psycopg
from psycopg import sql

from reconciler.errors import StateError
from reconciler.state.address import PostgresAddress
from reconciler.state.lock import LOCK_TIMEOUT_HINT, say_waiting, wait_for


class LockedBackend(Protocol):
    """What the lock needs of the PostgreSQL backend (``reconciler.state.postgres``),
    which imports this module: its session, its tables and its lock's keys."""

    @property
    def address(self) -> str: ...

    @property
    def where(self) -> PostgresAddress: ...

    @property
    def _conn(self) -> psycopg.Connection[Any] | None: ...

    def _reading(self) -> AbstractContextManager[psycopg.Connection[Any]]: ...

    def _tables(self) -> dict[str, sql.Composable]: ...

    def _lock_keys(self) -> dict[str, Any]: ...

    def _holder(self, conn: psycopg.Connection[Any]) -> Holder | None: ...

    def _holder_session(self, conn: psycopg.Connection[Any]) -> int | None: ...


@dataclass(frozen=True)
class Holder:
    id: str
    host: str | None
    pid: int | None
    command: str | None
    since: str | None
    backend_pid: int

    def describe(self) -> str:
        return f'"{self.command}" (pid {self.pid} on {self.host}, since {self.since}, lock ID {self.id})'


class PostgresLock:
    """The advisory lock of one state, held on the backend's session, and the row naming its holder.

    Taking the lock and writing the row, and deleting the row and releasing
    the lock, each happen inside one short transaction that holds a second,
    transaction-scoped advisory lock (the *gate*, ``GATE``); a command that
    finds the lock held reads the row under the same gate.  So no session
    ever sees the lock held without its holder's row, or the row of a holder
    that has let go: the refusal always names who holds the lock (the row
    commits before the gate is released, and a read after the gate sees it).
    """

    # A lock held by a session that ended was released by the server: there is never a dead one to take over.
    taken_over: str | None = None

    def __init__(self, backend: LockedBackend, command: str, *, timeout: float = 0.0,
                 pause: Callable[[float], None] = time.sleep) -> None:
        self.backend = backend
        self.command = command
        self.id = uuid.uuid4().hex
        self.timeout = timeout
        self.pause = pause
        self._held = False
        self._seen: _Seen | None = None  # who held the lock at the last refused try

    def __enter__(self) -> PostgresLock:
        with self.backend._reading() as conn:
            # Polled (pg_try_advisory_lock), not pg_advisory_lock with a lock_timeout: the wait is the
            # file lock's (wait_for), and a session blocked inside the server could not say who holds it.
            if not wait_for(lambda: self._try(conn), timeout=self.timeout, pause=self.pause,
                            waiting=lambda: say_waiting(self.backend.address, self.timeout, self._describe_seen())):
                raise StateError(self._held_message(self._seen))
        return self

    def _try(self, conn: psycopg.Connection[Any]) -> bool:
        """Take the lock and write the row naming this command, under the gate;
        when the lock is held, remember who holds it (read under the same gate)."""
        b = self.backend
        try:
            with conn.transaction():
                conn.execute(GATE, b._lock_keys())
                got = conn.execute("SELECT pg_try_advisory_lock(%(c)s, hashtext(%(n)s))", b._lock_keys()).fetchone()
                if not (got and got[0]):
                    self._seen = _Seen(b._holder(conn), b._holder_session(conn))
                    return False
                self._held = True
                conn.execute(sql.SQL(
                    "INSERT INTO {locks} (key, lock_id, host, pid, command, since, backend_pid) "
                    "VALUES (%s, %s, %s, %s, %s, now(), pg_backend_pid()) ON CONFLICT (key) DO UPDATE SET "
                    "lock_id = EXCLUDED.lock_id, host = EXCLUDED.host, pid = EXCLUDED.pid, "
                    "command = EXCLUDED.command, since = EXCLUDED.since, backend_pid = EXCLUDED.backend_pid")
                    .format(**b._tables()), (b.where.key, self.id, socket.gethostname(), os.getpid(), self.command))
        except BaseException:
            if self._held:
                # A session-level advisory lock outlives the rolled-back transaction that took it.
                self._unlock(conn)
            raise
        return True

    def _unlock(self, conn: psycopg.Connection[Any]) -> None:
        self._held = False
        with contextlib.suppress(psycopg.Error):
            conn.execute("SELECT pg_advisory_unlock(%(c)s, hashtext(%(n)s))", self.backend._lock_keys())

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if not self._held:
            return
        self._held = False
        b = self.backend
        conn = b._conn
        if conn is None or conn.broken or conn.closed:
            return  # the server released the lock with the session
        try:
            with conn.transaction():
                conn.execute(GATE, b._lock_keys())
                conn.execute(sql.SQL("DELETE FROM {locks} WHERE key = %s AND lock_id = %s").format(**b._tables()),
                             (b.where.key, self.id))
                conn.execute("SELECT pg_advisory_unlock(%(c)s, hashtext(%(n)s))", b._lock_keys())
        except psycopg.Error:
            pass  # a session that cannot say so is ending: the server releases the lock with it

    def _describe_seen(self) -> str:
        seen = self._seen
        if seen is None or seen.holder is None:
            return "another session"
        return seen.holder.describe()

    def _held_message(self, seen: _Seen | None) -> str:
        address = self.backend.address
        holder = None if seen is None else seen.holder
        if holder is None or (seen is not None and seen.session not in (None, holder.backend_pid)):
            # Not a reconciler of this version: the lock was taken outside the gate (by hand, or an old release).
            session = "" if seen is None or seen.session is None else f" (server pid {seen.session})"
            return (f"The PostgreSQL state {address} is locked by a database session{session} that did not say "
                    "who it is: not a command of this reconciler version, or someone's pg_advisory_lock by hand. "
                    f"Nothing was done. Find it in pg_stat_activity. {LOCK_TIMEOUT_HINT}")
        unlock = f'reconciler force-unlock {holder.id} --state "{address}"'
        return (f"The PostgreSQL state {address} is locked by {holder.describe()}: another command is running "
                f"against it. Wait for it to finish. {LOCK_TIMEOUT_HINT} A command that was killed or lost its "
                f"connection released the lock with its session; if this one hangs, '{unlock}' ends its session.")


@dataclass(frozen=True)
class _Seen:
    """Who held the lock when a try was refused: the row, and the session holding the advisory lock."""

    holder: Holder | None
    session: int | None


# The gate: a transaction-scoped advisory lock (one 64-bit key, so never one of the two-key state locks) that
# orders taking, releasing and reading the state's lock, so the lock and its row are seen together.
GATE = "SELECT pg_advisory_xact_lock((%(c)s::bigint << 32) | (hashtext(%(n)s)::bigint & 4294967295))"
