"""The state: what only this tool knows, and where it is kept.

The service cannot tell which access entries this tool put there, so for a
non-authoritative list the state remembers what was last applied: an entry
that leaves the manifest is removed only if the state says we added it.

The package, layer by layer:

- ``model``: the records (``State``, ``ResourceState``, ...) and the
  ``StateBuilder`` an apply records into.  Pure data; the only part ``plan/``
  imports.
- ``atomic``: whole files written atomically and durably.
- ``journal``: the journal an apply appends each change to, in a file.
- ``lock``: the lock file beside a state file.
- ``file``: the state kept in a file (``reconciler.state.json``): load,
  write, fold, and ``FileBackend``.
- ``postgres``: the state kept in PostgreSQL: ``PostgresBackend``.
- ``address``: a ``postgresql://`` address parsed (no driver imported), a
  password in it refused.
- ``backend``: the ``StateBackend`` protocol both implement, and
  ``open_backend(address)``, which picks one from ``--state``.  The commands
  and apply talk to a backend only, never knowing which.

The names below are re-exported so ``from reconciler.state import X`` keeps
working for the code and tests written against the single module.
"""

from reconciler.state.atomic import StateWriteError
from reconciler.state.file import (
    DEFAULT_STATE_NAME,
    REQUIRE_STATE_ENV,
    default_state_path,
    fold_journal,
    load_state,
    require_state_file,
    write_state,
)
from reconciler.state.journal import (
    JOURNAL_VERSION,
    Journal,
    JournalEntry,
    StateJournal,
    journal_path,
    read_journal,
)
from reconciler.state.lock import LockHolder, StateLock, dead_lock_warning, lock_path, remove_lock
from reconciler.state.model import (
    STATE_VERSION,
    AccessRecord,
    AssetRecord,
    CreationIntent,
    ResourceState,
    State,
    StateBuilder,
)

__all__ = [
    "DEFAULT_STATE_NAME",
    "JOURNAL_VERSION",
    "REQUIRE_STATE_ENV",
    "STATE_VERSION",
    "AccessRecord",
    "AssetRecord",
    "CreationIntent",
    "Journal",
    "JournalEntry",
    "LockHolder",
    "ResourceState",
    "State",
    "StateBuilder",
    "StateJournal",
    "StateLock",
    "StateWriteError",
    "dead_lock_warning",
    "default_state_path",
    "fold_journal",
    "journal_path",
    "load_state",
    "lock_path",
    "read_journal",
    "remove_lock",
    "require_state_file",
    "write_state",
]
