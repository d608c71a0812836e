"""The directory of a PostgreSQL state: the table ``directory`` in the state's schema.

One row per resource, keyed by the state's ``key``: ``kind`` is ``User`` or ``Group`` (``id`` the
resource's id, ``body`` its SCIM JSON, ``since`` a user's deactivation day), ``Deleted`` (``id`` an
email, ``since`` the day it was deleted), or ``Serial`` (one row, ``body`` the serial).

Every write is one transaction that first locks the key's ``Serial`` row ``FOR UPDATE``: writers of one
directory queue there, the one after sees what the one before committed, so no update is lost; then
only the rows that changed are written. A read is one ``REPEATABLE READ`` snapshot.

The connection, the schema and the errors are the state backend's own (``PostgresBackend``): the same
address, the password never in it, the same messages for a server that cannot be reached or is lost.
The table is created on first use, as the state's tables are.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any, TypeVar

import psycopg
from psycopg import sql

from reconciler.directory.store_document import GROUP, USER, DirectoryDocument, DirectoryStoreError
from reconciler.errors import StateError
from reconciler.state.address import postgres_url
from reconciler.state.postgres import LOCK_CLASS, PostgresBackend
from reconciler.text import parse_json

T = TypeVar("T")
SERIAL = "Serial"
DELETED = "Deleted"

_DDL = ("CREATE TABLE IF NOT EXISTS {directory} (key text NOT NULL, kind text NOT NULL, id text NOT NULL, "
        "body text NOT NULL, since date, updated_at timestamptz NOT NULL DEFAULT now(), "
        "PRIMARY KEY (key, kind, id))")


class PostgresDirectory:
    """The directory rows of one state (the module's docstring)."""

    def __init__(self, state_address: str) -> None:
        self.state = PostgresBackend.from_url(postgres_url(state_address))
        self.address = self.state.address
        self.where = f"the table {self.state.where.schema}.directory (key {self.state.where.key!r})"
        self._ready = False

    def _table(self) -> sql.Composable:
        return sql.SQL("{}.{}").format(sql.Identifier(self.state.where.schema), sql.Identifier("directory"))

    def _session(self) -> psycopg.Connection[Any]:
        """The state backend's session, the directory table created on its first use."""
        conn = self.state._session()
        if not self._ready:
            self._ensure_table(conn)
            self._ready = True
        return conn

    def _ensure_table(self, conn: psycopg.Connection[Any]) -> None:
        schema = self.state.where.schema
        try:
            found = conn.execute("SELECT to_regclass(%s)", (f'"{schema}"."directory"',)).fetchone()
            if found is not None and found[0] is not None:
                return
            with conn.transaction():
                # Two first uses at once: the second waits here (the state's own DDL lock), then finds the table.
                conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (LOCK_CLASS,))
                conn.execute(sql.SQL(_DDL).format(directory=self._table()))
        except psycopg.errors.InsufficientPrivilege as exc:
            raise DirectoryStoreError(
                f"Cannot use the directory of the PostgreSQL state {self.address}: the table {schema}.directory "
                f"does not exist yet, and this role may not create it ({_reason(exc)}). Grant the role CREATE on "
                f"the schema {schema}, or have its owner run 'reconciler directory serve' once. Nothing was "
                "done.") from None
        except psycopg.Error as exc:
            raise DirectoryStoreError(f"Cannot prepare the directory of the PostgreSQL state {self.address}: "
                                      f"{_reason(exc)}. Nothing was done.") from None

    def read(self) -> DirectoryDocument:
        self._session()
        with self.state._reading() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            rows = self._rows(conn)
        return self._document(rows)

    def change(self, edit: Callable[[DirectoryDocument], T]) -> T:
        self._session()
        key = self.state.where.key
        t = self._table()
        try:
            with self.state._writing() as conn:
                conn.execute(sql.SQL("INSERT INTO {} (key, kind, id, body) VALUES (%s, %s, '', '0') "
                                     "ON CONFLICT DO NOTHING").format(t), (key, SERIAL))
                # Every writer of this directory queues on this row: what it reads next is what the last committed.
                conn.execute(sql.SQL("SELECT body FROM {} WHERE key = %s AND kind = %s AND id = '' FOR UPDATE")
                             .format(t), (key, SERIAL))
                before = self._document(self._rows(conn))
                document = before.copy()
                result = edit(document)
                document.serial = before.serial + 1
                self._write(conn, before, document)
        except StateError as exc:
            if isinstance(exc, DirectoryStoreError):
                raise
            raise DirectoryStoreError(str(exc)) from None
        return result

    def _rows(self, conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
        return conn.execute(sql.SQL("SELECT kind, id, body, since FROM {} WHERE key = %s").format(self._table()),
                            (self.state.where.key,)).fetchall()

    def _document(self, rows: list[tuple[Any, ...]]) -> DirectoryDocument:
        document = DirectoryDocument()
        try:
            for kind, row_id, body, since in rows:
                if kind == SERIAL:
                    document.serial = int(body)
                elif kind == DELETED:
                    document.deleted[row_id] = _day(since)
                elif kind in (USER, GROUP):
                    resource = parse_json(body)
                    if not isinstance(resource, dict):
                        raise ValueError(f"the {kind} {row_id} is not a JSON object")
                    document.resources(kind)[row_id] = resource
                    if since is not None:
                        document.deactivated[row_id] = _day(since)
        except (ValueError, TypeError) as exc:
            raise DirectoryStoreError(f"The rows of {self.where} in {self.address} are not a directory reconciler "
                                      f"wrote ({exc}). Nothing was done.") from None
        return document

    def _write(self, conn: psycopg.Connection[Any], before: DirectoryDocument, after: DirectoryDocument) -> None:
        """Write the rows that differ between ``before`` and ``after``, and the serial."""
        key = self.state.where.key
        t = self._table()
        upsert = sql.SQL("INSERT INTO {} (key, kind, id, body, since) VALUES (%s, %s, %s, %s, %s) "
                         "ON CONFLICT (key, kind, id) DO UPDATE SET body = EXCLUDED.body, since = EXCLUDED.since, "
                         "updated_at = now()").format(t)
        delete = sql.SQL("DELETE FROM {} WHERE key = %s AND kind = %s AND id = %s").format(t)
        import json

        puts: list[tuple[Any, ...]] = []
        gone: list[tuple[Any, ...]] = []
        for kind in (USER, GROUP):
            old, new = before.resources(kind), after.resources(kind)
            for rid, resource in new.items():
                since = after.deactivated.get(rid) if kind == USER else None
                if old.get(rid) != resource or (kind == USER and before.deactivated.get(rid) != since):
                    puts.append((key, kind, rid, json.dumps(resource, ensure_ascii=False, sort_keys=True), since))
            gone.extend((key, kind, rid) for rid in old.keys() - new.keys())
        for email, day in after.deleted.items():
            if before.deleted.get(email) != day:
                puts.append((key, DELETED, email, "{}", day))
        gone.extend((key, DELETED, email) for email in before.deleted.keys() - after.deleted.keys())
        with conn.cursor() as cursor:
            if gone:
                cursor.executemany(delete, gone)
            if puts:
                cursor.executemany(upsert, puts)
            cursor.execute(sql.SQL("UPDATE {} SET body = %s, updated_at = now() WHERE key = %s AND kind = %s "
                                   "AND id = ''").format(t), (str(after.serial), key, SERIAL))

    def close(self) -> None:
        self.state.close()


def _day(value: object) -> date:
    if isinstance(value, date):
        return value
    raise ValueError(f"a day is {value!r}")


def _reason(exc: psycopg.Error) -> str:
    return " ".join(str(exc).split()).rstrip(".") or type(exc).__name__
