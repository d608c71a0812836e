"""``state list|show|rm`` and ``force-unlock``: read and edit what the state knows.

None of these changes the service.  ``rm`` forgets an address (the next plan
treats it as new: a template member would be created again); ``force-unlock``
removes a lock left by a command that is gone, given the lock's ID
(Terraform's ``force-unlock LOCK_ID``).

The state is read with the journal a stopped apply may have left beside it
(``load_state`` replays it): ``list`` and ``show`` only read, while ``rm``
folds it into the file as it writes it (``write_state``).
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from reconciler.errors import ConfigError, StateError
from reconciler.state import (
    default_state_path,
    LockHolder,
    ResourceState,
    State,
    StateLock,
    journal_path,
    load_state,
    lock_path,
    remove_lock,
    write_state,
)


def state_list(*, path: Path, state_path: Path | None) -> str:
    """One line per address: the address and its workspace id, sorted.  The
    state is ``state_path``, else the default one beside the manifests in ``path``."""
    state_path = state_path or default_state_path(path)
    state = load_state(state_path)
    if not state.resources and not os.path.lexists(state_path) and not os.path.lexists(journal_path(state_path)):
        return (f"There is no state file at {state_path}: nothing was applied with it yet, or the state is kept "
                "elsewhere (name it with --state FILE).\n")
    if not state.resources:
        return f"The state {state_path} records nothing yet.\n"
    width = max(len(a) for a in state.resources)
    return "".join(f"{a:<{width}}  {r.id}\n" for a, r in sorted(state.resources.items()))


def state_show(*, path: Path, state_path: Path | None, address: str) -> str:
    """Everything the state records for ``address``, as JSON."""
    state_path = state_path or default_state_path(path)
    resource = _resource(load_state(state_path), address, state_path)
    return json.dumps({"address": address, **resource.model_dump(exclude_none=True)}, indent=2) + "\n"


def state_rm(*, path: Path, state_path: Path | None, address: str) -> str:
    """Forget ``address`` in the state; the service is not touched."""
    state_path = state_path or default_state_path(path)
    with StateLock(state_path, command="reconciler state rm"):
        state = load_state(state_path)
        resource = _resource(state, address, state_path)
        write_state(state_path, state.without(address))
    if resource.asset is not None:
        return _asset_removed(address, resource, state_path)
    return (
        f"Removed {address} (workspace {resource.id}) from the state {state_path}. The service was not "
        f"changed. The next plan treats {address} as unknown: a workspace made from a template would be "
        "created again, and write-only values would be sent again.\n"
    )


def _asset_removed(address: str, resource: ResourceState, state_path: Path) -> str:
    """What forgetting an asset means: the next apply creates it afresh."""
    assert resource.asset is not None
    if resource.id:
        what, kept = f"asset {resource.id}", f" Asset {resource.id} stays in the service (the API cannot delete it)."
    elif resource.asset.orphan:
        what, kept = "an asset the service made, whose id was never known", ""
    else:
        what, kept = "an asset whose creation got no answer", ""
    return (f"Removed {address} ({what}) from the state {state_path}. The service was not changed.{kept} "
            f"The next apply creates {address} as the manifest says.\n")


def force_unlock(*, path: Path, state_path: Path | None, lock_id: str) -> str:
    """Remove the lock of ``state_path`` when its ID is ``lock_id``.

    Refused when there is no lock, when its ID is another (so a lock taken
    since the ID was read is never broken by mistake), when the lock has no
    ID, and when its holder still runs on this host.
    """
    state_path = state_path or default_state_path(path)
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


def _resource(state: State, address: str, state_path: Path) -> ResourceState:
    resource = state.resources.get(address)
    if resource is None:
        raise ConfigError(f"The state {state_path} records nothing for {address}.{closest(address, state.resources)}")
    return resource


def closest(address: str, known: Iterable[str]) -> str:
    """The addresses of ``known`` close to ``address``, as a sentence to append (empty when none are)."""
    matches = difflib.get_close_matches(address, list(known), n=3, cutoff=0.5)
    return f" Did you mean {', '.join(matches)}?" if matches else ""
