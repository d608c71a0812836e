"""The journal of an apply kept in a file: ``<state>.journal``, JSON Lines.

An apply does not rewrite the whole state file after each change (O(changes
x state size)): it appends what each change recorded to the journal beside
it, and folds the journal into the file once at the end.  ``load_state``
replays a journal that a killed apply left behind; ``write_state`` folds one in.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from reconciler.text import parse_json
from reconciler.errors import StateError
from reconciler.owned_files import MAX_JOURNAL_BYTES, fsync_directory, read_owned
from reconciler.state import atomic
from reconciler.state.atomic import StateWriteError
from reconciler.state.model import ResourceState, State

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
            value = parse_json(raw)
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


def not_ours(journal: Journal, file_state: State, state_path: Path, *, exists: bool) -> str:
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
               f"serial {journal.serial}; was it restored from a copy?)")
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
    def where(self) -> str:
        """The journal, in words for a message."""
        return f"the journal {self.path}"

    @property
    def started(self) -> bool:
        """Whether the journal file exists (something was appended, and not folded yet)."""
        return self._exists

    def append(self, entry: Mapping[str, object]) -> None:
        """Append one change and fsync it; ``StateWriteError`` when it cannot
        be (the journal then keeps every change appended before)."""
        line = json_line(entry)
        if not self._exists:
            self._create(json_line({"journal": JOURNAL_VERSION, "lineage": self.lineage, "serial": self.serial})
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
            return atomic.write_whole(self.state_path, new, previous_serial=self.serial)
        return self.finish(new, previous_serial=self.serial)

    def finish(self, new: State, *, previous_serial: int | None) -> State:
        """Mark the journal as folded into ``new``, write ``new``, remove the journal.

        The mark comes first: a crash after the write and before the removal
        leaves a journal whose last line names the file beside it, which is
        then known to hold it (``Journal.folded_into``)."""
        try:
            self._write(json_line({"fold": {"lineage": new.lineage, "serial": new.serial}}))
            written = atomic.write_whole(self.state_path, new, previous_serial=previous_serial)
        finally:
            self.close()
        remove_journal(self.path)
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
        fsync_directory(self.path.parent)

    def _write(self, data: bytes) -> None:
        """Append ``data`` (whole lines) and fsync; on failure cut the file back."""
        if self._fd is None:  # closed by a fold that failed: it is not appended to again
            raise StateWriteError(self.path, None, previous_serial=self.serial, journal=True,
                                  detail="the journal was closed by a fold that failed")
        if self._broken:
            raise StateWriteError(self.path, None, previous_serial=self.serial, journal=True,
                                  detail="an earlier append failed and could not be cut back")
        try:
            atomic.write_all(self._fd, data)
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


def json_line(value: Mapping[str, object]) -> bytes:
    """One journal line: compact JSON (a newline in a value is escaped) and a newline."""
    return (json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def remove_journal(path: Path) -> None:
    """Remove a journal the state file now holds, and make that last.  One
    that cannot be removed stays harmless: its fold mark names the file."""
    try:
        path.unlink()
    except OSError:
        return
    fsync_directory(path.parent)
