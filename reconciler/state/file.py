"""The state kept in a file (``reconciler.state.json``), and its backend.

Writes go to a temp file, are fsynced, then ``os.replace``d (``atomic``), so
a crash leaves either the old or the new file, never half of one.  An apply
appends each change to a journal beside the file and folds it in once at
the end (``journal``); ``load_state`` replays a journal a killed apply left.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from pydantic import ValidationError

from reconciler.text import parse_json
from reconciler.errors import StateError
from reconciler.owned_files import MAX_STATE_BYTES, is_symlink, read_owned, symlink_refusal
from reconciler.state import atomic, journal as journal_module
from reconciler.state.journal import StateJournal, journal_path, not_ours, read_journal
from reconciler.state.lock import LockHolder, StateLock, dead_lock_warning, lock_path, remove_lock
from reconciler.state.model import STATE_VERSION, State

DEFAULT_STATE_NAME = "reconciler.state.json"


def default_state_path(manifest_path: Path) -> Path:
    """``reconciler.state.json`` beside the manifests.

    A manifest path that is itself a symbolic link is refused (``StateError``):
    the state beside it would be read, locked and written wherever the link
    points, outside the repository a pull request can plant it in."""
    if is_symlink(manifest_path):
        raise StateError(symlink_refusal(
            "manifest path", manifest_path,
            " (give the real directory), or name the state file with --state FILE"))
    if not manifest_path.exists():
        # Looking beside a path that is not there would read (or write) the state of its parent.
        raise StateError(f"{manifest_path}: no such file or directory. The state file is looked for beside the "
                         "manifests in PATH; give the manifests' directory, or name the state file with "
                         "--state FILE.")
    base = manifest_path if manifest_path.is_dir() else manifest_path.parent
    return base / DEFAULT_STATE_NAME


REQUIRE_STATE_ENV = "RECONCILER_REQUIRE_STATE"


def require_state_file(path: Path) -> None:
    """``StateError`` when there is no state at ``path`` (neither the file nor
    a journal beside it): for ``--require-state``, where a missing state is a
    checkout that lacks it, not a first apply."""
    if os.path.lexists(path) or os.path.lexists(journal_path(path)):
        return
    raise StateError(
        f"There is no state file at {path}, and --require-state (or {REQUIRE_STATE_ENV}=1) says there must be "
        "one: without it reconciler cannot know which entries of non-authoritative lists it granted, so a "
        "removal from such a list would silently be left undone. Get the state first: commit it beside the "
        "manifests (the GitOps workflow commits it after each apply), pull it from where it is kept, or point "
        "--state at it. Before the first apply there is none yet: run that one without --require-state. "
        "Nothing was called."
    )


def load_state(path: Path) -> State:
    """The state: the file (a missing file is an empty state with no lineage
    yet) with the journal an apply left beside it, if any, replayed on top.

    Nothing is written, so read-only commands (plan, ``state list``) see what
    a stopped apply recorded without changing files; the next command that
    writes the state folds the journal in.  A replayed state has the serial
    the fold will write (the file's + 1), so a plan saved before the apply
    is stale.  A journal that does not continue this file is refused
    (``StateError``) rather than applied to the wrong state.
    """
    state = _read_state_file(path)
    # The file first, then the journal.  A fold marks the journal, writes the
    # file, then removes the journal; read in this order while one runs, the
    # old file comes with its journal or alone (a view from before that apply,
    # as any read racing an apply is).  The other order could pair the new
    # file with a journal read before its fold mark, and refuse it falsely.
    journal = read_journal(journal_path(path))
    if journal is None or journal.folded_into(state):
        return state
    if not journal.applies_to(state):
        raise StateError(not_ours(journal, state, path, exists=path.exists()))
    return journal.replay(state)


def _read_state_file(path: Path) -> State:
    """The state file alone; a missing file is an empty state with no lineage yet.

    A link, a file that is not regular, or one over ``MAX_STATE_BYTES`` is a
    ``StateError`` (``read_owned``): never followed, never read whole."""
    data = read_owned(path, what="state file", limit=MAX_STATE_BYTES, error=StateError,
                      hint=", or point --state at the real file")
    if data is None:
        return State()
    try:
        raw = parse_json(data)
    except ValueError as exc:
        raise StateError(f"Cannot read the state file {path}: {exc}.") from exc
    if isinstance(raw, dict) and raw.get("version") not in (None, STATE_VERSION):
        raise StateError(
            f"The state file {path} has version {raw.get('version')!r}; this reconciler "
            f"reads version {STATE_VERSION}. Upgrade reconciler."
        )
    try:
        return State.model_validate(raw)
    except ValidationError as exc:
        raise StateError(f"The state file {path} is not a valid state: {exc.errors()[0]['msg']}.") from exc


def write_state(path: Path, state: State) -> State:
    """Write ``state`` with its serial bumped, atomically; returns what was written.

    A journal beside the file is folded in: ``state`` holds what it records
    (``load_state`` replayed it), so once the file is written the journal is
    removed.  Raises ``StateWriteError`` when the write fails (a full disk,
    an I/O error); the file then still holds what it held before, byte for
    byte, and the journal is kept.  A journal ``state`` was not read with is
    a ``StateError``, and nothing is written.
    """
    new = state.model_copy(update={"serial": state.serial + 1, "lineage": state.lineage or str(uuid.uuid4())})
    return _write_folding(path, new, loaded=state)


def fold_journal(path: Path, state: State) -> State:
    """Fold the journal a stopped apply left beside ``path`` into the file:
    ``state``, as ``load_state`` read it (the journal replayed, and already
    carrying the serial a fold writes), is written as it is.  Without a
    journal nothing is written and ``state`` is returned."""
    if read_journal(journal_path(path)) is None:
        journal_module.remove_journal(journal_path(path))  # a journal cut off before its first line records nothing
        return state
    return _write_folding(path, state, loaded=state)


def _write_folding(path: Path, new: State, *, loaded: State) -> State:
    """Write ``new`` whole; a journal ``loaded`` holds is marked as folded
    into ``new`` first, and removed once ``new`` is written."""
    journal = read_journal(journal_path(path))
    if journal is None:
        journal_module.remove_journal(journal_path(path))
        return atomic.write_whole(path, new, previous_serial=loaded.serial)
    if not (journal.replayed_in(loaded) or journal.folded_into(loaded)):
        raise StateError(
            f"Cannot write the state file {path}: the journal {journal.path} beside it records changes to "
            f"serial {journal.serial} of lineage {journal.lineage}, and the state to write was not read with "
            "it (load_state replays it). Nothing was written."
        )
    previous = journal.serial if journal.replayed_in(loaded) else loaded.serial
    return StateJournal.reopen(path, journal).finish(new, previous_serial=previous)


class FileBackend:
    """The state kept in a file, its journal and its lock beside it (``StateBackend``)."""

    kind = "file"

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def address(self) -> str:
        return str(self.path)

    def exists(self) -> bool:
        return os.path.lexists(self.path) or os.path.lexists(journal_path(self.path))

    def require(self) -> None:
        require_state_file(self.path)

    def load(self) -> State:
        return load_state(self.path)

    def write(self, state: State) -> State:
        return write_state(self.path, state)

    def replace(self, state: State) -> State:
        # The journal goes first: a crash between leaves the old file alone
        # (the replacement is run again), never the new file with a journal
        # that does not continue it.
        journal_module.remove_journal(journal_path(self.path))
        return atomic.write_whole(self.path, state, previous_serial=None)

    def lock(self, command: str, *, timeout: float = 0.0) -> StateLock:
        return StateLock(self.path, command=command, timeout=timeout)

    def fold_leftover(self, state: State) -> State:
        return fold_journal(self.path, state)

    def journal(self, state: State) -> StateJournal:
        return StateJournal(self.path, state)

    def stopped_warning(self) -> str | None:
        return dead_lock_warning(self.path)

    def force_unlock(self, lock_id: str) -> str:
        """Remove the lock when its ID is ``lock_id``.

        Refused when there is no lock, when its ID is another (so a lock taken
        since the ID was read is never broken by mistake), when the lock has no
        ID, and when its holder still runs on this host."""
        state_path = self.path
        lock = lock_path(state_path)
        holder = LockHolder.read(lock)
        if holder is None:
            raise StateError(f"The state {state_path} is not locked (there is no {lock}); nothing was removed.")
        if holder.id is None:
            raise StateError(f"The lock {lock} has no lock ID: it is empty or unreadable (written by an older "
                             "reconciler, or by hand), so force-unlock cannot check it. If no reconciler command is "
                             f"running against {state_path}, delete {lock}.")
        if holder.id != lock_id:
            raise StateError(f"The lock {lock} has ID {holder.id}, not {lock_id}; it was not removed. It is held by "
                             f"{holder.describe()}.")
        running = holder.running()
        if running:
            raise StateError(f"The lock {lock_id} was not removed: pid {holder.pid} on this host is still running "
                             f'"{holder.command}". Stop it first'
                             f" (it releases the lock as it ends); if pid "
                             f"{holder.pid} is some other program by now, delete {lock} by hand.")
        if not remove_lock(state_path, lock_id):
            raise StateError(f"The lock {lock_id} of {state_path} was released meanwhile; nothing was removed.")
        gone = ", which is no longer running" if running is False else ""
        return (f"Removed the lock {lock_id} of {state_path}, held by {holder.describe()}{gone}. That command may "
                "have changed the service without recording it: run 'reconciler plan' to see where things stand.\n")

    def close(self) -> None:
        """Nothing is held open between calls."""
