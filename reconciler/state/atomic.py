"""Atomic, durable writes of whole files, and the error a failed write raises.

A whole file is written to a temp file beside it, fsynced, then
``os.replace``d over the name, and the directory fsynced: a crash leaves
either the old or the new file, never half of one.
"""

from __future__ import annotations

import errno as errno_module
import os
import tempfile
from pathlib import Path

from reconciler.errors import StateError
from reconciler.owned_files import fsync_directory
from reconciler.state.model import State


def write_whole(path: Path, state: State, *, previous_serial: int | None) -> State:
    """Write ``state`` exactly (serial and lineage as given), atomically: a
    temp file, fsynced, renamed over ``path``, the directory fsynced."""
    # Unknown facts are left out rather than written as null: smaller files,
    # and a state written by this version reads the same in the last one.
    text = state.model_dump_json(indent=2, exclude_none=True) + "\n"
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = write_temp(path, text.encode("utf-8"))
        try:
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise StateWriteError(path, exc.errno, previous_serial=previous_serial if existed else None,
                              detail=exc.strerror or str(exc)) from exc
    fsync_directory(path.parent)
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

    # What apply's messages call the store, and what to do before trying again.
    noun = "the state file"
    remedy = "Free the space (or fix the error)"

    def __init__(self, path: Path, errno: int | None, *, previous_serial: int | None,
                 detail: str | None = None, journal: bool = False) -> None:
        self.path: Path | None = path
        self.errno = errno
        self.previous_serial = previous_serial
        self.journal = journal
        if journal:
            super().__init__(f"Cannot append to the state journal {path}: {os_reason(errno, detail)}. The journal "
                             "keeps every change recorded before this one, and the state file is unchanged.")
            return
        kept = (f"The file still holds serial {previous_serial}, as before this write."
                if previous_serial is not None else "There was no state file before, and none was written.")
        super().__init__(f"Cannot write the state file {path}: {os_reason(errno, detail)}. {kept}")



def os_reason(code: int | None, detail: str | None = None) -> str:
    """``No space left on device (ENOSPC)``: the words and the code to search for."""
    if code is None:
        return detail or "unknown error"
    return f"{os.strerror(code)} ({errno_module.errorcode.get(code, code)})"


def write_temp(target: Path, data: bytes, *, mode: int | None = None) -> Path:
    """``data`` in a new, fsynced temp file beside ``target``; on any failure
    the temp file is removed and the error raised."""
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until all of ``data`` is written (a write may be short)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
