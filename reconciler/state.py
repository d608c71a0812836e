"""The state file: what only this tool knows.

The service cannot tell which access entries this tool put there, so for a
non-authoritative list the state remembers what was last applied: an entry
that leaves the manifest is removed only if the state says we added it.

Layout follows Terraform's: ``version``, ``lineage`` (a random id fixed at
creation, so a plan made against one state is never applied to another),
``serial`` (bumped on every write) and ``resources`` keyed by address.
Writes go to a temp file, are fsynced, then ``os.replace``d, so a crash
leaves either the old or the new file, never half of one.

An apply does not rewrite the whole file after each change (O(changes x
state size)): it appends what each change recorded to a journal beside it,
``<state>.journal``, and folds the journal into the file once at the end
(see ``StateJournal``).  ``load_state`` replays a journal that a killed
apply left behind; ``write_state`` folds one in.
"""

from __future__ import annotations

import errno as errno_module
import json
import os
import shlex
import socket
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reconciler.errors import StateError
from reconciler.owned_files import (
    MAX_JOURNAL_BYTES,
    MAX_LOCK_BYTES,
    MAX_STATE_BYTES,
    is_symlink,
    read_owned,
    symlink_refusal,
)

STATE_VERSION = 1
DEFAULT_STATE_NAME = "reconciler.state.json"


class AccessRecord(BaseModel):
    """The access entries this tool manages on one list: email/domain → role
    as last applied, and since when each has been managed
    (``"user:<email>"`` / ``"domain:<domain>"`` → ``YYYY-MM-DD``)."""

    model_config = ConfigDict(extra="forbid")
    users: dict[str, str] = Field(default_factory=dict)
    domains: dict[str, str] = Field(default_factory=dict)
    since: dict[str, str] = Field(default_factory=dict)
    # The entries a team or rule put there ("user:<email>" -> "team <key>" or
    # "rule <key>"): when one leaves the team or the rule, the plan names it.
    via: dict[str, str] | None = None  # None: nothing put there by a team or rule (not written)


class AssetRecord(BaseModel):
    """What was last applied to an asset; none of it can be read back.

    ``file_id`` and ``uploaded`` are written as soon as they are true, so an
    apply interrupted between the upload and the asset's creation resumes
    with the same file.  ``None`` fields are unknown (never written by this
    tool, or imported).
    """

    model_config = ConfigDict(extra="forbid")
    type: str | None = None
    file: str | None = None
    digest: str | None = None
    file_id: str | None = None
    uploaded: bool | None = None
    url: str | None = None
    custom_code: str | None = None
    metadata: dict[str, float] | None = None
    name: str | None = None
    description: str | None = None
    tags: list[str] | None = None
    internal: bool | None = None
    # The asset's creation was sent and not answered (recorded before the
    # call, as Pulumi records a pending operation): it may exist.  A file
    # asset is simply tried again (one file backs one asset: a second creation
    # is refused); a link or embed is not, as nothing can tell.
    uncertain: bool | None = None
    # The service refused a creation because the file backs an asset already:
    # it exists, and its id is unknown until someone imports it.
    orphan: bool | None = None
    # The asset was created (its id is known) and the PATCH that follows the
    # creation (description, internal) has not been answered yet: a step of
    # its own, which the next plan sends as an update of that asset.
    pending_patch: list[str] | None = None


class ResourceState(BaseModel):
    """What this tool knows of one address.

    ``id`` is the workspace (or, for ``asset.*``, the asset) the address is
    bound to; empty while an asset's file exists but the asset does not yet.  The rest are facts the
    service cannot read back: the access entries last applied, the homepage
    a member was last connected to (membership is not a workspace property),
    the template a workspace was created from by this tool, and the section,
    page and task values last written (``None``: never written).
    """

    model_config = ConfigDict(extra="forbid")
    id: str
    access: AccessRecord | None = None
    connected_to: str | None = None
    template: str | None = None
    sections: dict[str, bool] | None = None
    pages: dict[str, bool] | None = None
    tasks: dict[str, bool] | None = None
    asset: AssetRecord | None = None

    def setting(self, kind: str, item_id: str) -> bool | None:
        """The value last written to section/page/task ``item_id``, if known."""
        values: dict[str, bool] | None = getattr(self, f"{kind}s")
        return None if values is None else values.get(item_id)


