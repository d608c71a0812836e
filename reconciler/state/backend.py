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

from collections.abc import Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol


from reconciler.state.address import PostgresAddress
from reconciler.state.model import State

__all__ = ["JournalWriter", "PostgresAddress", "StateBackend", "backend_for", "is_postgres_address", "open_backend",
           "read_state", "read_stored_state"]

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
STATE_ENV = "RECONCILER_STATE"


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

    @property
    def taken_over(self) -> str | None:
        """What to say of a dead holder's lock this one replaced (a file lock whose
        holder's process is gone on this host); ``None`` when there was none."""
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

    def lock(self, command: str, *, timeout: float = 0.0) -> AbstractContextManager[HeldLock]:
        """Hold the state's lock for ``command``, waiting up to ``timeout`` seconds for
        another holder to release it; then ``StateError`` naming the holder."""
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
    """Whether ``address`` names PostgreSQL (a URL in any letter case, or a
    key=value connection string): never a file path."""
    from reconciler.state.address import names_postgres

    return isinstance(address, str) and names_postgres(address)


def open_backend(address: str | Path | StateBackend) -> StateBackend:
    """The backend ``address`` names: a ``postgresql://`` URL, or a file path
    (a backend given is returned as it is)."""
    if not isinstance(address, str | Path):
        return address
    if is_postgres_address(address):
        from reconciler.state.postgres import PostgresBackend

        from reconciler.state.address import postgres_url

        return PostgresBackend.from_url(postgres_url(str(address)))
    from reconciler.state.file import FileBackend

    return FileBackend(Path(address))


def backend_for(state: str | Path | StateBackend | None, manifest_path: Path) -> StateBackend:
    """``--state`` when given, else the file beside the manifests (``default_state_path``)."""
    if state is None:
        from reconciler.state.file import FileBackend, default_state_path

        return FileBackend(default_state_path(manifest_path))
    return open_backend(state)


def read_state(state: str | Path | StateBackend | None, manifest_path: Path) -> State:
    """The state ``--state`` names (else the file beside the manifests), read
    and never written or locked, its backend closed again: the one way every
    command that only reads the state reads it, whatever the backend."""
    store = backend_for(state, manifest_path)
    try:
        return store.load()
    finally:
        store.close()


def read_stored_state(state: str | Path | StateBackend | None, manifest_path: Path) -> State | None:
    """``read_state``, or ``None`` when no ``--state`` was given and nothing is
    stored beside the manifests (a command that can do without a state)."""
    store = backend_for(state, manifest_path)
    try:
        return store.load() if state is not None or store.exists() else None
    finally:
        store.close()
