"""Where a state is kept: the ``StateBackend`` protocol, and the backend an address names.

``--state`` (or ``RECONCILER_STATE``) is a file path, as it always was, or a
libpq URL ``postgresql://user@host:port/dbname?schema=NAME&key=NAME``.  The
commands and apply get a backend from ``open_backend`` and talk to it alone;
they never know which one it is.  Both give the same guarantees: a lineage
and a serial, a write that does not continue what was read is refused, an
apply's changes recorded one at a time (a journal) and folded once at the
end, and one command at a time holding the lock.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from reconciler.errors import StateError

from reconciler.state.model import State

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
STATE_ENV = "RECONCILER_STATE"
DEFAULT_SCHEMA = "reconciler"
DEFAULT_KEY = "default"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_KEY = re.compile(r"[A-Za-z0-9_.:/@+-]{1,200}")
# Parameters that would put a secret on the command line.
_SECRET_PARAMETERS = ("password", "sslpassword")


class JournalWriter(Protocol):
    """The journal one apply appends its changes to, then folds into the state."""

    @property
    def started(self) -> bool:
        """Whether something was appended and not folded yet."""
        ...

    @property
    def lines(self) -> int:
        """How many changes this apply appended."""
        ...

    @property
    def where(self) -> str:
        """The journal, in words for a message (a file's path, the rows of a table)."""
        ...

    def append(self, entry: Mapping[str, object]) -> None:
        """Record one change durably; ``StateWriteError`` when it cannot be."""
        ...

    def fold(self, state: State) -> State:
        """Write ``state`` whole with the serial the journal continues + 1, and drop the journal."""
        ...

    def close(self) -> None:
        """Release what the journal holds open (the journal itself stays until folded)."""
        ...


class HeldLock(Protocol):
    """A lock while it is held."""

    @property
    def id(self) -> str:
        """The lock's ID, which ``force-unlock`` takes."""
        ...


class StateBackend(Protocol):
    """One state, wherever it is kept."""

    @property
    def address(self) -> str:
        """The state, in words for messages and suggested commands (never a password)."""
        ...

    @property
    def kind(self) -> str:
        """``"file"`` or ``"postgresql"``: what the messages call it."""
        ...

    def exists(self) -> bool:
        """Whether anything is stored (a state, or the journal of a stopped apply)."""
        ...

    def require(self) -> None:
        """``StateError`` when there is no state (``--require-state``)."""
        ...

    def load(self) -> State:
        """The state, with the journal a stopped apply left replayed on top; nothing is written."""
        ...

    def write(self, state: State) -> State:
        """Write ``state`` (as ``load`` returned it, then edited) with its serial bumped;
        refused (``StateError``) when the stored state moved since it was read."""
        ...

    def replace(self, state: State) -> State:
        """Write ``state`` exactly as given (lineage and serial), dropping any journal:
        ``state push --force``, and a push the caller has judged safe."""
        ...

    def lock(self, command: str) -> AbstractContextManager[HeldLock]:
        """Hold the state's lock for ``command``; ``StateError`` naming the holder when it is taken."""
        ...

    def fold_leftover(self, state: State) -> State:
        """Fold the journal a stopped apply left (``state`` is ``load``'s answer); returns the stored state."""
        ...

    def journal(self, state: State) -> JournalWriter:
        """A journal continuing ``state`` as stored (after ``fold_leftover``); nothing written yet."""
        ...

    def stopped_warning(self) -> str | None:
        """What plan says of a lock whose holder died mid-apply; ``None`` when there is none."""
        ...

    def force_unlock(self, lock_id: str) -> str:
        """Break the lock whose ID is ``lock_id``; the message to print."""
        ...

    def close(self) -> None:
        """Release the backend's connections, if any."""
        ...


def is_postgres_address(address: str | Path) -> bool:
    return isinstance(address, str) and address.startswith(POSTGRES_SCHEMES)


def open_backend(address: str | Path | StateBackend) -> StateBackend:
    """The backend ``address`` names: a ``postgresql://`` URL, or a file path
    (a backend given is returned as it is)."""
    if not isinstance(address, str | Path):
        return address
    if is_postgres_address(address):
        from reconciler.state.postgres import PostgresBackend

        return PostgresBackend.from_url(str(address))
    from reconciler.state.file import FileBackend

    return FileBackend(Path(address))


def backend_for(state: str | Path | StateBackend | None, manifest_path: Path) -> StateBackend:
    """``--state`` when given, else the file beside the manifests (``default_state_path``)."""
    if state is None:
        from reconciler.state.file import FileBackend, default_state_path

        return FileBackend(default_state_path(manifest_path))
    return open_backend(state)


@dataclass(frozen=True)
class PostgresAddress:
    """A ``postgresql://`` state address: what libpq gets, and which state."""

    conninfo: str  # the URL without schema= and key=: libpq's own parameters only
    schema: str
    key: str
    display: str  # the address as given (it holds no password: one is refused)

    @classmethod
    def parse(cls, url: str) -> PostgresAddress:
        """Parse ``url``; ``StateError`` for a password in it, or a bad schema or key."""
        try:
            parts = urlsplit(url)
            has_password = parts.password is not None
        except ValueError as exc:
            raise StateError(f"--state: the PostgreSQL address is not a valid URL ({exc}).") from None
        query = parse_qsl(parts.query, keep_blank_values=True)
        if has_password or any(name in _SECRET_PARAMETERS for name, _ in query):
            shown = urlunsplit(parts._replace(netloc=_without_password(parts.netloc),
                                              query=urlencode([(n, "***" if n in _SECRET_PARAMETERS else v)
                                                               for n, v in query], safe="/:@*")))
            raise StateError(
                f"The state address {shown} holds a password, which would be seen in the process list, "
                "the shell's history and CI logs. Remove it from the address and give it to libpq as "
                "PGPASSWORD, in a password file (PGPASSFILE, or ~/.pgpass), or in a service file "
                "(PGSERVICEFILE with ?service=NAME). Nothing was done."
            )
        schema = next((v for n, v in query if n == "schema"), DEFAULT_SCHEMA)
        key = next((v for n, v in query if n == "key"), DEFAULT_KEY)
        if not _NAME.fullmatch(schema):
            raise StateError(f"--state: schema={schema!r} is not a plain SQL name (letters, digits, _; at most 63, "
                             "not starting with a digit).")
        if not _KEY.fullmatch(key):
            raise StateError(f"--state: key={key!r} must be 1 to 200 letters, digits or _.:/@+- characters.")
        rest = [(n, v) for n, v in query if n not in ("schema", "key")]
        conninfo = urlunsplit(parts._replace(query=urlencode(rest, safe="/:@")))
        return cls(conninfo=conninfo, schema=schema, key=key, display=url)


def _without_password(netloc: str) -> str:
    userinfo, at, host = netloc.rpartition("@")
    if not at:
        return netloc
    user = userinfo.split(":", 1)[0]
    return f"{user}:***@{host}"