class State(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = STATE_VERSION
    # Empty until the first write: a missing state file must load the same way
    # every time, or a plan saved before the first apply would never match.
    lineage: str = ""
    serial: int = 0
    resources: dict[str, ResourceState] = Field(default_factory=dict)

    def access_record(self, address: str) -> AccessRecord | None:
        resource = self.resources.get(address)
        return resource.access if resource is not None else None

    def known_ids(self) -> set[str]:
        """Every workspace id some address is bound to."""
        return {r.id for r in self.resources.values() if r.id}

    def with_resource(self, address: str, workspace_id: str, **facts: object) -> State:
        """A copy where ``address`` is bound to ``workspace_id`` with ``facts``
        merged into what was known (a different id starts afresh).

        Copies the whole map: for one edit (import, ``state rm``); apply
        records through a ``StateBuilder``, O(1) per change."""
        resources = dict(self.resources)
        resources[address] = _bound(resources.get(address), workspace_id, facts)
        return self.model_copy(update={"resources": resources})

    def with_setting(self, address: str, workspace_id: str, kind: str, item_id: str, value: bool) -> State:
        """A copy that records ``value`` as last written to one section/page/task."""
        facts = _setting_facts(self.resources.get(address), workspace_id, kind, item_id, value)
        return self.with_resource(address, workspace_id, **facts)

    def without(self, address: str) -> State:
        resources = {a: r for a, r in self.resources.items() if a != address}
        return self.model_copy(update={"resources": resources})


def _bound(old: ResourceState | None, workspace_id: str, facts: Mapping[str, object]) -> ResourceState:
    """``old`` bound to ``workspace_id`` with ``facts`` merged in (a different id starts afresh)."""
    base = old.model_dump() if old is not None and old.id == workspace_id else {"id": workspace_id}
    return ResourceState.model_validate({**base, **facts})


def _setting_facts(old: ResourceState | None, workspace_id: str, kind: str, item_id: str,
                   value: bool) -> dict[str, object]:
    """The facts that record ``value`` as last written to one section/page/task of ``old``."""
    known: dict[str, bool] | None = getattr(old, f"{kind}s") if old is not None and old.id == workspace_id else None
    return {f"{kind}s": {**(known or {}), item_id: value}}


class StateBuilder:
    """A state changed in place, one address at a time: what apply records into.

    ``State``'s ``with_*`` methods copy the whole map of resources, so an
    apply recording each of its changes through them was O(changes x N).  The
    builder copies the map once, and each change then costs only the
    addresses it touches.  It also remembers what changed since the last
    ``commit`` (the journal line of one change: ``pending``), so that a step
    that failed half-way can be dropped (``revert``) instead of recorded.
    """

    def __init__(self, state: State) -> None:
        self._state = state
        self._resources = dict(state.resources)
        # How many addresses are bound to each id: "is this id known?" in O(1).
        self._ids: Counter[str] = Counter(r.id for r in self._resources.values() if r.id)
        # address -> what it was at the last commit (None: absent), for each address touched since.
        self._before: dict[str, ResourceState | None] = {}

    def get(self, address: str) -> ResourceState | None:
        """What the state knows of ``address`` now."""
        return self._resources.get(address)

    def items(self) -> list[tuple[str, ResourceState]]:
        """Every address and what is known of it (a list: safe to change the builder meanwhile)."""
        return list(self._resources.items())

    def knows_id(self, workspace_id: str) -> bool:
        """Whether some address is bound to ``workspace_id``."""
        return self._ids[workspace_id] > 0

    def put(self, address: str, resource: ResourceState | None) -> None:
        """Record ``resource`` for ``address`` (``None``: forget the address)."""
        old = self._resources.get(address)
        if old == resource:
            return
        self._before.setdefault(address, old)
        self._store(address, resource)

    def bind(self, address: str, workspace_id: str, **facts: object) -> None:
        """As ``State.with_resource``, in place."""
        self.put(address, _bound(self.get(address), workspace_id, facts))

    def record_setting(self, address: str, workspace_id: str, kind: str, item_id: str, value: bool) -> None:
        """As ``State.with_setting``, in place."""
        self.bind(address, workspace_id, **_setting_facts(self.get(address), workspace_id, kind, item_id, value))

    def remove(self, address: str) -> None:
        self.put(address, None)

    def has_pending(self) -> bool:
        """Whether anything changed since the last ``commit``."""
        return any(self._resources.get(a) != before for a, before in self._before.items())

    def pending(self) -> dict[str, object] | None:
        """What changed since the last ``commit``, as one journal entry
        (``{"set": {address: resource}, "remove": [address]}``); ``None``
        when nothing did.  Only the addresses touched are serialised."""
        sets: dict[str, object] = {}
        removes: list[str] = []
        for address, before in self._before.items():
            now = self._resources.get(address)
            if now == before:
                continue
            if now is None:
                removes.append(address)
            else:
                sets[address] = now.model_dump(mode="json", exclude_none=True)
        entry: dict[str, object] = {}
        if sets:
            entry["set"] = sets
        if removes:
            entry["remove"] = removes
        return entry or None

    def commit(self) -> None:
        """What is pending is recorded (its journal line was appended)."""
        self._before.clear()

    def revert(self) -> None:
        """Drop what changed since the last ``commit``."""
        for address, before in self._before.items():
            self._store(address, before)
        self._before.clear()

    def state(self) -> State:
        """The state as it is now (one copy of the map)."""
        return self._state.model_copy(update={"resources": dict(self._resources)})

    def _store(self, address: str, resource: ResourceState | None) -> None:
        old = self._resources.pop(address, None)
        if old is not None and old.id:
            self._ids[old.id] -= 1
        if resource is not None:
            self._resources[address] = resource
            if resource.id:
                self._ids[resource.id] += 1


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
        raise StateError(_not_ours(journal, state, path, exists=path.exists()))
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
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
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
        _remove_journal(journal_path(path))  # a journal cut off before its first line records nothing
        return state
    return _write_folding(path, state, loaded=state)


def _write_folding(path: Path, new: State, *, loaded: State) -> State:
    """Write ``new`` whole; a journal ``loaded`` holds is marked as folded
    into ``new`` first, and removed once ``new`` is written."""
    journal = read_journal(journal_path(path))
    if journal is None:
        _remove_journal(journal_path(path))
        return _write_whole(path, new, previous_serial=loaded.serial)
    if not (journal.replayed_in(loaded) or journal.folded_into(loaded)):
        raise StateError(
            f"Cannot write the state file {path}: the journal {journal.path} beside it records changes to "
            f"serial {journal.serial} of lineage {journal.lineage}, and the state to write was not read with "
            "it (load_state replays it). Nothing was written."
        )
    previous = journal.serial if journal.replayed_in(loaded) else loaded.serial
    return StateJournal.reopen(path, journal).finish(new, previous_serial=previous)


def _write_whole(path: Path, state: State, *, previous_serial: int | None) -> State:
    """Write ``state`` exactly (serial and lineage as given), atomically: a
    temp file, fsynced, renamed over ``path``, the directory fsynced."""
    # Unknown facts are left out rather than written as null: smaller files,
    # and a state written by this version reads the same in the last one.
    text = state.model_dump_json(indent=2, exclude_none=True) + "\n"
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _write_temp(path, text.encode("utf-8"))
        try:
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise StateWriteError(path, exc.errno, previous_serial=previous_serial if existed else None,
                              detail=exc.strerror or str(exc)) from exc
    _fsync_directory(path.parent)
    return state


class StateWriteError(StateError):
    """The state file, or the journal of an apply, could not be written (a
    full disk, an I/O error).

    The state file still holds what it held before the write, byte for byte:
    ``previous_serial`` is its serial (``None`` when there was no file yet,
    and none was written).  A journal that could not be appended to still
    holds every change recorded before (``journal``).  ``path`` is the file
    that could not be written and ``errno`` the operating system's error
    code (``errno.ENOSPC`` for a full disk), so a caller can say what was
    changed in the service and not recorded.
    """

    def __init__(self, path: Path, errno: int | None, *, previous_serial: int | None,
                 detail: str | None = None, journal: bool = False) -> None:
        self.path = path
        self.errno = errno
        self.previous_serial = previous_serial
        self.journal = journal
        if journal:
            super().__init__(f"Cannot append to the state journal {path}: {_os_reason(errno, detail)}. The journal "
                             "keeps every change recorded before this one, and the state file is unchanged.")
            return
        kept = (f"The file still holds serial {previous_serial}, as before this write."
                if previous_serial is not None else "There was no state file before, and none was written.")
        super().__init__(f"Cannot write the state file {path}: {_os_reason(errno, detail)}. {kept}")


# -- the journal ---------------------------------------------------------------------

JOURNAL_VERSION = 1


def journal_path(state_path: Path) -> Path:
    """The journal of ``state_path``: the same name with ``.journal`` added."""
    return state_path.with_name(state_path.name + ".journal")


@dataclass(frozen=True)
class JournalEntry:
    """One change line: addresses set to what is now known of them, addresses forgotten."""

    set: Mapping[str, ResourceState]
    remove: tuple[str, ...] = ()


@dataclass(frozen=True)
class Journal:
    """What a journal file holds, as ``read_journal`` found it.

    The file is JSON Lines: a header ``{"journal": 1, "lineage": L,
    "serial": N}`` naming the state it continues (the file's serial N, and
    the lineage the fold writes: a new one when the file had none), then one
    line per recorded change, ``{"set": {address: resource}, "remove":
    [address]}``, and, once an apply folds it, ``{"fold": {"lineage": L,
    "serial": N + 1}}``: the state written, so a journal found beside that
    very state (a crash between writing it and removing the journal) is
    known to be in it already.
    """

    path: Path
    lineage: str
    serial: int
    entries: tuple[JournalEntry, ...]
    folds: frozenset[tuple[str, int]]
    length: int  # bytes of the lines that count: an append continues from there

    def applies_to(self, file_state: State) -> bool:
        """Whether the journal continues ``file_state`` (as read from the file)."""
        return file_state.serial == self.serial and file_state.lineage in (self.lineage, "")

    def replayed_in(self, state: State) -> bool:
        """Whether ``state`` is this journal replayed (what ``load_state`` returns)."""
        return state.serial == self.serial + 1 and state.lineage == self.lineage

    def folded_into(self, state: State) -> bool:
        """Whether a fold of this journal wrote ``state``: it holds the journal already."""
        return (state.lineage, state.serial) in self.folds

    def replay(self, file_state: State) -> State:
        """``file_state`` with every entry applied in order, and the lineage and
        serial the fold will write."""
        resources = dict(file_state.resources)
        for entry in self.entries:
            resources.update(entry.set)
            for address in entry.remove:
                resources.pop(address, None)
        return file_state.model_copy(update={"lineage": self.lineage, "serial": self.serial + 1,
                                             "resources": resources})


def read_journal(path: Path) -> Journal | None:
    """The journal at ``path``; ``None`` when there is none, or it records
    nothing (cut off before its first line was whole).

    A last line without its newline, or not JSON, is one a crash cut off
    mid-append: its change was never acknowledged, and it is ignored.  Any
    other line that is not valid is a ``StateError`` naming ``file:line``.
    """
    data = read_owned(path, what="state journal", limit=MAX_JOURNAL_BYTES, error=StateError)
    if data is None:
        return None
    lines = data.split(b"\n")
    torn = lines.pop()  # what follows the last newline: b"", or a line cut off mid-append
    values: list[tuple[int, object]] = []
    length = 0
    for number, raw in enumerate(lines, start=1):
        try:
            value = json.loads(raw)
        except ValueError as exc:  # not JSON, or not UTF-8
            if number == len(lines) and not torn:
                break  # the last line, garbled by a crash: as if never written
            raise StateError(_bad_line(path, number, f"it is not JSON ({exc})")) from exc
        values.append((number, value))
        length += len(raw) + 1
    if not values:
        return None
    lineage, serial = _journal_header(path, values[0][1])
    entries: list[JournalEntry] = []
    folds: set[tuple[str, int]] = set()
    for number, value in values[1:]:
        parsed = _journal_line(path, number, value)
        if isinstance(parsed, JournalEntry):
            entries.append(parsed)
        else:
            folds.add(parsed)
    return Journal(path=path, lineage=lineage, serial=serial, entries=tuple(entries), folds=frozenset(folds),
                   length=length)


def _journal_header(path: Path, value: object) -> tuple[str, int]:
    """The lineage and serial the header names."""
    if not isinstance(value, dict) or "journal" not in value:
        raise StateError(_bad_line(path, 1, "the first line is not the journal's header"))
    if value["journal"] != JOURNAL_VERSION:
        raise StateError(f"The state journal {path} has version {value['journal']!r}; this reconciler reads "
                         f"version {JOURNAL_VERSION}. Upgrade reconciler.")
    lineage, serial = value.get("lineage"), value.get("serial")
    if not isinstance(lineage, str) or not lineage or type(serial) is not int or serial < 0:
        raise StateError(_bad_line(path, 1, "the header needs a lineage and a serial"))
    return lineage, serial


def _journal_line(path: Path, number: int, value: object) -> JournalEntry | tuple[str, int]:
    """One line after the header: a change, or the mark of a fold."""
    if isinstance(value, dict) and set(value) == {"fold"}:
        fold = value["fold"]
        if isinstance(fold, dict) and isinstance(fold.get("lineage"), str) and type(fold.get("serial")) is int:
            return fold["lineage"], fold["serial"]
        raise StateError(_bad_line(path, number, "a fold names the lineage and serial written"))
    if not isinstance(value, dict) or not value or not set(value) <= {"set", "remove"}:
        raise StateError(_bad_line(path, number, 'a change line holds "set" and/or "remove"'))
    sets, removes = value.get("set", {}), value.get("remove", [])
    if not isinstance(sets, dict) or not isinstance(removes, list) or not all(isinstance(a, str) for a in removes):
        raise StateError(_bad_line(path, number, '"set" maps addresses to resources, "remove" lists addresses'))
    resources: dict[str, ResourceState] = {}
    for address, resource in sets.items():
        try:
            resources[address] = ResourceState.model_validate(resource)
        except ValidationError as exc:
            raise StateError(_bad_line(path, number, f"{address}: {exc.errors()[0]['msg']}")) from exc
    return JournalEntry(set=resources, remove=tuple(removes))


def _bad_line(path: Path, number: int, reason: str) -> str:
    return (f"The state journal {path}:{number} is not a valid journal line: {reason}. Only the last line can "
            "be cut off by a crash, so the file was damaged or edited, and nothing was changed. If the state "
            f"file as it is should be kept, move {path} away: what it records (changes an apply made in the "
            "service before it stopped) is then forgotten, and 'reconciler plan' shows what the service holds.")


def _not_ours(journal: Journal, file_state: State, state_path: Path, *, exists: bool) -> str:
    """Why ``journal`` does not continue the state file, and what to do."""
    if not exists:
        why = (f"the state file {state_path} does not exist, and the journal continues serial {journal.serial} "
               f"of lineage {journal.lineage}")
    elif file_state.lineage != journal.lineage:
        why = (f"it continues another state (lineage {journal.lineage}, serial {journal.serial}); the state file "
               f"{state_path} has lineage {file_state.lineage}")
    elif file_state.serial > journal.serial:
        why = (f"the state file {state_path} was written after it (serial {file_state.serial}; the journal "
               f"continues serial {journal.serial})")
    else:
        why = (f"the state file {state_path} is older than it (serial {file_state.serial}; the journal continues "
               f"serial {journal.serial}): was it restored from a copy?")
    return (f"The state journal {journal.path} does not belong to the state file: {why}. It was not applied, "
            f"and nothing was changed. If the state file as it is should be kept, move {journal.path} away: what "
            "it records (changes an apply made in the service before it stopped) is then forgotten, and "
            "'reconciler plan' shows what the service holds. Otherwise put back the state file it belongs to.")


class StateJournal:
    """The journal one apply appends its changes to, then folds into the file.

    ``append`` writes one line (what one change recorded) and fsyncs it: once
    it returns, a kill -9 does not lose that change, as when the whole file
    was rewritten after each change, at the cost of one small write instead
    of the whole state.  The first append creates the file, with a header
    naming the state it continues, and fsyncs the directory so the file
    itself survives a power loss.  ``fold`` writes the whole state once
    (serial: the file's + 1) and removes the journal.  Written only under
    the state lock (apply holds it).
    """

    def __init__(self, state_path: Path, state: State) -> None:
        """A journal continuing ``state`` (the state file as it is: fold a
        journal left by an earlier apply first, ``fold_journal``).  Nothing
        is written before the first ``append``."""
        self.state_path = state_path
        self.path = journal_path(state_path)
        self.serial = state.serial
        # A state never written gets its lineage now: the journal names the one its fold will write.
        self.lineage = state.lineage or str(uuid.uuid4())
        self.lines = 0  # change lines appended by this apply
        self._fd: int | None = None
        self._exists = False  # the journal file is there (created, or reopened), until the fold removes it
        self._length = 0  # bytes durably in the file: the end of its last whole line
        self._broken = False  # a failed append could not be cut back: the file may end mid-line

    @classmethod
    def reopen(cls, state_path: Path, journal: Journal) -> StateJournal:
        """The journal ``journal`` was read from, open for appending after its
        last line that counts (a line a crash cut off is cut away)."""
        writer = cls(state_path, State(lineage=journal.lineage, serial=journal.serial))
        try:
            # read_journal refused a link; O_NOFOLLOW refuses one planted since.
            fd = os.open(writer.path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0))
        except OSError as exc:
            raise writer._error(exc) from exc
        writer._fd, writer._length, writer._exists = fd, journal.length, True
        try:
            writer._cut_back_to(journal.length)
        except BaseException:
            writer.close()
            raise
        return writer

    @property
    def started(self) -> bool:
        """Whether the journal file exists (something was appended, and not folded yet)."""
        return self._exists

    def append(self, entry: Mapping[str, object]) -> None:
        """Append one change and fsync it; ``StateWriteError`` when it cannot
        be (the journal then keeps every change appended before)."""
        line = _json_line(entry)
        if not self._exists:
            self._create(_json_line({"journal": JOURNAL_VERSION, "lineage": self.lineage, "serial": self.serial})
                         + line)
        else:
            self._write(line)
        self.lines += 1

    def fold(self, state: State) -> State:
        """Write ``state`` whole, once, with the serial the journal promised,
        and remove the journal; returns what was written.  A failure is a
        ``StateWriteError``; the journal then stays, and is read with the file."""
        new = state.model_copy(update={"lineage": self.lineage, "serial": self.serial + 1})
        if not self._exists:
            return _write_whole(self.state_path, new, previous_serial=self.serial)
        return self.finish(new, previous_serial=self.serial)

    def finish(self, new: State, *, previous_serial: int | None) -> State:
        """Mark the journal as folded into ``new``, write ``new``, remove the journal.

        The mark comes first: a crash after the write and before the removal
        leaves a journal whose last line names the file beside it, which is
        then known to hold it (``Journal.folded_into``)."""
        try:
            self._write(_json_line({"fold": {"lineage": new.lineage, "serial": new.serial}}))
            written = _write_whole(self.state_path, new, previous_serial=previous_serial)
        finally:
            self.close()
        _remove_journal(self.path)
        self._exists = False
        return written

    def close(self) -> None:
        """Close the file (it stays: ``fold`` removes it)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _create(self, data: bytes) -> None:
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        except OSError as exc:
            raise self._error(exc) from exc
        try:
            self._write(data)
        except StateWriteError:
            # Nothing was recorded: no file at all is clearer than an empty one.
            self.close()
            self.path.unlink(missing_ok=True)
            raise
        self._exists = True
        _fsync_directory(self.path.parent)

    def _write(self, data: bytes) -> None:
        """Append ``data`` (whole lines) and fsync; on failure cut the file back."""
        if self._fd is None:  # closed by a fold that failed: it is not appended to again
            raise StateWriteError(self.path, None, previous_serial=self.serial, journal=True,
                                  detail="the journal was closed by a fold that failed")
        if self._broken:
            raise StateWriteError(self.path, None, previous_serial=self.serial, journal=True,
                                  detail="an earlier append failed and could not be cut back")
        try:
            _write_all(self._fd, data)
            os.fsync(self._fd)
        except OSError as exc:
            try:
                self._cut_back_to(self._length)
            except StateWriteError:
                pass  # the reader ignores a last line cut off; appending after it is what must not happen
            raise self._error(exc) from exc
        self._length += len(data)

    def _cut_back_to(self, length: int) -> None:
        """Cut the file to ``length`` bytes, so the next line starts a line."""
        assert self._fd is not None
        try:
            if os.fstat(self._fd).st_size == length:
                return
            os.ftruncate(self._fd, length)
            os.fsync(self._fd)
        except OSError as exc:
            self._broken = True
            raise self._error(exc) from exc
        self._length = length

    def _error(self, exc: OSError) -> StateWriteError:
        return StateWriteError(self.path, exc.errno, previous_serial=self.serial, journal=True,
                               detail=exc.strerror or str(exc))


def _json_line(value: Mapping[str, object]) -> bytes:
    """One journal line: compact JSON (a newline in a value is escaped) and a newline."""
    return (json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _remove_journal(path: Path) -> None:
    """Remove a journal the state file now holds, and make that last.  One
    that cannot be removed stays harmless: its fold mark names the file."""
    try:
        path.unlink()
    except OSError:
        return
    _fsync_directory(path.parent)


def _os_reason(code: int | None, detail: str | None = None) -> str:
    """``No space left on device (ENOSPC)``: the words and the code to search for."""
    if code is None:
        return detail or "unknown error"
    return f"{os.strerror(code)} ({errno_module.errorcode.get(code, code)})"


def _write_temp(target: Path, data: bytes, *, mode: int | None = None) -> Path:
    """``data`` in a new, fsynced temp file beside ``target``; on any failure
    the temp file is removed and the error raised."""
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until all of ``data`` is written (a write may be short)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` survive a power loss; best effort (not
    every platform can open a directory), as the rename itself succeeded."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def lock_path(state_path: Path) -> Path:
    """The lock file of ``state_path``: the same name with ``.lock`` added."""
    return state_path.with_name(state_path.name + ".lock")


# Where hard links do not exist (some network and FUSE filesystems), link()
# fails with one of these; the lock then falls back to O_CREAT | O_EXCL.
_NO_HARD_LINKS = {errno_module.EPERM, errno_module.EOPNOTSUPP, errno_module.ENOTSUP, errno_module.ENOSYS}


@dataclass(frozen=True)
class LockHolder:
    """Who holds a lock, as its file says; what the file lacks is ``None``."""

    id: str | None = None
    pid: int | None = None
    host: str | None = None
    command: str | None = None
    since: str | None = None

    @classmethod
    def read(cls, lock: Path) -> LockHolder | None:
        """The holder named in ``lock``: ``None`` when there is no lock file,
        a holder with no id when the file is empty or not JSON.  A lock that
        is a link, not a regular file, or over ``MAX_LOCK_BYTES`` was not
        written by reconciler, and one that cannot be read cannot be judged:
        a ``StateError`` saying so."""
        data = read_owned(lock, what="state lock", limit=MAX_LOCK_BYTES, error=StateError,
                          hint=" (reconciler never writes one: delete it)")
        if data is None:
            return None
        try:
            info = json.loads(data.decode("utf-8"))
        except ValueError:
            return cls()
        if not isinstance(info, dict):
            return cls()

        def text(key: str) -> str | None:
            value = info.get(key)
            return value if isinstance(value, str) and value else None

        pid = info.get("pid")
        return cls(id=text("id"), pid=pid if type(pid) is int else None, host=text("host"),
                   command=text("command"), since=text("since"))

    def running(self) -> bool | None:
        """Whether the holder's process still runs: known only for a holder
        on this host (``None`` otherwise; another machine is never guessed).
        A pid reused by another program reads as running: the safe mistake."""
        if os.name != "posix" or self.host != socket.gethostname() or self.pid is None or self.pid <= 0:
            return None
        try:
            os.kill(self.pid, 0)  # signal 0: only asks whether the process exists
        except ProcessLookupError:
            return False
        except OSError:
            return True  # EPERM: it exists, under another user
        return True

    def describe(self) -> str:
        """``'reconciler apply' (pid 12 on ci-7, since ..., lock ID ...)``."""
        return (f'"{self.command}" (pid {self.pid} on {self.host}, since {self.since}, lock ID {self.id})')


def dead_lock_warning(state_path: Path) -> str | None:
    """What a read-only command (plan) says of a lock left by a holder on this
    host that no longer runs: it may have changed the service without
    recording it.  ``None`` when there is no lock, or its holder runs or runs
    elsewhere (a live apply: plan reads as it always did)."""
    holder = LockHolder.read(lock_path(state_path))
    if holder is None or holder.id is None or holder.running() is not False:
        return None
    unlock = f"reconciler force-unlock {holder.id} --state {shlex.quote(str(state_path))}"
    return (f"The state {state_path} is still locked by \"{holder.command}\" (lock ID {holder.id}, since "
            f"{holder.since}), held by pid {holder.pid} on this host, which is no longer running: it was killed or "
            "crashed, and a change it made may be missing from the state, so this plan may show it as still to "
            f"do. Once you are sure that command is gone, remove the lock with '{unlock}' and apply again: the "
            "apply converges on the manifests.")


def remove_lock(state_path: Path, lock_id: str) -> bool:
    """Remove the lock of ``state_path`` if it carries ``lock_id``; ``False``
    when there is no lock or it is another one."""
    lock = lock_path(state_path)
    holder = LockHolder.read(lock)
    if holder is None or holder.id != lock_id:
        return False
    lock.unlink(missing_ok=True)
    return True


class StateLock:
    """An exclusive lock file beside the state, naming who holds it.

    The holder (a random lock id, pid, host, command, start time) is written
    to a temp file, fsynced, then hard-linked to the lock's name.  ``link``
    fails when that name exists, atomically, so two commands can never both
    hold the lock; and a lock file is complete or absent: a full disk fails
    the temp file, never leaves an empty lock.  A lock left by a process that
    is gone is reported (naming a dead holder on this host as such) and is
    removed only by ``reconciler force-unlock ID``.

    The directory is created when missing; one that cannot be created or
    written is a ``StateError`` before anything else happens.
    """

    def __init__(self, state_path: Path, *, command: str) -> None:
        self.state_path = state_path
        self.path = lock_path(state_path)
        self.command = command
        self.id = uuid.uuid4().hex

    def __enter__(self) -> StateLock:
        holder = {
            "id": self.id,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "command": self.command,
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "python": sys.executable,
        }
        directory = self.path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StateError(
                f"Cannot use the state file {self.state_path}: the directory {directory} does not exist and "
                f"cannot be created ({exc.strerror or exc}). Choose another place with --state FILE. "
                "Nothing was changed."
            ) from exc
        try:
            taken = self._take((json.dumps(holder) + "\n").encode("utf-8"))
        except BaseException as exc:
            self._release()  # interrupted after the link: the lock is ours, and goes
            if isinstance(exc, OSError):
                raise StateError(self._cannot_lock(exc)) from exc
            raise
        if not taken:
            raise StateError(self._held_message())
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._release()

    def _take(self, data: bytes) -> bool:
        """Create the lock file holding ``data``; ``False`` when it exists."""
        tmp = _write_temp(self.path, data, mode=0o644)
        try:
            os.link(tmp, self.path)
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno not in _NO_HARD_LINKS:
                raise
            return self._take_without_link(data)
        finally:
            tmp.unlink(missing_ok=True)
        return True

    def _take_without_link(self, data: bytes) -> bool:
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        try:
            try:
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
        except BaseException:
            self.path.unlink(missing_ok=True)  # an empty lock would read as "an unknown process"
            raise
        return True

    def _release(self) -> None:
        """Remove the lock file if it is still this lock (it may have been
        force-unlocked and taken by another command since)."""
        remove_lock(self.state_path, self.id)

    def _cannot_lock(self, exc: OSError) -> str:
        if exc.errno in (errno_module.EACCES, errno_module.EPERM, errno_module.EROFS):
            return (
                f"Cannot use the state file {self.state_path}: the directory {self.path.parent} is not writable "
                f"({exc.strerror or exc}); the state and its lock are written there. Choose a writable place "
                "with --state FILE. Nothing was changed."
            )
        return (f"Cannot take the lock {self.path}: {_os_reason(exc.errno, exc.strerror)}; no lock file was "
                "left behind. Nothing was changed.")

    def _held_message(self) -> str:
        state, lock = self.state_path, self.path
        holder = LockHolder.read(lock)
        if holder is None:
            return (f"The state {state} was locked by another command, which has just finished. "
                    "Run the command again.")
        if holder.id is None:
            return (f"The state {state} is locked by an unknown process: the lock file {lock} is empty or "
                    "unreadable (written by an older reconciler, or by hand), and has no lock ID. If no "
                    f"reconciler command is running against this state, delete {lock}.")
        unlock = f"reconciler force-unlock {holder.id} --state {shlex.quote(str(state))}"
        if holder.running() is False:
            return (
                f"The state {state} is locked by \"{holder.command}\" (lock ID {holder.id}, since {holder.since}), "
                f"held by pid {holder.pid} on this host, which is no longer running: it was killed or crashed, "
                f"and may have changed the service without recording it. Remove the lock with '{unlock}', "
                "then run 'reconciler plan' to see where things stand."
            )
        return (
            f"The state {state} is locked by {holder.describe()}: another command is running against it. "
            f"Wait for it to finish. If that process is gone (a cancelled CI job, a machine that went away), "
            f"remove the lock with '{unlock}'."
        )
