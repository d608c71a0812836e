"""``state list|show|rm|mv|push|pull`` and ``force-unlock``: read, edit and move what the state knows.

None of these changes the service.  ``rm`` forgets an address (the next plan
treats it as new: a template member would be created again); ``mv`` records
what one address knows under another (a renamed manifest key, without
creating the workspace again: Terraform's ``state mv``); ``push`` and
``pull`` copy a state between backends (a file, PostgreSQL), lineage and
serial kept; ``force-unlock`` breaks a lock left by a command that is gone,
given the lock's ID (Terraform's ``force-unlock LOCK_ID``).

The state is ``--state`` (a file path or a ``postgresql://`` URL), else the
file beside the manifests.  It is read with the journal a stopped apply may
have left: ``list`` and ``show`` only read, while ``rm`` and ``mv`` fold it in
as they write.  The commands that write wait ``lock_timeout`` seconds for the
state's lock (``--lock-timeout``).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.addresses import is_asset
from reconciler.errors import ConfigError, StateError
from reconciler.state import ResourceState, State
from reconciler.state.address import PostgresAddress, postgres_url
from reconciler.state.address import names_postgres as names_postgres  # for the command line's --state
from reconciler.state.backend import HeldLock, StateBackend, backend_for, open_backend

if TYPE_CHECKING:
    from reconciler.service import Service

StateAddress = Path | str | StateBackend


def check_state_address(address: str) -> str:
    """The ``postgresql://`` URL ``address`` names (scheme lower-cased);
    ``StateError`` for one the backend would refuse (a password in it, a
    key=value connection string), before the address can reach any message."""
    url = postgres_url(address)
    PostgresAddress.parse(url)
    return url


@contextmanager
def _opened(address: StateAddress) -> Iterator[StateBackend]:
    """The backend ``address`` names (a file path, a ``postgresql://`` URL), closed afterwards."""
    store = open_backend(address)
    try:
        yield store
    finally:
        store.close()


def state_list(*, path: Path, state_path: StateAddress | None) -> str:
    """One line per address: the address and its workspace id, sorted.  The
    state is ``state_path``, else the default one beside the manifests in ``path``."""
    with _opened(backend_for(state_path, path)) as store:
        state = store.load()
        if not state.resources and not store.exists():
            if store.kind == "file":
                return (f"There is no state file at {store.address}: nothing was applied with it yet, or the state "
                        "is kept elsewhere (name it with --state FILE).\n")
            return (f"There is no state at {store.address} yet: nothing was applied with it, or the state is kept "
                    "under another key= (or in a file: name it with --state FILE).\n")
    if not state.resources:
        return f"The state {store.address} records nothing yet.\n"
    width = max(len(a) for a in state.resources)
    return "".join(f"{a:<{width}}  {r.id}\n" for a, r in sorted(state.resources.items()))


def state_show(*, path: Path, state_path: StateAddress | None, address: str) -> str:
    """Everything the state records for ``address``, as JSON."""
    with _opened(backend_for(state_path, path)) as store:
        resource = _resource(store.load(), address, store.address)
    return json.dumps({"address": address, **resource.model_dump(exclude_none=True)}, indent=2) + "\n"


def state_verify(*, path: Path, state_path: StateAddress | None, service: Service) -> tuple[str, bool]:
    """Every record of the state checked against the service (one listing,
    never a write): the text that lists each mismatch, and whether there was none."""
    from reconciler.commands.plan import made_from_templates
    from reconciler.live import PLAN_PROPERTIES, fetch_live
    from reconciler.manifest import load_desired
    from reconciler.plan.verify import Mismatch, mismatches
    from reconciler.service import open_client

    with _opened(backend_for(state_path, path)) as store:
        state = store.load()
        label = store.address
    workspaces = {a: r for a, r in state.resources.items() if r.id and r.asset is None}
    with open_client(service) as client:
        live = fetch_live(client, sorted({r.id for r in workspaces.values()}), properties=PLAN_PROPERTIES)
    found = mismatches(state, live, made_from_templates(load_desired(path))) + [
        Mismatch(address, f"it is workspace {resource.id}", "the service has no such workspace (or this token "
                                                             "cannot see it)")
        for address, resource in workspaces.items() if resource.id not in live.workspaces]
    if not found:
        return (f"The state {label} matches the service: {len(state.resources)} records checked (an asset's "
                "workspace and type cannot be read back from the API, so only its id's uniqueness is).\n"), True
    lines = "".join(f"  {m.line()}\n" for m in sorted(found))
    return (f"The state {label} does not match the service ({len(found)} mismatches):\n{lines}"
            "Repair each with 'reconciler state rm ADDRESS' and, after checking the workspace in the web app, "
            "'reconciler import ADDRESS ID'.\n"), False


def taken_over(lock: HeldLock) -> str:
    """The line saying a dead holder's lock was taken over, to print first; empty when none was."""
    return f"{lock.taken_over}\n" if lock.taken_over is not None else ""


def state_rm(*, path: Path, state_path: StateAddress | None, address: str, lock_timeout: float = 0.0) -> str:
    """Forget ``address`` in the state; the service is not touched."""
    with _opened(backend_for(state_path, path)) as store, \
            store.lock("reconciler state rm", timeout=lock_timeout) as lock:
        state = store.load()
        resource = _resource(state, address, store.address)
        store.write(state.without(address))
    return taken_over(lock) + _removed(address, resource, store.address)


def _removed(address: str, resource: ResourceState, state_path: str) -> str:
    if resource.asset is not None:
        return _asset_removed(address, resource, state_path)
    return (
        f"Removed {address} (workspace {resource.id}) from the state {state_path}. The service was not "
        f"changed. The next plan treats {address} as unknown: a workspace made from a template would be "
        "created again, and write-only values would be sent again.\n"
    )


def state_mv(*, path: Path, state_path: StateAddress | None, source: str, destination: str,
             lock_timeout: float = 0.0) -> str:
    """Record what the state knows of ``source`` under ``destination``; the service is not touched.
    ``destination`` must be an address the manifests in ``path`` declare (else the next plan would drop it)."""
    from reconciler.manifest import load_desired
    from reconciler.manifest.moved import declared_addresses

    declared = declared_addresses(load_desired(path))
    with _opened(backend_for(state_path, path)) as store, \
            store.lock("reconciler state mv", timeout=lock_timeout) as lock:
        state = store.load()
        resource = _resource(state, source, store.address)
        pairs = state.moves(source, destination)  # a group's members move with it
        for moving, to in pairs:
            check_move(moving, to, state.resources, where=f"the state {store.address}")
        if destination not in declared:
            raise ConfigError(
                f"Cannot move {source} to {destination}: no manifest in {path} declares {destination}, so the next "
                f"plan would drop what the state knows of it. Rename the entry in the manifests first, then move "
                f"(or correct TO).{closest(destination, (a for a in declared if a != source))} Nothing was changed.")
        store.write(state.moved(source, destination))
    what = f"asset {resource.id}" if resource.asset is not None else f"workspace {resource.id}"
    members = "".join(f" {a} moved to {b} with it." for a, b in pairs if a != source)
    return (f"{taken_over(lock)}Moved {source} ({what}) to {destination} in the state {store.address}.{members} The "
            f"service was not changed. The next plan manages it as {destination}; it should not create or remove "
            "anything for this move.\n")


def check_move(source: str, destination: str, known: Iterable[str], *, where: str) -> None:
    """``ConfigError`` when ``source`` cannot become ``destination`` in ``where``: the same address,
    a destination already bound, or an asset moved to a workspace's address (or back)."""
    if source == destination:
        raise ConfigError(f"Cannot move {source} to itself; nothing was changed.")
    if is_asset(source) != is_asset(destination):
        raise ConfigError(f"Cannot move {source} to {destination}: an asset.* address holds an asset and any "
                          "other address a workspace, so one cannot become the other. Nothing was changed.")
    if destination in set(known):
        raise ConfigError(f"Cannot move {source} to {destination}: {where} already records {destination}. Remove "
                          f"it first ('reconciler state rm {destination}') if it is stale. Nothing was changed.")


def _asset_removed(address: str, resource: ResourceState, state_path: str) -> str:
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


def force_unlock(*, path: Path, state_path: StateAddress | None, lock_id: str) -> str:
    """Remove the lock of the state when its ID is ``lock_id`` (each backend says when it refuses)."""
    with _opened(backend_for(state_path, path)) as store:
        return store.force_unlock(lock_id)


def _resource(state: State, address: str, state_path: str) -> ResourceState:
    resource = state.resources.get(address)
    if resource is None:
        raise ConfigError(f"The state {state_path} records nothing for {address}.{closest(address, state.resources)}")
    return resource


def closest(address: str, known: Iterable[str]) -> str:
    """The addresses of ``known`` close to ``address``, as a sentence to append (empty when none are)."""
    matches = difflib.get_close_matches(address, list(known), n=3, cutoff=0.5)
    return f" Did you mean {', '.join(matches)}?" if matches else ""


def _lineage_serial(state: State) -> str:
    return f"serial {state.serial} of lineage {state.lineage or '(none)'}"


def state_push(source: StateAddress, destination: StateAddress, *, force: bool = False,
               lock_timeout: float = 0.0) -> str:
    """Copy the state at ``source`` (a state file) to ``destination`` (``--state``), lineage and serial kept.

    Refused, unless ``force``, when the destination holds another lineage,
    a newer serial, or the same serial with other contents: a push never
    silently overwrites what another writer recorded."""
    with _opened(source) as origin:
        state = origin.load()
        if not state.lineage:
            raise StateError(f"There is no state at {origin.address} to push (no file, or one never written by an "
                             "apply). Nothing was changed.")
        where = origin.address
    with _opened(destination) as store, store.lock("reconciler state push", timeout=lock_timeout) as lock:
        there = store.exists()
        current = store.load() if there else None
        if current is not None and not force:
            refusal = _refuse_overwrite(current, state, destination=store.address, source=where)
            if refusal == "same":
                return (f"{taken_over(lock)}{store.address} already holds {_lineage_serial(state)}, exactly as "
                        f"{where}; nothing was changed.\n")
            if refusal:
                raise StateError(refusal)
        store.replace(state)
    replaced = f" (it held {_lineage_serial(current)})" if current is not None else ""
    return f"{taken_over(lock)}Pushed {_lineage_serial(state)} from {where} to {store.address}{replaced}.\n"


def state_pull(source: StateAddress, out: Path | None = None, *, force: bool = False,
               lock_timeout: float = 0.0) -> str:
    """The state at ``source`` as the state file's JSON: returned (for stdout), or written to ``out``,
    refused, unless ``force``, when ``out`` holds another lineage or a newer serial."""
    with _opened(source) as store:
        if not store.exists():
            raise StateError(f"There is no state at {store.address} to pull. Nothing was written.")
        state = store.load()
        where = store.address
    if out is None:
        return state.model_dump_json(indent=2, exclude_none=True) + "\n"
    with _opened(out) as target, target.lock("reconciler state pull", timeout=lock_timeout) as lock:
        if target.exists() and not force:
            refusal = _refuse_overwrite(target.load(), state, destination=target.address, source=where)
            if refusal == "same":
                return f"{taken_over(lock)}{target.address} already holds {_lineage_serial(state)}; nothing was changed.\n"
            if refusal:
                raise StateError(refusal)
        target.replace(state)
    return f"{taken_over(lock)}Pulled {_lineage_serial(state)} from {where} into {target.address}.\n"


def _refuse_overwrite(current: State, new: State, *, destination: str, source: str) -> str:
    """Why ``current`` (at ``destination``) must not be replaced by ``new``; ``"same"`` when
    they are one state; ``""`` when the replacement continues it."""
    force = " Check which is right; --force replaces it anyway."
    if current.lineage and current.lineage != new.lineage:
        return (f"{destination} holds another state ({_lineage_serial(current)}) than {source} "
                f"({_lineage_serial(new)}): a different lineage, so not an older copy of it. Nothing was "
                f"changed.{force}")
    if current.serial > new.serial:
        return (f"{destination} holds a newer serial of this state ({current.serial}) than {source} "
                f"({new.serial}): it would go back in time, forgetting what was recorded since. Nothing was "
                f"changed.{force}")
    if current.serial == new.serial:
        if current == new:
            return "same"
        return (f"{destination} and {source} both hold {_lineage_serial(new)} with different contents: they "
                f"diverged. Nothing was changed.{force}")
    return ""
